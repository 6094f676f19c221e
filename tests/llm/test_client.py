"""LLMClient against ScriptedLLM: structured output modes, parsing, retries, failures, cache."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from pydantic import BaseModel

from pagewarden.llm import (
    Fence,
    LLMClient,
    LLMConfig,
    LLMError,
    LLMOutputError,
    LLMRefused,
    LLMUnavailable,
)
from pagewarden.testing import Reply, ScriptedLLM

KEY = "sk-live-secret-0123456789abcdefghijklmn"


class Judgement(BaseModel):
    allowed: bool
    reason: str


GOOD = {"allowed": True, "reason": "the action serves the goal"}


def ask(client: LLMClient, prompt: str = "judge this", **kwargs):
    messages = [{"role": "system", "content": "You judge."}, {"role": "user", "content": prompt}]
    return client.complete_sync(messages, schema=Judgement, **kwargs)


def test_structured_answer_with_json_schema(scripted: ScriptedLLM) -> None:
    scripted.on("judge", GOOD)
    client = LLMClient(scripted.config(api_key=KEY))
    result = ask(client)
    assert result.parsed == Judgement(**GOOD)
    assert result.mode == "json_schema" and client.structured_mode == "json_schema"
    request = scripted.chat_requests[0]
    assert request.response_format["type"] == "json_schema"
    assert request.response_format["json_schema"]["schema"]["required"] == ["allowed", "reason"]
    assert request.headers["Authorization"] == f"Bearer {KEY}"
    assert result.usage.prompt_tokens > 0 and not result.usage.estimated
    assert result.attempts == 1 and not result.cached


def test_llama_cpp_style_server_falls_back_to_schema_in_json_object_once() -> None:
    with ScriptedLLM(reject_json_schema=True) as server:
        server.on("judge", GOOD)
        client = LLMClient(server.config())
        assert ask(client).parsed.allowed
        assert ask(client, "judge again").parsed.allowed
        kinds = [r.response_format["type"] for r in server.chat_requests]
        assert kinds == ["json_schema", "json_object", "json_object"]  # detected once
        assert server.chat_requests[1].response_format["schema"]["properties"]["allowed"]["type"] == "boolean"
        assert client.structured_mode == "json_object"
        # Outside json_schema mode the schema is also spelled out in the prompt.
        assert '"allowed"' in server.chat_requests[1].messages[-1]["content"]


def test_plain_text_mode_sends_no_response_format(scripted: ScriptedLLM) -> None:
    scripted.on("judge", "Allowed: yes\nReason: it is the user's goal")
    client = LLMClient(scripted.config(structured_output="text"))
    result = ask(client)
    assert result.parsed == Judgement(allowed=True, reason="it is the user's goal")
    assert scripted.chat_requests[0].response_format is None
    assert "JSON Schema" in scripted.chat_requests[0].messages[-1]["content"]


def test_format_retry_tells_the_model_what_was_wrong(scripted: ScriptedLLM) -> None:
    scripted.on("judge", [Reply.text("I think it is fine."), Reply.json(GOOD)])
    result = ask(LLMClient(scripted.config()))
    assert result.parsed.allowed and result.attempts == 2
    retry = scripted.chat_requests[1].messages
    assert retry[-2] == {"role": "assistant", "content": "I think it is fine."}
    assert "could not be used" in retry[-1]["content"]


@pytest.mark.parametrize(
    "bad",
    [Reply.text("no JSON here"), Reply.empty_choices(), Reply.text(""), Reply.json({"allowed": "maybe"})],
)
def test_unparsable_after_format_retries_is_an_output_error(scripted: ScriptedLLM, bad: Reply) -> None:
    scripted.on(None, bad)
    with pytest.raises(LLMOutputError) as info:
        ask(LLMClient(scripted.config(format_retries=2)))
    assert len(scripted.chat_requests) == 3
    assert info.value.attempts == 3


def test_truncated_json_is_repaired_without_a_retry(scripted: ScriptedLLM) -> None:
    scripted.on(None, Reply.truncated_json(GOOD, keep=0.8))
    result = ask(LLMClient(scripted.config()))
    assert result.parsed.allowed is True
    assert len(scripted.chat_requests) == 1


def test_refusal(scripted: ScriptedLLM) -> None:
    scripted.on(None, Reply.refused("I won't judge that"))
    with pytest.raises(LLMRefused, match="won't judge"):
        ask(LLMClient(scripted.config()))
    assert len(scripted.chat_requests) == 1


def test_5xx_is_retried_then_gives_up(scripted: ScriptedLLM) -> None:
    scripted.on("first", [Reply.error(502), Reply.error(503), Reply.json(GOOD)])
    scripted.on("second", Reply.error(500))
    client = LLMClient(scripted.config(retries=2))
    assert ask(client, "first").attempts == 3
    with pytest.raises(LLMUnavailable, match="server error 500"):
        ask(client, "second")
    assert len([r for r in scripted.chat_requests if "second" in r.prompt]) == 3


def test_429_honours_retry_after(scripted: ScriptedLLM) -> None:
    scripted.on(None, [Reply.rate_limited(retry_after=0.4), Reply.json(GOOD)])
    started = time.monotonic()
    result = ask(LLMClient(scripted.config(backoff=0.0, backoff_max=0.0)))
    assert result.parsed.allowed
    first, second = scripted.chat_requests
    assert second.received - first.received >= 0.4
    assert time.monotonic() - started >= 0.4


def test_retry_after_beyond_the_deadline_fails_at_once(scripted: ScriptedLLM) -> None:
    scripted.on(None, Reply.rate_limited(retry_after=120))
    with pytest.raises(LLMUnavailable, match="deadline"):
        ask(LLMClient(scripted.config()), deadline=5.0)
    assert len(scripted.chat_requests) == 1


def test_hanging_endpoint_times_out(scripted: ScriptedLLM) -> None:
    scripted.on(None, Reply.hang_forever())
    with pytest.raises(LLMUnavailable, match="no answer within") as info:
        ask(LLMClient(scripted.config(timeout=1.0, retries=1)))
    assert info.value.attempts == 2  # one retry, then the guard's caller hears of it


def test_slow_answer_past_the_deadline(scripted: ScriptedLLM) -> None:
    scripted.on(None, Reply.slow(GOOD, seconds=30))
    with pytest.raises(LLMUnavailable):
        ask(LLMClient(scripted.config(timeout=20, retries=3)), deadline=0.6)


def test_connection_refused_and_dropped() -> None:
    refused = LLMClient(LLMConfig(ScriptedLLM.refused_url(), "m", backoff=0.01, backoff_max=0.02, retries=1))
    with pytest.raises(LLMUnavailable, match="cannot reach"):
        ask(refused)
    with ScriptedLLM() as server:
        server.on(None, Reply.dropped())
        with pytest.raises(LLMUnavailable):
            ask(LLMClient(server.config(retries=1)))
        assert len(server.chat_requests) == 2


def test_non_json_http_body_is_unavailable_not_a_crash(scripted: ScriptedLLM) -> None:
    scripted.on(None, Reply(raw_body="<html>gateway</html>", status=200))
    with pytest.raises(LLMError):
        ask(LLMClient(scripted.config(retries=1)))


def test_auth_error_is_not_retried_and_hides_the_key(scripted: ScriptedLLM) -> None:
    scripted.on(None, Reply.error(401, "invalid api key"))
    with pytest.raises(LLMUnavailable) as info:
        ask(LLMClient(scripted.config(api_key=KEY)))
    assert "401" in str(info.value) and KEY not in str(info.value)
    assert len(scripted.chat_requests) == 1


def test_no_scripted_reply_is_a_clear_failure(scripted: ScriptedLLM) -> None:
    with pytest.raises(LLMUnavailable, match="no scripted reply"):
        ask(LLMClient(scripted.config()))


def test_usage_is_estimated_when_the_server_reports_none(scripted: ScriptedLLM) -> None:
    scripted.on(None, Reply.json(GOOD, usage=False))
    result = ask(LLMClient(scripted.config()))
    assert result.usage.estimated and result.usage.prompt_tokens > 0


def test_cache_hits_across_fences(scripted: ScriptedLLM, tmp_path: Path) -> None:
    scripted.on(None, GOOD)
    config = scripted.config(cache_dir=tmp_path / "cache")

    def fenced_call(client: LLMClient):
        fence = Fence.around("page text")
        return ask(client, fence.wrap("page", "page text"), boundary=fence.token)

    first = fenced_call(LLMClient(config))
    second = fenced_call(LLMClient(config))  # another client, another fence: same prompt
    assert not first.cached and second.cached and second.attempts == 0
    assert second.parsed == first.parsed
    assert len(scripted.chat_requests) == 1
    ask(LLMClient(config), "another prompt")
    assert len(scripted.chat_requests) == 2


def test_concurrency_limit(scripted: ScriptedLLM) -> None:
    scripted.on(None, Reply.slow(GOOD, seconds=0.3))
    client = LLMClient(scripted.config(concurrency=1))

    async def both():
        return await asyncio.gather(client.complete("judge a", schema=Judgement),
                                    client.complete("judge b", schema=Judgement))  # fmt: skip

    asyncio.run(both())
    first, second = sorted(scripted.chat_requests, key=lambda r: r.received)
    assert second.received - first.received >= 0.3


def test_rate_limit_waits_within_the_deadline(scripted: ScriptedLLM) -> None:
    scripted.on(None, GOOD)
    client = LLMClient(scripted.config(requests_per_minute=1, retries=0))
    ask(client)
    with pytest.raises(LLMUnavailable, match="rate limit"):
        ask(client, deadline=0.5)
    assert len(scripted.chat_requests) == 1


async def test_async_and_sync_calls_from_a_running_loop(scripted: ScriptedLLM) -> None:
    scripted.on(None, GOOD)
    client = LLMClient(scripted.config())
    assert (await client.complete("judge", schema=Judgement)).parsed.allowed
    # The sync form works from inside a running loop too (it blocks, it does not asyncio.run).
    assert client.complete_sync("judge", schema=Judgement).parsed.allowed
    stats = client.stats
    assert stats.calls == 2 and stats.requests == 2 and stats.failures == 0


async def test_cancelling_the_caller_cancels_the_call(scripted: ScriptedLLM) -> None:
    scripted.on("hang", Reply.hang_forever())
    scripted.on("judge", GOOD)
    client = LLMClient(scripted.config(timeout=60))
    task = asyncio.ensure_future(client.complete("hang", schema=Judgement))
    await asyncio.sleep(0.3)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert (await client.complete("judge", schema=Judgement)).parsed.allowed


def test_plain_text_without_schema(scripted: ScriptedLLM) -> None:
    scripted.on(None, "Just text.")
    result = LLMClient(scripted.config()).complete_sync("say something")
    assert result.parsed is None and result.text == "Just text." and result.mode == "text"
    assert scripted.chat_requests[0].response_format is None


def test_bad_messages_are_a_value_error(scripted: ScriptedLLM) -> None:
    client = LLMClient(scripted.config())
    with pytest.raises(ValueError, match="messages"):
        client.complete_sync([{"role": "tool", "content": "x"}])
    with pytest.raises(ValueError, match="empty"):
        client.complete_sync([])


def test_schema_sent_to_the_model_is_compact_and_keeps_given_descriptions() -> None:
    from pydantic import Field

    from pagewarden.judge._answers import Assessment
    from pagewarden.llm import json_schema_of

    class Inner(BaseModel):
        """A docstring the model does not need."""

        title: str = Field(description="the heading shown to the user")

    class Outer(BaseModel):
        """Another docstring."""

        inner: Inner
        n: int

    schema = json_schema_of(Outer)
    assert schema == {
        "properties": {
            "inner": {
                "properties": {"title": {"description": "the heading shown to the user", "type": "string"}},
                "required": ["title"],
                "type": "object",
            },
            "n": {"type": "integer"},
        },
        "required": ["inner", "n"],
        "type": "object",
    }
    text = str(json_schema_of(Assessment))
    assert "title" not in text and "$ref" not in text and "policy_violation" in text
