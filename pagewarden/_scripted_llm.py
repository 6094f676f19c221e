"""`ScriptedLLM`: an OpenAI-compatible HTTP server on 127.0.0.1 that answers from a script.

For tests (ours and users'): no model is needed, the answers are the ones a competent model
would give, and the endpoint can misbehave on demand. Every request is recorded.

    with ScriptedLLM() as llm:
        llm.on("Delete repository", {"policy_violation": True, ...})   # JSON answer
        llm.on(re.compile(r"click .*Save"), Reply.text("looks fine"))
        llm.on(None, [Reply.error(500), Reply.json({...})])             # 500 once, then an answer
        guard = Guard(llm=llm.config())
        ...
        llm.requests[-1].prompt                                         # what the model was asked

Rules are tried in the order they were added; the first that matches and has uses left
answers. A list of replies is given one after the other (the last one repeats). With no
matching rule the server answers `default`, or HTTP 400 "no scripted reply" if none is set.
`Reply.computed(fn)` answers what `fn(request)` returns (a scripted agent that reads the
page from the prompt).
Faults: `Reply.slow`, `Reply.hang_forever`, `Reply.error` (5xx), `Reply.rate_limited` (429 with
Retry-After), `Reply.text` (non-JSON), `Reply.truncated_json`, `Reply.empty_choices`,
`Reply.refused`, `Reply.dropped`; `ScriptedLLM.refused_url()` is a URL where nothing
listens (connection refused). ``reject_json_schema=True`` behaves like llama.cpp's server:
a ``json_schema`` response format is refused with HTTP 500.
"""

from __future__ import annotations

import contextlib
import json
import re
import socket
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["Reply", "ScriptedLLM", "ScriptedRequest"]


