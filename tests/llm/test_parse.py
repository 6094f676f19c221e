"""Output parsing: JSON (fenced, bare, repaired), then XML, then structured text."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel, Field

from pagewarden.llm import OutputParseError, parse_output, repair_json


class Changes(BaseModel):
    new: list[str] = Field(default_factory=list)
    removed: list[str] = Field(default_factory=list)


class Answer(BaseModel):
    policy_violation: bool
    violated_policy_ids: list[str] = Field(default_factory=list)
    explanation: str = ""
    element_changes: Changes = Field(default_factory=Changes)


EXPECTED = Answer(policy_violation=True, violated_policy_ids=["P1", "P2"], explanation="leaks the token")


@pytest.mark.parametrize(
    "text",
    [
        '{"policy_violation": true, "violated_policy_ids": ["P1", "P2"], "explanation": "leaks the token"}',
        'Here is my answer:\n```json\n{"policy_violation": true, "violated_policy_ids": ["P1","P2"],'
        ' "explanation": "leaks the token"}\n```\nHope it helps.',
        'Sure! {"policy_violation": true, "violated_policy_ids": ["P1", "P2"], '
        '"explanation": "leaks the token"} -- end',
        "{'policy_violation': True, 'violated_policy_ids': ['P1', 'P2'], 'explanation': 'leaks the token',}",
        '{policy_violation: true, violated_policy_ids: ["P1", "P2",], // ids\n'
        ' explanation: "leaks the token"}',
        '<think>the user wants JSON {"x": 1}</think>{"policy_violation": true, "violated_policy_ids": '
        '["P1", "P2"], "explanation": "leaks the token"}',
        '{"answer": {"policy_violation": true, "violated_policy_ids": ["P1", "P2"], '
        '"explanation": "leaks the token"}}',
    ],
)
def test_json_variants(text: str) -> None:
    assert parse_output(text, Answer) == EXPECTED


def test_truncated_json_is_repaired() -> None:
    text = '{"policy_violation": true, "violated_policy_ids": ["P1", "P2"], "explanation": "leaks the tok'
    parsed = parse_output(text, Answer)
    assert parsed.policy_violation is True
    assert parsed.violated_policy_ids == ["P1", "P2"]
    assert parsed.explanation.startswith("leaks")
    # Cut inside a key: the dangling key is dropped.
    cut = parse_output('{"policy_violation": false, "violated_policy_ids": [], "expla', Answer)
    assert cut == Answer(policy_violation=False)


def test_repair_json_cases() -> None:
    assert json.loads(repair_json('{"a": [1, 2,], }')) == {"a": [1, 2]}
    assert json.loads(repair_json("{'a': None, b: False}")) == {"a": None, "b": False}
    assert json.loads(repair_json('{"a": "x\ny"')) == {"a": "x\ny"}
    assert json.loads(repair_json('{"a": {"b": [1, ')) == {"a": {"b": [1]}}
    assert json.loads(repair_json("{'it\\'s': 'a \"quote\"'}")) == {"it's": 'a "quote"'}


def test_xml() -> None:
    text = (
        "<answer><policy_violation>true</policy_violation>"
        "<violated_policy_ids><id>P1</id><id>P2</id></violated_policy_ids>"
        "<explanation>leaks the token</explanation>"
        "<element_changes><new><item>dialog</item></new></element_changes></answer>"
    )
    parsed = parse_output(text, Answer)
    assert parsed.violated_policy_ids == ["P1", "P2"]
    assert parsed.element_changes.new == ["dialog"]
    bare = "<policy_violation>no</policy_violation><violated_policy_ids>none</violated_policy_ids>"
    assert parse_output(bare, Answer) == Answer(policy_violation=False)


def test_structured_text() -> None:
    text = "**Policy violation**: yes\nViolated policy ids: P1, P2\nExplanation: leaks\n  the token\n"
    parsed = parse_output(text, Answer)
    assert parsed.policy_violation is True
    assert parsed.violated_policy_ids == ["P1", "P2"]
    assert parsed.explanation == "leaks the token"
    bullets = parse_output("policy_violation: true\nviolated_policy_ids:\n- P1\n- P2\n", Answer)
    assert bullets.violated_policy_ids == ["P1", "P2"]


@pytest.mark.parametrize(
    "text",
    ["", "   ", "I cannot judge this.", '{"policy_violation": "perhaps"}', "<html><body>502</body></html>",
     '{"violated_policy_ids": ["P1"]}'],
)  # fmt: skip
def test_garbage_is_an_error_not_a_guess(text: str) -> None:
    with pytest.raises(OutputParseError):
        parse_output(text, Answer)


def test_hostile_nesting_does_not_crash() -> None:
    with pytest.raises(OutputParseError):
        parse_output("[" * 50_000, Answer)
    with pytest.raises(OutputParseError):
        parse_output("{" * 50_000, Answer)


@pytest.mark.parametrize(
    "text",
    [
        '{"policy_violation": false} Actually, on reflection: {"policy_violation": true}',
        '[{"policy_violation": false}, {"policy_violation": true}]',
        '```json\n{"policy_violation": false}\n```\n```json\n{"policy_violation": true}\n```',
    ],
)
def test_answers_that_disagree_with_themselves_are_not_read_as_the_first(text: str) -> None:
    with pytest.raises(OutputParseError, match="disagree"):
        parse_output(text, Answer)


def test_one_answer_given_twice_or_with_nested_objects_is_read() -> None:
    one = json.dumps(EXPECTED.model_dump())
    assert parse_output(f"```json\n{one}\n```\nSo the answer is {one}", Answer) == EXPECTED
    nested = {**EXPECTED.model_dump(), "element_changes": {"new": ["banner"], "removed": []}}
    assert parse_output(json.dumps(nested), Answer).element_changes.new == ["banner"]
