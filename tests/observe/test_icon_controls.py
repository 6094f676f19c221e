"""A click on an icon inside a control (an SVG `<use>`, an icon font's `<i>`, a `<path>`) is
judged as the control: the nearest interactive ancestor, with its accessible name (issue 29).
Before, the nameless icon element was the target, and closing a site's own dialog with an
icon-only button asked for approval. Real Chromium."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.async_api import Page

from pagewarden import Guard
from pagewarden.testing import LocalSite, Response

pytestmark = pytest.mark.browser

CONTROLS = {
    "svg_use": "<button id=c aria-label='Close'><svg width=20 height=20><use id=i href='#x'></use></svg>"
    "</button>",
    "icon_font": "<button id=c aria-label='Close'><i id=i class='icon-x' style='display:inline-block;"
    "width:20px;height:20px'></i></button>",
    "role_button": "<div id=c role=button tabindex=0 aria-label='Close'><svg width=20 height=20>"
    "<path id=i d='M0 0L20 20'/></svg></div>",
    "summary": "<details><summary id=c aria-label='Close'><i id=i style='display:inline-block;"
    "width:20px;height:20px'></i></summary><p>more</p></details>",
}
SPRITE = "<svg style='display:none'><symbol id='x' viewBox='0 0 20 20'><path d='M0 0L20 20'/></symbol></svg>"


@pytest.mark.parametrize("kind", list(CONTROLS))
async def test_a_click_on_an_icon_is_the_controls(page: Page, site: LocalSite, kind: str) -> None:
    body = f"<!doctype html><title>icons</title>{SPRITE}<div role=dialog>{CONTROLS[kind]}</div>"
    site.route("app.test", f"/icons-{kind}", lambda _r: Response(body))
    guard = Guard(goal="Read the page.")
    steps: list[Any] = []
    guard.subscribe(lambda e: steps.append(e.data) if e.kind == "step" else None)
    guarded = guard.wrap(page)
    await guarded.goto(f"http://app.test/icons-{kind}")
    await guarded.click("#i", force=True)  # on the icon itself, as a coordinate click lands
    target = steps[-1]["step"]["observation"]["target"]
    assert target["tag"] in ("button", "div", "summary")
    assert target["name"] == "Close"
    assert steps[-1]["verdict"]["decision"] == "allow"
