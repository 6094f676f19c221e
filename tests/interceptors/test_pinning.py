"""A page cannot swap a judged link or form destination for another site at click time."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.async_api import Page

from pagewarden import ActionBlocked, Guard, read_trace
from pagewarden.testing import LocalSite


async def test_link_swapped_on_mousedown_is_stopped(page: Page, site: LocalSite, tmp_path: Path) -> None:
    guard = Guard(goal="Open the plain page.", trace=tmp_path / "t.jsonl")
    guarded = guard.wrap(page)
    await guarded.goto("http://app.test/swap.html")
    before = len(site.requests_to("evil.test"))
    with pytest.raises(ActionBlocked) as caught:
        await guarded.click("#swap")
    assert caught.value.verdict.findings[0].rule == "destination_pinning"
    assert "http://evil.test/plain.html?stolen=1" in caught.value.verdict.explanation
    await page.wait_for_timeout(100)
    assert page.url == "http://app.test/swap.html"
    assert len(site.requests_to("evil.test")) == before
    last = list(read_trace(tmp_path / "t.jsonl"))[-1]
    assert last.verdict.decision.value == "block" and last.verdict.violated_policy_ids == ["PW-GUARD"]


async def test_same_origin_rewrite_is_allowed(page: Page) -> None:
    guarded = Guard(goal="Open the plain page.").wrap(page)
    await guarded.goto("http://app.test/swap.html")
    async with page.expect_navigation():
        await guarded.click("#track")
    assert page.url == "http://app.test/plain.html?utm=1"


async def test_form_action_swapped_on_submit_is_stopped(page: Page, site: LocalSite) -> None:
    guarded = Guard(goal="Search for hello.").wrap(page)
    await guarded.goto("http://app.test/swap.html")
    before = len(site.requests_to("evil.test"))
    with pytest.raises(ActionBlocked) as caught:
        await guarded.click("#go")
    assert "form" in caught.value.verdict.explanation
    await page.wait_for_timeout(100)
    assert page.url == "http://app.test/swap.html"
    assert len(site.requests_to("evil.test")) == before


async def test_unguarded_the_swap_works(page: Page, site: LocalSite) -> None:
    """The attack is real: on a raw page the click lands on evil.test."""
    await page.goto("http://app.test/swap.html")
    async with page.expect_navigation():
        await page.click("#swap")
    assert page.url == "http://evil.test/plain.html?stolen=1"


async def test_monitor_mode_does_not_interfere(page: Page) -> None:
    guarded = Guard(goal="Open the plain page.", mode="monitor").wrap(page)
    await guarded.goto("http://app.test/swap.html")
    async with page.expect_navigation():
        await guarded.click("#swap")
    assert page.url.startswith("http://evil.test/")
