"""`from_data` takes a value of exactly a field's plain type as it is and sends every other
value through the field's converter: the result and the errors are those of the converters."""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest

from pagewarden._serde import DataFormatError, from_data
from pagewarden.steps import ElementFacts


@dataclass(frozen=True)
class Row:
    name: str = ""
    count: int = 0
    ratio: float = 0.0
    flag: bool = False
    note: str | None = None
    either: float | int = 0.0
    level: int | None = None


class Label(str):
    pass


def test_plain_values_are_taken_as_they_are_and_others_converted() -> None:
    row = from_data(Row, {"name": "a", "count": 3, "ratio": 2, "flag": True, "note": None, "either": 4})
    assert row == Row(name="a", count=3, ratio=2.0, flag=True, note=None, either=4.0)
    assert type(row.ratio) is float and type(row.either) is float  # an int made a float, as before
    label = Label("x")
    assert from_data(Row, {"name": label}).name is label  # a str subclass: the converter keeps it


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"count": True}, "Row.count: expected an integer"),
        ({"level": False}, "Row.level: expected an integer"),
        ({"ratio": "1"}, "Row.ratio: expected a number"),
        ({"flag": 1}, "Row.flag: expected bool"),
        ({"name": None}, "Row.name: expected str"),
        ({"note": 3}, "Row.note: expected str"),
        ({"other": 1}, "Row: unknown field(s) ['other']"),
    ],
)
def test_wrong_types_are_still_refused(data: dict, message: str) -> None:
    with pytest.raises(DataFormatError, match=re.escape(message)):
        from_data(Row, data)


def test_element_facts_from_the_reader_are_checked() -> None:
    facts = from_data(ElementFacts, {"tag": "input", "visible": True, "attrs": {"id": "f"}}, "facts")
    assert facts.tag == "input" and facts.visible is True and facts.attrs == {"id": "f"}
    with pytest.raises(DataFormatError, match=r"facts\.visible"):
        from_data(ElementFacts, {"tag": "input", "visible": "yes"}, "facts")
    with pytest.raises(DataFormatError, match=r"facts\.tag"):
        from_data(ElementFacts, {"tag": 7}, "facts")
