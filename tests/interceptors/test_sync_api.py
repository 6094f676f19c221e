"""The sync facade: the same guard over Playwright's sync API (one shared implementation)."""

from __future__ import annotations

import inspect
import os
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page

import pagewarden
from pagewarden.interceptors import Guarded
from pagewarden.sync_api import ActionBlocked, ApprovalRequired, Guard, approve_all
from pagewarden.testing import LocalSite
from tests.heard import heard_sync

from .test_actions import DANGER
from .test_dropin import pending_navigation_site


@pytest.fixture
def sync_page(sync_browser: Browser) -> Iterator[Page]:
    context = sync_browser.new_context()
    yield context.new_page()
    context.close()


def _events(page: Any) -> list[str]:
    return page.unwrap().evaluate("window.events")


def test_sync_actions_are_checked_and_run_when_allowed(sync_page: Page) -> None:
    guard = Guard(DANGER)
    page = guard.wrap(sync_page)
    assert isinstance(page, Page) and isinstance(page, Guarded)
    page.goto("http://app.test/actions.html")
    with pytest.raises(ApprovalRequired):
        page.get_by_role("button", name="Danger button").click()
    with pytest.raises(ApprovalRequired):
        page.get_by_label("Danger text").fill("nope")
    page.locator("#safe").click()
    page.fill("#stext", "fine")
    assert _events(page) == ["safe-click", "safe-input:fine"]
    assert page.locator("#stext").input_value() == "fine"


def test_sync_keyboard_mouse_and_frames(sync_page: Page) -> None:
    page = Guard(DANGER).wrap(sync_page)
    page.goto("http://app.test/actions.html")
    box = sync_page.locator("#danger").bounding_box()
    assert box is not None
    with pytest.raises(ApprovalRequired):
        page.mouse.click(box["x"] + 5, box["y"] + 5)
    sync_page.focus("#dtext")
    with pytest.raises(ApprovalRequired):
        page.keyboard.type("abc")
    with pytest.raises(ApprovalRequired):
        page.frame_locator("#frame").locator("#fbutton").click()
    assert _events(page) == []


def test_sync_popup_is_guarded(sync_page: Page) -> None:
    page = Guard(DANGER).wrap(sync_page)
    page.goto("http://app.test/actions.html")
    with page.expect_popup() as info:
        page.click("#popup")
    popup = info.value
    assert isinstance(popup, Guarded)
    popup.wait_for_load_state()
    with pytest.raises(ApprovalRequired):
        popup.click("#pbutton")
    assert popup.title() == "Plain"


def test_sync_approvers_sync_and_async(sync_page: Page) -> None:
    async def async_approver(verdict: Any, step: Any) -> bool:
        return step.action.kind == "click"

    page = Guard(DANGER, approver=async_approver).wrap(sync_page)
    page.goto("http://app.test/actions.html")
    page.click("#danger")
    with pytest.raises(ApprovalRequired):
        page.fill("#dtext", "x")
    events = _events(page)
    assert "click" in events and not any(e.startswith("input:") for e in events)


def test_sync_injection_is_blocked(sync_page: Page, tmp_path: Path) -> None:
    guard = Guard(goal="Open the plain page.", trace=tmp_path / "t.jsonl")
    page = guard.wrap(sync_page)
    page.goto("http://app.test/injection.html")
    with pytest.raises(ActionBlocked) as caught:
        page.get_by_role("link", name="this link").click()
    assert caught.value.verdict.violated_policy_ids == ["PW-INJECTION"]
    assert page.url == "http://app.test/injection.html"
    assert (tmp_path / "t.jsonl").read_text().count('"decision":"block"') == 1


def test_sync_navigation_gate_refuses_a_popup_off_the_allow_list(sync_page: Page, site: LocalSite) -> None:
    """The gate's route handler under the sync API: a popup a click handler opens to a host the
    policies refuse never loads; the agent hears of it (the click fails with it, or the next
    call); an allowed one loads."""
    from .test_navigation_gate import APP_AND_OTHER, _serve

    page = Guard(APP_AND_OTHER, goal="Use the app.").wrap(sync_page)
    page.goto(_serve(site, "open", "http://evil.test/plain.html?c=gate-sync"))
    later = page.unwrap().wait_for_timeout
    blocked = heard_sync(lambda: page.click("#t"), lambda: (later(700), page.hover("#t")))
    page.unwrap().wait_for_timeout(700)
    assert [r for r in site.requests_to("evil.test") if r.query.get("c") == ["gate-sync"]] == []
    assert blocked.verdict.findings[0].rule == "network:domain_allow"
    page.goto(_serve(site, "open", "http://other.test/plain.html?c=gate-sync-twin"))
    with page.unwrap().context.expect_page() as popup:
        page.click("#t")
    popup.value.wait_for_load_state()
    assert [r for r in site.requests_to("other.test") if r.query.get("c") == ["gate-sync-twin"]]


