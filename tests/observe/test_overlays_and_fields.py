"""The facts reader's view of fields (accessible name, opacity, mirrors) and of boxes over the page
(which kind, whether the agent's own input opened them), in real Chromium."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.async_api import Page

from pagewarden import Guard
from pagewarden._calls import drive_async
from pagewarden.observe import ElementFacts
from pagewarden.observe._gather import facts_of_locator


async def facts(page: Page, selector: str, *, lib: str | None = None, field: bool = False) -> ElementFacts:
    result, count, _ = await drive_async(facts_of_locator(page.locator(selector), lib=lib, field=field))
    assert count == 1 and result is not None
    return result


@pytest.fixture
async def overlays(page: Page) -> Page:
    await page.goto("http://app.test/overlays.html")
    return page


async def test_accessible_name_follows_the_accessibility_tree(overlays: Page) -> None:
    # aria-label wins over <label>, as in the browser's accessibility tree and Playwright's get_by_label
    assert (await facts(overlays, "#named")).name == "Aria name"
    assert await overlays.get_by_role("textbox", name="Aria name").get_attribute("id") == "named"
    assert (await facts(overlays, "#labelled")).name == "Visible label"


async def test_field_facts_report_opacity_and_mirrors(overlays: Page) -> None:
    assert (await facts(overlays, "#email")).field is None  # only asked for when typing
    real = (await facts(overlays, "#email", field=True)).field
    mirror = (await facts(overlays, "#mirror", field=True)).field
    assert real is not None and mirror is not None
    # A field of a form posting to the page's own origin is not searched for mirrors (it is the
    # site's own whatever else is on the page); one posting elsewhere is.
    assert real.mirrors == 0 and real.opacity == 1
    assert mirror.mirrors == 1 and mirror.mirror_in_form
    assert mirror.mirror_form_action == "http://app.test/save"
    assert real.width > 20 and real.height > 5
    assert (await facts(overlays, "#faint", field=True)).field.opacity == pytest.approx(0.2)  # type: ignore[union-attr]
    assert (await facts(overlays, "#nested", field=True)).field.opacity == pytest.approx(0.25)  # type: ignore[union-attr]


async def test_close_controls_are_recognised_by_their_structure(overlays: Page) -> None:
    assert (await facts(overlays, "#x-close")).closes
    assert (await facts(overlays, "#data-dismiss")).closes
    assert (await facts(overlays, "#dialog-ok")).closes
    assert not (await facts(overlays, "#plain")).closes


async def test_overlay_kinds_and_site_chrome(overlays: Page) -> None:
    ad = (await facts(overlays, "#ad-link")).overlay
    assert ad is not None and ad.kind == "fixed" and ad.links == 1 and ad.same_origin_links == 0
    bar = (await facts(overlays, "#nx")).overlay
    assert bar is not None and bar.kind == "sticky" and bar.same_origin_links == 3 and bar.landmark
    assert (await facts(overlays, "#plain")).overlay is None


async def test_the_installed_reader_knows_which_boxes_the_agent_opened(page: Page) -> None:
    guard = Guard(goal="Open the dialog and follow its link.")
    guarded = guard.wrap(page)
    await guarded.goto("http://app.test/overlays.html")  # installs the reader before the page runs
    lib = guarded._pw_shared.facts_reader
    ad = (await facts(page, "#ad-link", lib=lib)).overlay
    assert ad is not None and ad.agent_opened is False
    await guarded.click("#opener")
    later = (await facts(page, "#later-link", lib=lib)).overlay
    assert later is not None and later.kind == "dialog" and later.agent_opened is True
    # The inline reader (no memory) cannot tell.
    assert (await facts(page, "#later-link")).overlay.agent_opened is None  # type: ignore[union-attr]


async def test_a_box_the_page_opened_by_itself_after_load_is_not_the_agents(page: Page) -> Any:
    guarded = Guard(goal="Read the page.").wrap(page)
    await guarded.goto("http://app.test/overlays.html")
    await page.evaluate("setTimeout(() => document.getElementById('later').showModal(), 50)")
    await page.wait_for_selector("#later-link", state="visible")
    lib = guarded._pw_shared.facts_reader
    assert (await facts(page, "#later-link", lib=lib)).overlay.agent_opened is False  # type: ignore[union-attr]
