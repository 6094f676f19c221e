"""The facts reader scrolls the page only where the click point's hit test needs it.

A scroll made by the guard's read, before Playwright's own actionability checks, makes the page
paint a new frame that the click's stability check then waits for (about one frame per guarded
click). A control with nothing inside it that could be hit instead (a text-only button or
link) activates itself whatever the hit test says, so the reader leaves the page where it is;
a control with elements inside, or a forced click, is still hit-tested where Playwright clicks.
"""

from __future__ import annotations

import pytest
from playwright.async_api import Page

from pagewarden._calls import drive_async
from pagewarden.observe._gather import facts_of_locator

CLICK = {"force": False, "position": None}


@pytest.fixture
async def below_the_fold(page: Page) -> Page:
    await page.goto("http://app.test/scroll_leaf.html")
    return page


async def read(page: Page, selector: str, activate: dict) -> tuple:
    facts, count, _ = await drive_async(facts_of_locator(page.locator(selector), activate=activate))
    assert count == 1 and facts is not None
    return facts, await page.evaluate("scrollY")


@pytest.mark.parametrize("selector", ["#leaf", "#link"])
async def test_a_control_with_nothing_inside_is_judged_in_place(below_the_fold: Page, selector: str) -> None:
    facts, scrolled = await read(below_the_fold, selector, CLICK)
    assert scrolled == 0
    assert facts.tag in ("button", "a")
    if selector == "#link":
        assert facts.href == "http://app.test/plain.html"


async def test_a_control_with_elements_inside_is_hit_tested_in_view(below_the_fold: Page) -> None:
    facts, scrolled = await read(below_the_fold, "#wrapped", CLICK)
    # hit-tested where Playwright clicks (scrolled into view); the <span> the click hits is
    # judged as the control that owns it (issue 29: the nearest interactive ancestor)
    assert scrolled > 0 and facts.tag == "button" and facts.name == "Wrapped"


async def test_a_forced_click_is_hit_tested_in_view(below_the_fold: Page) -> None:
    facts, scrolled = await read(below_the_fold, "#leaf", {"force": True, "position": None})
    assert scrolled > 0 and facts.tag == "button"
