"""The GenAI child spans without a browser (`Guard.check` on recorded steps): the world model
and the utility agent as two ``chat`` spans when the consultation is split, one when they share
a call; a model that fails is an ``error.type`` and an error status on its span, and the step's
fail-closed decision on the parent; the GenAI metrics count each call."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from opentelemetry.trace import StatusCode

from pagewarden import Action, CascadeOptions, Guard, Observation
from pagewarden.telemetry import GEN_AI_DURATION, GEN_AI_TOKENS, SPAN_STEP
from pagewarden.testing import Reply, ScriptedLLM

from ._otel import Memory

FINE = {"policy_violation": False, "violated_policy_ids": [], "goal_deviation": False}
FINE_SPLIT = {
    "semantic_delta": "",
    "violated_policy_ids": [],
    "policy_violation": False,
    "goal_deviation": False,
}


@pytest.fixture
def llm() -> Iterator[ScriptedLLM]:
    with ScriptedLLM() as server:
        yield server


def _check(guard: Guard) -> None:
    step = guard.make_step(
        Action(kind="goto", method="Page.goto", value="http://docs.test/guide"),
        Observation(url="http://app.test/"),
    )
    guard.check(step)


def test_split_consultation_is_two_chat_spans(llm: ScriptedLLM) -> None:
    llm.on(None, FINE_SPLIT)
    memory = Memory.new()
    cascade = CascadeOptions(consult="always", split=True)
    guard = Guard(goal="Read the guide.", llm=llm.config(), cascade=cascade, telemetry=memory.pair)
    _check(guard)
    guard.close()
    (step,) = memory.finished(SPAN_STEP)
    chats = [
        s for s in memory.finished() if s.parent is not None and s.parent.span_id == step.context.span_id
    ]
    assert sorted(dict(s.attributes or {})["pagewarden.llm.purpose"] for s in chats) == [
        "utility",
        "worldmodel",
    ]
    assert len(llm.chat_requests) == 2 == dict(step.attributes or {})["pagewarden.llm.calls"]
    inputs = sum(dict(s.attributes or {})["gen_ai.usage.input_tokens"] for s in chats)
    assert inputs == dict(step.attributes or {})["pagewarden.llm.input_tokens"] > 0
    assert all(step.start_time <= s.start_time <= s.end_time <= step.end_time for s in chats)
    tokens = memory.points(GEN_AI_TOKENS)
    assert sum(p.count for a, p in tokens if a["gen_ai.token.type"] == "input") == 2
    assert sum(p.sum for a, p in tokens if a["gen_ai.token.type"] == "input") == inputs


def test_a_failed_model_call_is_an_error_span_and_the_step_fails_closed(llm: ScriptedLLM) -> None:
    llm.on(None, [Reply.error(500)] * 10)
    memory = Memory.new()
    cascade = CascadeOptions(consult="always")
    guard = Guard(goal="Read the guide.", llm=llm.config(retries=1), cascade=cascade, telemetry=memory.pair)
    _check(guard)
    guard.close()
    (step,) = memory.finished(SPAN_STEP)
    attrs = dict(step.attributes or {})
    assert attrs["pagewarden.llm.error_kind"] == "unavailable" and attrs["pagewarden.tier_errors"] == 1
    (chat,) = [s for s in memory.finished() if s.name.startswith("chat ")]
    assert chat.status.status_code is StatusCode.ERROR
    assert dict(chat.attributes or {})["error.type"] == "unavailable"
    assert dict(chat.attributes or {})["pagewarden.llm.attempts"] == 2  # the first try and one retry
    (point,) = memory.points(GEN_AI_DURATION)
    assert point[0]["error.type"] == "unavailable" and point[1].count == 1
