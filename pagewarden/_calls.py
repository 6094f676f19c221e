"""A pipeline of calls, driven under either API: the guard's logic is a generator that yields
the Playwright (or model, or approver) calls it needs and gets their results back;
`drive_async` awaits each call, `drive_sync` makes it directly (an awaitable runs on the
process's background loop thread). The decision logic is written once."""

from __future__ import annotations

import asyncio
import contextvars
import inspect
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from typing import Any

from pagewarden._loop import background_loop

__all__ = ["Begin", "Call", "Finish", "Pipeline", "Running", "drive_async", "drive_sync", "started"]


@dataclass(frozen=True, slots=True)
class Call:
    """One Playwright call the observation needs: the driver runs it (awaiting if async)."""

    fn: Callable[..., Any]
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Begin:
    """A call the pipeline starts and finishes later (`Finish`), to do its own work meanwhile.

    Under the async API the call's coroutine runs as a task up to its first wait (its message
    is then on its way to the browser) and the driver hands back a `Running` at once (a call
    that returns a future has sent its message already: the future is awaited later); under
    the sync API the call runs to its end first. Either way `Finish` gives its result or raises
    its exception, so what the pipeline does in between must not depend on the outcome."""

    fn: Callable[..., Any]
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class Running:
    """A begun call: its task (async), or its outcome (sync, or a call that was not awaitable)."""

    task: Any = None
    value: Any = None
    error: BaseException | None = None


@dataclass(frozen=True, slots=True)
class Finish:
    """Wait for a begun call (`Begin`): its result, or its exception raised."""

    running: Running


Pipeline = Generator[Call | Begin | Finish, Any, Any]


def _resume(pipeline: Pipeline, value: Any, error: BaseException | None) -> Call:
    """Hand the last call's result (or its exception) back; StopIteration ends the pipeline."""
    return pipeline.throw(error) if error is not None else pipeline.send(value)


async def drive_async(pipeline: Pipeline) -> Any:
    """Run a pipeline under the async API: await each yielded call."""
    value: Any = None
    error: BaseException | None = None
    while True:
        try:
            call = _resume(pipeline, value, error)
        except StopIteration as stop:
            return stop.value
        value, error = None, None
        try:
            if type(call) is Finish:
                running = call.running
                if running.task is not None:
                    value = await running.task
                elif running.error is not None:
                    raise running.error
                else:
                    value = running.value
                continue
            value = call.fn(*call.args, **call.kwargs)
            if inspect.isawaitable(value):
                if type(call) is Begin and asyncio.isfuture(value):
                    value = Running(task=value)  # a future: the call's message is already sent
                elif type(call) is Begin and inspect.iscoroutine(value):
                    value = Running(task=started(value))  # its message is on its way
                elif type(call) is Begin:
                    task = asyncio.ensure_future(value)
                    try:
                        await asyncio.sleep(0)  # the task runs up to its first wait: its message is sent
                    except BaseException:
                        task.cancel()  # (this driver was cancelled: nobody would wait for the call)
                        raise
                    value = Running(task=task)
                else:
                    value = await value
            elif type(call) is Begin:
                value = Running(value=value)
        except BaseException as exc:  # noqa: BLE001 - handed back into the pipeline
            error = exc


def started(awaitable: Any) -> asyncio.Future[Any]:
    """`awaitable` started now, as a future: a coroutine runs up to its first wait here, in the
    caller's stack (what an eager task does: Playwright reads the caller's frames for an
    error's stack when a call starts), then goes on as a task; a call that ends or fails at
    once gives a future already done."""
    if not inspect.iscoroutine(awaitable):
        return asyncio.ensure_future(awaitable)
    loop = asyncio.get_running_loop()
    context = contextvars.copy_context()  # its own, as a task's: what it sets stays in it
    try:
        first = context.run(awaitable.send, None)
    except StopIteration as stop:
        done = loop.create_future()
        done.set_result(stop.value)
        return done
    except Exception as exc:  # noqa: BLE001 - raised again by whoever awaits the future
        failed = loop.create_future()
        failed.set_exception(exc)
        return failed
    return loop.create_task(_continued(awaitable, first), context=context)


class _Yield:
    """Hands what the begun coroutine waits for (a future, or None) up to the task running it."""

    __slots__ = ("waited",)

    def __init__(self, waited: Any) -> None:
        self.waited = waited

    def __await__(self) -> Generator[Any, Any, Any]:
        return (yield self.waited)


async def _continued(coro: Any, waited: Any) -> Any:
    """The rest of a coroutine begun by `started`: each wait passed to the task, each result (or
    exception, a cancellation too) passed back, as the task would for the coroutine itself."""
    while True:
        try:
            value = await _Yield(waited)
        except BaseException as exc:  # noqa: BLE001 - thrown into the coroutine, as a task would
            try:
                waited = coro.throw(exc)
            except StopIteration as stop:
                return stop.value
            continue
        try:
            waited = coro.send(value)
        except StopIteration as stop:
            return stop.value


def drive_sync(pipeline: Pipeline) -> Any:
    """Run a pipeline under the sync API: make each yielded call directly.

    An awaitable (an async approver, a model call) runs on the process's persistent
    background loop thread (`pagewarden._loop`), since the sync API owns this thread's loop.
    """
    value: Any = None
    error: BaseException | None = None
    while True:
        try:
            call = _resume(pipeline, value, error)
        except StopIteration as stop:
            return stop.value
        value, error = None, None
        try:
            if type(call) is Finish:
                if call.running.error is not None:
                    raise call.running.error
                value = call.running.value
                continue
            if type(call) is Begin:
                # the sync API cannot leave a call running: it runs to its end here
                try:
                    value = Running(value=_run_sync(call))
                except BaseException as exc:  # noqa: BLE001 - raised again by its `Finish`
                    value = Running(error=exc)
                continue
            value = _run_sync(call)
        except BaseException as exc:  # noqa: BLE001 - handed back into the pipeline
            error = exc


def _run_sync(call: Call | Begin) -> Any:
    value = call.fn(*call.args, **call.kwargs)
    if inspect.isawaitable(value):
        value = background_loop().run(value)
    return value
