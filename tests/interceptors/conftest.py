"""Fixtures the interceptor tests share."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, sync_playwright

from pagewarden._browser import chromium_launch_options
from pagewarden.testing import LocalSite


@pytest.fixture(scope="module")
def sync_browser(site: LocalSite) -> Iterator[Browser]:
    """Chromium under Playwright's sync API, one per module, resolving ``*.test`` to `site`
    (modules that need their own routes or options define their own)."""
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(**chromium_launch_options(host_map={"*.test": site.port}))
        yield browser
        browser.close()
