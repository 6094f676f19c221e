"""Fixtures for the demo's tests: the demo site, one Chromium, and whole demo runs.

Whole runs (every scenario, guarded and unguarded) are session-scoped: they take a minute
each and many tests read the same result.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from playwright.async_api import Browser, async_playwright

from pagewarden._browser import chromium_launch_options
from pagewarden.demo.runner import DemoResult, run_demo_async
from pagewarden.demo.site import DemoSite


@pytest.fixture(scope="session")
def demo_site() -> Iterator[DemoSite]:
    """tracker.test, forum.test, docs.test and evil.test on one local port."""
    with DemoSite() as site:
        yield site


@pytest.fixture(scope="session")
async def demo_browser(demo_site: DemoSite) -> AsyncIterator[Browser]:
    """A headless Chromium that resolves every *.test host to the demo site."""
    async with async_playwright() as playwright:
        options = chromium_launch_options(host_map={"*.test": demo_site.port})
        browser = await playwright.chromium.launch(**options)
        yield browser
        await browser.close()


@pytest.fixture(scope="session")
def demo_out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The output directory of the session's whole demo runs."""
    return tmp_path_factory.mktemp("demo-out")


@pytest.fixture(scope="session")
async def guarded_result(demo_out: Path) -> DemoResult:
    """Every scenario, benign and naive agent, on guarded pages (the embedded default)."""
    return await run_demo_async(demo_out, guarded=True)


@pytest.fixture(scope="session")
async def unguarded_result(demo_out: Path) -> DemoResult:
    """Every scenario's naive agent on raw pages."""
    return await run_demo_async(demo_out / "unguarded", guarded=False)
