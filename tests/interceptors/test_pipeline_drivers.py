"""The pipeline's drivers and the action the guard starts before it records the step.

`Begin` / `Finish` let the pipeline put a step into session memory while its action is on its
way to the browser (async API); the sync API runs the action to its end first. Driver tests
use plain generators (the drivers are sans-I/O); the guarded-page tests use real Chromium.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Page

from pagewarden import Guard
from pagewarden._calls import Begin, Finish, drive_async, drive_sync
from pagewarden.observe._gather import Call
from pagewarden.testing import LocalSite, Response

PAGE = """<!doctype html><html><head><title>Form</title></head><body><main>
<label for="name">Name</label> <input id="name">
<button id="slow" type="button">Slow</button>
<script>
document.getElementById('slow').addEventListener('click', () => {
  const until = Date.now() + 150; while (Date.now() < until) {}
});
</script></main></body></html>"""


def _pipeline(log: list[str], fn: Any) -> Any:
    running = yield Begin(fn)
    log.append("between")
    try:
        result = yield Finish(running)
    except ValueError as exc:
        log.append(f"raised {exc}")
        return "handled"
    log.append(f"result {result}")
    return result


def test_sync_driver_runs_a_begun_call_to_its_end_first() -> None:
    log: list[str] = []

    def action() -> str:
        log.append("action")
        return "done"

    assert drive_sync(_pipeline(log, action)) == "done"
    assert log == ["action", "between", "result done"]


def test_sync_driver_raises_a_begun_calls_error_at_finish() -> None:
    log: list[str] = []

    def action() -> str:
        raise ValueError("boom")

    assert drive_sync(_pipeline(log, action)) == "handled"
    assert log == ["between", "raised boom"]


async def test_async_driver_works_while_the_call_waits() -> None:
    log: list[str] = []
    release = asyncio.Event()

    async def action() -> str:
        log.append("sent")  # the call's first step runs before the pipeline goes on
        await release.wait()
        log.append("answered")
        return "done"

    async def answer_later() -> None:
        await asyncio.sleep(0.01)
        release.set()

    helper = asyncio.ensure_future(answer_later())
    assert await drive_async(_pipeline(log, action)) == "done"
    await helper
    assert log == ["sent", "between", "answered", "result done"]


async def test_async_driver_raises_a_begun_calls_error_at_finish() -> None:
    log: list[str] = []

    async def action() -> str:
        await asyncio.sleep(0)
        raise ValueError("late")

    assert await drive_async(_pipeline(log, action)) == "handled"
    assert log == ["between", "raised late"]


async def test_cancelling_the_driver_cancels_the_begun_call() -> None:
    log: list[str] = []
    started = asyncio.Event()
    cancelled = asyncio.Event()

    async def action() -> str:
        started.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "never"

    task = asyncio.ensure_future(drive_async(_pipeline(log, action)))
    await started.wait()
    await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await asyncio.wait_for(cancelled.wait(), 2)


async def test_a_begun_future_is_awaited_at_finish_without_a_loop_turn() -> None:
    """A call that returns a future has sent its message already: the driver goes on at once
    (no loop turn in between), and `Finish` gives the future's result or raises its error."""
    loop = asyncio.get_running_loop()
    turns: list[str] = []
    loop.call_soon(turns.append, "loop turned")
    for outcome in ("done", ValueError("boom")):
        log: list[str] = []
        future = loop.create_future()

        def action(future: Any = future) -> Any:
            return future

        def settle(future: Any = future, outcome: Any = outcome) -> None:
            if isinstance(outcome, Exception):
                future.set_exception(outcome)
            else:
                future.set_result(outcome)

        def pipeline(log: list[str] = log, action: Any = action, settle: Any = settle) -> Any:
            running = yield Begin(action)
            log.append(f"between, turns {len(turns)}")
            settle()
            try:
                return (yield Finish(running))
            except ValueError as exc:
                return f"raised {exc}"

        result = await drive_async(pipeline())
        assert log == ["between, turns 0"] or outcome != "done"
        assert result == ("done" if outcome == "done" else "raised boom")


def test_plain_calls_still_run_in_order() -> None:
    def pipeline() -> Any:
        first = yield Call(lambda: 1)
        second = yield Call(lambda x: x + 1, (first,))
        return second

    assert drive_sync(pipeline()) == 2


@pytest.fixture
async def form_page(browser: Any, site: LocalSite) -> Any:
    site.route("app.test", "/pipeline-form.html", lambda _r: Response(PAGE))
    context = await browser.new_context()
    page = await context.new_page()
    yield page, site
    await context.close()


async def test_a_step_is_remembered_and_traced_once_its_action_ran(
    form_page: tuple[Page, LocalSite], tmp_path: Path
) -> None:
    page, site = form_page
    trace = tmp_path / "trace.jsonl"
    guard = Guard([], goal="Fill in the form.", trace=trace)
    guarded = guard.wrap(page)
    await guarded.goto(site.url("app.test", "/pipeline-form.html"))
    await guarded.fill("#name", "Ada")
    await guarded.click("#slow")
    history = list(guard.session.history)
    assert [entry.kind for entry in history] == ["goto", "fill", "click"]
    assert guard.session.previous is not None and guard.session.previous.action.kind == "click"
    lines = [json.loads(line) for line in trace.read_text().splitlines()]
    assert [line["step"]["action"]["kind"] for line in lines] == ["goto", "fill", "click"]
    assert all(line["ran"] for line in lines)
    click_timings = lines[2]["verdict"]["timings_ms"]
    assert next(iter(click_timings)) == "observe"
    assert click_timings["execute"] >= 100  # the page's 150 ms click handler ran inside it


async def test_an_action_that_fails_is_still_remembered_as_run(
    form_page: tuple[Page, LocalSite], tmp_path: Path
) -> None:
    page, site = form_page
    trace = tmp_path / "trace.jsonl"
    guard = Guard([], goal="Fill in the form.", trace=trace)
    guarded = guard.wrap(page)
    await guarded.goto(site.url("app.test", "/pipeline-form.html"))
    with pytest.raises(Exception, match=r"(?i)not an <input>|cannot type|not an input"):
        await guarded.fill("#slow", "Ada")  # a button: Playwright refuses after the guard allowed it
    assert [entry.kind for entry in guard.session.history] == ["goto", "fill"]
    lines = [json.loads(line) for line in trace.read_text().splitlines()]
    assert len(lines) == 2 and lines[1]["ran"] is True and "execute" in lines[1]["verdict"]["timings_ms"]
