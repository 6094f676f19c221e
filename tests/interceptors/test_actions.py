"""Every intercepted action is checked before it runs, and still works when allowed."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import pytest
from playwright.async_api import Page

from pagewarden import ApprovalRequired, Guard, PolicySet, Step, Verdict

DANGER = PolicySet.from_dict(
    {
        "version": 1,
        "policies": [
            {
                "id": "T-DANGER",
                "category": "consent",
                "risk_level": "high",
                "description": "Any action on an element named Danger needs approval.",
                "rules": [{"consent": {"match": ["Danger"], "actions": ["any"]}}],
            }
        ],
    }
)

FILE = {"name": "a.txt", "mimeType": "text/plain", "buffer": b"hi"}


async def _center(page: Page, selector: str) -> tuple[float, float]:
    box = await page.unwrap().locator(selector).bounding_box()
    assert box is not None
    return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2


async def _mouse_click(p: Any) -> None:
    await p.mouse.click(*await _center(p, "#danger"))


async def _mouse_dblclick(p: Any) -> None:
    await p.mouse.dblclick(*await _center(p, "#danger"))


async def _mouse_down_up(p: Any) -> None:
    await p.unwrap().mouse.move(*await _center(p, "#danger"))  # a guarded move is a hover: see below
    await p.mouse.down()
    await p.mouse.up()


async def _touch_tap(p: Any) -> None:
    await p.touchscreen.tap(*await _center(p, "#danger"))


async def _element_handle_click(p: Any) -> None:
    handle = await p.query_selector("#danger")
    await handle.click()


async def _raw(p: Any, code: str) -> None:
    await p.unwrap().evaluate(code)


@dataclass(frozen=True)
class Case:
    id: str
    act: Callable[[Any], Awaitable[Any]]
    event: str
    kind: str
    setup: str = ""


CASES = [
    Case("locator.click", lambda p: p.locator("#danger").click(), "click", "click"),
    Case("locator.dblclick", lambda p: p.locator("#danger").dblclick(), "dblclick", "dblclick"),
    Case("locator.hover", lambda p: p.locator("#danger").hover(), "hover", "hover"),
    Case("locator.tap", lambda p: p.locator("#danger").tap(), "touch", "tap"),
    Case("locator.focus", lambda p: p.locator("#danger").focus(), "focus", "focus"),
    Case(
        "locator.blur",
        lambda p: p.locator("#danger").blur(),
        "blur",
        "blur",
        "document.querySelector('#danger').focus()",
    ),
    Case("get_by_label.check", lambda p: p.get_by_label("Danger check").check(), "check:true", "check"),
    Case("locator.set_checked", lambda p: p.locator("#dcheck").set_checked(True), "check:true", "check"),
    Case(
        "locator.uncheck",
        lambda p: p.locator("#dcheck").uncheck(),
        "check:false",
        "uncheck",
        "document.querySelector('#dcheck').checked = true",
    ),
    Case("get_by_label.fill", lambda p: p.get_by_label("Danger text").fill("hello"), "input:hello", "fill"),
    Case(
        "locator.clear",
        lambda p: p.locator("#dtext").clear(),
        "input:",
        "clear",
        "document.querySelector('#dtext').value = 'old'",
    ),
    Case("locator.type", lambda p: p.locator("#dtext").type("ab"), "input:ab", "type"),
    Case(
        "locator.press_sequentially",
        lambda p: p.locator("#dtext").press_sequentially("cd"),
        "input:cd",
        "type",
    ),
    Case("locator.press", lambda p: p.locator("#dtext").press("x"), "key:x", "press"),
    Case(
        "locator.select_option",
        lambda p: p.get_by_label("Danger select").select_option("b"),
        "select:b",
        "select_option",
    ),
    Case(
        "locator.set_input_files",
        lambda p: p.locator("#dfile").set_input_files(FILE),
        "file:a.txt",
        "set_input_files",
    ),
    Case("locator.dispatch_event", lambda p: p.locator("#danger").dispatch_event("click"), "click", "click"),
    Case("locator.drag_to", lambda p: p.locator("#dragme").drag_to(p.locator("#drop")), "drop", "drag"),
    Case("locator.select_text", lambda p: p.locator("#para").select_text(), "selection", "select_text"),
    Case("page.click", lambda p: p.click("#danger"), "click", "click"),
    Case("page.dblclick", lambda p: p.dblclick("#danger"), "dblclick", "dblclick"),
    Case("page.hover", lambda p: p.hover("#danger"), "hover", "hover"),
    Case("page.tap", lambda p: p.tap("#danger"), "touch", "tap"),
    Case("page.focus", lambda p: p.focus("#danger"), "focus", "focus"),
    Case("page.fill", lambda p: p.fill("#dtext", "xyz"), "input:xyz", "fill"),
    Case("page.type", lambda p: p.type("#dtext", "q"), "input:q", "type"),
    Case("page.press", lambda p: p.press("#dtext", "y"), "key:y", "press"),
    Case("page.check", lambda p: p.check("#dcheck"), "check:true", "check"),
    Case(
        "page.uncheck",
        lambda p: p.uncheck("#dcheck"),
        "check:false",
        "uncheck",
        "document.querySelector('#dcheck').checked = true",
    ),
    Case("page.set_checked", lambda p: p.set_checked("#dcheck", True), "check:true", "check"),
    Case("page.select_option", lambda p: p.select_option("#dselect", "b"), "select:b", "select_option"),
    Case(
        "page.set_input_files", lambda p: p.set_input_files("#dfile", FILE), "file:a.txt", "set_input_files"
    ),
    Case("page.dispatch_event", lambda p: p.dispatch_event("#danger", "click"), "click", "click"),
    Case("page.drag_and_drop", lambda p: p.drag_and_drop("#dragme", "#drop"), "drop", "drag"),
    Case(
        "keyboard.type",
        lambda p: p.keyboard.type("zz"),
        "input:zz",
        "type",
        "document.querySelector('#dtext').focus()",
    ),
    Case(
        "keyboard.press",
        lambda p: p.keyboard.press("a"),
        "key:a",
        "press",
        "document.querySelector('#dtext').focus()",
    ),
    Case(
        "keyboard.down",
        lambda p: p.keyboard.down("b"),
        "key:b",
        "press",
        "document.querySelector('#dtext').focus()",
    ),
    Case(
        "keyboard.insert_text",
        lambda p: p.keyboard.insert_text("w"),
        "input:w",
        "type",
        "document.querySelector('#dtext').focus()",
    ),
    Case("mouse.click", _mouse_click, "click", "click"),
    Case("mouse.dblclick", _mouse_dblclick, "dblclick", "dblclick"),
    Case("mouse.move+down", _mouse_down_up, "click", "click"),
    Case("touchscreen.tap", _touch_tap, "touch", "tap"),
    Case(
        "frame_locator.click",
        lambda p: p.frame_locator("#frame").locator("#fbutton").click(),
        "frame-click",
        "click",
    ),
    Case(
        "content_frame.click",
        lambda p: p.locator("#frame").content_frame.get_by_text("Danger in frame").click(),
        "frame-click",
        "click",
    ),
    Case(
        "frame.click",
        lambda p: p.frame(url="http://app.test/frame.html").click("#fbutton"),
        "frame-click",
        "click",
    ),
    Case("element_handle.click", _element_handle_click, "click", "click"),
]


async def _events(page: Any) -> list[str]:
    return await page.unwrap().evaluate("window.events")


async def _open(guard: Guard, page: Page, case: Case) -> Any:
    guarded = guard.wrap(page)
    await page.goto("http://app.test/actions.html")
    await page.frame(url="http://app.test/frame.html").wait_for_load_state()
    if case.setup:
        await _raw(guarded, case.setup)
    return guarded


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
async def test_action_is_checked_before_it_runs(page: Page, case: Case) -> None:
    guard = Guard(DANGER)
    guarded = await _open(guard, page, case)
    with pytest.raises(ApprovalRequired) as caught:
        await case.act(guarded)
    verdict = caught.value.verdict
    assert verdict.violated_policy_ids == ["T-DANGER"]
    assert case.event not in await _events(guarded), "the action ran although the guard stopped it"
    assert guard.session.previous is not None
    assert guard.session.previous.action.kind == case.kind


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
async def test_action_runs_when_approved(page: Page, case: Case) -> None:
    seen: list[tuple[Verdict, Step]] = []

    def approver(verdict: Verdict, step: Step) -> bool:
        seen.append((verdict, step))
        return True

    guard = Guard(DANGER, approver=approver)
    guarded = await _open(guard, page, case)
    await case.act(guarded)
    assert case.event in await _events(guarded)
    assert [step.action.kind for _, step in seen] == [case.kind]
    assert seen[0][1].observation.target is not None
    assert "Danger" in seen[0][1].observation.target.label


SAFE = [
    ("locator.click", lambda p: p.locator("#safe").click(), "safe-click"),
    ("page.fill", lambda p: p.fill("#stext", "ok"), "safe-input:ok"),
    ("get_by_role.click", lambda p: p.get_by_role("button", name="Safe button").click(), "safe-click"),
    (
        "frame_locator.click",
        lambda p: p.frame_locator("#frame").get_by_text("Safe in frame").click(),
        "frame-safe",
    ),
]


@pytest.mark.parametrize(("name", "act", "event"), SAFE, ids=[s[0] for s in SAFE])
async def test_allowed_action_runs_without_asking(page: Page, name: str, act: Any, event: str) -> None:
    guard = Guard(DANGER)
    guarded = guard.wrap(page)
    await guarded.goto("http://app.test/actions.html")
    await act(guarded)
    assert event in await _events(guarded)
    assert guard.session.history[-1].kind in ("click", "fill")


async def test_mouse_move_is_judged_as_a_hover(page: Page) -> None:
    """A move is a hover at a point (the page's hover handlers run): judged like `hover`."""
    guard = Guard(DANGER)
    guarded = guard.wrap(page)
    await guarded.goto("http://app.test/actions.html")
    with pytest.raises(ApprovalRequired):
        await guarded.mouse.move(*await _center(guarded, "#danger"))
    assert guard.session.previous is not None and guard.session.previous.action.kind == "hover"
    await guarded.mouse.move(*await _center(guarded, "#safe"))  # a move elsewhere runs
    assert guard.session.history[-1].kind == "hover"


async def test_mouse_down_is_judged_where_the_pointer_is_after_a_detaching_swap(page: Page) -> None:
    """A page that replaces the element under the pointer on ``pointerover`` sends the move's
    ``mousemove`` to the detached node, never to the window: the press must still be judged at
    the point the pointer moved to (the element that receives it), not at the previous one."""
    guard = Guard(DANGER)
    guarded = guard.wrap(page)
    await guarded.goto("http://app.test/actions.html")
    await page.evaluate(
        """() => { document.body.innerHTML =
          '<button id="a" style="position:absolute;left:10px;top:10px;width:100px;height:40px">' +
          'Safe</button>' +
          '<span id="slot" style="position:absolute;left:200px;top:10px"><button id="b" ' +
          'style="width:100px;height:40px">Save</button></span>';
        document.getElementById('b').addEventListener('pointerover', () => {
          slot.innerHTML = '<button style="width:100px;height:40px" onclick="window.hit = 1">Danger</button>';
        }, {once: true}); }"""
    )
    await guarded.mouse.move(60, 30)
    await guarded.mouse.down()
    await guarded.mouse.up()
    await guarded.mouse.move(250, 30)  # "Save" when the move is judged; "Danger" when it lands
    with pytest.raises(ApprovalRequired):
        await guarded.mouse.down()
    assert await page.evaluate("window.hit") is None
