"""Policy authoring: the field reference, field names, unknown-field errors, lint warnings,
merging several policy files, unknown action kinds."""

from __future__ import annotations

from pathlib import Path

import pytest

from pagewarden.guard import Action, Guard, Step
from pagewarden.policies import (
    RULE_KINDS,
    ActionBudgetRule,
    PolicyError,
    PolicySet,
    SequenceRule,
    domain_pattern_problem,
    lint_policies,
    parse_rule,
    rule_reference,
    rule_to_dict,
)
from pagewarden.policies._rules_schema import _RULE_MODELS, SequenceStep
from pagewarden.steps import Observation
from tests.rules.rulekit import act, button, decision, guard, policy

HEADER = "version: 1\npolicies:\n"


def _one(rules: str, pid: str = "P1", extra: str = "") -> str:
    return (
        HEADER + f"  - id: {pid}\n    category: boundary\n    risk_level: high\n"
        f"    description: test\n{extra}    rules:\n{rules}"
    )


# -- the reference ---------------------------------------------------------------------------
def test_reference_covers_every_kind_and_every_field() -> None:
    docs = {d.kind: d for d in rule_reference()}
    assert tuple(docs) == RULE_KINDS
    for kind, model in _RULE_MODELS.items():
        names = {f.name for f in docs[kind].fields}
        assert set(model.model_fields) <= names, kind
        assert docs[kind].summary, kind
        for field in docs[kind].fields:
            assert field.description, (kind, field.name)
            assert field.default, (kind, field.name)
    sequence_fields = {f.name for f in docs["sequence"].fields}
    assert {f"steps[].{name}" for name in SequenceStep.model_fields} <= sequence_fields


# -- one canonical name per field, alternatives accepted ---------------------------------------
def test_action_and_actions_are_one_field_everywhere() -> None:
    budget_single = parse_rule({"action_budget": {"action": "click", "max": 1}})
    budget_list = parse_rule({"action_budget": {"actions": ["click"], "max": 1}})
    assert budget_single == budget_list and isinstance(budget_single, ActionBudgetRule)
    assert rule_to_dict(budget_single) == {"action_budget": {"actions": ["click"], "max": 1}}
    for kind in ("consent", "forbid_element"):
        one = parse_rule({kind: {"action": "fill", "match": "Delete"}})
        many = parse_rule({kind: {"actions": ["fill"], "match": ["Delete"]}})
        assert one == many
    seq = parse_rule({"sequence": {"steps": [{"action": "click", "selector": "#a"}, {"actions": "fill"}]}})
    assert isinstance(seq, SequenceRule)
    assert seq.steps[0].actions == ["click"] and seq.steps[0].selectors == ["#a"]
    first = rule_to_dict(seq)["sequence"]["steps"][0]
    assert first == {"actions": ["click"], "selectors": ["#a"]}
    # a round trip through the canonical form gives the same rule
    assert parse_rule(rule_to_dict(seq)) == seq


def test_both_spellings_at_once_is_an_error() -> None:
    with pytest.raises(PolicyError, match="give either 'actions' or 'action'"):
        PolicySet.from_text(_one("      - consent: {action: click, actions: [fill]}\n"))


def test_budget_over_several_kinds_counts_them_together() -> None:
    g = guard({"action_budget": {"actions": ["click", "tap"], "match": "Vote", "max": 2}})
    assert decision(act(g, "click", target=button("Vote"))) == "allow"
    assert decision(act(g, "tap", target=button("Vote"))) == "allow"
    third = act(g, "click", target=button("Vote"))
    assert decision(third) == "block" and "at most 2" in third.findings[0].message


def test_sequence_step_with_several_kinds() -> None:
    steps = [{"actions": ["click", "tap"], "match": "Review"}, {"action": "click", "match": "Merge"}]
    g = guard({"sequence": {"steps": steps}})
    assert decision(act(g, "click", target=button("Merge"))) == "block"
    assert decision(act(g, "tap", target=button("Review"))) == "allow"
    assert decision(act(g, "click", target=button("Merge"))) == "allow"


@pytest.mark.parametrize(
    ("rules", "expected"),
    [
        (
            "      - action_budget: {action: click, max: 1, mach: Vote}\n",
            "rules[0].action_budget.mach: is not a known field (did you mean 'match'?); known fields: "
            "actions (or action), match, selectors (or selector), max",
        ),
        (
            "      - sequence: {steps: [{action: click, foo: 1}]}\n",
            "rules[0].sequence.steps[0].foo: is not a known field; known fields: actions (or action), "
            "match, selectors (or selector)",
        ),
        (
            "      - sensitive_data: {values: [abcdef], allow_domain: [x.test]}\n",
            "did you mean 'allow_domains'?",
        ),
    ],
)
def test_unknown_field_error_lists_the_known_fields(rules: str, expected: str) -> None:
    with pytest.raises(PolicyError) as caught:
        PolicySet.from_text(_one(rules), source="p.yaml")
    assert expected in str(caught.value), str(caught.value)


def test_unknown_policy_field_lists_the_policy_fields() -> None:
    with pytest.raises(PolicyError) as caught:
        PolicySet.from_text(_one("      - url_deny: /x\n", extra="    scop: all\n"), source="p.yaml")
    text = str(caught.value)
    assert "scop: is not a known field (did you mean 'scope'?)" in text
    assert "known fields: id, category, risk_level, description, scope" in text


