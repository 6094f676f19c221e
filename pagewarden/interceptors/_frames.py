"""Who caused a refused navigation, and ending the agent's action when it must hear of one: the
URLs a session's frames show, when the agent last acted inside a frame, and a signal that ends
an action waiting for a navigation the guard refused."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import threading
import time
from collections.abc import Callable
from typing import Any

from pagewarden._calls import started

__all__ = [
    "FRAME_ACTION_TAIL", "FRAME_OWN", "MONITORED", "REFUSAL_GRACE", "FrameActions", "RefusalSignal",
    "RefusedMeanwhile", "raced", "record_unraised", "subframe_urls",
]  # fmt: skip

#: why a frame's own refusal is not raised at the agent (a ``refusal`` trace line's ``why``)
FRAME_OWN = (
    "a frame inside the page loaded it as the page loaded or ran (an embed, a widget, an ad frame): "
    "no action of the agent led there, so it is recorded, not raised"
)
#: why a refusal in monitor mode is not raised
MONITORED = "monitor mode: refusals are reported, never raised (and the request was let through)"


def record_unraised(guard: Any, refusal: Any, *, layer: str, why: str) -> None:
    """Write the trace line of a refusal the agent is not told of (`refusal_record`): a frame's
    own, or any in monitor mode. Nothing without a trace; a failing write is logged, never
    raised (the refusal is a ``network`` event and a log line already)."""
    trace = getattr(guard, "trace", None)
    if trace is None:
        return
    from pagewarden.trace import refusal_record

    try:
        data = refusal.to_dict()
        session = getattr(guard, "session_id", None)
        after = getattr(getattr(guard, "session", None), "index", None) or None
        record = refusal_record(data, guard.secrets, session=session, after_step=after, why=why, layer=layer)
        trace.write_record(record)
    except Exception as exc:  # noqa: BLE001 - a closed trace: the event and the log line remain
        guard.log.warning("refusal_not_traced", error=f"{type(exc).__name__}: {exc}")


def subframe_urls(page: Any) -> frozenset[str]:
    """The URLs shown by frames inside the pages of `page`'s context and by no tab's top
    document (Playwright's own record of the frames: no round trip to the browser)."""
    try:
        pages = list(page.context.pages)
    except Exception:  # noqa: BLE001 - a closed page: nothing is known
        return frozenset()
    tops: set[str] = set()
    inner: set[str] = set()
    for each in pages:
        try:
            main = each.main_frame
            tops.add(main.url)
            inner.update(f.url for f in each.frames if f is not main)
        except Exception:  # noqa: BLE001 - a page closing meanwhile
            continue
    return frozenset(inner - tops)


#: Seconds after an action inside a frame during which a refused navigation of a frame is
#: still that action's (a link's navigation starts after the click returns).
FRAME_ACTION_TAIL = 1.5


class FrameActions:
    """When the agent last acted inside a frame: a refused frame navigation then, or within
    `FRAME_ACTION_TAIL` seconds after, is the agent's (a link it clicked in the frame); any
    other is the page's own (an embed, an ad frame loading). Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running = 0
        self._until = 0.0

    def began(self) -> None:
        """An action inside a frame starts."""
        with self._lock:
            self._running += 1

    def ended(self) -> None:
        """An action inside a frame has run (or failed)."""
        with self._lock:
            self._running = max(0, self._running - 1)
            self._until = time.monotonic() + FRAME_ACTION_TAIL

    def active(self) -> bool:
        """Whether a frame navigation now is the agent's."""
        with self._lock:
            return self._running > 0 or time.monotonic() < self._until


class RefusalSignal:
    """Tells the agent's running action, at once, that a refusal it must hear of (a tab's top
    document leaving the allowed sites) happened: the async driver then ends an action that
    would otherwise wait for a navigation that never comes (`raced`). Thread-safe: the
    refusal comes from Playwright's dispatcher or the proxy's thread.

    `waiting()` (the owner's: whether refusals wait to be told to the agent) is the state the
    signal tells of: a race also ends on it, so a refusal recorded just before the action was
    sent (while it was judged), or one whose telling was lost, still ends the wait."""

    def __init__(self, waiting: Callable[[], bool] | None = None) -> None:
        self._lock = threading.Lock()
        self._listeners: list[Any] = []
        self._waiting = waiting

    def waiting(self) -> bool:
        """Whether refusals the agent must hear of wait to be told (False: none, or unknown)."""
        try:
            return bool(self._waiting()) if self._waiting is not None else False
        except Exception:  # noqa: BLE001 - an owner closed meanwhile: nothing waits
            return False

    def listen(self, callback: Any) -> Any:
        """Call `callback(refusal)` on each refusal until the returned function is called."""
        with self._lock:
            self._listeners.append(callback)

        def stop() -> None:
            with self._lock:
                if callback in self._listeners:
                    self._listeners.remove(callback)

        return stop

    def fire(self, refusal: Any) -> None:
        """A refusal the agent must hear of happened."""
        with self._lock:
            listeners = list(self._listeners)
        for callback in listeners:
            try:
                callback(refusal)
            except Exception:  # noqa: BLE001 - a listener whose loop closed
                continue


#: Seconds a running action is given to end by itself after a refusal it must hear of.
REFUSAL_GRACE = 0.3
#: Seconds between two looks at the signals' state while an action runs (a told refusal ends
#: the wait at once; the look is for one recorded while the action was judged, or not told)
REFUSAL_POLL = 0.25


class RefusedMeanwhile(Exception):
    """The agent's action was still waiting when the page's navigation was refused. `task`
    is the abandoned call, still running: when the refusal turns out to be a frame's own (the
    proxy cannot always tell at once), the action is waited for after all (`finish`)."""

    def __init__(self, url: str, task: asyncio.Future[Any] | None = None) -> None:
        super().__init__(url)
        self.task = task
        #: under the sync API: waits for `task` on Playwright's loop and returns the API object
        self.resume: Any = None

    def finish(self) -> Any:
        """The abandoned call's outcome: an awaitable under the async API, the value under the
        sync API (the pipeline's drivers take either)."""
        return self.resume() if self.resume is not None else self.task


def raced(method: Any, signals: list[RefusalSignal]) -> Any:
    """`method`, but its call ends `REFUSAL_GRACE` seconds after a refusal of one of `signals`
    (raising `RefusedMeanwhile`) instead of waiting for a navigation that will never come (a
    goto whose page moves itself to a refused host waits for a load that a refused navigation
    never brings). The abandoned call goes on in the background and its outcome is dropped
    unless `RefusedMeanwhile.finish` asks for it. The same race under both APIs: the async
    API's call is a coroutine raced as it is; a sync API call (a Playwright ``SyncBase``
    method) is raced inside Playwright's own loop (`_sync_raced`)."""
    if not signals:
        return method
    owner = getattr(method, "__self__", None)
    if _playwright_sync(owner):
        return _sync_raced(method, owner, signals)

    def call(*args: Any, **kwargs: Any) -> Any:
        value = method(*args, **kwargs)
        if not inspect.isawaitable(value):
            return value
        task = started(value)  # started now, in the caller's stack: its message is on its way
        return _race(task, signals)

    return call


def _playwright_sync(owner: Any) -> bool:
    """Whether `owner` is an object of Playwright's sync API (it runs each call through its
    ``_sync``, which drives Playwright's loop in the dispatcher greenlet until the call ends)."""
    return owner is not None and callable(getattr(owner, "_sync", None)) and hasattr(owner, "_impl_obj")


def _sync_raced(method: Any, owner: Any, signals: list[RefusalSignal]) -> Any:
    """A sync API `method` of `owner` whose call is raced like an async one: for the duration of
    the call, `owner`'s ``_sync`` runs the call's coroutine (the one the sync method hands it,
    with its arguments already translated) inside `_race` on Playwright's loop. Only the
    method's own call is raced; other calls on `owner` meanwhile (an event handler's) are not."""
    from playwright._impl._sync_base import mapping

    def call(*args: Any, **kwargs: Any) -> Any:
        original = owner._sync
        state: dict[str, Any] = {}

        def racing(awaitable: Any) -> Any:
            if state:
                return original(awaitable)
            state["raced"] = True

            async def run() -> Any:
                task = started(awaitable)  # in this task's stack, which Playwright reads the caller's from
                try:
                    return await _race(task, signals)
                except RefusedMeanwhile as refused:
                    refused.resume = lambda: mapping.from_maybe_impl(original(_awaited(task)))
                    raise

            return original(run())

        shadowed = "_sync" in vars(owner)
        owner._sync = racing
        try:
            return method(*args, **kwargs)
        finally:
            if shadowed:
                owner._sync = original
            else:
                with contextlib.suppress(AttributeError):
                    del owner._sync

    return call


async def _awaited(task: asyncio.Future[Any]) -> Any:
    return await task


async def _race(task: asyncio.Future[Any], signals: list[RefusalSignal]) -> Any:
    loop = asyncio.get_running_loop()
    hit: asyncio.Future[Any] = loop.create_future()

    def settle(refusal: Any) -> None:
        if not hit.done():
            hit.set_result(refusal)

    def heard(refusal: Any) -> None:
        loop.call_soon_threadsafe(settle, refusal)

    stops = [signal.listen(heard) for signal in signals]
    try:
        while True:
            if any(signal.waiting() for signal in signals):
                settle(None)  # recorded before this race listened (or its telling was lost)
            done, _ = await asyncio.wait(
                {task, hit}, timeout=REFUSAL_POLL, return_when=asyncio.FIRST_COMPLETED
            )
            if done:
                break
        if task not in done:
            done, _ = await asyncio.wait({task}, timeout=REFUSAL_GRACE)
        if task in done:
            return task.result()
        task.add_done_callback(_dropped)
        raise RefusedMeanwhile(str(getattr(hit.result(), "url", "")), task)
    except asyncio.CancelledError:
        task.cancel()
        raise
    finally:
        for stop in stops:
            stop()
        if not hit.done():
            hit.cancel()


def _dropped(task: asyncio.Future[Any]) -> None:
    if not task.cancelled():
        task.exception()  # retrieved: the abandoned call's error is not logged as unhandled
