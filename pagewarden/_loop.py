"""One persistent background event loop per process, for code that must await from sync code.

The sync Playwright API owns its thread's loop (in a greenlet), and an `AsyncOpenAI` client
is bound to the loop it first ran on, so awaiting from synchronous code needs a loop of its
own that lives as long as the process: `background_loop().run(coro)` runs a coroutine there
and blocks until it is done (never `asyncio.run` per call). Async code hands work to it with
`await background_loop().wrap(coro)`, which cancels the work when the caller is cancelled.
The loop thread is a daemon, started on first use and stopped at interpreter exit.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import os
import threading
from collections.abc import Awaitable, Coroutine
from typing import Any, TypeVar

__all__ = ["BackgroundLoop", "background_loop"]

T = TypeVar("T")


async def _await(awaitable: Awaitable[T]) -> T:
    return await awaitable


class BackgroundLoop:
    """An event loop running in a daemon thread; thread-safe `submit` / `run` / `wrap`."""

    def __init__(self, name: str = "pagewarden-loop") -> None:
        self.name = name
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The running loop (started on first use)."""
        with self._lock:
            if self._loop is None or self._thread is None or not self._thread.is_alive():
                self._start()
            assert self._loop is not None
            return self._loop

    def _start(self) -> None:
        loop = asyncio.new_event_loop()
        ready = threading.Event()

        def main() -> None:
            asyncio.set_event_loop(loop)
            loop.call_soon(ready.set)
            try:
                loop.run_forever()
            finally:
                try:
                    _cancel_all(loop)
                    loop.run_until_complete(loop.shutdown_asyncgens())
                finally:
                    loop.close()

        thread = threading.Thread(target=main, name=self.name, daemon=True)
        thread.start()
        ready.wait()
        self._loop, self._thread = loop, thread

    def in_loop_thread(self) -> bool:
        """Whether the caller runs on this loop's thread (where blocking on it would deadlock)."""
        return self._thread is not None and threading.current_thread() is self._thread

    def submit(self, awaitable: Awaitable[T]) -> concurrent.futures.Future[T]:
        """Schedule `awaitable` on the loop; a concurrent future of its result."""
        coro: Coroutine[Any, Any, T] = (
            awaitable if asyncio.iscoroutine(awaitable) else _await(awaitable)  # type: ignore[assignment]
        )
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def run(self, awaitable: Awaitable[T], timeout: float | None = None) -> T:
        """Run `awaitable` on the loop and block until it finishes (from any other thread)."""
        if self.in_loop_thread():
            if asyncio.iscoroutine(awaitable):
                awaitable.close()
            raise RuntimeError(f"{self.name}: run() called on the loop's own thread; await instead")
        future = self.submit(awaitable)
        try:
            return future.result(timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise TimeoutError(f"{self.name}: no result within {timeout} s") from None
        except BaseException:
            future.cancel()
            raise

    async def wrap(self, awaitable: Awaitable[T]) -> T:
        """Await `awaitable` on the loop from another loop; cancelling the caller cancels it."""
        if self._thread is not None and asyncio.get_running_loop() is self._loop:
            return await awaitable
        return await asyncio.wrap_future(self.submit(awaitable))

    def stop(self, timeout: float = 5.0) -> None:
        """Cancel what is pending, stop the loop and join its thread (idempotent)."""
        with self._lock:
            loop, thread = self._loop, self._thread
            self._loop = self._thread = None
        if loop is None or thread is None or not thread.is_alive():
            return
        if threading.current_thread() is thread:
            loop.stop()
            return
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout)


def _cancel_all(loop: asyncio.AbstractEventLoop) -> None:
    pending = [task for task in asyncio.all_tasks(loop) if not task.done()]
    for task in pending:
        task.cancel()
    if pending:
        loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))


_shared: BackgroundLoop | None = None
_shared_pid: int | None = None
_shared_lock = threading.Lock()


def background_loop() -> BackgroundLoop:
    """The process-wide background loop (a fresh one after `fork`)."""
    global _shared, _shared_pid
    with _shared_lock:
        if _shared is None or _shared_pid != os.getpid():
            _shared = BackgroundLoop()
            _shared_pid = os.getpid()
        return _shared


@atexit.register
def _stop_shared() -> None:
    if _shared is not None and _shared_pid == os.getpid():
        _shared.stop(timeout=2.0)