@dataclass(frozen=True, slots=True)
class ScriptedRequest:
    """A request the server received."""

    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    received: float = 0.0  # time.monotonic() when the request arrived

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The chat messages sent."""
        messages = self.body.get("messages")
        return messages if isinstance(messages, list) else []

    @property
    def prompt(self) -> str:
        """All message contents joined (what rules match against)."""
        return "\n\n".join(str(m.get("content", "")) for m in self.messages if isinstance(m, dict))

    def content(self, role: str) -> str:
        """The contents of the messages of `role`, joined."""
        return "\n\n".join(str(m.get("content", "")) for m in self.messages if m.get("role") == role)

    @property
    def response_format(self) -> dict[str, Any] | None:
        """The requested response format, if any."""
        value = self.body.get("response_format")
        return value if isinstance(value, dict) else None


@dataclass(frozen=True, slots=True)
class Reply:
    """One scripted answer (or misbehaviour)."""

    content: str | None = ""
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds before answering
    hang: bool = False  # never answer (until the server stops)
    disconnect: bool = False  # close the connection without answering
    choices: bool = True  # False: an empty `choices` list
    refusal: str | None = None
    finish_reason: str = "stop"
    raw_body: str | None = None  # sent as-is instead of a completion (a broken server)
    usage: bool = True  # report token usage
    #: computes the content from the request (a str as is, anything else as JSON)
    compute: Callable[[ScriptedRequest], Any] | None = None

    @classmethod
    def json(cls, data: Any, **kwargs: Any) -> Reply:
        """An answer whose content is `data` as JSON."""
        return cls(json.dumps(data), **kwargs)

    @classmethod
    def computed(cls, compute: Callable[[ScriptedRequest], Any], **kwargs: Any) -> Reply:
        """An answer computed from the request when it arrives (an agent's next action that
        depends on what the page shows): a string is the content, anything else JSON."""
        return cls(None, compute=compute, **kwargs)

    @classmethod
    def text(cls, text: str, **kwargs: Any) -> Reply:
        """An answer with this exact content (e.g. prose instead of JSON)."""
        return cls(text, **kwargs)

    @classmethod
    def truncated_json(cls, data: Any, keep: float = 0.6) -> Reply:
        """The JSON of `data` cut off after `keep` of its length, as a token limit does."""
        text = json.dumps(data)
        return cls(text[: max(1, int(len(text) * keep))], finish_reason="length")

    @classmethod
    def slow(cls, data: Any, seconds: float) -> Reply:
        """`data` (JSON unless a string) after `seconds`."""
        return cls(data if isinstance(data, str) else json.dumps(data), delay=seconds)

    @classmethod
    def hang_forever(cls) -> Reply:
        """No answer at all (the connection stays open until the server stops)."""
        return cls(hang=True)

    @classmethod
    def error(cls, status: int = 500, message: str = "internal error") -> Reply:
        """An HTTP error with an OpenAI-style error body."""
        body = json.dumps({"error": {"message": message, "type": "server_error"}})
        return cls(status=status, raw_body=body)

    @classmethod
    def rate_limited(cls, retry_after: float = 1.0) -> Reply:
        """HTTP 429 with a Retry-After header."""
        body = json.dumps({"error": {"message": "rate limit reached", "type": "rate_limit_error"}})
        return cls(status=429, headers={"Retry-After": f"{retry_after:g}"}, raw_body=body)

    @classmethod
    def empty_choices(cls) -> Reply:
        """A completion with no choices."""
        return cls(choices=False)

    @classmethod
    def refused(cls, message: str = "I can't help with that.") -> Reply:
        """A refusal (the `refusal` field set, no content)."""
        return cls(None, refusal=message)

    @classmethod
    def dropped(cls) -> Reply:
        """The connection closed without an answer."""
        return cls(disconnect=True)


Match = str | re.Pattern[str] | Callable[[ScriptedRequest], bool] | None
Answer = Reply | str | dict | list


def _as_reply(answer: Any) -> Reply:
    if isinstance(answer, Reply):
        return answer
    if isinstance(answer, str):
        return Reply(answer)
    return Reply.json(answer)


@dataclass(slots=True)
class _Rule:
    match: Match
    replies: list[Reply]
    times: int | None
    used: int = 0

    def matches(self, request: ScriptedRequest) -> bool:
        if self.times is not None and self.used >= self.times:
            return False
        if self.match is None:
            return True
        if isinstance(self.match, str):
            return self.match in request.prompt
        if isinstance(self.match, re.Pattern):
            return self.match.search(request.prompt) is not None
        return bool(self.match(request))

    def take(self) -> Reply:
        reply = self.replies[min(self.used, len(self.replies) - 1)]
        self.used += 1
        return reply


def _estimate(text: str) -> int:
    return (len(text) + 3) // 4


class ScriptedLLM:
    """An OpenAI-compatible chat-completions server answering from scripted rules.

    Args:
        model: the model name it reports (any name is accepted in requests).
        default: the answer when no rule matches (None: HTTP 400 "no scripted reply").
        reject_json_schema: refuse ``response_format: json_schema`` like llama.cpp does.
    """

    def __init__(
        self, *, model: str = "scripted", default: Answer | None = None, reject_json_schema: bool = False
    ) -> None:
        self.model = model
        self.default: Reply | None = _as_reply(default) if default is not None else None
        self.reject_json_schema = reject_json_schema
        self.requests: list[ScriptedRequest] = []
        self._rules: list[_Rule] = []
        self._lock = threading.Lock()
        self._closing = threading.Event()
        server = self

        class _Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def _send(self, status: int, body: str, headers: dict[str, str] | None = None) -> None:
                payload = body.encode("utf-8")
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(payload)

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    body = {"object": "list", "data": [{"id": server.model, "object": "model"}]}
                    self._send(200, json.dumps(body))
                else:
                    self._send(404, json.dumps({"error": {"message": "not found"}}))

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {"_raw": raw.decode("utf-8", "replace")}
                request = ScriptedRequest(
                    "POST",
                    self.path,
                    dict(self.headers.items()),
                    body if isinstance(body, dict) else {},
                    time.monotonic(),
                )
                with server._lock:
                    server.requests.append(request)
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, json.dumps({"error": {"message": f"no route {self.path}"}}))
                    return
                server._answer(self, request)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._server.daemon_threads = True
        self.port: int = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, name="scripted-llm", daemon=True)
        self._started = False

    # -- script -------------------------------------------------------------------------------
    def on(self, match: Match, answer: Answer | Sequence[Answer], *, times: int | None = None) -> ScriptedLLM:
        """Answer requests matching `match` (a substring of the prompt, a compiled regex, a
        predicate on `ScriptedRequest`, or None for any) with `answer` — a `Reply`, a string
        (the content as is), a dict (JSON content), or a list of `Reply` given in turn.
        `times` limits how many requests the rule answers."""
        if isinstance(answer, (list, tuple)) and answer and all(isinstance(a, Reply) for a in answer):
            replies = list(answer)
        else:
            replies = [_as_reply(answer)]
        with self._lock:
            self._rules.append(_Rule(match, replies, times))
        return self

    def reset(self) -> None:
        """Forget the rules and the recorded requests."""
        with self._lock:
            self._rules.clear()
            self.requests.clear()

    @property
    def base_url(self) -> str:
        """The API root to configure a client with."""
        return f"http://127.0.0.1:{self.port}/v1"

    def config(self, **overrides: Any) -> Any:
        """An `LLMConfig` for this server (fast retries; `overrides` change any field)."""
        from pagewarden.llm import LLMConfig

        settings: dict[str, Any] = {"backoff": 0.01, "backoff_max": 0.05, "timeout": 15.0}
        settings.update(overrides)
        return LLMConfig(self.base_url, self.model, **settings)

    @property
    def chat_requests(self) -> list[ScriptedRequest]:
        """The chat-completion requests received."""
        with self._lock:
            return [r for r in self.requests if r.path.rstrip("/").endswith("/chat/completions")]

    @staticmethod
    def refused_url() -> str:
        """A base URL on 127.0.0.1 where nothing listens (connections are refused)."""
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        return f"http://127.0.0.1:{port}/v1"

    # -- serving ------------------------------------------------------------------------------
    def _pick(self, request: ScriptedRequest) -> Reply | None:
        with self._lock:
            for rule in self._rules:
                if rule.matches(request):
                    return rule.take()
        return self.default

    def _answer(self, handler: Any, request: ScriptedRequest) -> None:
        fmt = request.response_format or {}
        if self.reject_json_schema and fmt.get("type") == "json_schema":
            message = "Input should be 'text' or 'json_object' (response_format.type)"
            handler._send(500, json.dumps({"error": {"message": message, "type": "internal_server_error"}}))
            return
        if request.body.get("stream"):
            handler._send(400, json.dumps({"error": {"message": "ScriptedLLM does not stream"}}))
            return
        reply = self._pick(request)
        if reply is None:
            handler._send(400, json.dumps({"error": {"message": "ScriptedLLM: no scripted reply matches"}}))
            return
        if reply.hang:
            self._closing.wait(600)
            handler.close_connection = True
            return
        if reply.delay and self._closing.wait(reply.delay):
            return
        if reply.disconnect:
            handler.close_connection = True
            with contextlib.suppress(OSError):
                handler.connection.shutdown(socket.SHUT_RDWR)
            return
        if reply.raw_body is not None:
            handler._send(reply.status, reply.raw_body, reply.headers)
            return
        content = reply.content
        if reply.compute is not None:
            try:
                computed = reply.compute(request)
            except Exception as exc:  # noqa: BLE001 - the script's error, as a server error
                message = f"ScriptedLLM: {type(exc).__name__}: {exc}"
                handler._send(500, json.dumps({"error": {"message": message}}))
                return
            content = computed if isinstance(computed, str) else json.dumps(computed)
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if reply.refusal is not None:
            message["refusal"] = reply.refusal
        body: dict[str, Any] = {
            "id": f"chatcmpl-{uuid.uuid4().hex[:12]}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": str(request.body.get("model") or self.model),
            "choices": [{"index": 0, "message": message, "finish_reason": reply.finish_reason}]
            if reply.choices
            else [],
        }
        if reply.usage:
            prompt_tokens = _estimate(request.prompt)
            completion_tokens = _estimate(content or "")
            body["usage"] = {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            }
        handler._send(reply.status, json.dumps(body), reply.headers)

    def start(self) -> ScriptedLLM:
        """Start serving in a background thread."""
        if not self._started:
            self._thread.start()
            self._started = True
        return self

    def stop(self) -> None:
        """Stop serving (hanging and slow replies return at once) and free the port."""
        self._closing.set()
        if self._started:
            self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> ScriptedLLM:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
