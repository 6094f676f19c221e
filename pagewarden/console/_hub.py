"""The console's state: the sessions it supervises, what they did, and who is watching.

The hub is fed from any thread (guards in this process emit on their own threads; the
HTTP handlers for guards in other processes run on the console's loop) and publishes to
the browser streams on the console's event loop. It knows nothing about HTTP.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import secrets
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from pagewarden.console._filters import SessionFilter
from pagewarden.console._protocol import ProtocolError, check_command
from pagewarden.trace import global_secrets, redact_value

__all__ = ["Controller", "Hub", "RemoteController", "SessionRecord", "Stream"]

_HISTORY = 1000  # steps kept per session (the trace keeps them all)
_SHOWN = 300  # steps sent to a browser when it opens a session


class Controller(Protocol):
    """Delivers the console's commands to one session's guard."""

    def send(self, command: dict[str, Any]) -> None:
        """Hand over a checked command (must not block)."""


class RemoteController:
    """Commands for a guard in another process, fetched by its long poll."""

    def __init__(self, hub: Hub, *, key: str | None = None) -> None:
        self._hub = hub
        #: the key a guard with the guard token proves it registered this session with
        self.key = key or secrets.token_urlsafe(24)
        self._lock = threading.Lock()
        self._commands: deque[dict[str, Any]] = deque(maxlen=500)
        self._seq = itertools.count(1)
        self._waiters: set[asyncio.Event] = set()
        self.last_seen = time.time()

    def send(self, command: dict[str, Any]) -> None:
        with self._lock:
            self._commands.append({"seq": next(self._seq), **command})
        self._hub.call_soon(self._notify)

    def _notify(self) -> None:
        for waiter in list(self._waiters):
            waiter.set()

    def after(self, seq: int) -> list[dict[str, Any]]:
        """Commands newer than `seq`."""
        with self._lock:
            return [c for c in self._commands if c["seq"] > seq]

    async def wait(self, seq: int, timeout: float) -> list[dict[str, Any]]:
        """Commands newer than `seq`, waiting up to `timeout` seconds for one (long poll)."""
        self.last_seen = time.time()
        found = self.after(seq)
        if found:
            return found
        waiter = asyncio.Event()
        self._waiters.add(waiter)
        try:
            await asyncio.wait_for(waiter.wait(), timeout)
        except TimeoutError:
            pass
        finally:
            self._waiters.discard(waiter)
        self.last_seen = time.time()
        return self.after(seq)


@dataclass(eq=False)
class Stream:
    """One browser's live connection: a queue the SSE handler drains, the session it watches,
    and the filter of the sessions (and approvals) it is shown."""

    queue: asyncio.Queue[tuple[str, dict[str, Any]]]
    watch: str | None
    role: str
    filter: SessionFilter = field(default_factory=SessionFilter)
    shown: set[str] = field(default_factory=set)  # sessions in its list (to drop them)


@dataclass
class SessionRecord:
    """What the console knows about one session."""

    id: str
    controller: Controller | None
    remote: bool
    started: float = field(default_factory=time.time)
    updated: float = field(default_factory=time.time)
    status: str = "running"
    holding: bool = False
    agent: str | None = None
    host: str | None = None
    goal: str | None = None
    mode: str = "enforce"
    pid: int | None = None
    trace: str | None = None
    reason: str | None = None
    url: str = ""
    title: str | None = None
    step_count: int = 0
    decisions: dict[str, int] = field(default_factory=dict)
    steps: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=_HISTORY))
    approvals: dict[str, dict[str, Any]] = field(default_factory=dict)
    network: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=_HISTORY))
    orders: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=200))
    other: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=200))
    frame: bytes | None = None
    frame_n: int = 0
    viewport: tuple[int, int] | None = None
    watchers: int = 0

    def summary(self) -> dict[str, Any]:
        """The row of the session list."""
        return {
            "id": self.id,
            "agent": self.agent,
            "host": self.host,
            "goal": self.goal,
            "status": self.status,
            "holding": self.holding,
            "reason": self.reason,
            "mode": self.mode,
            "url": self.url,
            "title": self.title,
            "steps": self.step_count,
            "decisions": dict(self.decisions),
            "pending": sum(1 for a in self.approvals.values() if a.get("status") == "pending"),
            "remote": self.remote,
            "pid": self.pid,
            "trace": self.trace,
            "started": self.started,
            "updated": self.updated,
        }

    def detail(self) -> dict[str, Any]:
        """Everything a browser needs when it opens this session."""
        return {
            "summary": self.summary(),
            "steps": list(self.steps)[-_SHOWN:],
            "approvals": list(self.approvals.values()),
            "network": list(self.network)[-_SHOWN:],
            "orders": list(self.orders)[-50:],
            "other": list(self.other)[-50:],
            "frame": {"n": self.frame_n, "viewport": self.viewport} if self.frame is not None else None,
        }


def _approval_view(summary: dict[str, Any], approval: dict[str, Any]) -> dict[str, Any]:
    """An approval with the session it belongs to, for a watcher's list of approvals."""
    return {
        "session": summary["id"],
        "agent": summary.get("agent"),
        "host": summary.get("host"),
        "goal": summary.get("goal"),
        "approval": approval,
    }


