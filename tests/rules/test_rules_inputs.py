"""input_allow: only the values the user gave may be entered."""

from __future__ import annotations

import pytest

from tests.rules.rulekit import act, decision, field, guard

ONLY = {"input_allow": {"values": ["Dwight Schrute", "Stark Industries"]}}


@pytest.mark.parametrize(
    "value", ["Dwight Schrute", "dwight schrute", "  Stark Industries ", "STARK INDUSTRIES", ""]
)
def test_allowed_values(value: str) -> None:
    assert decision(act(guard(ONLY, risk="low"), "fill", target=field("Contact"), value=value)) == "allow"


@pytest.mark.parametrize(
    "value",
    [
        "Dwight Schrutee",  # near miss
        "Dwight  Schrute",  # an extra space inside
        "Dwight Schrute\u200b",  # a zero-width space
        "Dwight Schrutе",  # Cyrillic е
        "Dwight",  # part of a value
        "Dwight Schrute, Stark Industries",  # two values in one field
        "Michael Scott",
    ],
)
def test_anything_else_is_flagged(value: str) -> None:
    verdict = act(guard(ONLY, risk="low"), "fill", target=field("Contact"), value=value)
    assert decision(verdict) == "revise"
    assert verdict.findings[0].rule == "input_allow"


def test_select_option_and_type_count_as_input() -> None:
    g = guard(ONLY)
    assert decision(act(g, "select_option", target=field("Account"), value="Wayne Enterprises")) == "block"
    assert decision(act(g, "select_option", target=field("Account"), value="Stark Industries")) == "allow"
    assert decision(act(g, "type", target=field("Contact"), value="Dwight", selector="#c")) == "block"


def test_key_by_key_typing_is_allowed_while_it_spells_an_allowed_value() -> None:
    g = guard(ONLY)
    for key in "Dwight S":
        assert decision(act(g, "press", target=field("Contact"), value=key, selector="#c")) == "allow"
    assert decision(act(g, "press", target=field("Contact"), value="x", selector="#c")) == "block"


@pytest.mark.parametrize("key", ["Enter", "Tab", "Escape", "ArrowDown", "Control+A", "Backspace"])
def test_navigation_keys_and_shortcuts_are_not_input(key: str) -> None:
    assert decision(act(guard(ONLY), "press", target=field("Contact"), value=key)) == "allow"


def test_field_scoping() -> None:
    g = guard({"input_allow": {"field": "Title", "values": ["Q3 report"]}})
    assert decision(act(g, "fill", target=field("Title"), value="Q3 report")) == "allow"
    assert decision(act(g, "fill", target=field("Title"), value="Q4 report")) == "block"
    assert decision(act(g, "fill", target=field("Description"), value="anything")) == "allow"
    named = field("", attrs={"name": "title"})
    assert decision(act(g, "fill", target=named, value="Q4 report")) == "block"


def test_clicks_are_not_input() -> None:
    assert decision(act(guard(ONLY), "click", target=field("Contact"))) == "allow"
