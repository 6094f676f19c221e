"""Downloads a response starts, without a proxy, under Playwright's sync API and with URL and
domain rules (the gate's DevTools session then pauses each document twice: its request, judged
by the egress rules, and its answer, judged as a download)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, sync_playwright

from pagewarden import PolicySet
from pagewarden._browser import chromium_launch_options
from pagewarden.sync_api import ActionBlocked, Guard
from pagewarden.testing import LocalSite

from .test_downloads import HOST, _routes

pytestmark = pytest.mark.browser

POLICIES = PolicySet.from_dict(
    {
        "version": 1,
        "policies": [
            {
                "id": "T-SITES",
                "category": "boundary",
                "risk_level": "high",
                "description": "Stay on the file server.",
                "rules": [{"domain_allow": [HOST]}, {"url_deny": ["/admin/*"]}],
            }
        ],
    }
)


@pytest.fixture
def sync_browser(site: LocalSite, tmp_path: Path) -> Iterator[tuple[Browser, Path]]:
    _routes(site)
    folder = tmp_path / "downloads"
    folder.mkdir()
    with sync_playwright() as playwright:
        options = chromium_launch_options(host_map={"*.test": site.port})
        browser = playwright.chromium.launch(**options, downloads_path=str(folder))
        yield browser, folder
        browser.close()


def test_sync_downloads_refused_with_rules_approved_one_saved(
    sync_browser: tuple[Browser, Path], site: LocalSite, tmp_path: Path
) -> None:
    browser, folder = sync_browser
    context = browser.new_context()
    raw = context.new_page()
    downloads: list = []
    raw.on("download", lambda download: downloads.append(download))
    page = Guard(POLICIES, goal="Get the invoice.", approver=lambda _v, _s: True).wrap(raw)
    start = f"http://{HOST}/files.html"
    page.goto(start)
    for shape in ("#attach", "#redirect", "#post"):
        try:
            page.click(shape)
        except ActionBlocked as during:  # refused while the click ran
            blocked_by = during
        else:  # refused after: the next call hears of it
            page.wait_for_timeout(500)
            with pytest.raises(ActionBlocked) as caught:
                page.click("#noop")
            blocked_by = caught.value
        assert [f.policy_id for f in blocked_by.verdict.findings] == ["PW-DOWNLOAD"], shape
        assert raw.url == start, shape
    assert downloads == [] and list(folder.iterdir()) == []
    page.click("#inline")  # a page on the same routes is shown
    raw.wait_for_url("**/dl/inline")
    assert len(site.requests_to(HOST, "/dl/inline")) >= 1
    page.goto(start)
    with raw.expect_download() as info:
        page.click("#approved")
    saved = tmp_path / "invoice.bin"
    info.value.save_as(saved)
    assert saved.read_bytes() == b"INVOICE"
    context.close()
