"""Console fixtures: a console on the test loop, and a second Chromium that a person uses."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from playwright.async_api import Browser, Page, async_playwright

from pagewarden import Guard
from pagewarden._browser import chromium_launch_options
from pagewarden.console import Console
from pagewarden.policies import Policy
from pagewarden.testing import LocalSite

SUPERVISED = "http://app.test/supervised.html"


def consent(*names: str, pid: str = "P1") -> Policy:
    """A policy whose clicks on `names` need a person's approval (ASK)."""
    return Policy(
        id=pid,
        category="consent",
        risk_level="high",
        description="releases are published by a person",
        rules=[{"consent": {"match": list(names), "actions": ["click"]}}],
    )


@pytest.fixture
async def console() -> AsyncIterator[Console]:
    """A console served on the test's (the agent's) event loop."""
    async with Console(approval_timeout=60) as running:
        yield running


@pytest.fixture(scope="session")
async def person_browser(site: LocalSite) -> AsyncIterator[Browser]:
    """A second, separate Chromium: the supervisor's. `*.test` reaches the local site, so a
    request the console page were tricked into making would be recorded there."""
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(**chromium_launch_options(host_map={"*.test": site.port}))
        yield browser
        await browser.close()


@dataclass
class Person:
    """The supervisor's console tab, with what it saw go wrong."""

    page: Page
    dialogs: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)

    async def open(self, url: str, session: str | None = None) -> None:
        await self.page.goto(url + (f"&session={session}" if session else ""))
        if session:
            await self.page.locator("#d-id", has_text=session).wait_for()

    async def status(self, status: str, *, holding: bool | None = None) -> None:
        selector = f'#d-status[data-status="{status}"]'
        if holding is not None:
            selector += f'[data-holding="{"yes" if holding else "no"}"]'
        await self.page.locator(selector).wait_for(state="attached")


@pytest.fixture
async def person(person_browser: Browser) -> AsyncIterator[Person]:
    context = await person_browser.new_context(viewport={"width": 1400, "height": 1000})
    page = await context.new_page()
    seen = Person(page)

    async def on_dialog(dialog: Any) -> None:
        seen.dialogs.append(dialog.message)
        await dialog.dismiss()

    page.on("dialog", on_dialog)
    page.on("pageerror", lambda e: seen.errors.append(str(e)))
    page.on("request", lambda r: seen.requests.append(r.url))
    yield seen
    await context.close()


@pytest.fixture
def supervised(console: Console) -> Any:
    """Make guards attached to the console (closed at the end of the test)."""
    guards: list[Guard] = []

    def make(**options: Any) -> Guard:
        guard = Guard(console=console, **options)
        guards.append(guard)
        return guard

    yield make
    for guard in guards:
        guard.close()
