"""Navigations to what is not a web page, and downloads, follow the guard's policy (real
Chromium, the embedded default — no policy file):

* ``file:`` and browser-internal pages are refused (PW-NAVIGATION/file_url, browser_url);
* ``data:``, another site's ``blob:`` and other applications' schemes need a human
  (data_url, blob_url, external_url); approved, they run; a ``blob:`` the current site made
  is judged like the site itself (it runs);
* a download link needs a human (PW-DOWNLOAD/download), and the trace records it.

Each refused or asked case checks that nothing happened: the URL did not change, no download
started, the server saw no request.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Page

from pagewarden import ActionBlocked, ApprovalRequired, Guard
from pagewarden.testing import LocalSite, Response

pytestmark = pytest.mark.browser

LINKS = """<!doctype html><title>links</title>
<a id="file" href="file:///etc/hostname">Local file</a>
<a id="mail" href="mailto:someone@example.org">Mail</a>
<a id="download" href="/schemes/report.txt" download="report.txt">Report</a>
<a id="blob">Generated</a>
<form id="f" action="data:text/html,&lt;title&gt;formed&lt;/title&gt;" method="get">
  <input name="q" value="1"><button id="go">Go</button></form>
<script>
document.getElementById('blob').href = URL.createObjectURL(
  new Blob(['<title>generated</title><p>Sign in again</p>'], {type: 'text/html'}));
</script>"""


@pytest.fixture
def links(site: LocalSite) -> str:
    site.route("app.test", "/schemes/links.html", lambda r: Response(LINKS))
    site.route(
        "app.test", "/schemes/report.txt",
        lambda r: Response("quarterly numbers", content_type="text/plain"),
    )  # fmt: skip
    return "http://app.test/schemes/links.html"


def _rules(exc: Any) -> list[str]:
    return [f"{f.policy_id}/{f.rule}" for f in exc.value.verdict.findings]


@pytest.mark.parametrize("url", ["file:///etc/hostname", " FILE:///etc/hostname", "chrome://settings/",
                                 "view-source:http://app.test/plain.html"])  # fmt: skip
async def test_file_and_browser_pages_are_refused(page: Page, links: str, url: str) -> None:
    guarded = Guard(goal="Read the page.").wrap(page)
    await guarded.goto(links)
    with pytest.raises(ActionBlocked) as caught:
        await guarded.goto(url)
    assert _rules(caught)[0] in ("PW-NAVIGATION/file_url", "PW-NAVIGATION/browser_url")
    assert "PW-NAVIGATION" in str(caught.value)
    assert page.url == links


async def test_a_link_to_a_local_file_is_refused(page: Page, links: str) -> None:
    guarded = Guard(goal="Read the page.").wrap(page)
    await guarded.goto(links)
    with pytest.raises(ActionBlocked) as caught:
        await guarded.click("#file")
    assert _rules(caught) == ["PW-NAVIGATION/file_url"]
    with pytest.raises(ActionBlocked):  # in another tab, too
        await _new_page_goto(guarded, "file:///etc/hostname")


async def _new_page_goto(guarded: Any, url: str) -> None:
    other = await guarded.context.new_page()
    try:
        await other.goto(url)
    finally:
        await other.unwrap().close()


async def test_data_blob_and_other_applications_need_a_human(page: Page, links: str) -> None:
    guarded = Guard(goal="Read the page.").wrap(page)
    await guarded.goto(links)
    with pytest.raises(ApprovalRequired) as caught:
        await guarded.goto("data:text/html,<title>phish</title><form><input type=password></form>")
    assert _rules(caught) == ["PW-NAVIGATION/data_url"]
    assert "<input" not in caught.value.verdict.findings[0].message  # its content is not repeated
    with pytest.raises(ApprovalRequired) as caught:
        await guarded.goto("blob:http://evil.test/5a3c1e7e-0000-4000-8000-000000000000")
    assert _rules(caught) == ["PW-NAVIGATION/blob_url"]
    with pytest.raises(ApprovalRequired) as caught:
        await guarded.click("#go")  # a form posting to a data: URL
    assert _rules(caught) == ["PW-NAVIGATION/data_url"]
    with pytest.raises(ApprovalRequired) as caught:
        await guarded.click("#mail")
    assert _rules(caught) == ["PW-NAVIGATION/external_url"]
    await asyncio.sleep(0.3)
    assert page.url == links and await page.title() == "links"
    await guarded.goto("about:blank")  # an empty document is not asked about


async def test_a_blob_the_site_made_is_judged_like_the_site(page: Page, links: str) -> None:
    guarded = Guard(goal="Read the page.").wrap(page)
    await guarded.goto(links)
    await guarded.click("#blob")
    await page.wait_for_url("blob:**")
    assert await page.title() == "generated"


async def test_approved_they_run(page: Page, links: str) -> None:
    guarded = Guard(goal="Read the page.", approver=lambda verdict, step: True).wrap(page)
    await guarded.goto(links)
    await guarded.goto("data:text/html,<title>inline</title>")
    assert await page.title() == "inline"


async def test_a_download_needs_a_human_and_is_in_the_trace(page: Page, links: str, site: LocalSite,
                                                            tmp_path: Path) -> None:  # fmt: skip
    downloads: list[Any] = []
    page.on("download", lambda d: downloads.append(d))
    guarded = Guard(goal="Read the page.", trace=tmp_path / "t.jsonl").wrap(page)
    await guarded.goto(links)
    with pytest.raises(ApprovalRequired) as caught:
        await guarded.click("#download")
    assert _rules(caught) == ["PW-DOWNLOAD/download"]
    await asyncio.sleep(0.5)
    assert downloads == [] and site.requests_to("app.test", "/schemes/report.txt") == []

    approving = Guard(goal="Get the report.", approver=lambda v, s: True, trace=tmp_path / "a.jsonl")
    guarded = approving.wrap(page)
    async with page.expect_download() as info:
        await guarded.click("#download")
    download = await info.value
    assert download.suggested_filename == "report.txt"
    approving.close()
    lines = [json.loads(line) for line in (tmp_path / "a.jsonl").read_text().splitlines()]
    text = json.dumps(lines)
    assert "PW-DOWNLOAD" in text and "/schemes/report.txt" in text


PAGE_INITIATED = """<!doctype html><title>start</title>
<button id="data" onclick="location.href='data:text/html,<title>phish</title>'">Data</button>
<button id="file" onclick="location.href='file:///etc/hostname'">File</button>
<button id="popup" onclick="window.open('data:text/html,<title>phish</title>')">Popup</button>"""


@pytest.mark.parametrize("button", ["data", "file", "popup"])
async def test_a_pages_own_navigation_to_data_or_file_never_loads(
    page: Page, site: LocalSite, button: str
) -> None:
    """The page's own script (not the agent) trying the same: Chromium refuses top-level
    ``data:`` and any ``file:`` from a web page; nothing loads (the guard is not needed)."""
    site.route("app.test", "/schemes/own.html", lambda r: Response(PAGE_INITIATED))
    guarded = Guard(goal="Read the page.").wrap(page)
    await guarded.goto("http://app.test/schemes/own.html")
    await guarded.click(f"#{button}")  # a same-page button: allowed; its handler tries
    await asyncio.sleep(0.8)
    for tab in page.context.pages:
        assert not tab.url.startswith(("data:", "file:")), tab.url
        assert await tab.title() != "phish"
    assert page.url == "http://app.test/schemes/own.html"
