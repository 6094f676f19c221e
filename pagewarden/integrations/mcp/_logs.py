"""What one MCP session's browser logged: console messages and network requests, each request
with pagewarden's verdict on it.

A `SessionLog` belongs to one session's browser context (attached when the browser starts,
detached when it closes): it records the context's console messages, uncaught page errors and
requests (Playwright's ``console``, ``weberror``, ``request``, ``response`` and
``requestfailed`` events), and the session guard's ``network`` events: every refusal of the
navigation gate (no proxy) and of the network layer, with the rule and policy that refused it.
A request is shown as refused when the layer that judged it answered for it (the network
layer's answer with ``X-Pagewarden-Refused``: ``204 No Content`` for a refused navigation or
redirect hop, so the tab stays where it was, and its 403 refusal page for any other request;
the gate's ``net::ERR_BLOCKED_BY_CLIENT``, or its ``204`` for a navigation it refused) or a
refusal of its URL was reported; it is matched with that refusal to name the rule. Refusals
no page request of the tab shows (a ``CONNECT``, a websocket, a redirect hop, a download) are
listed after the requests; the browser's own
background traffic (refused for carrying no session token) is not. Everything is bounded
(`MAX_ENTRIES` of each kind; message texts cut at `MAX_TEXT` characters).

Listing is per tab, "since the page loaded" as Playwright MCP lists it: from the request of
the tab's current document on (a refused navigation that left the tab where it was stays in
the list).
"""

from __future__ import annotations

import contextlib
import itertools
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from pagewarden._url import parse_url
from pagewarden.trace import redact_value

__all__ = ["ConsoleEntry", "RequestEntry", "SessionLog", "Verdict", "console_level"]

MAX_ENTRIES = 1000
MAX_TEXT = 2000
#: The response header of the network layer's refusals (`pagewarden.proxy.REFUSED_HEADER`).
REFUSED_HEADER = "x-pagewarden-refused"
_GATE_FAILURE = "ERR_BLOCKED_BY_CLIENT"
_CSP_FAILURE = "ERR_BLOCKED_BY_CSP"
#: How far apart (s) a refusal event and the request it refused may be.
_MATCH_WINDOW = 30.0

_LEVELS = ("error", "warning", "info", "debug")
_TYPE_LEVEL = {
    "assert": "error",
    "error": "error",
    "warning": "warning",
    "clear": "debug",
    "debug": "debug",
    "endGroup": "debug",
    "profile": "debug",
    "profileEnd": "debug",
    "startGroup": "debug",
    "startGroupCollapsed": "debug",
    "trace": "debug",
}
_STATIC = frozenset({"document", "stylesheet", "image", "media", "font", "script", "manifest"})


def console_level(kind: str) -> str:
    """The level (``error``, ``warning``, ``info``, ``debug``) of a console message type, as
    Playwright MCP files them."""
    return _TYPE_LEVEL.get(kind, "info")


def level_includes(level: str, kind: str) -> bool:
    """Whether asking for `level` shows a message of type `kind` (a level includes the more
    severe ones)."""
    wanted = _LEVELS.index(level) if level in _LEVELS else _LEVELS.index("info")
    return _LEVELS.index(console_level(kind)) <= wanted


def _cut(text: str) -> str:
    return text if len(text) <= MAX_TEXT else text[:MAX_TEXT] + " …"


@dataclass(slots=True)
class ConsoleEntry:
    """One console message (or uncaught page error) of a tab."""

    seq: int
    page: Any
    kind: str  # the console message type; "error" for a page error
    text: str
    url: str = ""
    line: int | None = None


@dataclass(frozen=True, slots=True)
class Verdict:
    """pagewarden's verdict on one request: allowed, or refused by which rule of which policy."""

    refused: bool
    rule: str = ""
    policy_id: str = ""
    reason: str = ""
    layer: str = ""  # "network layer", "navigation gate", "browser (CSP)"

    def describe(self) -> str:
        """The verdict as the tool shows it."""
        if not self.refused:
            return "allowed"
        named = ", ".join(p for p in (self.policy_id, f"rule {self.rule}" if self.rule else "") if p)
        text = f"REFUSED by pagewarden's {self.layer or 'guard'}"
        if named:
            text += f" ({named})"
        return text + (f": {self.reason}" if self.reason else "")


