"""consent: actions on matching elements need a prior message to the user or an approver."""

from __future__ import annotations

import asyncio

import pytest

from pagewarden.guard import Action, Decision
from pagewarden.rules.consent import message_names
from pagewarden.steps import Observation
from tests.rules.rulekit import act, button, decision, field, guard

CONSENT = {"consent": {"match": ["Create project"], "actions": ["click", "fill"]}}


@pytest.mark.parametrize(
    "text",
    [
        "Create project",
        "create PROJECT",
        "Create  project",
        "Create\u200b project",  # zero-width space
        "Cre\u00adate project",  # soft hyphen
        "Crеate project",  # Cyrillic е
        "Ｃｒｅａｔｅ project",  # full-width
        "Créate project",  # a combining accent
        "Create projct",  # a near spelling
        "Create project now",
        "+ Create project",
    ],
)
def test_matching_elements_need_consent(text: str) -> None:
    verdict = act(guard(CONSENT), "click", target=button(text))
    assert decision(verdict) == "ask"
    assert verdict.findings[0].requires_approval


@pytest.mark.parametrize("text", ["Create group", "Project settings", "Recreate projection index", "Cancel"])
def test_other_elements_do_not(text: str) -> None:
    assert decision(act(guard(CONSENT), "click", target=button(text))) == "allow"


def test_a_prior_message_naming_the_element_is_consent() -> None:
    g = guard(CONSENT)
    assert decision(act(g, "send_msg_to_user", value="May I click 'Create project' now?")) == "allow"
    assert decision(act(g, "click", target=button("Create project"))) == "allow"


def test_an_unrelated_or_later_message_is_not() -> None:
    g = guard(CONSENT)
    act(g, "send_msg_to_user", value="I am looking at the projects page.")
    assert decision(act(g, "click", target=button("Create project"))) == "ask"
    # the blocked click did not run; telling the user now makes the next attempt fine
    act(g, "send_msg_to_user", value="I would like to create project 'planner'. OK?")
    assert decision(act(g, "click", target=button("Create project"))) == "allow"


def test_a_message_that_was_blocked_does_not_count() -> None:
    g = guard(CONSENT, {"sensitive_data": {"values": ["hunter22"], "allow_user": False}})
    verdict = act(g, "send_msg_to_user", value="Create project with password hunter22?")
    assert decision(verdict) == "block"
    assert decision(act(g, "click", target=button("Create project"))) == "ask"


def test_message_naming_is_fuzzy_but_not_loose() -> None:
    assert message_names("Create project", "ok to CREATE PROJECT?")
    assert message_names("Create project", "ok to create projct?")  # one slip
    assert not message_names("Create project", "ok to create a group?")
    assert not message_names("Invite", "hi")  # too short to be a request
    assert not message_names("Save", "Sure, I will wait")


def test_actions_outside_the_rule_are_not_covered() -> None:
    g = guard(CONSENT)
    assert decision(act(g, "hover", target=button("Create project"))) == "allow"
    assert decision(act(g, "fill", target=field("Create project name"), value="x")) == "ask"


def test_selectors_pick_elements() -> None:
    g = guard({"consent": {"selectors": ["#delete-btn", "button.danger"]}})
    assert decision(act(g, "click", target=button("Remove", attrs={"id": "delete-btn"}))) == "ask"
    assert decision(act(g, "click", target=button("Go", attrs={"class": "btn danger"}))) == "ask"
    assert decision(act(g, "click", target=button("Go", attrs={"class": "btn dangerous"}))) == "allow"


def test_message_terms_cover_every_action_until_the_user_is_asked() -> None:
    g = guard({"consent": {"actions": ["any"], "message_terms": ["missing", "which"]}})
    assert decision(act(g, "goto", value="https://app.test/")) == "ask"
    assert decision(act(g, "click", target=button("Anything"))) == "ask"
    assert decision(act(g, "send_msg_to_user", value="Which project do you mean?")) == "allow"
    assert decision(act(g, "click", target=button("Anything"))) == "allow"


def test_without_terms_only_an_approver_consents() -> None:
    g = guard({"consent": {"actions": ["evaluate"]}})
    act(g, "send_msg_to_user", value="I am going to evaluate a script")
    step = g.make_step(Action(kind="evaluate", value="1+1"), Observation(url="https://app.test/"))
    verdict = g.evaluate(step)
    assert verdict.decision is Decision.ASK
    assert asyncio.run(g.approve(verdict, step)) is False  # no approver: not approved

    async def approves(verdict, step) -> bool:
        return True

    g.approver = approves
    assert asyncio.run(g.approve(verdict, step)) is True


def test_consent_asks_rather_than_blocks_even_at_high_risk() -> None:
    verdict = act(guard(CONSENT, risk="high"), "click", target=button("Create project"))
    assert verdict.decision is Decision.ASK
    assert verdict.score >= 0.9
