"""The guard's side of supervision: hold, stop, approve and take over, for both Playwright APIs.

A `ConsoleLink` is attached to one `Guard`. It forwards the guard's events to a console
(through a channel: the console in this process, or one in another process over HTTP),
receives the console's commands on any thread, and offers the action pipeline a gate:
`gate()` is a generator of `Call`s like the rest of the pipeline, so the async driver awaits
it and the sync driver runs it, with one implementation.

While the session runs, the gate costs an attribute check. When the console has paused or
taken over the session, the gate holds the agent's next action: it waits for the console,
and while a person has taken over it runs their orders (click, type, go to …) on the page,
through the same guard, before the agent's action is even observed.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import inspect
import os
import socket
import threading
import time
import uuid
import weakref
from collections import deque
from collections.abc import Awaitable, Generator
from typing import TYPE_CHECKING, Any, Protocol

from pagewarden._calls import Call
from pagewarden._serde import to_data
from pagewarden._version import __version__
from pagewarden.guard import GuardError, SessionStopped
from pagewarden.observe import MaskBoxes, MaskUnavailable, mask_boxes, paint_masks
from pagewarden.steps import Decision, Finding, GuardEvent, Step, Verdict
from pagewarden.trace import redact_step_data

if TYPE_CHECKING:
    from pagewarden.guard import Guard
    from pagewarden.interceptors import Guarded, SharedState

__all__ = ["Channel", "ConsoleLink"]

Pipeline = Generator[Call, Any, Any]
_AGAIN = object()  # the hold's wait woke up: look at the state again
_SUPERVISOR = "[supervisor] "
_HOSTNAME = socket.gethostname()[:120] or None


class Channel(Protocol):
    """How a link talks to its console (in-process hub, or HTTP to another process)."""

    @property
    def available(self) -> bool:
        """Whether the console can currently answer (approvals fail fast when it cannot)."""

    def open(self, link: ConsoleLink) -> dict[str, Any]:
        """Register the session; returns the console's settings (``approval_timeout``, ``watch``)."""

    def send_event(self, event: GuardEvent) -> None:
        """Deliver one event (must not block)."""

    def send_frame(self, session: str, data: bytes, viewport: tuple[int, int] | None) -> None:
        """Deliver the newest picture of the page (must not block)."""

    def close(self) -> None:
        """The session ended: flush and let go."""


def _summary(verdict: Verdict) -> dict[str, Any]:
    prediction = verdict.prediction
    return {
        "decision": verdict.decision.value,
        "score": verdict.score,
        "violated_policy_ids": verdict.violated_policy_ids,
        "explanation": verdict.explanation,
        "guidance": verdict.guidance,
        "prediction": to_data(prediction) if prediction is not None else None,
    }