@dataclass(slots=True)
class RequestEntry:
    """One request of a tab, with what became of it."""

    seq: int
    page: Any
    request: Any
    method: str
    url: str
    resource_type: str
    ts: float
    navigation: bool = False  # the tab's top document
    status: int | None = None
    status_text: str = ""
    refused_by: str | None = None  # the policy id the network layer's refusal names (its 204 or 403)
    failure: str | None = None
    refusal: dict[str, Any] | None = None  # the matched `network` event's data
    first: int = field(default=-1)  # seq of the first request of its redirect chain
    key: str = ""  # the URL as the guard's events show it (registered secrets redacted)

    def verdict(self) -> Verdict:
        """Allowed, or refused (and by which rule, when the refusal was reported)."""
        refusal = self.refusal
        gate_answer = self.failure is not None and _GATE_FAILURE in self.failure
        csp = self.failure is not None and _CSP_FAILURE in self.failure
        if refusal is not None:
            layer = "navigation gate" if refusal.get("layer") == "gate" else "network layer"
            if csp and refusal.get("layer") == "gate":
                layer = "navigation gate (CSP)"
            return Verdict(
                True, str(refusal.get("rule") or ""), str(refusal.get("policy_id") or ""),
                str(refusal.get("reason") or ""), layer,
            )  # fmt: skip
        if self.refused_by is not None:
            return Verdict(True, policy_id=self.refused_by, layer="network layer")
        if gate_answer:
            return Verdict(True, layer="navigation gate")
        return Verdict(False)

    def describe(self) -> str:
        """``[GET] url => [200] OK — allowed`` (Playwright MCP's line, and the verdict)."""
        if self.status is not None:
            answer = f"[{self.status}] {self.status_text}".rstrip()
        elif self.failure is not None:
            answer = f"[FAILED] {self.failure}"
        else:
            answer = "[PENDING]"
        return f"[{self.method}] {self.url} => {answer} — {self.verdict().describe()}"


