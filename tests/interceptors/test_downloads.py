"""Downloads a response starts, without a proxy (issue 24): with `guard.wrap(page)` (the
navigation gate, here with no URL or domain rule at all), a response that would make Chromium
save a file — ``Content-Disposition: attachment`` on a page-looking URL, a type the browser does
not render, a redirect ending on one, a form's post answered by one, a frame, a script-made
``<a download>``, the agent's own ``goto`` — is refused before a byte of its body reaches the
browser unless a download action the guard allowed (and a human approved) led to it; the agent
hears of it. The downloads directory stays empty. Benign twins: pages, images and JSON on the
same routes are shown (the server sees each request once: judging costs no second request),
and an approved download link saves its file. Mirrors tests/proxy/test_downloads.py.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from playwright.async_api import Browser, async_playwright

from pagewarden import ActionBlocked, Guard
from pagewarden._browser import chromium_launch_options
from pagewarden.guard import GuardEvent
from pagewarden.testing import LocalSite, Response

pytestmark = pytest.mark.browser

HOST = "files.test"
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8ffff3f0005fe02fe"
    "a7d6a4b70000000049454e44ae426082"
)
PAGE = """<!doctype html><html><head><title>Files</title></head><body>
<a id="attach" href="/dl/report.html">Monthly report</a>
<a id="binary" href="/dl/data">Data</a>
<a id="redirect" href="/dl/latest">Latest build</a>
<form method="post" action="/dl/export"><input name="q" value="all"><button id="post">Export</button></form>
<button id="script" onclick="setTimeout(() => {const a = document.createElement('a');
  a.href = '/dl/script'; a.download = ''; document.body.append(a); a.click();}, 300)">Save</button>
<button id="frame" onclick="const f = document.createElement('iframe'); f.src = '/dl/frame';
  document.body.append(f);">Preview</button>
