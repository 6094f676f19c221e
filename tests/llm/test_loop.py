"""The background loop: one persistent loop thread for awaiting from sync code."""

from __future__ import annotations

import asyncio
import threading

import pytest

from pagewarden._loop import BackgroundLoop, background_loop


def test_runs_coroutines_on_one_persistent_thread() -> None:
    loop = BackgroundLoop(name="test-loop")
    try:

        async def where() -> tuple[str, int]:
            return threading.current_thread().name, id(asyncio.get_running_loop())

        first = loop.run(where())
        second = loop.run(where())
        assert first == second and first[0] == "test-loop"
        with pytest.raises(ZeroDivisionError):
            loop.run(_fail())
    finally:
        loop.stop()
    assert loop._thread is None


async def _fail() -> None:
    raise ZeroDivisionError


async def test_wrap_from_another_loop_and_cancellation() -> None:
    loop = BackgroundLoop(name="test-loop-2")
    cancelled = threading.Event()

    async def forever() -> None:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    try:
        assert await loop.wrap(asyncio.sleep(0, result=7)) == 7
        task = asyncio.ensure_future(loop.wrap(forever()))
        await asyncio.sleep(0.1)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert await asyncio.to_thread(cancelled.wait, 10)
    finally:
        loop.stop()


def test_run_on_its_own_thread_is_refused() -> None:
    loop = background_loop()

    async def nested() -> str:
        try:
            loop.run(asyncio.sleep(0))
        except RuntimeError as exc:
            return str(exc)
        return "no error"

    assert "own thread" in loop.run(nested())
    assert background_loop() is loop
