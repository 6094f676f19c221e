"""Shared fixtures: one local multi-origin site and one real Chromium per test session."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from playwright.async_api import Browser, BrowserContext, Page, async_playwright

from pagewarden._browser import chromium_launch_options
from pagewarden.testing import LocalSite
from pagewarden.trace import global_secrets
from tests.artefacts import artefacts, leaks

PAGES = Path(__file__).parent / "pages"


@pytest.fixture(scope="session", autouse=True)
def no_secret_in_artefacts(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """After the whole session: no trace, log, report or results file any test wrote holds a
    value that was marked secret in this process — registered with a guard, listed in a
    policy's `sensitive_data.values`, written as a credential in a goal, typed into a
    password field, or given to `configure_logging(secrets=…)` — in clear."""
    yield
    root = tmp_path_factory.getbasetemp()
    files = artefacts(root)
    found = leaks(files, global_secrets())
    assert not found, "secrets in clear in test artefacts:\n" + "\n".join(found)


@pytest.fixture(scope="session")
def site() -> Iterator[LocalSite]:
    """`app.test` and `other.test` serve tests/pages; `evil.test` answers everything with 200."""
    server = LocalSite()
    server.add_directory("app.test", PAGES)
    server.add_directory("other.test", PAGES)
    server.add_directory("evil.test", PAGES)
    with server:
        yield server


@pytest.fixture(scope="session")
async def browser(site: LocalSite) -> AsyncIterator[Browser]:
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(**chromium_launch_options(host_map={"*.test": site.port}))
        yield browser
        await browser.close()


@pytest.fixture
async def context(browser: Browser) -> AsyncIterator[BrowserContext]:
    context = await browser.new_context(has_touch=True)
    yield context
    await context.close()


@pytest.fixture
async def page(context: BrowserContext) -> Page:
    return await context.new_page()
