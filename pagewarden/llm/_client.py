"""`LLMClient`: one async client for every OpenAI-compatible endpoint.

``await client.complete(messages, schema=Model)`` returns an `LLMResult` whose `parsed` is a
validated ``Model``, or raises an `LLMError` (`LLMUnavailable`, `LLMRefused`,
`LLMOutputError`) — never anything else. ``client.complete_sync(...)`` is the same call for
synchronous code. All calls of all clients run on one background event loop per process
(`pagewarden._loop`), so the rate limit, the concurrency limit and the HTTP connection pool
are shared whatever loop or thread a call comes from, and the `AsyncOpenAI` client always
runs on the loop it is bound to.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import email.utils
import json
import random
import re
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Generic, TypeVar

import openai
from asyncio_throttle import Throttler
from pydantic import BaseModel

from pagewarden._loop import BackgroundLoop, background_loop
from pagewarden.llm._cache import ResponseCache, cache_key
from pagewarden.llm._config import LLMConfig
from pagewarden.llm._errors import LLMError, LLMOutputError, LLMRefused, LLMUnavailable
from pagewarden.llm._parse import OutputParseError, parse_output
from pagewarden.llm._tokens import estimate_tokens

__all__ = ["LLMClient", "LLMResult", "LLMStats", "Message", "Usage", "json_schema_of"]

M = TypeVar("M", bound=BaseModel)
#: A chat message: ``{"role": "system" | "user" | "assistant", "content": str}``.
Message = Mapping[str, str]

_ROLES = frozenset({"system", "user", "assistant"})
_FORMAT_REJECTED = re.compile(r"response_format|json_schema|json_object|schema|grammar", re.IGNORECASE)
_BOUNDARY_MARK = "\u27e6boundary\u27e7"
_NEXT_MODE = {"json_schema": "json_object", "json_object": "text", "text": "text"}


@dataclass(frozen=True, slots=True)
class Usage:
    """Tokens of one call (`estimated` when the server reported none)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    estimated: bool = False

    @property
    def total_tokens(self) -> int:
        """Prompt and completion tokens together."""
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True, slots=True)
class LLMResult(Generic[M]):
    """A model's answer: the validated object (None without a schema) and its accounting."""

    parsed: M | None
    text: str
    usage: Usage = field(default_factory=Usage)
    latency_ms: float = 0.0  # wall time of the whole call, retries and back-off included
    cached: bool = False
    attempts: int = 1  # HTTP requests made (0 for a cache hit)
    model: str = ""
    mode: str = "text"  # structured output used: json_schema | json_object | text
    cost_usd: float | None = None

    def accounting(self) -> dict[str, Any]:
        """Tokens, latency, cache and cost as plain data (for verdicts and traces)."""
        return {
            "model": self.model,
            "mode": self.mode,
            "prompt_tokens": self.usage.prompt_tokens,
            "completion_tokens": self.usage.completion_tokens,
            "tokens_estimated": self.usage.estimated,
            "latency_ms": round(self.latency_ms, 3),
            "cached": self.cached,
            "attempts": self.attempts,
            **({"cost_usd": self.cost_usd} if self.cost_usd is not None else {}),
        }


@dataclass(slots=True)
class LLMStats:
    """Running totals of one client (thread-safe snapshot with `as_dict`)."""

    calls: int = 0
    cache_hits: int = 0
    failures: int = 0
    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_ms: float = 0.0
    cost_usd: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        """The totals as plain data."""
        return asdict(self)


