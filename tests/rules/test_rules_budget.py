"""action_budget: the action that would exceed the budget is the violation."""

from __future__ import annotations

import pytest

from tests.rules.rulekit import act, button, decision, field, guard


@pytest.mark.parametrize("top", [0, 1, 2, 5])
def test_off_by_one(top: int) -> None:
    g = guard({"action_budget": {"action": "click", "max": top}})
    for n in range(top):
        assert decision(act(g, "click", target=button(f"Next {n}"))) == "allow", n
    verdict = act(g, "click", target=button("One more"))
    assert decision(verdict) == "block"
    assert verdict.findings[0].evidence == {"done": top, "max": top, "action": "click", "target": ""}


def test_blocked_actions_do_not_use_the_budget() -> None:
    g = guard({"action_budget": {"action": "click", "max": 1}})
    assert decision(act(g, "click", target=button("A"))) == "allow"
    for _ in range(3):
        assert decision(act(g, "click", target=button("B"))) == "block"
    assert len(g.session.history) == 1


def test_other_kinds_do_not_count() -> None:
    g = guard({"action_budget": {"action": "click", "max": 1}})
    act(g, "fill", target=field("Name"), value="x")
    act(g, "dblclick", target=button("A"))
    act(g, "goto", value="https://app.test/")
    assert decision(act(g, "click", target=button("A"))) == "allow"
    assert decision(act(g, "click", target=button("A"))) == "block"


def test_budget_on_matching_targets() -> None:
    g = guard({"action_budget": {"action": "click", "match": "Save", "max": 1}})
    assert decision(act(g, "click", target=button("Save"))) == "allow"
    assert decision(act(g, "click", target=button("Cancel"))) == "allow"
    assert decision(act(g, "click", target=button("Cancel"))) == "allow"
    assert decision(act(g, "click", target=button("Sаve"))) == "block"  # Cyrillic а: still Save


def test_budget_on_selectors() -> None:
    g = guard({"action_budget": {"action": "fill", "selectors": ["#project_name_edit"], "max": 1}})
    name = field("Project name", attrs={"id": "project_name_edit"})
    assert decision(act(g, "fill", target=name, value="planner")) == "allow"
    assert decision(act(g, "fill", target=field("Description"), value="x")) == "allow"
    assert decision(act(g, "fill", target=name, value="planner2")) == "block"


def test_xpath_budget() -> None:
    g = guard(
        {
            "action_budget": {
                "action": "click",
                "selectors": ["//button[contains(text(), 'Delete')]"],
                "max": 1,
            }
        }
    )
    assert decision(act(g, "click", target=button("Delete contact"))) == "allow"
    link_delete = act(g, "click", target=button("Delete", attrs={"role": "link"}))
    assert decision(link_delete) == "block"


def test_any_counts_every_action_but_messages() -> None:
    g = guard({"action_budget": {"action": "any", "max": 2}})
    act(g, "send_msg_to_user", value="starting")
    assert decision(act(g, "click", target=button("A"))) == "allow"
    assert decision(act(g, "fill", target=field("B"), value="b")) == "allow"
    assert decision(act(g, "goto", value="https://app.test/")) == "block"