def _text(value: Any, limit: int = 2000) -> str | None:
    if value is None:
        return None
    text = value if isinstance(value, str) else str(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def step_view(record: dict[str, Any]) -> dict[str, Any]:
    """The parts of a trace line the console shows (the trace keeps the rest)."""
    step = record.get("step") if isinstance(record.get("step"), dict) else {}
    verdict = record.get("verdict") if isinstance(record.get("verdict"), dict) else {}
    action = step.get("action") if isinstance(step.get("action"), dict) else {}
    observation = step.get("observation") if isinstance(step.get("observation"), dict) else {}
    target = observation.get("target") if isinstance(observation.get("target"), dict) else None
    prediction = verdict.get("prediction") if isinstance(verdict.get("prediction"), dict) else None
    findings = verdict.get("findings") if isinstance(verdict.get("findings"), list) else []
    return {
        "index": record.get("index"),
        "ts": record.get("ts"),
        "action": {k: _text(action.get(k), 400) for k in ("kind", "method", "selector", "value")},
        "url": _text(observation.get("url"), 2000),
        "title": _text(observation.get("title"), 300),
        "target": None
        if target is None
        else {
            "tag": _text(target.get("tag"), 40),
            "role": _text(target.get("role"), 40),
            "name": _text(target.get("name"), 300),
            "text": _text(target.get("text"), 300),
            "href": _text(target.get("href"), 2000),
        },
        "reasoning": _text(step.get("reasoning"), 2000),
        "goal": _text(step.get("goal"), 2000),
        "decision": _text(verdict.get("decision"), 20),
        "score": verdict.get("score"),
        "enforced": verdict.get("enforced"),
        "approved_by": _text(verdict.get("approved_by"), 40),
        "policies": [_text(p, 80) for p in verdict.get("violated_policy_ids") or []][:20],
        "findings": [
            {k: _text(f.get(k), 600) for k in ("policy_id", "rule", "message", "risk_level")}
            for f in findings[:10]
            if isinstance(f, dict)
        ],
        "explanation": _text(verdict.get("explanation"), 2000),
        "guidance": _text(verdict.get("guidance"), 2000),
        "prediction": None
        if prediction is None
        else {
            "semantic_delta": _text(prediction.get("semantic_delta"), 1000),
            "long_term_impact": _text(prediction.get("long_term_impact"), 1000),
            "consequence": _text(prediction.get("consequence"), 40),
            "navigation": prediction.get("navigation")
            if isinstance(prediction.get("navigation"), dict)
            else None,
            "submission": prediction.get("submission")
            if isinstance(prediction.get("submission"), dict)
            else None,
        },
        "timings": verdict.get("timings_ms") if isinstance(verdict.get("timings_ms"), dict) else {},
    }


class Hub:
    """Sessions, their history and the browsers watching them (thread-safe)."""

    def __init__(self, *, approval_timeout: float = 120.0) -> None:
        self.approval_timeout = approval_timeout
        self._lock = threading.Lock()
        self._sessions: dict[str, SessionRecord] = {}
        self._streams: set[Stream] = set()
        self.loop: asyncio.AbstractEventLoop | None = None
        self.closed = False

    # -- plumbing -----------------------------------------------------------------------
    def call_soon(self, fn: Callable[..., Any], *args: Any) -> None:
        """Run `fn` on the console's loop (from any thread); dropped when not serving."""
        loop = self.loop
        if loop is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop closed in between
                loop.call_soon_threadsafe(fn, *args)

    def _publish(self, kind: str, data: dict[str, Any], session: str | None = None) -> None:
        """Queue a message for every stream (or only those watching `session`)."""
        with self._lock:
            targets = [s for s in self._streams if session is None or s.watch == session]
        for stream in targets:
            self.call_soon(stream.queue.put_nowait, (kind, data))

    def _publish_summary(self, summary: dict[str, Any]) -> None:
        """A session's row to the streams whose filter shows it; ``drop`` to those that
        showed it and no longer do."""
        sid = summary["id"]
        sends: list[tuple[Stream, tuple[str, dict[str, Any]]]] = []
        with self._lock:
            for stream in self._streams:
                if stream.filter.matches(summary):
                    stream.shown.add(sid)
                    sends.append((stream, ("summary", summary)))
                elif sid in stream.shown:
                    stream.shown.discard(sid)
                    sends.append((stream, ("drop", {"id": sid})))
        for stream, message in sends:
            self.call_soon(stream.queue.put_nowait, message)

    def _publish_approval(self, summary: dict[str, Any], approval: dict[str, Any]) -> None:
        """An approval (asked, answered, expired) to every stream whose filter shows its
        session: the watchers it is routed to, whichever session they have open."""
        message = _approval_view(summary, approval)
        with self._lock:
            targets = [s for s in self._streams if s.filter.matches(summary)]
        for stream in targets:
            self.call_soon(stream.queue.put_nowait, ("approval", message))

    def _facets_changed(self, record: SessionRecord, agent: str | None, host: str | None) -> bool:
        """Whether `record`'s agent or host is one no other session has (call with the lock)."""
        others = [r for r in self._sessions.values() if r is not record]
        return (agent is not None and all(r.agent != agent for r in others)) or (
            host is not None and all(r.host != host for r in others)
        )

    # -- guards -------------------------------------------------------------------------
    def register(self, session: str, controller: Controller, *, remote: bool) -> dict[str, Any]:
        """A guard attaches; returns the settings it should use."""
        with self._lock:
            record = self._sessions.get(session)
            if record is None:
                record = SessionRecord(id=session, controller=controller, remote=remote)
                self._sessions[session] = record
            else:
                record.controller, record.remote = controller, remote
            watched = record.watchers > 0
            summary = record.summary()
        self._publish_summary(summary)
        return {"approval_timeout": self.approval_timeout, "watch": watched}

    def controller(self, session: str) -> Controller | None:
        """The controller of `session` (None when unknown)."""
        with self._lock:
            record = self._sessions.get(session)
            return record.controller if record is not None else None

    def ingest(self, event: dict[str, Any], controller: Controller | None = None) -> None:
        """Take one event (the JSON form of a `GuardEvent`); secrets redacted once more."""
        kind, session = event["kind"], event["session"]
        data = redact_value(event["data"], global_secrets())
        ts = float(event.get("ts") or time.time())
        shown: dict[str, Any] = data
        facets = False
        with self._lock:
            record = self._sessions.get(session)
            if record is None:
                if controller is None:
                    return  # a remote guard must register first
                record = SessionRecord(id=session, controller=controller, remote=False)
                self._sessions[session] = record
            record.updated = time.time()
            if kind == "session":
                record.status = str(data.get("status") or record.status)
                record.holding = bool(data.get("holding"))
                record.goal = _text(data.get("goal"))
                record.mode = str(data.get("mode") or record.mode)
                record.reason = _text(data.get("reason"), 300)
                record.pid = data.get("pid") if isinstance(data.get("pid"), int) else record.pid
                record.trace = _text(data.get("trace"), 1000) or record.trace
                agent, host = _text(data.get("agent"), 120), _text(data.get("host"), 120)
                facets = (agent, host) != (record.agent, record.host) and self._facets_changed(
                    record, agent, host
                )
                record.agent, record.host = agent or record.agent, host or record.host
            elif kind == "step":
                shown = step_view(data)
                record.steps.append(shown)
                record.step_count += 1
                decision = shown["decision"] or "?"
                record.decisions[decision] = record.decisions.get(decision, 0) + 1
                ran = decision == "allow" or shown["approved_by"] is not None
                went = shown["action"]["value"] if shown["action"]["kind"] == "goto" and ran else None
                record.url = went or shown["url"] or record.url
                record.title = shown["title"] or record.title
            elif kind == "approval":
                approval_id = _text(data.get("id"), 64) or ""
                record.approvals[approval_id] = data
                if len(record.approvals) > 200:
                    done = [k for k, v in record.approvals.items() if v.get("status") != "pending"]
                    for key in done[: len(record.approvals) - 200]:
                        del record.approvals[key]
            elif kind == "network":
                record.network.append({"ts": ts, **data})
            elif kind == "order":
                record.orders.append({"ts": ts, **data})
            else:
                record.other.append({"ts": ts, "kind": kind, "data": data})
            summary = record.summary()
        self._publish("event", {"kind": kind, "session": session, "ts": ts, "data": shown}, session)
        self._publish_summary(summary)
        if kind == "approval":
            self._publish_approval(summary, data)
        if facets:
            self._publish("facets", self.facets())

    def put_frame(self, session: str, data: bytes, viewport: tuple[int, int] | None) -> None:
        """The newest picture of a session's page."""
        with self._lock:
            record = self._sessions.get(session)
            if record is None:
                return
            record.frame, record.viewport = data, viewport
            record.frame_n += 1
            message = {"session": session, "n": record.frame_n, "viewport": viewport}
        self._publish("frame", message, session)

    def frame(self, session: str) -> bytes | None:
        """The newest picture of `session` (None when there is none)."""
        with self._lock:
            record = self._sessions.get(session)
            return record.frame if record is not None else None

    # -- browsers -----------------------------------------------------------------------
    def summaries(self, only: SessionFilter | None = None) -> list[dict[str, Any]]:
        """The session list (those `only` shows), newest first."""
        with self._lock:
            records = sorted(self._sessions.values(), key=lambda r: -r.started)
            rows = [r.summary() for r in records]
        return [row for row in rows if only is None or only.matches(row)]

    def approvals(self, only: SessionFilter | None = None) -> list[dict[str, Any]]:
        """The pending approvals of the sessions `only` shows, oldest first."""
        with self._lock:
            found = [
                (record.summary(), approval)
                for record in self._sessions.values()
                for approval in record.approvals.values()
                if approval.get("status") == "pending"
            ]
        rows = [_approval_view(s, a) for s, a in found if only is None or only.matches(s)]
        return sorted(rows, key=lambda row: row["approval"].get("expires_at") or 0)

    def facets(self) -> dict[str, list[str]]:
        """The agents and hosts of every session (what a watcher's filter can choose from)."""
        with self._lock:
            records = list(self._sessions.values())
        return {
            "agents": sorted({r.agent for r in records if r.agent}),
            "hosts": sorted({r.host for r in records if r.host}),
        }

    def detail(self, session: str) -> dict[str, Any] | None:
        """One session in full (None when unknown)."""
        with self._lock:
            record = self._sessions.get(session)
            return record.detail() if record is not None else None

    def record(self, session: str) -> SessionRecord | None:
        """The record itself (for the report; read it, do not change it)."""
        with self._lock:
            return self._sessions.get(session)

    def open_stream(self, watch: str | None, role: str, only: SessionFilter | None = None) -> Stream:
        """A browser connects (on the console's loop); it watches `watch` if given and is
        shown the sessions `only` lets through."""
        stream = Stream(asyncio.Queue(), watch, role, only or SessionFilter())
        with self._lock:
            stream.shown = {r.id for r in self._sessions.values() if stream.filter.matches(r.summary())}
            self._streams.add(stream)
            record = self._sessions.get(watch) if watch else None
            first = record is not None and record.watchers == 0
            if record is not None:
                record.watchers += 1
            controller = record.controller if record is not None else None
        if first and controller is not None:
            controller.send({"type": "watch", "on": True})
        return stream

    def close_stream(self, stream: Stream) -> None:
        """A browser went away."""
        with self._lock:
            self._streams.discard(stream)
            record = self._sessions.get(stream.watch) if stream.watch else None
            last = False
            if record is not None and record.watchers > 0:
                record.watchers -= 1
                last = record.watchers == 0
            controller = record.controller if record is not None else None
        if last and controller is not None:
            controller.send({"type": "watch", "on": False})

    def command(self, session: str, command: dict[str, Any]) -> dict[str, Any]:
        """Send a command from a person to a session; raises KeyError / ProtocolError."""
        checked = check_command(command)
        with self._lock:
            record = self._sessions.get(session)
            if record is None or record.controller is None:
                raise KeyError(session)
            if record.status == "closed":
                raise ProtocolError("the session has ended")
            answered = None
            if checked["type"] == "decide":
                pending = record.approvals.get(checked["approval"])
                if pending is None or pending.get("status") != "pending":
                    raise ProtocolError("no such pending approval (already answered, expired or unknown)")
                # the first answer wins: a second watcher's answer is refused from now on
                answered = {
                    **pending, "status": "answered", "by": checked["by"], "approved": checked["approved"]
                }
                record.approvals[checked["approval"]] = answered
            controller = record.controller
            summary = record.summary()
        controller.send(checked)
        if answered is not None:
            event = {"kind": "approval", "session": session, "ts": time.time(), "data": answered}
            self._publish("event", event, session)
            self._publish_summary(summary)
            self._publish_approval(summary, answered)
        return checked

    def close(self) -> None:
        """The console shuts down: every stream ends."""
        self.closed = True
        with self._lock:
            streams = list(self._streams)
        for stream in streams:
            self.call_soon(stream.queue.put_nowait, ("bye", {}))