class ConsoleLink:
    """One guarded session's connection to a supervising console.

    Created by `attach` (``Guard(console=…)``); the guard's `approver` becomes `approve`,
    and the action pipeline calls `gate` before each action.
    """

    def __init__(self, guard: Guard, channel: Channel, *, url: str | None = None) -> None:
        self.guard = guard
        self.channel = channel
        #: the console's address with the full-power token (None for a remote console)
        self.url = url
        self._lock = threading.Lock()
        self._status = "running"
        self._holding = False
        self._wake: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._orders: deque[dict[str, Any]] = deque()
        self._pending: dict[str, concurrent.futures.Future[tuple[bool, str]]] = {}
        self._remembered: set[str] = set()
        self._keys: dict[str, str] = {}  # pending approval id -> its kind
        self._in_order = False
        self._closed = False
        self.watched = False
        self._casting: weakref.WeakSet[Any] = weakref.WeakSet()
        self._cast_failed: weakref.WeakSet[Any] = weakref.WeakSet()
        self._current_page: weakref.ref[Any] | None = None
        self._shared: SharedState | None = None
        # live view: the newest frame waiting for its mask, the task masking frames (async API),
        # and the boxes read for the frame before (painted too: a field moving between frames)
        self._frame_waiting: tuple[Any, bytes, tuple[int, int] | None] | None = None
        self._masking: asyncio.Future[None] | None = None
        self._masking_sync = False
        self._last_mask: MaskBoxes | None = None
        settings = channel.open(self)
        self.approval_timeout = float(settings.get("approval_timeout", 120.0))
        self.watched = bool(settings.get("watch", False))
        self._unsubscribe = guard.subscribe(channel.send_event)
        self._announce()

    # -- state --------------------------------------------------------------------------
    @property
    def status(self) -> str:
        """``running``, ``paused``, ``taken_over``, ``stopped`` or ``closed``."""
        return self._status

    @property
    def holding(self) -> bool:
        """Whether the agent's next action is waiting at the gate."""
        return self._holding

    def _announce(self, reason: str | None = None) -> None:
        trace = self.guard.trace
        data: dict[str, Any] = {
            "status": self._status,
            "holding": self._holding,
            "goal": self.guard.goal,
            "mode": self.guard.mode,
            "agent": self.guard.agent_name,
            "host": self.guard.agent_host or _HOSTNAME,
            "pid": os.getpid(),
            "pagewarden": __version__,
            "trace": str(trace.path) if trace is not None and getattr(trace, "path", None) else None,
        }
        if reason:
            data["reason"] = reason
        self.guard.emit("session", data)

    def _wake_up(self) -> None:
        """Wake a waiting gate (call with the lock held)."""
        wake, self._wake = self._wake, concurrent.futures.Future()
        if not wake.done():
            wake.set_result(None)

    def receive(self, command: dict[str, Any]) -> None:
        """Apply a checked console command (any thread)."""
        kind = command["type"]
        reason = None
        with self._lock:
            if self._closed:
                return
            if kind == "watch":
                self.watched = command["on"]
                if self.watched and self._holding:
                    self._orders.append({"order": "", "op": "frame", "args": {}})
                self._wake_up()
                return
            if kind == "decide":
                future = self._pending.get(command["approval"])
                if future is not None and not future.done():
                    if command["remember"]:
                        self._remembered.add(self._key_of(command["approval"]))
                    future.set_result((command["approved"], command.get("by") or "console"))
                return
            if kind == "goal":
                self.guard.goal = command["goal"]
                reason = "goal changed by the console"
            elif kind == "order":
                if self._status != "taken_over":
                    reason = "order ignored: the session is not taken over"
                else:
                    self._orders.append(command)
            elif self._status in ("stopped", "closed"):
                return
            elif kind == "stop":
                self._status = "stopped"
                for future in self._pending.values():
                    if not future.done():
                        future.set_result((False, "stopped"))
                reason = "stopped by the console"
            elif kind == "pause" and self._status == "running":
                self._status, reason = "paused", "paused by the console"
            elif kind == "takeover" and self._status in ("running", "paused"):
                self._status, reason = "taken_over", "taken over by a person"
            elif kind in ("resume", "handback") and self._status in ("paused", "taken_over"):
                self._status, reason = "running", "handed back" if kind == "handback" else "resumed"
                self._orders.clear()
            else:
                return
            self._wake_up()
        if reason is not None:
            self._announce(reason)

    def reattached(self, settings: dict[str, Any]) -> None:
        """A restarted console knows this session again: take its settings and announce the
        session's state to it (what happened meanwhile is in the trace)."""
        with self._lock:
            self.watched = bool(settings.get("watch", False))
        self.approval_timeout = float(settings.get("approval_timeout", self.approval_timeout))
        self._announce("attached again: the console restarted")

    def channel_lost(self) -> None:
        """The console went away: deny what waits for it (fail closed)."""
        with self._lock:
            for future in self._pending.values():
                if not future.done():
                    future.set_result((False, "console-unreachable"))

    def close(self) -> None:
        """The session ended: deny pending approvals, say so, and let go of the console."""
        with self._lock:
            if self._closed:
                return
            self._status = "closed"
            for future in self._pending.values():
                if not future.done():
                    future.set_result((False, "closed"))
            self._wake_up()
        self._announce("session closed")
        with self._lock:
            self._closed = True
        self._unsubscribe()
        self.channel.close()

    # -- the gate (part of the action pipeline) ------------------------------------------
    def gate(self, shared: SharedState, owner: Guarded) -> Pipeline:
        """Before an action: keep the live view going; hold while paused or taken over;
        raise `SessionStopped` once stopped."""
        if self._in_order:
            return  # a person's own action during take-over: not held again
        page = owner.page_raw()
        self._shared = shared
        if page is not None:
            self._current_page = weakref.ref(page)
            yield from self._screencast(page)
        if self._status in ("running", "closed"):
            return
        self._set_holding(True)
        try:
            if self.watched and page is not None:
                yield from self._snapshot(page)
            while True:
                order = yield Call(self._next_order)
                if order is _AGAIN:
                    continue
                if order is None:
                    return
                yield from self._run_order(shared, owner, page, order)
        finally:
            self._set_holding(False)

    def _set_holding(self, holding: bool) -> None:
        with self._lock:
            changed = self._holding != holding
            self._holding = holding
        if changed:
            self._announce("waiting at the next action" if holding else None)

    def _next_order(self) -> Any:
        """None to let the action go, an order to run, or an awaitable that wakes on a change."""
        with self._lock:
            status = self._status
            if status == "stopped":
                raise SessionStopped(self._stopped_verdict(), "the next action")
            if status in ("running", "closed"):
                return None
            if self._orders:
                return self._orders.popleft()
            wake = self._wake
        return self._wait(wake)

    @staticmethod
    async def _wait(wake: concurrent.futures.Future[None]) -> Any:
        await asyncio.wrap_future(wake)
        return _AGAIN

    def _stopped_verdict(self) -> Verdict:
        finding = Finding(
            policy_id="PW-CONSOLE",
            rule="stopped",
            message="a supervisor stopped this session from the console",
            risk_level="high",
            score=1.0,
            guidance="Stop working on this task and tell the user that a supervisor stopped it.",
        )
        return Verdict(
            decision=Decision.BLOCK,
            score=1.0,
            findings=(finding,),
            explanation="[PW-CONSOLE/stopped] a supervisor stopped this session from the console",
            guidance=finding.guidance,
            mode=self.guard.mode,
        )

    # -- live view ----------------------------------------------------------------------
    def _on_frame(self, page_ref: weakref.ref[Any], frame: dict[str, Any]) -> None:
        current = self._current_page() if self._current_page is not None else None
        if current is None or page_ref() is not current or not self.watched:
            return
        viewport = (int(frame.get("viewportWidth") or 0), int(frame.get("viewportHeight") or 0))
        self._frame_waiting = (current, frame["data"], viewport if all(viewport) else None)
        if inspect.iscoroutinefunction(current.screenshot):
            if self._masking is None or self._masking.done():
                self._masking = asyncio.ensure_future(self._mask_frames_async())
        elif not self._masking_sync:
            # (a frame arriving while a read for the one before is on its way waits: the loop
            # below picks it up; reads are never nested)
            from pagewarden._calls import drive_sync

            self._masking_sync = True
            try:
                with contextlib.suppress(Exception):  # a frame that cannot be masked is not sent
                    drive_sync(self._mask_frames())
            finally:
                self._masking_sync = False

    async def _mask_frames_async(self) -> None:
        from pagewarden._calls import drive_async

        with contextlib.suppress(Exception):  # a frame that cannot be masked is not sent
            await drive_async(self._mask_frames())

    def _mask_frames(self) -> Pipeline:
        """Send the waiting frames with password fields and fields holding a registered secret
        painted over (the boxes read now and for the frame before; `observe._mask`). A frame
        whose boxes cannot be read is dropped. Frames that arrive meanwhile replace the waiting
        one: only the newest is masked and sent."""
        while self._frame_waiting is not None:
            page, data, viewport = self._frame_waiting
            self._frame_waiting = None
            shared = self._shared
            try:
                fresh = yield from mask_boxes(
                    page,
                    self.guard.secrets,
                    engine=shared.reader_engine(page) if shared is not None else None,
                    lib=shared.facts_reader if shared is not None else None,
                )
            except MaskUnavailable as exc:
                self.guard.log.info("console_frame_dropped", error=str(exc)[:200])
                continue
            masks = (fresh,) if self._last_mask is None else (self._last_mask, fresh)
            self._last_mask = fresh
            try:
                masked = paint_masks(data, masks)
            except Exception as exc:  # noqa: BLE001 - an undecodable frame is not sent
                self.guard.log.info("console_frame_dropped", error=f"{type(exc).__name__}: {exc}"[:200])
                continue
            if self.watched:
                self.channel.send_frame(self.guard.session_id, masked, viewport)

    def _screencast(self, page: Any) -> Pipeline:
        """Start Playwright's screencast on the acted-on page while someone watches; stop it
        when nobody does. Frames arrive whenever Playwright's loop runs."""
        if self.watched and page not in self._casting and page not in self._cast_failed:
            page_ref = weakref.ref(page)
            try:
                yield Call(
                    page.screencast.start,
                    (),
                    {"on_frame": lambda frame: self._on_frame(page_ref, frame), "quality": 60},
                )
                self._casting.add(page)
            except Exception as exc:  # noqa: BLE001 - no live view is no reason to stop the agent
                self._cast_failed.add(page)
                self.guard.log.warning("screencast_failed", error=f"{type(exc).__name__}: {exc}")
        elif not self.watched and len(self._casting):
            for cast_page in list(self._casting):
                self._casting.discard(cast_page)
                with contextlib.suppress(Exception):  # a closed page has nothing to stop
                    yield Call(cast_page.screencast.stop)

    def _snapshot(self, page: Any) -> Pipeline:
        """One picture of the page now (when the agent is held the loop may not run)."""
        shared = self._shared
        engine = shared.reader_engine(page) if shared is not None else None
        lib = shared.facts_reader if shared is not None else None
        try:
            before = yield from mask_boxes(page, self.guard.secrets, engine=engine, lib=lib)
            data = yield Call(
                page.screenshot, (), {"type": "jpeg", "quality": 60, "scale": "css", "timeout": 10_000}
            )
            after = yield from mask_boxes(page, self.guard.secrets, engine=engine, lib=lib)
            if isinstance(data, bytes):
                data = paint_masks(data, (before, after))
        except Exception as exc:  # noqa: BLE001 - a page mid-navigation cannot be pictured
            self.guard.log.info("console_frame_failed", error=f"{type(exc).__name__}: {exc}")
            return
        if isinstance(data, bytes):
            self.channel.send_frame(self.guard.session_id, data, None)

    # -- take-over ----------------------------------------------------------------------
    def _run_order(self, shared: SharedState, owner: Guarded, page: Any, order: dict[str, Any]) -> Pipeline:
        """Run a person's order on the page, through the guard (judged and recorded like any
        step; the person approves their own ASKs, BLOCKs still stop them)."""
        from pagewarden.interceptors import guarded_action, spec_for

        op, args = order["op"], order["args"]
        result: dict[str, Any] = {"id": order.get("order", ""), "op": op, "status": "done"}
        if page is None:
            result.update(status="failed", error="the held action has no page to act on")
        elif op != "frame":
            if op == "scroll":
                calls = None
            elif op in ("click",):
                target = shared.wrap(page.mouse, page)
                calls = ("Mouse", "click", target, (args["x"], args["y"]))
            elif op in ("type", "press"):
                target = shared.wrap(page.keyboard, page)
                calls = ("Keyboard", op, target, (args["text"] if op == "type" else args["key"],))
            else:
                method = {"goto": "goto", "back": "go_back", "forward": "go_forward", "reload": "reload"}[op]
                target = shared.wrap(page)
                calls = ("Page", method, target, (args["url"],) if op == "goto" else ())
            self._in_order = True
            try:
                if calls is None:
                    yield Call(page.mouse.wheel, (0, args["dy"]))
                else:
                    type_name, method_name, target, call_args = calls
                    spec = spec_for(type_name, method_name)
                    raw_method = getattr(target._pw_obj, method_name)
                    reasoning = f"{_SUPERVISOR}{op} from the console while the agent waits"
                    yield from guarded_action(
                        shared, target, method_name, spec, raw_method, call_args, {}, reasoning
                    )
            except GuardError as exc:
                result.update(
                    status="refused", decision=exc.verdict.decision.value, error=exc.verdict.explanation
                )
            except Exception as exc:  # noqa: BLE001 - the person's action failed; tell them
                result.update(status="failed", error=f"{type(exc).__name__}: {str(exc)[:300]}")
            finally:
                self._in_order = False
        if page is not None and self.watched:
            yield from self._snapshot(page)
        if result["id"]:
            self.guard.emit("order", result)

    # -- approvals ----------------------------------------------------------------------
    @staticmethod
    def kind_of(verdict: Verdict, step: Step) -> str:
        """What "approve this kind for this session" covers: the action kind and the
        policies that asked."""
        return f"{step.action.kind}|{','.join(sorted(verdict.violated_policy_ids))}"

    def _key_of(self, approval_id: str) -> str:
        return self._keys.get(approval_id, "")

    def approve(self, verdict: Verdict, step: Step) -> bool | Awaitable[bool]:
        """The guard's approver: ask the console and wait for a person (a timeout denies)."""
        key = self.kind_of(verdict, step)
        aid = uuid.uuid4().hex[:12]
        data: dict[str, Any] = {
            "id": aid,
            "kind": key,
            "step": self._step_data(step),
            "verdict": _summary(verdict),
        }
        if self._in_order:
            self.guard.emit("approval", {**data, "status": "approved", "by": "supervisor"})
            return True
        if key in self._remembered:
            self.guard.emit("approval", {**data, "status": "approved", "by": "remembered"})
            return True
        with self._lock:
            refused = (
                "stopped"
                if self._status == "stopped"
                else "closed"
                if self._closed
                else "console-unreachable"
                if not self.channel.available
                else None
            )
            future: concurrent.futures.Future[tuple[bool, str]] = concurrent.futures.Future()
            if refused is None:
                self._pending[aid] = future
                self._keys[aid] = key
        if refused is not None:
            self.guard.emit("approval", {**data, "status": "denied", "by": refused})
            return False
        timeout = self.approval_timeout
        self.guard.emit(
            "approval",
            {**data, "status": "pending", "timeout_s": timeout, "expires_at": time.time() + timeout},
        )
        return self._decision(aid, future, data, timeout, self._approval_picture())

    def _approval_picture(self) -> Awaitable[None] | None:
        """A picture of the page as the agent waits for the answer: the person who opens the
        session to answer sees what is asked about, not "no picture yet" (the screencast runs
        only while someone watches, and nothing else moves while the agent waits). Under the
        sync API it is taken now, on Playwright's thread; under the async API the returned
        awaitable takes it on the agent's loop before the wait. Masked like every frame."""
        page = self._current_page() if self._current_page is not None else None
        if page is None:
            return None
        if inspect.iscoroutinefunction(page.screenshot):
            from pagewarden._calls import drive_async

            return drive_async(self._snapshot(page))
        from pagewarden._calls import drive_sync

        with contextlib.suppress(Exception):  # no picture is no reason to fail the approval
            drive_sync(self._snapshot(page))
        return None

    async def _decision(
        self,
        aid: str,
        future: concurrent.futures.Future[tuple[bool, str]],
        data: dict[str, Any],
        timeout: float,
        picture: Awaitable[None] | None = None,
    ) -> bool:
        started = time.monotonic()
        if picture is not None:
            with contextlib.suppress(Exception):  # no picture is no reason to fail the approval
                await asyncio.wait_for(picture, min(timeout, 15.0))
        left = max(0.05, timeout - (time.monotonic() - started))  # the announced expiry holds
        try:
            approved, by = await asyncio.wait_for(asyncio.wrap_future(future), left)
            status = "approved" if approved else "denied"
        except TimeoutError:
            approved, by, status = False, "timeout", "expired"
        finally:
            with self._lock:
                self._pending.pop(aid, None)
                self._keys.pop(aid, None)
        self.guard.emit("approval", {**data, "status": status, "by": by})
        return approved

    def _step_data(self, step: Step) -> dict[str, Any]:
        data = redact_step_data(step.to_dict(), self.guard.secrets)
        observation = data.get("observation") or {}
        observation.pop("aria_snapshot", None)
        return {
            "action": data.get("action"),
            "url": observation.get("url"),
            "title": observation.get("title"),
            "target": observation.get("target"),
            "reasoning": data.get("reasoning"),
            "goal": data.get("goal"),
            "index": data.get("index"),
        }