<button id="noop" onclick="void 0">Nothing</button>
<a id="approved" href="/dl/invoice.bin" download>Download the invoice</a>
<a id="inline" href="/dl/inline">Read the report</a>
<a id="json" href="/dl/data.json">Raw data</a>
</body></html>"""
REFUSED = ["report.html", "data", "zip", "export", "script", "frame"]


def _routes(site: LocalSite) -> None:
    def file(body: bytes, kind: str, attachment: bool = False):
        headers = {"Content-Disposition": 'attachment; filename="payload.bin"'} if attachment else {}
        return lambda request: Response(body, content_type=kind, headers=headers)

    site.route(HOST, "/files.html", lambda request: Response(PAGE))
    site.route(HOST, "/dl/report.html", file(b"<title>x</title>", "text/html", attachment=True))
    site.route(HOST, "/dl/data", file(b"\0\1\2MZ-payload", "application/octet-stream"))
    site.route(HOST, "/dl/latest", lambda request: Response("", status=302, headers={"Location": "/dl/zip"}))
    site.route(HOST, "/dl/zip", file(b"PK\3\4payload", "application/zip"))
    site.route(HOST, "/dl/export", file(b"a,b\n1,2\n", "text/csv", attachment=True))
    site.route(HOST, "/dl/script", file(b"<p>saved as a file</p>", "text/html"))
    site.route(HOST, "/dl/frame", file(b"payload", "application/x-msdownload", attachment=True))
    site.route(HOST, "/dl/invoice.bin", file(b"INVOICE", "application/octet-stream"))
    site.route(HOST, "/dl/inline", file(b"<title>Report</title><p>inline</p>", "text/html"))
    site.route(HOST, "/dl/data.json", file(b'{"rows": 2}', "application/json"))
    site.route(HOST, "/dl/chart.png", file(PNG, "image/png"))


@pytest.fixture
async def saving_browser(site: LocalSite, tmp_path: Path) -> AsyncIterator[tuple[Browser, Path]]:
    """A Chromium of its own whose downloads go to a directory the test can look into."""
    folder = tmp_path / "downloads"
    folder.mkdir()
    options = chromium_launch_options(host_map={"*.test": site.port})
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(**options, downloads_path=str(folder))
        yield browser, folder
        await browser.close()


def _downloads_refused(events: list[GuardEvent]) -> list[dict]:
    return [e.data for e in events if e.kind == "network" and e.data["action"] == "download"]


async def _refusals(events: list[GuardEvent], count: int) -> list[dict]:
    for _ in range(60):
        if len(_downloads_refused(events)) >= count:
            break
        await asyncio.sleep(0.1)
    return _downloads_refused(events)


async def test_downloads_a_response_starts_are_refused_benign_twins_pass(
    saving_browser: tuple[Browser, Path], site: LocalSite, tmp_path: Path
) -> None:
    _routes(site)
    shown = ("/dl/inline", "/dl/data.json", "/dl/chart.png")
    earlier = {path: len(site.requests_to(HOST, path)) for path in shown}  # the session's site
    browser, folder = saving_browser
    approvals: list[str] = []

    def approver(verdict, step) -> bool:
        approvals.extend(f.policy_id for f in verdict.findings)
        return True

    guard = Guard(approver=approver)
    events: list[GuardEvent] = []
    guard.subscribe(events.append)
    context = await browser.new_context()
    raw = await context.new_page()
    downloads: list = []
    raw.on("download", lambda download: downloads.append(download))
    page = guard.wrap(raw)
    start = f"http://{HOST}/files.html"
    await page.goto(start)
    for index, shape in enumerate(("#attach", "#binary", "#redirect", "#post", "#script", "#frame"), start=1):
        try:
            await page.click(shape)
        except ActionBlocked as during:  # refused while the click ran: the click fails with it
            blocked_by = during
        else:  # refused after the click returned: the agent hears of it on its next call
            await _refusals(events, index)
            with pytest.raises(ActionBlocked) as caught:
                await page.click("#noop")
            blocked_by = caught.value
        refused = await _refusals(events, index)
        assert len(refused) == index, shape
        assert [f.policy_id for f in blocked_by.verdict.findings] == ["PW-DOWNLOAD"], shape
        assert "save a file" in blocked_by.verdict.guidance, shape
        assert raw.url == start, shape  # the page stayed
        await page.click("#noop")  # heard once: the next action runs
    # the agent's own goto of a file: the action fails with the refusal, the tab stays usable
    with pytest.raises(ActionBlocked) as blocked:
        await page.goto(f"http://{HOST}/dl/data")
    assert "PW-DOWNLOAD" in str(blocked.value)
    await asyncio.sleep(0.5)
    # a script-made download link is a download from the click on, in Chromium: it starts and
    # is cancelled before a byte; nothing else starts one
    assert [d.url for d in downloads] == [f"http://{HOST}/dl/script"]
    assert await downloads[0].failure() is not None
    assert list(folder.iterdir()) == []  # no byte landed on disk
    # benign twins: a page, JSON and an image are shown, not saved, and asked for once
    await page.goto(start)
    await page.click("#inline")
    await raw.wait_for_url("**/dl/inline")
    assert await page.title() == "Report"
    await page.goto(start)
    await page.click("#json")
    await raw.wait_for_url("**/dl/data.json")
    await page.goto(f"http://{HOST}/dl/chart.png")
    for path in shown:
        assert len(site.requests_to(HOST, path)) - earlier[path] == 1, path
    # an approved download link saves its file
    await page.goto(start)
    async with raw.expect_download() as info:
        await page.click("#approved")
    download = await info.value
    assert await download.failure() is None
    saved = tmp_path / "invoice.bin"
    await download.save_as(saved)
    assert saved.read_bytes() == b"INVOICE"
    await context.close()
    refused = _downloads_refused(events)
    assert [r["url"].rsplit("/", 1)[-1] for r in refused] == [*REFUSED, "data"]
    assert {(r["policy_id"], r["rule"], r["layer"]) for r in refused} == {("PW-DOWNLOAD", "download", "gate")}
    assert approvals == ["PW-DOWNLOAD"]


async def test_monitor_mode_reports_a_download_and_lets_it_run(
    saving_browser: tuple[Browser, Path], site: LocalSite
) -> None:
    _routes(site)
    browser, _folder = saving_browser
    guard = Guard(mode="monitor")
    events: list[GuardEvent] = []
    guard.subscribe(events.append)
    context = await browser.new_context()
    raw = await context.new_page()
    page = guard.wrap(raw)
    await page.goto(f"http://{HOST}/files.html")
    async with raw.expect_download() as info:
        await page.click("#binary")
    assert await (await info.value).failure() is None
    assert [r["url"].rsplit("/", 1)[-1] for r in await _refusals(events, 1)] == ["data"]
    await page.click("#noop")  # reported, not raised
    await context.close()
