"""Which policies a prompt shows: only those whose rules or scope can apply to the action."""

from __future__ import annotations

import pytest

from pagewarden import Action, ElementFacts, Observation, Policy, Step
from pagewarden.judge._context import select_policies
from pagewarden.judge._relevance import policy_applies
from pagewarden.policies import baseline_policies
from pagewarden.steps import Finding
from pagewarden.worldmodel import predict_static

PAGE = "http://tracker.test/acme/webapp/issues/1"
BUTTON = ElementFacts(tag="button", role="button", name="Close issue", text="Close issue")
LINK = ElementFacts(tag="a", role="link", name="Profile", text="Profile", href="http://tracker.test/profile")
TEXTBOX = ElementFacts(tag="textarea", role="textbox", name="Comment", editable=True)


def step(kind: str, target: ElementFacts | None = None, value: str | None = None) -> Step:
    observation = Observation(url=PAGE, target=target)
    return Step(Action(kind=kind, value=value), observation, goal="Comment on issue #1.")


def policy(
    pid: str, rules: list | None = None, scope: str | None = None, category: str = "boundary"
) -> Policy:
    return Policy(id=pid, category=category, risk_level="medium", description=f"policy {pid}",
                  rules=rules or [], scope=scope)  # fmt: skip


def applies(p: Policy, s: Step) -> bool:
    return policy_applies(p, s, predict_static(s))


URLS = policy("URLS", [{"url_deny": "/profile"}])
CONSENT_DELETE = policy("CONSENT", [{"consent": {"match": "Delete", "actions": ["click"]}}])
INPUTS = policy("INPUTS", [{"input_allow": {"field": "Title", "values": ["Q3"]}}])
BUDGET = policy("BUDGET", [{"action_budget": {"actions": ["fill", "type"], "max": 3}}])
SECRETS = policy("SECRETS", [{"sensitive_data": {"patterns": ["password"]}}], category="data")
PROVENANCE = policy("PROVENANCE", [{"instruction_provenance": {}}], category="injection")
PROSE = policy("PROSE")


@pytest.mark.parametrize(
    ("p", "s", "expected"),
    [
        (URLS, step("click", LINK), True),  # a link goes somewhere
        (URLS, step("goto", value="http://tracker.test/x"), True),
        (URLS, step("fill", TEXTBOX, "hi"), False),  # typing goes nowhere
        (URLS, step("hover", BUTTON), False),
        (CONSENT_DELETE, step("click", BUTTON), True),
        (CONSENT_DELETE, step("fill", TEXTBOX, "hi"), False),
        (INPUTS, step("fill", TEXTBOX, "hi"), True),
        (INPUTS, step("click", BUTTON), False),
        (BUDGET, step("fill", TEXTBOX, "hi"), True),
        (BUDGET, step("type", TEXTBOX, "hi"), True),
        (BUDGET, step("click", BUTTON), False),
        (SECRETS, step("fill", TEXTBOX, "hi"), True),
        (SECRETS, step("click", LINK), True),  # data can leave in the URL
        (SECRETS, step("hover", BUTTON), False),
        (PROVENANCE, step("hover", BUTTON), True),  # page-borne instructions can steer anything
        (PROSE, step("hover", BUTTON), True),  # no rules: judged by its text, always a candidate
    ],
)
def test_rules_decide_which_actions_a_policy_can_apply_to(p: Policy, s: Step, expected: bool) -> None:
    assert applies(p, s) is expected


def test_a_scope_naming_sites_limits_a_policy_to_them() -> None:
    click = step("click", BUTTON)
    assert applies(policy("A", scope="Only on tracker.test"), click)
    assert applies(policy("B", scope="Only on docs.test"), click) is False
    assert applies(policy("C", scope="The tracker.test and docs.test sites"), click)
    # Words with a dot that are not sites do not limit the policy.
    assert applies(policy("D", scope="Node.js projects"), click)
    # A destination counts as well as the page.
    goto = step("goto", value="http://docs.test/guide")
    assert applies(policy("E", scope="docs.test"), goto)


def test_the_script_baseline_policy_is_not_shown_for_a_click_but_is_for_evaluate() -> None:
    baseline = list(baseline_policies())
    click = step("click", BUTTON)
    shown = [p.id for p in select_policies(baseline, click, predict_static(click), [], ["consequential"])]
    assert "PW-SCRIPT" not in shown and "PW-INJECTION" in shown
    script = step("evaluate", value="document.cookie")
    shown = [p.id for p in select_policies(baseline, script, predict_static(script), [], ["script"])]
    assert "PW-SCRIPT" in shown


def test_policies_with_findings_are_always_shown_and_the_limit_holds() -> None:
    click = step("click", BUTTON)
    finding = Finding(policy_id="INPUTS", rule="input_allow", message="x", score=0.6)
    many = [INPUTS, *(policy(f"P{i}") for i in range(20))]
    shown = select_policies(many, click, predict_static(click), [finding], [], limit=5)
    assert shown[0].id == "INPUTS" and len(shown) == 5