class SessionLog:
    """Console messages, page errors and requests of one session's browser context, and the
    refusals of its guard (see the module docstring)."""

    def __init__(self, guard: Any = None, *, max_entries: int = MAX_ENTRIES) -> None:
        self.guard = guard
        self._seq = itertools.count(1)
        self._lock = threading.Lock()
        self.console: deque[ConsoleEntry] = deque(maxlen=max_entries)
        self.requests: deque[RequestEntry] = deque(maxlen=max_entries)
        self._refusals: deque[dict[str, Any]] = deque(maxlen=max_entries)
        self._by_request: dict[int, RequestEntry] = {}
        self._doc_start: dict[int, int] = {}  # id(page) -> seq of its current document's request
        self._context: Any = None
        self._unsubscribe: Any = None

    # -- life cycle ----------------------------------------------------------------------------
    def attach(self, context: Any) -> None:
        """Record `context` (a raw Playwright `BrowserContext`) and the guard's refusals from
        now on."""
        self.detach_context()
        self._context = context
        if self.guard is not None:
            self._unsubscribe = self.guard.subscribe(self._on_guard_event, kinds=("network",))
        context.on("console", self._on_console)
        context.on("weberror", self._on_weberror)
        context.on("request", self._on_request)
        context.on("response", self._on_response)
        context.on("requestfailed", self._on_failed)

    def detach_context(self) -> None:
        """Stop recording the browser context (it closed) and the guard's refusals; what was
        recorded is dropped."""
        unsubscribe, self._unsubscribe = self._unsubscribe, None
        if unsubscribe is not None:
            unsubscribe()
        context, self._context = self._context, None
        if context is not None:
            for event, handler in (
                ("console", self._on_console), ("weberror", self._on_weberror), ("request", self._on_request),
                ("response", self._on_response), ("requestfailed", self._on_failed),
            ):  # fmt: skip
                with contextlib.suppress(Exception):  # a closed context
                    context.remove_listener(event, handler)
        with self._lock:
            self.console.clear()
            self.requests.clear()
            self._by_request.clear()
            self._doc_start.clear()
            self._refusals.clear()

    def close(self) -> None:
        """Detach from the context and from the guard's events."""
        self.detach_context()

    # -- recording -----------------------------------------------------------------------------
    def _on_guard_event(self, event: Any) -> None:
        if getattr(event, "kind", None) != "network":
            return
        data = dict(event.data or {})
        if data.get("rule") == "no_session":
            return  # the browser's own background traffic, not the page's
        data.setdefault("ts", getattr(event, "ts", time.time()))
        with self._lock:
            self._refusals.append(data)
            entry = self._match_request(data)
            if entry is not None:
                entry.refusal = data

    def _match_request(self, refusal: dict[str, Any]) -> RequestEntry | None:
        """The latest request of `refusal`'s URL that no refusal was matched with yet."""
        url = str(refusal.get("url") or "")
        ts = float(refusal.get("ts") or 0)
        for entry in reversed(self.requests):
            if entry.refusal is None and entry.key == url and abs(entry.ts - ts) <= _MATCH_WINDOW:
                return entry
        return None

    def _key(self, url: str) -> str:
        """`url` as the guard's events carry it (they are redacted before they leave the guard)."""
        secrets = getattr(self.guard, "secrets", None)
        return redact_value(url, secrets) if secrets is not None else url

    def _on_console(self, message: Any) -> None:
        try:
            page = message.page
            location = message.location or {}
            entry = ConsoleEntry(
                next(self._seq), page, str(message.type), _cut(str(message.text)),
                str(location.get("url") or ""), location.get("lineNumber"),
            )  # fmt: skip
        except Exception:  # noqa: BLE001 - a message whose page closed meanwhile
            return
        if page is None:
            return  # a service worker's: not a tab's
        with self._lock:
            self.console.append(entry)

    def _on_weberror(self, error: Any) -> None:
        try:
            page = error.page
            exc = error.error
            text = f"{getattr(exc, 'name', '') or 'Error'}: {getattr(exc, 'message', '') or exc}"
        except Exception:  # noqa: BLE001
            return
        if page is None:
            return
        with self._lock:
            self.console.append(ConsoleEntry(next(self._seq), page, "error", _cut(text)))

    def _on_request(self, request: Any) -> None:
        try:
            frame = request.frame
            page = frame.page
            navigation = request.is_navigation_request() and frame.parent_frame is None
            entry = RequestEntry(
                next(self._seq), page, request, request.method, request.url, request.resource_type,
                time.time(), navigation,
            )  # fmt: skip
            previous = request.redirected_from
            entry.key = self._key(entry.url)
        except Exception:  # noqa: BLE001 - a service worker's request (no frame), or a closed page
            return
        with self._lock:
            first = self._by_request.get(id(previous)) if previous is not None else None
            entry.first = first.first if first is not None and first.first >= 0 else entry.seq
            if len(self._by_request) >= 4 * self.requests.maxlen:  # type: ignore[operator]
                live = {id(e.request) for e in self.requests}
                self._by_request = {k: v for k, v in self._by_request.items() if k in live}
            self.requests.append(entry)
            self._by_request[id(request)] = entry
            for data in reversed(self._refusals):  # reported before Playwright told of the request
                if data.get("url") == entry.key and abs(float(data.get("ts") or 0) - entry.ts) <= 5:
                    if not any(e.refusal is data for e in self.requests):
                        entry.refusal = data
                    break

    def _on_response(self, response: Any) -> None:
        try:
            request = response.request
            status, text = response.status, response.status_text
            refused_by = (response.headers or {}).get(REFUSED_HEADER)
        except Exception:  # noqa: BLE001
            return
        with self._lock:
            entry = self._by_request.get(id(request))
            if entry is None:
                return
            entry.status, entry.status_text, entry.refused_by = status, text, refused_by
            gate_refused = status == 204 and (entry.refusal is not None or refused_by is not None)
            if entry.navigation and not gate_refused and not (300 <= status < 400):
                # the tab's new document: "since the page loaded" starts with its first request
                self._doc_start[id(entry.page)] = entry.first if entry.first >= 0 else entry.seq

    def _on_failed(self, request: Any) -> None:
        try:
            failure = request.failure or "failed"
        except Exception:  # noqa: BLE001
            failure = "failed"
        with self._lock:
            entry = self._by_request.get(id(request))
            if entry is not None:
                entry.failure = str(failure)

    # -- reading -------------------------------------------------------------------------------
    def _start(self, page: Any) -> int:
        return self._doc_start.get(id(page), 0)

    def console_of(self, page: Any, *, level: str = "info", everything: bool = False) -> list[ConsoleEntry]:
        """The console messages of tab `page` (raw) at `level` and above, since its document
        loaded (`everything`: since the session began)."""
        with self._lock:
            start = 0 if everything else self._start(page)
            return [
                e for e in self.console
                if e.page is page and e.seq >= start and level_includes(level, e.kind)
            ]  # fmt: skip

    def _match_failed(self, entry: RequestEntry) -> None:
        """A failed request no refusal of its URL was matched with: the latest unmatched refusal
        of its host (a refused ``CONNECT`` names no path; a content security policy's report may
        name the origin only)."""
        host = parse_url(entry.url).host
        matched = {id(e.refusal) for e in self.requests if e.refusal is not None}
        for data in reversed(self._refusals):
            if id(data) in matched or data.get("host") != host:
                continue
            if abs(float(data.get("ts") or 0) - entry.ts) <= _MATCH_WINDOW:
                entry.refusal = data
            return

    def requests_of(self, page: Any, *, static: bool = False) -> list[RequestEntry]:
        """The requests of tab `page` (raw) since its document loaded; without `static`,
        successful static resources (images, fonts, scripts …) are left out, as Playwright MCP
        does (a refused one is always shown)."""
        with self._lock:
            start = self._start(page)
            for e in self.requests:
                if e.page is page and e.seq >= start and e.failure is not None and e.refusal is None:
                    self._match_failed(e)
            out = []
            for e in self.requests:
                if e.page is not page or e.seq < start:
                    continue
                successful = e.status is not None and e.status < 400 and not e.verdict().refused
                if not static and e.resource_type in _STATIC and successful:
                    continue
                out.append(e)
            return out

    def unmatched_refusals(self, since: float) -> list[dict[str, Any]]:
        """Refusals reported since `since` (a time) that no recorded request was matched with."""
        with self._lock:
            matched = {id(e.refusal) for e in self.requests if e.refusal is not None}
            return [d for d in self._refusals if id(d) not in matched and float(d.get("ts") or 0) >= since]

    def document_time(self, page: Any) -> float:
        """When tab `page`'s current document was requested (0: before anything was recorded)."""
        with self._lock:
            start = self._start(page)
            for e in self.requests:
                if e.seq == start:
                    return e.ts
            return 0.0
