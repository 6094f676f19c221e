"""Pictures of the page leave the guard with password fields and fields holding a registered
secret painted over (issue 24): trace screenshots here, the console's live view in
tests/console/test_live_view_masks.py. Real Chromium; the pixels are checked."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from PIL import Image
from playwright.async_api import Page

from pagewarden import Guard
from pagewarden.observe._mask import FILL

pytestmark = [pytest.mark.browser]

FORM = "http://app.test/secrets_form.html"
SECRET = "tok-7QX93-PLUM-41"
PASSWORD = "hunter2-Hunter2"
FIELDS = ("user", "pass", "token", "note")


async def field_boxes(page: Page) -> dict[str, tuple[float, float, float, float]]:
    """Each field's box in viewport CSS px (read by the test, outside the guard)."""
    return await page.evaluate(
        """(ids) => Object.fromEntries(ids.map((id) => {
             const r = document.getElementById(id).getBoundingClientRect();
             return [id, [r.left, r.top, r.width, r.height]]; }))""",
        list(FIELDS),
    )


def inside(picture: Image.Image, box: tuple[float, float, float, float], viewport_width: int) -> list[int]:
    """The grey levels of a box's interior (inset from its border) in `picture`."""
    scale = picture.width / viewport_width
    x, y, w, h = box
    crop = picture.convert("L").crop(
        (int((x + 6) * scale), int((y + 6) * scale), int((x + w - 6) * scale), int((y + h - 6) * scale))
    )
    return list(crop.tobytes())


def masked(levels: list[int]) -> bool:
    """The whole interior is the mask's colour (give or take JPEG noise)."""
    return max(levels) <= FILL[0] + 24 and min(levels) >= FILL[0] - 24


def shows_text(levels: list[int]) -> bool:
    """A white field with dark glyphs in it: not masked."""
    return max(levels) > 230 and min(levels) < 100


async def test_trace_screenshots_mask_password_and_secret_fields(page: Page, tmp_path: Path) -> None:
    guard = Guard(goal="Sign in to app.test", trace=tmp_path / "trace.jsonl", screenshots=True)
    guard.add_secret(SECRET, allow_domains=["app.test"])
    guarded = guard.wrap(page)
    await guarded.goto(FORM)
    await guarded.fill("#user", "dana")
    await guarded.fill("#pass", PASSWORD)
    await guarded.fill("#token", SECRET)
    await guarded.fill("#note", "hello there")
    # the page "shows the password" (type=text) and moves it: still masked where it is now
    await page.evaluate(
        "() => { const p = document.getElementById('pass'); p.type = 'text'; p.style.left = '60px'; }"
    )
    await guarded.click("#go")  # its screenshot is taken with every field filled
    guard.close()
    shots = sorted((tmp_path).rglob("*-step*.png"))
    assert shots, "no screenshot written"
    picture = Image.open(io.BytesIO(shots[-1].read_bytes()))
    boxes = await field_boxes(page)
    width = page.viewport_size["width"]
    assert masked(inside(picture, boxes["pass"], width)), "password field not masked"
    assert masked(inside(picture, boxes["token"], width)), "field holding a secret not masked"
    assert shows_text(inside(picture, boxes["user"], width)), "a benign field was masked"
    assert shows_text(inside(picture, boxes["note"], width)), "a benign field was masked"
    assert SECRET not in (tmp_path / "trace.jsonl").read_text()


async def test_without_secrets_or_passwords_nothing_is_painted(page: Page, tmp_path: Path) -> None:
    guard = Guard(goal="Fill the form on app.test", trace=tmp_path / "trace.jsonl", screenshots=True)
    guarded = guard.wrap(page)
    await guarded.goto(FORM)
    await guarded.fill("#token", "not a secret at all")
    await guarded.click("#go")
    guard.close()
    picture = Image.open(io.BytesIO(sorted(tmp_path.rglob("*-step*.png"))[-1].read_bytes()))
    boxes = await field_boxes(page)
    assert shows_text(inside(picture, boxes["token"], page.viewport_size["width"]))


FLIPPED = ("early", "short", "swap", "btn", "note")


async def test_a_page_cannot_unmask_a_password_by_flipping_or_swapping(page: Page, tmp_path: Path) -> None:
    """The page shows what a password field holds: it makes the field a text field before any
    read of the guard (a value the server filled in), or right after the agent typed a short
    secret (not registered: under 4 characters), or after a read, by swapping the field for a
    text twin holding the value, or by making it a button (whose label is its value). Every
    one stays masked in the pictures; a plain field stays visible."""
    guard = Guard(goal="Sign in to app.test", trace=tmp_path / "trace.jsonl", screenshots=True)
    guarded = guard.wrap(page)
    await guarded.goto("http://app.test/secrets_flip.html")
    await guarded.fill("#short", "x7!")
    await guarded.fill("#swap", "k9?")
    await guarded.fill("#btn", "q4#")
    await guarded.fill("#note", "hello there")  # its picture: #swap still a password field
    await page.wait_for_function("() => document.getElementById('swap').type === 'text'")
    assert await page.evaluate("() => document.getElementById('btn').type") == "button"
    await guarded.click("#go")  # its picture: every field flipped or swapped
    guard.close()
    picture = Image.open(io.BytesIO(sorted(tmp_path.rglob("*-step*.png"))[-1].read_bytes()))
    boxes = await page.evaluate(
        """(ids) => Object.fromEntries(ids.map((id) => {
             const r = document.getElementById(id).getBoundingClientRect();
             return [id, [r.left, r.top, r.width, r.height]]; }))""",
        list(FLIPPED),
    )
    width = page.viewport_size["width"]
    unmasked = [n for n in ("early", "short", "swap", "btn") if not masked(inside(picture, boxes[n], width))]
    assert unmasked == []
    assert shows_text(inside(picture, boxes["note"], width)), "a benign field was masked"
