"""The drop-in page passes things through exactly: what Playwright returns and hands to
callbacks, the arguments it takes, the errors it raises (type, message, stack), and the face
of its objects. Each check runs the same call on a raw page and on a guarded one and compares;
in monitor mode nothing the guard does stops or changes an action, in enforce mode an action
the guard cannot observe never runs unjudged."""

from __future__ import annotations

import inspect
import os
import re
import threading
import time
from collections.abc import Awaitable, Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import BrowserContext, Error, Frame, Locator, Page, TimeoutError

import pagewarden
from pagewarden import ActionBlocked, Guard, approve_all
from pagewarden.interceptors import Guarded
from pagewarden.testing import LocalSite, RecordedRequest, Response

MODES = ("monitor", "enforce")
PACKAGE = str(Path(pagewarden.__file__).parent) + os.sep


def _guard(mode: str, **options: Any) -> Guard:
    if mode == "monitor":
        return Guard(mode="monitor", **options)
    return Guard(mode="enforce", baseline=False, approver=approve_all, **options)


async def _pair(context: BrowserContext, mode: str, html: str) -> tuple[Page, Any, Guard]:
    """A raw page and a guarded page of the same context, both showing `html`."""
    raw = await context.new_page()
    guard = _guard(mode)
    guarded = guard.wrap(await context.new_page())
    await raw.set_content(html)
    await guarded.set_content(html)
    return raw, guarded, guard


async def _failure(call: Callable[[Any], Awaitable[Any]], page: Any) -> BaseException:
    try:
        await call(page)
    except Exception as exc:  # noqa: BLE001 - compared by the caller
        return exc
    raise AssertionError("the call did not fail")


def _same_error(raw: BaseException, guarded: BaseException, engine: str) -> None:
    assert type(guarded) is type(raw)
    assert str(guarded) == str(raw)
    assert engine not in str(guarded)
    stack = getattr(guarded, "stack", None) or ""
    assert __file__ in stack, stack  # the caller's frames, as Playwright gives them
    assert PACKAGE not in stack  # and not the guard's


# -- results -------------------------------------------------------------------------------------
CYCLES = """() => {
  const a = {name: 'a'}; a.self = a;
  const shared = {x: 1};
  const list = [1, 2]; list.push(list);
  return {a, pair: [shared, shared], list, big: Array.from({length: 50000}, (_, i) => i),
          deep: JSON.parse('['.repeat(90) + ']'.repeat(90))};
}"""


@pytest.mark.parametrize("mode", MODES)
async def test_results_with_cycles_shared_references_and_size_pass_through(
    context: BrowserContext, mode: str
) -> None:
    raw, guarded, _ = await _pair(context, mode, "<p>x</p>")
    expected = await raw.evaluate(CYCLES)
    got = await guarded.evaluate(CYCLES)
    assert got["a"]["self"] is got["a"] and got["list"][2] is got["list"]
    assert got["pair"][0] is got["pair"][1]
    assert got["big"] == expected["big"] and len(got["big"]) == 50000
    depth, item = 0, got["deep"]
    while item:
        depth, item = depth + 1, item[0]
    assert depth == 89
    # the value a popup's window serializes to contains itself: the popup is open, no crash
    async with guarded.expect_popup() as popup:
        opened = await guarded.evaluate("() => window.open('about:blank')")
    same = await raw.evaluate("() => { const w = window.open('about:blank'); w.close(); return w; }")
    assert type(opened) is type(same) and sorted(opened) == sorted(same)  # (== recurses into the cycle)
    assert isinstance(await popup.value, Guarded)
    # handles and containers of handles come back guarded (the same stand-in for the same object)
    handle = await guarded.evaluate_handle("() => ({a: document.body, n: 3})")
    properties = await handle.get_properties()
    assert isinstance(properties["a"], Guarded) and await properties["n"].json_value() == 3
    items = await guarded.query_selector_all("p")
    assert len(items) == 1 and all(isinstance(i, Guarded) for i in items)