# -- lint -------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "pattern",
    ["shop.test/", "*.bad..com", "shop.test/path", "user@shop.test", "sho*p.test", "a b.test", "*.",
     "x.test:http", "shop.test?x", "bad..com"],
)  # fmt: skip
def test_domain_patterns_that_cannot_match(pattern: str) -> None:
    assert domain_pattern_problem(pattern) is not None
    warnings = lint_policies(PolicySet([policy({"domain_allow": ["ok.test", pattern]})]))
    assert any(repr(pattern) in str(w) and "can never match" in str(w) for w in warnings), warnings


@pytest.mark.parametrize(
    "pattern",
    ["shop.test", "*.shop.test", ".shop.test", "*", "https://shop.test", "127.0.0.1", "[::1]",
     "shop.test:8080", "bücher.de", "xn--bcher-kva.de", "SHOP.test"],
)  # fmt: skip
def test_domain_patterns_that_can_match(pattern: str) -> None:
    assert domain_pattern_problem(pattern) is None


def test_lint_flags_patterns_in_every_place_a_host_is_named() -> None:
    policies = PolicySet(
        [
            policy({"url_allow": "https://shop..test/cart"}, pid="U"),
            policy({"sensitive_data": {"values": ["tok-123456"], "allow_domains": ["self", "bank.test/"]}}),
            policy({"domain_deny": "https://evil.test/steal"}, pid="D"),
        ]
    )
    text = "\n".join(str(w) for w in lint_policies(policies))
    assert "policy U: rules[0].url_allow: domain pattern 'shop..test'" in text
    assert "policy P1: rules[0].sensitive_data.allow_domains: domain pattern 'bank.test/'" in text
    assert "'self'" not in text
    assert "policy D" in text and "path is ignored" in text


def test_lint_flags_policies_that_never_fire_offline() -> None:
    policies = PolicySet(
        [
            policy(pid="NO-RULES"),
            policy({"consent": {"actions": ["goto"], "match": "Profile"}}, pid="GOTO-MATCH"),
            policy({"forbid_element": {"actions": ["send_msg_to_user"], "match": "x"}}, pid="MSG"),
            policy(
                {"sequence": {"steps": [{"action": "goto", "match": "a"}, {"action": "click"}]}},
                pid="SEQ",
            ),
            policy({"domain_allow": ["*"]}, pid="STAR"),
            policy({"domain_allow": ["shop.test/"]}, pid="NONE"),
            policy({"consent": {"actions": ["click"], "match": "Delete"}}, pid="FINE"),
        ]
    )
    by_id: dict[str, list[str]] = {}
    for warning in lint_policies(policies):
        by_id.setdefault(warning.policy_id or "", []).append(warning.message)
    assert "has no rules" in by_id["NO-RULES"][0] and "offline" in by_id["NO-RULES"][0]
    assert "can never pick" in by_id["GOTO-MATCH"][0]
    assert "can never fire" in by_id["MSG"][0]
    assert "can never be completed" in by_id["SEQ"][0]
    assert "allows every host" in by_id["STAR"][0]
    assert any("every navigation would be refused" in m for m in by_id["NONE"])
    assert "FINE" not in by_id


def test_baseline_lints_clean() -> None:
    from pagewarden.policies import baseline_policies

    assert lint_policies(baseline_policies()) == []


# -- several policy files ---------------------------------------------------------------------
def test_guard_takes_several_policy_files(tmp_path: Path) -> None:
    a, b = tmp_path / "org.yaml", tmp_path / "task.json"
    a.write_text(_one("      - url_deny: /profile\n", pid="ORG-1"))
    PolicySet.from_text(_one("      - domain_deny: evil.test\n", pid="TASK-1")).dump(b)
    g = Guard(policies=[a, str(b)], baseline=False)
    assert g.policies.ids == ["ORG-1", "TASK-1"]
    assert PolicySet.combine([a, b]).source == f"{a} + {b}"
    goto = Step(action=Action(kind="goto", value="http://evil.test/"), observation=Observation(url=""))
    assert g.check(goto).violated_policy_ids == ["TASK-1"]
    mixed = Guard(policies=[PolicySet.load(a), policy({"url_deny": "/admin"}, pid="INLINE")], baseline=False)
    assert mixed.policies.ids == ["ORG-1", "INLINE"]


def test_merging_refuses_the_same_id_naming_both_files(tmp_path: Path) -> None:
    a, b = tmp_path / "org.yaml", tmp_path / "task.yaml"
    a.write_text(_one("      - url_deny: /profile\n", pid="P-1"))
    b.write_text(_one("      - url_deny: /admin\n", pid="P-1"))
    with pytest.raises(PolicyError) as caught:
        Guard(policies=[a, b])
    text = str(caught.value)
    assert f"{b}: policy P-1: id: policy id 'P-1' is also defined in {a}" in text
    broken = tmp_path / "broken.yaml"
    broken.write_text("version: 1\npolicies: {}\n")
    with pytest.raises(PolicyError, match="must be a list of policies"):
        PolicySet.combine([a, broken])
    with pytest.raises(TypeError, match="not int"):
        PolicySet.combine([a, 3])  # type: ignore[list-item]


# -- unknown action kinds ---------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["frobnicate", "Click", "any", "drag_and_drop_v2"])
def test_unknown_action_kind_is_judged_unclassified(kind: str) -> None:
    g = Guard()
    step = Step(action=Action(kind=kind, value="x"), observation=Observation(url="http://app.test/"))
    verdict = g.check(step)
    assert decision(verdict) == "ask" and verdict.violated_policy_ids == ["PW-SCRIPT"]
    assert "unclassified" in verdict.explanation
    assert len(g.session.history) == 0  # nothing ran
    known = g.check(Step(action=Action(kind="hover"), observation=Observation(url="http://app.test/")))
    assert decision(known) == "allow"
