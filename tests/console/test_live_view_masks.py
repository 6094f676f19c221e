"""The console's live view never shows a password or a registered secret typed into a field:
their boxes are painted over in every frame before it leaves the guard (issue 24). Real
Chromium screencast frames, pixels checked."""

from __future__ import annotations

import asyncio
import io
import queue
import threading
from typing import Any

import pytest
from PIL import Image
from playwright.async_api import BrowserContext

from pagewarden.console import Console
from pagewarden.sync_api import launch as launch_sync
from pagewarden.testing import LocalSite
from tests.console.conftest import Person
from tests.observe.test_mask import FORM, PASSWORD, SECRET, field_boxes, inside, masked, shows_text

pytestmark = pytest.mark.browser


_REPAINT = "() => { const s = document.body.style; s.outline = s.outline ? '' : '1px solid #eee'; }"


async def _frame_after_typing(console: Console, session: str, page: Any, width: int) -> Image.Image:
    """The newest frame once one shows the benign note typed (so it came after every fill)."""
    boxes = await field_boxes(page)
    for _ in range(100):
        data = console.hub.frame(session)
        if data:
            picture = Image.open(io.BytesIO(data))
            if shows_text(inside(picture, boxes["note"], width)):
                return picture
        # make the page paint again (a frame is sent when the page changes)
        await page.evaluate(_REPAINT)
        await asyncio.sleep(0.1)
    raise AssertionError("no live-view frame showed the typed note")


async def test_live_view_frames_mask_password_and_secret_fields(
    context: BrowserContext, supervised: Any, console: Console, person: Person
) -> None:
    guard = supervised(goal="Sign in to app.test")
    guard.add_secret(SECRET, allow_domains=["app.test"])
    raw = await context.new_page()
    page = guard.wrap(raw)
    await page.goto(FORM)
    await person.open(console.url, guard.session_id)
    await page.fill("#user", "dana")
    await page.fill("#pass", PASSWORD)
    await page.fill("#token", SECRET)
    await page.fill("#note", "hello there")
    width = raw.viewport_size["width"]
    picture = await _frame_after_typing(console, guard.session_id, raw, width)
    boxes = await field_boxes(raw)
    assert masked(inside(picture, boxes["pass"], width)), "password field shown in the live view"
    assert masked(inside(picture, boxes["token"], width)), "registered secret shown in the live view"
    assert shows_text(inside(picture, boxes["user"], width)), "a benign field was masked"


def _sync_typist(console: Console, port: int, said: queue.Queue, watched: threading.Event) -> None:
    with launch_sync(host_map={"*.test": port}, console=console) as page:
        page.guard.add_secret(SECRET, allow_domains=["app.test"])
        page.goto(FORM)
        said.put(("ready", page.guard.session_id, page.viewport_size["width"]))
        watched.wait(60)
        page.fill("#user", "dana")
        page.fill("#pass", PASSWORD)
        page.fill("#token", SECRET)
        page.fill("#note", "hello there")
        boxes = {}
        for name in ("user", "pass", "token", "note"):
            box = page.locator(f"#{name}").bounding_box()
            boxes[name] = (box["x"], box["y"], box["width"], box["height"])
        said.put(("typed", boxes, None))
        # the sync API delivers frames while it runs: keep it running (the caret blinks)
        for _ in range(300):
            if getattr(watched, "done", False):
                break
            page.wait_for_timeout(100)


async def test_sync_api_live_view_masks_too(site: LocalSite, person: Person) -> None:
    said: queue.Queue = queue.Queue()
    watched = threading.Event()
    with Console() as console:
        agent = asyncio.create_task(asyncio.to_thread(_sync_typist, console, site.port, said, watched))
        try:
            kind, session, width = await asyncio.to_thread(said.get, True, 60)
            assert kind == "ready"
            await person.open(console.url, session)
            watched.set()
            kind, boxes, _ = await asyncio.to_thread(said.get, True, 60)
            assert kind == "typed"
            picture = None
            for _ in range(150):
                data = console.hub.frame(session)
                if data:
                    candidate = Image.open(io.BytesIO(data))
                    if shows_text(inside(candidate, boxes["note"], width)):
                        picture = candidate
                        break
                await asyncio.sleep(0.1)
            assert picture is not None, "no live-view frame showed the typed note"
            assert masked(inside(picture, boxes["pass"], width)), "password field shown in the live view"
            assert masked(inside(picture, boxes["token"], width)), "registered secret shown in the live view"
            assert shows_text(inside(picture, boxes["user"], width)), "a benign field was masked"
        finally:
            watched.done = True  # type: ignore[attr-defined]
            await agent