# -- callbacks -----------------------------------------------------------------------------------
async def _callbacks_called(page: Any) -> list[Any]:
    calls: list[Any] = []
    await page.goto("http://app.test/quiet.html")  # (no favicon request: its 404 is a console message)
    await page.expose_function("noArgs", lambda: calls.append("no-args"))
    await page.expose_binding("sourceOnly", lambda source: calls.append(source["page"] is page))
    await page.expose_binding("cyclic", lambda source, obj: calls.append(obj["self"] is obj))
    page.on("console", lambda: calls.append("console"))
    await page.route(re.compile(r".*/routed$"), lambda route: route.fulfill(body="routed"))
    async with page.expect_console_message():
        await page.evaluate("""async () => {
            await window.noArgs(1, 2, 3);
            await window.sourceOnly('extra');
            const o = {}; o.self = o; await window.cyclic(o);
            console.log('hello');
        }""")
    calls.append(await page.evaluate("async () => (await fetch('/routed')).text()"))
    return calls


@pytest.mark.parametrize("mode", MODES)
async def test_callbacks_get_what_playwright_gives_them(context: BrowserContext, mode: str) -> None:
    expected = ["no-args", True, True, "console", "routed"]
    assert await _callbacks_called(await context.new_page()) == expected
    assert await _callbacks_called(_guard(mode).wrap(await context.new_page())) == expected


# -- arguments -----------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", MODES)
async def test_every_argument_type_playwright_takes_is_taken(context: BrowserContext, mode: str,
                                                             tmp_path: Path) -> None:  # fmt: skip
    guard = _guard(mode, trace=tmp_path / "trace.jsonl")
    page = guard.wrap(await context.new_page())
    await page.set_content("<button onclick='window.clicked=1'>Go</button><input type=file id=f>")
    await page.click("button", timeout=timedelta(seconds=20))
    await page.get_by_text(re.compile("^go$", re.I)).click(timeout=timedelta(seconds=20))
    upload = tmp_path / "a.txt"
    upload.write_text("hello")
    await page.locator("#f").set_input_files(upload)
    await page.locator("#f").set_input_files({"name": "b.bin", "mimeType": "application/octet-stream",
                                              "buffer": b"\x00\x01"})  # fmt: skip
    assert await page.evaluate("() => document.getElementById('f').files[0].name") == "b.bin"
    assert await page.evaluate("window.clicked") == 1
    assert "could not be observed" not in (tmp_path / "trace.jsonl").read_text()


# -- monitor mode never stops or changes an action -----------------------------------------------
async def test_monitor_mode_runs_what_it_cannot_observe_and_raises_playwrights_error(
    context: BrowserContext, tmp_path: Path
) -> None:
    raw = await context.new_page()
    guard = Guard(mode="monitor", trace=tmp_path / "trace.jsonl")
    guarded = guard.wrap(await context.new_page())
    for page in (raw, guarded):
        await page.set_content("<div>x</div>")
    for call in (
        lambda p: p.click("div[[[", timeout=500),
        lambda p: p.locator("button").click(timeout=timedelta(milliseconds=60)),
    ):
        _same_error(await _failure(call, raw), await _failure(call, guarded), guard_engine(guarded))
    lines = (tmp_path / "trace.jsonl").read_text().splitlines()
    assert sum("could not be observed" in line for line in lines) == 2  # recorded, and the action ran