def json_schema_of(schema: type[BaseModel]) -> dict[str, Any]:
    """The model's JSON schema with every ``$ref`` inlined (llama.cpp's grammar needs no refs),
    compact: no generated ``title`` keywords and no class docstrings (they only cost prompt
    tokens); descriptions given with ``Field(description=…)`` stay."""
    raw = schema.model_json_schema()
    defs = raw.pop("$defs", {})
    for model in (raw, *defs.values()):
        if isinstance(model, dict) and model.get("type") == "object":
            model.pop("description", None)

    def inline(node: Any, depth: int = 0, names: bool = False) -> Any:
        if depth > 32:
            return {}
        if isinstance(node, dict):
            if names:  # the keys of `properties` are field names, not keywords
                return {k: inline(v, depth + 1) for k, v in node.items()}
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                target = copy.deepcopy(defs.get(ref.removeprefix("#/$defs/"), {}))
                merged = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
                return inline(merged, depth + 1)
            return {
                k: inline(v, depth + 1, names=k in ("properties", "$defs"))
                for k, v in node.items()
                if k != "title" or not isinstance(v, str)
            }
        if isinstance(node, list):
            return [inline(v, depth + 1) for v in node]
        return node

    return inline(raw)


def _normalise(messages: str | Sequence[Message]) -> list[dict[str, str]]:
    if isinstance(messages, str):
        return [{"role": "user", "content": messages}]
    out = []
    for index, message in enumerate(messages):
        role, content = message.get("role"), message.get("content")
        if role not in _ROLES or not isinstance(content, str):
            raise ValueError(f"messages[{index}] must be {{'role': system|user|assistant, 'content': str}}")
        out.append({"role": role, "content": content})
    if not out:
        raise ValueError("messages must not be empty")
    return out


def _retry_after(exc: openai.APIStatusError) -> float | None:
    """Seconds the server asked us to wait (Retry-After / retry-after-ms), if it said."""
    headers = exc.response.headers if exc.response is not None else {}
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        parsed = email.utils.parsedate_to_datetime(value) if value else None
        if parsed is None:
            return None
        return max(0.0, parsed.timestamp() - time.time())


