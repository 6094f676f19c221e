"""sequence: steps in order before the last one, and before the task is finished."""

from __future__ import annotations

from tests.rules.rulekit import act, button, decision, field, guard

ORDERED = {
    "sequence": {"steps": [{"action": "fill", "match": "Date"}, {"action": "click", "match": "Add invitee"}]}
}
STRICT = {
    "sequence": {
        "steps": [
            {"action": "fill", "match": "To"},
            {"action": "fill", "match": "Subject"},
            {"action": "click", "match": "Send"},
        ],
        "contiguous": True,
    }
}


def test_the_last_step_needs_the_earlier_ones() -> None:
    g = guard(ORDERED, risk="low")
    assert decision(act(g, "click", target=button("Add invitee"))) == "revise"
    assert decision(act(g, "fill", target=field("Date"), value="2024-12-01")) == "allow"
    assert decision(act(g, "click", target=button("Notes"))) == "allow"  # gaps are fine
    assert decision(act(g, "click", target=button("Add invitee"))) == "allow"
    assert decision(act(g, "click", target=button("Add invitee"))) == "allow"  # repeating is fine


def test_finishing_needs_the_whole_sequence() -> None:
    g = guard(ORDERED, risk="low")
    verdict = act(g, "finish", value="Done")
    assert decision(verdict) == "revise"
    assert "before the required sequence" in verdict.explanation
    act(g, "fill", target=field("Date"), value="2024-12-01")
    act(g, "click", target=button("Add invitee"))
    assert decision(act(g, "finish", value="Done")) == "allow"


def test_contiguous_sequences_allow_nothing_in_between() -> None:
    g = guard(STRICT)
    act(g, "fill", target=field("To"), value="jim@example.test")
    act(g, "fill", target=field("Subject"), value="Hi")
    act(g, "click", target=button("Attach"))
    assert decision(act(g, "click", target=button("Send"))) == "block"
    act(g, "fill", target=field("To"), value="jim@example.test")
    act(g, "fill", target=field("Subject"), value="Hi")
    assert decision(act(g, "click", target=button("Send"))) == "allow"
    assert decision(act(g, "finish", value="sent")) == "allow"


def test_out_of_order_is_not_in_order() -> None:
    g = guard(STRICT)
    act(g, "fill", target=field("Subject"), value="Hi")
    act(g, "fill", target=field("To"), value="jim@example.test")
    assert decision(act(g, "click", target=button("Send"))) == "block"
    assert decision(act(g, "finish", value="done")) == "block"


def test_selectors_in_steps() -> None:
    rule = {
        "sequence": {
            "steps": [
                {"action": "click", "selector": ".js-assignee-search"},
                {"action": "fill", "selector": "#issuable-due-date"},
            ]
        }
    }
    g = guard(rule)
    due = field("Due date", attrs={"id": "issuable-due-date"})
    assert decision(act(g, "fill", target=due, value="2024-01-01")) == "block"
    act(g, "click", target=button("Assignee", attrs={"class": "js-assignee-search"}))
    assert decision(act(g, "fill", target=due, value="2024-01-01")) == "allow"