def pending_navigation_site(site: LocalSite, host: str) -> list[str]:
    """`host`'s /a starts a slow navigation to /c by itself; /b answers after 1.5 s, /c once /b
    was asked for (at most 30 s: a load on the machine cannot reorder them). The
    list tells in which order the server began and ended /b and /c (Playwright's own
    test_NA_039: a goto while the page's own navigation is pending starts at once)."""
    events: list[str] = []
    lock = threading.Lock()
    b_started = threading.Event()
    script = "<body><script>setTimeout(() => { location.pathname = '/c' }, 10)</script></body>"
    site.route(host, "/a", lambda request: Response(script))

    def slow(name: str) -> Callable[[RecordedRequest], Response]:
        def handle(request: RecordedRequest) -> Response:
            with lock:
                events.append(f"started {name}")
            if name == "b":
                b_started.set()
                time.sleep(1.5)
            else:  # the page's own navigation ends only once the goto reached the server (or
                b_started.wait(30)  # after 30 s, when the goto was held for it: the test fails)
            with lock:
                events.append(f"finished {name}")
            return Response(name.upper() * 3)

        return handle

    site.route(host, "/b", slow("b"))
    site.route(host, "/c", slow("c"))
    return events


async def test_monitor_mode_does_not_hold_a_goto_for_the_pages_pending_navigation(
    context: BrowserContext, site: LocalSite, tmp_path: Path
) -> None:
    """A read of the page waits while the page has a navigation in progress (Chromium holds it
    until that commits); a goto does not. In monitor mode the goto starts at once, as raw."""
    for mode, host in (("raw", "pending-raw.test"), ("monitor", "pending-monitor.test")):
        events = pending_navigation_site(site, host)
        page: Any = await context.new_page()
        if mode == "monitor":
            page = Guard(mode="monitor", trace=tmp_path / "trace.jsonl").wrap(page)
        await page.goto(site.url(host, "/a"))
        await page.wait_for_timeout(500)  # /c is on its way
        await page.goto(site.url(host, "/b"))
        assert page.url == site.url(host, "/b")
        assert events.index("started b") < events.index("finished c"), (mode, events)
    assert "a navigation the page started was in progress" in (tmp_path / "trace.jsonl").read_text()


@pytest.mark.parametrize("mode", MODES)
async def test_a_text_node_handle_is_clicked_as_playwright_clicks_it(
    context: BrowserContext, mode: str
) -> None:
    """Playwright clicks a text node's handle by its box (its test_EH_013); the guard reads the
    element the text is in, as the click activates it (enforce mode ran nothing before)."""
    html = (
        "<div id=outer onclick=\"window.result = 'Clicked ' + event.target.id\">"
        "<div id=inner>a</div>Custom</div>"
    )
    raw, guarded, _ = await _pair(context, mode, html)
    for page in (raw, guarded):
        text = (await page.evaluate_handle("() => document.querySelector('#outer').lastChild")).as_element()
        assert text is not None
        await text.click()
        assert await page.evaluate("window.result") == "Clicked outer"


# -- enforce mode: Playwright's errors where Playwright fails, the guard's where it would run ------
FAILING_CALLS: dict[str, Callable[[Any], Awaitable[Any]]] = {
    "locator-timeout": lambda p: p.locator("button").click(timeout=42),
    "page-timeout": lambda p: p.click("button", timeout=timedelta(milliseconds=42)),
    "strict-upload": lambda p: p.locator("input").set_input_files([]),
    "strict-fill": lambda p: p.locator("input").fill("x"),
    "bad-selector": lambda p: p.fill("input[[[", "x", timeout=500),
    "frame-timeout": lambda p: p.main_frame.click("button", timeout=42),
}


@pytest.mark.parametrize("case", sorted(FAILING_CALLS))
async def test_enforce_mode_raises_playwrights_error_for_a_call_that_fails(
    context: BrowserContext, case: str
) -> None:
    raw, guarded, _ = await _pair(context, "enforce", "<input type=file><input type=file><div>x</div>")
    call = FAILING_CALLS[case]
    expected = await _failure(call, raw)
    got = await _failure(call, guarded)
    assert isinstance(expected, (Error, TimeoutError))
    _same_error(expected, got, guard_engine(guarded))