def test_sync_reads_go_over_cdp_in_the_utility_world(sync_page: Page) -> None:
    """The facts reader is called over CDP under the sync API too (`observe._direct`)."""
    page = Guard(DANGER).wrap(sync_page)
    page.goto("http://app.test/actions.html")
    page.locator("#safe").click()
    reader = page._pw_shared.direct_readers.get(sync_page)  # type: ignore[attr-defined]
    assert reader is not None and reader.world is not None and reader._installed
    with pytest.raises(ApprovalRequired):
        page.locator("#danger").click()
    page.fill("#stext", "fine")
    assert _events(page) == ["safe-click", "safe-input:fine"]


def _sync_failure(call: Any, page: Any) -> BaseException:
    try:
        call(page)
    except Exception as exc:  # noqa: BLE001 - compared by the caller
        return exc
    raise AssertionError("the call did not fail")


def test_sync_drop_in_passes_results_callbacks_and_errors_through(sync_browser: Browser) -> None:
    """The drop-in under the sync API (see test_dropin.py): a result that contains itself, a
    callback taking fewer arguments than the page passes, and Playwright's own errors (message
    and stack) for calls that fail, in monitor mode (which runs them) and enforce mode (which
    cannot observe them: it raises what Playwright raises, without running anything)."""
    context = sync_browser.new_context()
    try:
        raw = context.new_page()
        raw.set_content("<input type=file><input type=file>")
        for mode in ("monitor", "enforce"):
            permissive = {} if mode == "monitor" else {"baseline": False, "approver": approve_all}
            guard = Guard(mode=mode, **permissive)
            page = guard.wrap(context.new_page())
            calls: list[Any] = []
            page.expose_function("noArgs", lambda: calls.append("no-args"))  # noqa: B023
            page.set_content("<input type=file><input type=file>")
            got = page.evaluate("() => { const o = {n: 1}; o.self = o; window.noArgs(1, 2); return o; }")
            assert got["self"] is got and got["n"] == 1
            page.evaluate("() => 1")  # (the binding's call has come back by now)
            assert calls == ["no-args"]
            assert repr(page.locator("input")) == repr(raw.locator("input"))
            for name in ("click", "evaluate", "route", "title"):
                mine, theirs = getattr(page, name), getattr(raw, name)
                assert inspect.signature(mine) == inspect.signature(theirs), name
                assert not inspect.iscoroutinefunction(mine) and mine.__doc__ == theirs.__doc__, name
            for call in (
                lambda p: p.locator("button").click(timeout=42),
                lambda p: p.click("div[[[", timeout=timedelta(milliseconds=500)),
                lambda p: p.locator("input").set_input_files([]),
            ):
                expected, failed = _sync_failure(call, raw), _sync_failure(call, page)
                assert type(failed) is type(expected) and str(failed) == str(expected), mode
                assert page._pw_shared.facts_reader not in str(failed)
                package = str(Path(pagewarden.__file__).parent) + os.sep
                assert __file__ in (failed.stack or "") and package not in (failed.stack or "")
    finally:
        context.close()


def test_sync_monitor_mode_does_not_hold_a_goto_for_the_pages_pending_navigation(
    sync_page: Page, site: LocalSite, tmp_path: Path
) -> None:
    """The sync API as the async one (tests/interceptors/test_dropin.py): a goto while the
    page's own navigation is pending starts at once in monitor mode."""
    events = pending_navigation_site(site, "pending-sync.test")
    page = Guard(mode="monitor", trace=tmp_path / "trace.jsonl").wrap(sync_page)
    page.goto(site.url("pending-sync.test", "/a"))
    page.wait_for_timeout(500)  # /c is on its way
    page.goto(site.url("pending-sync.test", "/b"))
    assert page.url == site.url("pending-sync.test", "/b")
    assert events.index("started b") < events.index("finished c"), events
    assert "a navigation the page started was in progress" in (tmp_path / "trace.jsonl").read_text()