def _status_text(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        message = inner.get("message") if isinstance(inner, dict) else inner
        return str(message)[:300]
    return str(exc.message)[:300]


class _Transient(Exception):
    """One request failed in a way worth retrying."""

    def __init__(self, reason: str, retry_after: float | None = None) -> None:
        self.reason = reason
        self.retry_after = retry_after
        super().__init__(reason)


class _FormatRejected(Exception):
    """The endpoint rejected the structured-output mode of the request."""


class LLMClient:
    """Async client over `openai.AsyncOpenAI` with throttling, retries, parsing and accounting.

    Args:
        config: the endpoint and its limits (`LLMConfig`).
        loop: the background loop the calls run on (default: the process-wide one).
    """

    def __init__(self, config: LLMConfig, *, loop: BackgroundLoop | None = None) -> None:
        if not isinstance(config, LLMConfig):
            raise TypeError(f"config must be an LLMConfig, not {type(config).__name__}")
        self.config = config
        self._loop = loop or background_loop()
        self._openai: openai.AsyncOpenAI | None = None
        self._semaphore: asyncio.Semaphore | None = None
        self._throttler = (
            Throttler(rate_limit=config.requests_per_minute, period=60.0)
            if config.requests_per_minute
            else None
        )
        self._mode: str | None = None if config.structured_output == "auto" else config.structured_output
        self._trying = "json_schema"  # while `auto` is unsettled: the mode to try next
        self._cache = ResponseCache(config.cache_dir) if config.cache_dir is not None else None
        self._stats = LLMStats()
        self._lock = threading.Lock()
        self._closed = False

    # -- public ---------------------------------------------------------------------------------
    @property
    def structured_mode(self) -> str | None:
        """The structured-output mode in use (None while `auto` has not been settled yet)."""
        return self._mode

    @property
    def stats(self) -> LLMStats:
        """A snapshot of the running totals."""
        with self._lock:
            return LLMStats(**self._stats.as_dict())

    async def complete(
        self,
        messages: str | Sequence[Message],
        *,
        schema: type[M] | None = None,
        boundary: str | None = None,
        deadline: float | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
    ) -> LLMResult[M]:
        """Ask the model; with `schema`, the answer parsed and validated into it.

        Args:
            messages: a prompt string (one user message) or chat messages.
            schema: a pydantic model the answer must fit (JSON, XML or ``key: value`` text).
            boundary: the random fence of untrusted data inside `messages`, if any: the cache
                key replaces it by a placeholder, so a repeated prompt hits the cache.
            deadline: seconds this call may take in all (retries and back-off included).
            max_tokens / temperature: override the config for this call.

        Raises:
            LLMUnavailable, LLMRefused, LLMOutputError (all `LLMError`), or ValueError for
            malformed `messages`.
        """
        chat = _normalise(messages)
        if self._closed:
            raise LLMUnavailable("the client is closed")
        until = time.monotonic() + deadline if deadline is not None else None
        return await self._loop.wrap(self._complete(chat, schema, boundary, until, max_tokens, temperature))

    def complete_sync(
        self,
        messages: str | Sequence[Message],
        *,
        schema: type[M] | None = None,
        boundary: str | None = None,
        deadline: float | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
    ) -> LLMResult[M]:
        """`complete` for synchronous code: runs on the background loop and waits for it.

        Safe from any thread, including one whose own event loop is running (it blocks that
        thread meanwhile); not from inside a coroutine on the background loop itself.
        """
        chat = _normalise(messages)
        if self._closed:
            raise LLMUnavailable("the client is closed")
        until = time.monotonic() + deadline if deadline is not None else None
        return self._loop.run(self._complete(chat, schema, boundary, until, max_tokens, temperature))

    async def probe(self, *, timeout: float = 10.0) -> None:
        """Check that the endpoint answers at all, without a model call: ``GET …/models``.

        Any HTTP answer counts as reachable (a server without that route answers 404), except
        401 and 403: the endpoint rejects the API key, so every call would fail.

        Raises:
            LLMUnavailable: nothing answered within `timeout` seconds (connection refused, an
                unknown host, a timeout), or the key was rejected. Its `reason` names the
                endpoint (no key) and why.
        """
        if self._closed:
            raise LLMUnavailable("the client is closed")
        await self._loop.wrap(self._probe(timeout))

    def probe_sync(self, *, timeout: float = 10.0) -> None:
        """`probe` for synchronous code."""
        if self._closed:
            raise LLMUnavailable("the client is closed")
        self._loop.run(self._probe(timeout))

    async def _probe(self, timeout: float) -> None:
        where = self.config.base_url
        try:
            async with asyncio.timeout(timeout):
                await self._client().models.list(timeout=timeout)
        except (TimeoutError, openai.APITimeoutError):
            raise LLMUnavailable(f"cannot reach {where}: no answer within {timeout:.1f} s") from None
        except openai.APIConnectionError as exc:
            cause = exc.__cause__ or exc
            raise LLMUnavailable(f"cannot reach {where}: {type(cause).__name__}") from None
        except openai.APIStatusError as exc:
            if exc.status_code in (401, 403):
                raise LLMUnavailable(f"{where} rejected the API key ({exc.status_code})") from None
        except openai.APIError:
            pass  # it answered, with something the SDK cannot read: reachable

    async def aclose(self) -> None:
        """Close the HTTP connections (the client cannot be used afterwards)."""
        self._closed = True
        client, self._openai = self._openai, None
        if client is not None:
            await self._loop.wrap(client.close())

    def close(self) -> None:
        """`aclose` for synchronous code."""
        self._closed = True
        client, self._openai = self._openai, None
        if client is not None and not self._loop.in_loop_thread():
            with contextlib.suppress(Exception):  # closing a dead connection pool is best effort
                self._loop.run(client.close(), timeout=5.0)

    def __repr__(self) -> str:
        return f"LLMClient({self.config.describe()}, mode={self._mode or 'auto'})"

    # -- one call -------------------------------------------------------------------------------
    async def _complete(
        self,
        chat: list[dict[str, str]],
        schema: type[M] | None,
        boundary: str | None,
        until: float | None,
        max_tokens: int | None,
        temperature: float | None,
    ) -> LLMResult[M]:
        started = time.monotonic()
        json_schema = json_schema_of(schema) if schema is not None else None
        temp = self.config.temperature if temperature is None else temperature
        limit = max_tokens or self.config.max_tokens
        key = None
        if self._cache is not None:
            keyed = chat
            if boundary:
                keyed = [{**m, "content": m["content"].replace(boundary, _BOUNDARY_MARK)} for m in chat]
            key = cache_key(self.config.model, keyed, json_schema, temperature=temp)
            hit = self._cache.get(key)
            if hit is not None:
                try:
                    parsed = parse_output(hit["text"], schema) if schema is not None else None
                except OutputParseError:
                    parsed = None
                if schema is None or parsed is not None:
                    usage = Usage(int(hit.get("prompt_tokens", 0)), int(hit.get("completion_tokens", 0)))
                    result = LLMResult(
                        parsed, hit["text"], usage, (time.monotonic() - started) * 1000, True, 0,
                        self.config.model, str(hit.get("mode", "text")), None,
                    )  # fmt: skip
                    self._account(result, failed=False)
                    return result
        if self._semaphore is None:
            self._semaphore = asyncio.Semaphore(self.config.concurrency)
        attempts = 0
        prompt_tokens = completion_tokens = 0
        estimated = False
        conversation = list(chat)
        last_text: str | None = None
        problem = ""
        try:
            async with self._semaphore:
                for _ in range(self.config.format_retries + 1):
                    text, usage, mode, made = await self._request(conversation, schema, json_schema, temp,
                                                                  limit, until)  # fmt: skip
                    attempts += made
                    prompt_tokens += usage.prompt_tokens
                    completion_tokens += usage.completion_tokens
                    estimated = estimated or usage.estimated
                    last_text = text
                    try:
                        parsed = parse_output(text, schema) if schema is not None else None
                    except OutputParseError as exc:
                        problem = str(exc)
                        conversation = [*chat, *self._format_retry(text, problem, schema is not None)]
                        continue
                    if schema is None and not text.strip():
                        problem = "the answer was empty"
                        conversation = [*chat, *self._format_retry(text, problem, False)]
                        continue
                    total = Usage(prompt_tokens, completion_tokens, estimated)
                    result = LLMResult(
                        parsed, text, total, (time.monotonic() - started) * 1000, False, attempts,
                        self.config.model, mode, self.config.cost(prompt_tokens, completion_tokens),
                    )  # fmt: skip
                    if self._cache is not None and key is not None:
                        entry = {"text": text, "prompt_tokens": prompt_tokens,
                                 "completion_tokens": completion_tokens, "mode": mode}  # fmt: skip
                        self._cache.put(key, entry)
                    self._account(result, failed=False)
                    return result
        except LLMError as exc:
            exc.attempts = exc.attempts or attempts
            self._account_failure(attempts, prompt_tokens, completion_tokens, started)
            raise
        except Exception as exc:  # noqa: BLE001 - callers get LLMError and nothing else
            self._account_failure(attempts, prompt_tokens, completion_tokens, started)
            raise LLMUnavailable(f"unexpected failure: {type(exc).__name__}", attempts=attempts) from None
        self._account_failure(attempts, prompt_tokens, completion_tokens, started)
        tries = self.config.format_retries + 1
        raise LLMOutputError(
            f"no usable answer after {tries} attempt{'s' if tries > 1 else ''}: {problem[:300]}",
            attempts=attempts,
            text=last_text,
        )

    def _format_retry(self, text: str, problem: str, structured: bool) -> list[dict[str, str]]:
        ask = (
            "Your previous answer could not be used: "
            + problem[:400]
            + (". Reply again with only the JSON object, exactly as the schema says." if structured
               else ". Reply again.")
        )  # fmt: skip
        return [{"role": "assistant", "content": text[:4000] or "(empty)"}, {"role": "user", "content": ask}]

    def _account(self, result: LLMResult[Any], *, failed: bool) -> None:
        with self._lock:
            stats = self._stats
            stats.calls += 1
            stats.cache_hits += result.cached
            stats.failures += failed
            stats.requests += result.attempts
            stats.prompt_tokens += result.usage.prompt_tokens
            stats.completion_tokens += result.usage.completion_tokens
            stats.latency_ms += result.latency_ms
            stats.cost_usd += result.cost_usd or 0.0

    def _account_failure(self, attempts: int, prompt: int, completion: int, started: float) -> None:
        failed = LLMResult(None, "", Usage(prompt, completion), (time.monotonic() - started) * 1000,
                           attempts=attempts, cost_usd=self.config.cost(prompt, completion))  # fmt: skip
        self._account(failed, failed=True)

    # -- one answer, with transport retries -----------------------------------------------------
    def _client(self) -> openai.AsyncOpenAI:
        if self._openai is None:
            self._openai = openai.AsyncOpenAI(
                base_url=self.config.base_url,
                api_key=self.config.secret_key() or "not-needed",
                max_retries=0,
                timeout=self.config.timeout,
                default_headers=dict(self.config.headers) or None,
            )
        return self._openai

    def _response_format(self, mode: str, schema: type[BaseModel] | None, json_schema: dict | None) -> Any:
        if schema is None or json_schema is None or mode == "text":
            return None
        if mode == "json_schema":
            name = re.sub(r"[^A-Za-z0-9_\-]", "_", schema.__name__)[:64] or "answer"
            spec = {"name": name, "schema": json_schema, "strict": False}
            return {"type": "json_schema", "json_schema": spec}
        return {"type": "json_object", "schema": json_schema}

    def _with_hint(
        self, chat: list[dict[str, str]], mode: str, json_schema: dict | None
    ) -> list[dict[str, str]]:
        """Outside `json_schema` mode the model sees the schema in the prompt (last user turn)."""
        if json_schema is None or mode == "json_schema":
            return chat
        hint = (
            "\n\nAnswer with one JSON object only (no prose, no code fence), matching this JSON Schema:\n"
            + json.dumps(json_schema, separators=(",", ":"), ensure_ascii=False)
        )
        out = [dict(m) for m in chat]
        for message in reversed(out):
            if message["role"] == "user":
                message["content"] += hint
                return out
        return [*out, {"role": "user", "content": hint.strip()}]

    def _remaining(self, until: float | None) -> float | None:
        return None if until is None else until - time.monotonic()

    async def _request(
        self,
        chat: list[dict[str, str]],
        schema: type[BaseModel] | None,
        json_schema: dict | None,
        temperature: float,
        max_tokens: int,
        until: float | None,
    ) -> tuple[str, Usage, str, int]:
        """One answer's text, usage and mode, and the requests it took."""
        made = 0
        failures = 0
        while True:
            mode = self._mode or self._trying
            remaining = self._remaining(until)
            if remaining is not None and remaining <= 0:
                raise LLMUnavailable("the deadline passed before the model answered", attempts=made)
            timeout = self.config.timeout if remaining is None else min(self.config.timeout, remaining)
            made += 1
            try:
                text, usage = await self._post(
                    chat, mode, schema, json_schema, temperature, max_tokens, timeout
                )
            except _FormatRejected:
                made -= 1  # a probe of the server's abilities, not a failure
                if schema is None or self._mode is not None:
                    raise LLMUnavailable(f"the endpoint rejected structured output mode {mode!r}") from None
                self._trying = _NEXT_MODE[mode]
                continue
            except _Transient as exc:
                failures += 1
                if failures > self.config.retries:
                    raise LLMUnavailable(
                        f"{exc.reason} (after {made} request{'s' if made > 1 else ''})", attempts=made
                    ) from None
                delay = min(self.config.backoff * 2 ** (failures - 1), self.config.backoff_max)
                delay = random.uniform(delay / 2, delay) if delay > 0 else 0.0
                if exc.retry_after is not None:
                    delay = max(delay, exc.retry_after)
                remaining = self._remaining(until)
                if remaining is not None and delay >= remaining:
                    raise LLMUnavailable(
                        f"{exc.reason}; the next retry (in {delay:.1f} s) would pass the deadline",
                        attempts=made,
                    ) from None
                await asyncio.sleep(delay)
                continue
            if schema is not None and self._mode is None:
                self._mode = mode  # settled by the first structured answer
            return text, usage, mode if schema is not None else "text", made

    async def _post(
        self,
        chat: list[dict[str, str]],
        mode: str,
        schema: type[BaseModel] | None,
        json_schema: dict | None,
        temperature: float,
        max_tokens: int,
        timeout: float,
    ) -> tuple[str, Usage]:
        messages = self._with_hint(chat, mode, json_schema)
        kwargs: dict[str, Any] = {
            "model": self.config.model,
            "messages": messages,
            "temperature": temperature,
            "max_tokens": max_tokens,
            "timeout": timeout,
        }
        response_format = self._response_format(mode, schema, json_schema)
        if response_format is not None:
            kwargs["response_format"] = response_format
        if self._throttler is not None:
            try:
                await asyncio.wait_for(self._throttler.acquire(), timeout)
            except TimeoutError:
                raise _Transient(f"the client's rate limit gave no slot within {timeout:.1f} s") from None
        try:
            async with asyncio.timeout(timeout):
                response = await self._client().chat.completions.create(**kwargs)
        except TimeoutError:
            raise _Transient(f"no answer within {timeout:.1f} s") from None
        except openai.APITimeoutError:
            raise _Transient(f"no answer within {timeout:.1f} s") from None
        except openai.APIConnectionError as exc:
            cause = exc.__cause__ or exc
            raise _Transient(f"cannot reach {self.config.base_url}: {type(cause).__name__}") from None
        except openai.APIStatusError as exc:
            status = exc.status_code
            detail = _status_text(exc)
            if (
                response_format is not None
                and self._mode is None
                and status in (400, 404, 415, 422, 500, 501)
                and _FORMAT_REJECTED.search(detail)
            ):
                raise _FormatRejected() from None
            if status == 429:
                raise _Transient("rate limited (429)", _retry_after(exc)) from None
            if status >= 500 or status in (408, 409):
                raise _Transient(f"server error {status}: {detail[:120]}", _retry_after(exc)) from None
            raise LLMUnavailable(f"the endpoint rejected the request: {status} {detail[:200]}") from None
        except openai.APIError as exc:
            raise _Transient(f"bad response: {type(exc).__name__}") from None
        except (ValueError, TypeError) as exc:
            raise _Transient(f"bad response: {type(exc).__name__}: {str(exc)[:120]}") from None
        return self._read(response, messages)

    def _read(self, response: Any, messages: list[dict[str, str]]) -> tuple[str, Usage]:
        choices = getattr(response, "choices", None) or []
        text = ""
        if choices:
            choice = choices[0]
            message = getattr(choice, "message", None)
            refusal = getattr(message, "refusal", None) if message is not None else None
            if refusal or getattr(choice, "finish_reason", None) == "content_filter":
                raise LLMRefused(f"the model refused: {str(refusal or 'content filter')[:200]}")
            text = (getattr(message, "content", None) or "") if message is not None else ""
        usage = getattr(response, "usage", None)
        prompt = getattr(usage, "prompt_tokens", None) if usage is not None else None
        completion = getattr(usage, "completion_tokens", None) if usage is not None else None
        if isinstance(prompt, int) and isinstance(completion, int):
            return text, Usage(prompt, completion)
        prompt_text = "\n".join(m["content"] for m in messages)
        return text, Usage(estimate_tokens(prompt_text), estimate_tokens(text), estimated=True)
