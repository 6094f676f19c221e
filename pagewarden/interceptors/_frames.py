"""Who caused a refused navigation, and ending the agent's action when it must hear of one: the
URLs a session's frames show, when the agent last acted inside a frame, and a signal that ends
an action waiting for a navigation the guard refused."""

from __future__ import annotations

import asyncio
import inspect
import threading
import time
from typing import Any

__all__ = [
    "FRAME_ACTION_TAIL", "REFUSAL_GRACE", "FrameActions", "RefusalSignal", "RefusedMeanwhile", "raced",
    "subframe_urls",
]  # fmt: skip


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
    would otherwise wait for a navigation that never comes (`race_refusal`). Thread-safe: the
    refusal comes from Playwright's dispatcher or the proxy's thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._listeners: list[Any] = []

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


class RefusedMeanwhile(Exception):
    """The agent's action was still waiting when the page's navigation was refused. `task`
    is the abandoned call, still running: when the refusal turns out to be a frame's own (the
    proxy cannot always tell at once), the action is awaited after all."""

    def __init__(self, url: str, task: asyncio.Future[Any] | None = None) -> None:
        super().__init__(url)
        self.task = task


def raced(method: Any, signals: list[RefusalSignal]) -> Any:
    """`method`, but under the async API its call ends `REFUSAL_GRACE` seconds after a refusal
    of one of `signals` (raising `RefusedMeanwhile`) instead of waiting for a navigation that
    will never come (a goto whose page moves itself to a refused host waits for a load that a
    refused navigation never brings). The abandoned call goes on in the background and its
    outcome is dropped. Under the sync API the call runs as it is."""
    if not signals:
        return method

    def call(*args: Any, **kwargs: Any) -> Any:
        value = method(*args, **kwargs)
        if not inspect.isawaitable(value):
            return value
        task = asyncio.ensure_future(value)  # started now: its message is sent on the next turn
        return _race(task, signals)

    return call


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
        done, _ = await asyncio.wait({task, hit}, return_when=asyncio.FIRST_COMPLETED)
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