async def test_enforce_mode_never_runs_an_action_it_could_not_observe(
    context: BrowserContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fault injection: the observation fails with a Playwright error the action itself would not
    meet (a context destroyed under the read). The click must not run; the guard says why."""
    from pagewarden.interceptors import _observing

    guarded = _guard("enforce").wrap(await context.new_page())
    await guarded.set_content("<button onclick='window.clicked=1'>Go</button>")

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise Error("Execution context was destroyed, most likely because of a navigation")
        yield  # (a generator, as the reader is)

    monkeypatch.setattr(_observing, "facts_of_locator", broken)
    with pytest.raises(ActionBlocked, match="could not be observed"):
        await guarded.locator("button").click()
    with pytest.raises(ActionBlocked, match="could not be observed"):
        await guarded.click("button")
    assert await guarded.evaluate("window.clicked") is None


# -- the wrapper is invisible where that is free ---------------------------------------------------
async def test_the_stand_ins_look_like_what_they_stand_for(context: BrowserContext) -> None:
    raw_page = await context.new_page()
    guard = Guard(mode="monitor")
    page = guard.wrap(raw_page)
    await page.set_content("<iframe srcdoc='<b>in</b>'></iframe><input type=file>")
    locator = page.locator("input")
    frame = page.frames[1]
    handle = await page.query_selector("input")
    async with page.expect_file_chooser() as chooser_info:
        await locator.click()
    chooser = await chooser_info.value
    for guarded in (page, locator, frame, handle, chooser, page.context, page.keyboard):
        raw = guarded._pw_obj
        assert repr(guarded) == repr(raw) and str(guarded) == str(raw)
        assert guarded == raw and raw == guarded and hash(guarded) == hash(raw)
        assert isinstance(guarded, type(raw))
    assert "click" in dir(locator) and "reasoning" in dir(page)
    for guarded, name in ((page, "click"), (locator, "fill"), (page, "evaluate"), (page, "route"),
                          (page, "unroute"), (page, "title"), (page.keyboard, "press")):  # fmt: skip
        mine, theirs = getattr(guarded, name), getattr(guarded._pw_obj, name)
        assert inspect.signature(mine) == inspect.signature(theirs), name
        assert inspect.iscoroutinefunction(mine) and inspect.ismethod(mine), name
        assert mine.__name__ == name and mine.__doc__ == theirs.__doc__, name
    assert page.context.pages[-1] is page
    assert frame.page is page and locator.page is page and handle is not None
    assert isinstance(page, Page) and isinstance(locator, Locator) and isinstance(frame, Frame)
    assert page.context == context and isinstance(page.context, Guarded)


def guard_engine(page: Any) -> str:
    """The selector-engine name of the guard's facts reader (it must never show in an error)."""
    return page._pw_shared.facts_reader


def test_converting_keeps_cycles_and_shared_references_at_any_depth() -> None:
    """`_convert` (what wrap and unwrap use): copies only what holds something to swap, keeps a
    cycle a cycle and a shared object shared, and walks nesting far deeper than the stack."""
    from pagewarden.interceptors._convert import arity, convert, holds

    class Leaf:
        pass

    leaf = Leaf()
    shared = {"leaf": leaf}
    root: dict[str, Any] = {"a": shared, "b": [shared, (shared, 1)]}
    root["self"] = root
    deep: list[Any] = [leaf]
    for _ in range(50_000):
        deep = [deep]
    swap = lambda item: "swapped" if item is leaf else item  # noqa: E731
    assert holds(root, lambda item: item is leaf) and not holds({"x": [1, "2", None]}, lambda item: True)
    copy = convert(root, swap)
    assert copy is not root and copy["self"] is copy and copy["a"] is copy["b"][0] is copy["b"][1][0]
    assert copy["a"] == {"leaf": "swapped"} and root["a"]["leaf"] is leaf  # the original is untouched
    innermost = convert(deep, swap)
    for _ in range(50_000):
        innermost = innermost[0]
    assert innermost == ["swapped"]
    assert arity(lambda: None, 3) == 0 and arity(lambda a, b=1: None, 3) == 2
    assert arity(lambda *a: None, 3) == 3
