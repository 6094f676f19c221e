"""Downloads a response starts (issue 24): with `launch(proxy=True)`, a response that would
make Chromium save a file — ``Content-Disposition: attachment`` on a plain link, a navigation
to a type the browser does not render, a redirect to one, a script-made ``<a download>``, a
frame — is refused before a byte reaches the browser unless a download action the guard
allowed (and a human approved) led to it; the agent hears of it on its next call. Benign
twins: the same routes answering a page or an image are shown, and an approved download
link saves its file."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from pagewarden import Guard, launch
from pagewarden.guard import GuardEvent
from pagewarden.testing import LocalSite, Response
from tests.heard import heard

pytestmark = pytest.mark.browser

PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8ffff3f0005fe02fe"
    "a7d6a4b70000000049454e44ae426082"
)
PAGE = """<!doctype html><html><head><title>Files</title></head><body>
<a id="attach" href="/dl/attach">Monthly report</a>
<a id="binary" href="/dl/binary">Data</a>
<a id="redirect" href="/dl/redirect">Latest build</a>
<button id="script" onclick="setTimeout(() => {const a = document.createElement('a');
  a.href = '/dl/script'; a.download = ''; document.body.append(a); a.click();}, 1200)">Export</button>
<button id="frame" onclick="const f = document.createElement('iframe'); f.src = '/dl/frame';
  document.body.append(f);">Preview</button>
<button id="noop" onclick="void 0">Nothing</button>
<a id="approved" href="/dl/approved.bin" download>Download the invoice</a>
<a id="inline" href="/dl/inline">Read the report</a>
<a id="image" href="/dl/image">See the chart</a>
</body></html>"""


def _site(site: LocalSite) -> None:
    def file(body: bytes, kind: str, attachment: bool = False):
        headers = {"Content-Disposition": 'attachment; filename="payload.bin"'} if attachment else {}
        return lambda request: Response(body, content_type=kind, headers=headers)

    site.route("site.test", "/files.html", lambda request: Response(PAGE))
    site.route("site.test", "/dl/attach", file(b"a,b\n1,2\n", "text/csv", attachment=True))
    site.route("site.test", "/dl/binary", file(b"\0\1\2MZ-payload", "application/octet-stream"))
    site.route(
        "site.test", "/dl/redirect", lambda request: Response("", status=302, headers={"Location": "/dl/zip"})
    )
    site.route("site.test", "/dl/zip", file(b"PK\3\4payload", "application/zip"))
    site.route("site.test", "/dl/script", file(b"<p>saved as a file</p>", "text/html"))
    site.route("site.test", "/dl/frame", file(b"payload", "application/x-msdownload", attachment=True))
    site.route("site.test", "/dl/approved.bin", file(b"INVOICE", "application/octet-stream"))
    site.route("site.test", "/dl/inline", file(b"<title>Report</title><p>inline</p>", "text/html"))
    site.route("site.test", "/dl/image", file(PNG, "image/png"))


async def _refusals(events: list[GuardEvent], count: int) -> list[dict]:
    for _ in range(60):
        found = [e.data for e in events if e.kind == "network" and e.data["action"] == "download"]
        if len(found) >= count:
            return found
        await asyncio.sleep(0.1)
    return [e.data for e in events if e.kind == "network" and e.data["action"] == "download"]


async def test_downloads_a_response_starts_are_refused_benign_twins_pass(
    netsite: LocalSite, tmp_path: Path
) -> None:
    _site(netsite)
    approvals: list[str] = []

    def approver(verdict, step) -> bool:
        approvals.extend(f.policy_id for f in verdict.findings)
        return True

    guard = Guard(approver=approver)
    events: list[GuardEvent] = []
    guard.subscribe(events.append)

    async with launch(guard, proxy=True, host_map={"*.test": netsite.port}) as page:
        raw = page.unwrap()
        downloads: list = []
        raw.on("download", lambda download: downloads.append(download))
        await page.goto("http://site.test/files.html")
        for index, shape in enumerate(("#attach", "#binary", "#redirect", "#script", "#frame"), start=1):
            async def next_call(index: int = index) -> None:
                await _refusals(events, index)
                await page.click("#noop")

            # the agent hears of it: the click fails with it, or its next call (which does not run)
            blocked = await heard(lambda shape=shape: page.click(shape), next_call)
            refused = await _refusals(events, index)
            assert len(refused) == index, shape
            assert "download" in str(blocked).lower(), shape
            assert raw.url == "http://site.test/files.html", shape  # the page stayed
        await asyncio.sleep(0.5)
        # a download link (the script-made one) is a download from the click on, in Chromium:
        # the download starts, gets no byte (204), and fails; nothing else starts one
        assert [d.url for d in downloads] == ["http://site.test/dl/script"]
        assert await downloads[0].failure() is not None
        # benign twins: a page and an image are shown, not saved
        await page.click("#inline")
        await raw.wait_for_url("**/dl/inline")
        assert await page.title() == "Report"
        await page.goto("http://site.test/dl/image")
        await page.goto("http://site.test/files.html")
        # an approved download link saves its file
        async with raw.expect_download() as info:
            await page.click("#approved")
        download = await info.value
        saved = tmp_path / "invoice.bin"
        await download.save_as(saved)
        assert saved.read_bytes() == b"INVOICE"
    refused = [e.data for e in events if e.kind == "network" and e.data["action"] == "download"]
    assert [r["url"].rsplit("/", 1)[-1] for r in refused] == ["attach", "binary", "zip", "script", "frame"]
    assert {(r["policy_id"], r["rule"]) for r in refused} == {("PW-DOWNLOAD", "download")}
    assert approvals == ["PW-DOWNLOAD"]
    assert [d.url for d in downloads] == ["http://site.test/dl/script", "http://site.test/dl/approved.bin"]


NAVIGATE = {"Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document", "Accept": "text/html"}
FETCH = {"Sec-Fetch-Mode": "cors", "Sec-Fetch-Dest": "empty", "Accept": "*/*"}


@pytest.mark.parametrize(
    ("request_headers", "response_headers", "saved"),
    [
        (NAVIGATE, {"Content-Type": "text/html", "Content-Disposition": "attachment"}, True),
        (NAVIGATE, {"Content-Type": "application/octet-stream"}, True),
        (NAVIGATE, {"Content-Type": "application/pdf"}, True),
        (NAVIGATE, {"Content-Type": "application/x-msdownload; charset=binary"}, True),
        (NAVIGATE, {"Content-Disposition": 'ATTACHMENT; filename="a.exe"'}, True),
        ({"Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "empty"}, {"Content-Type": "text/html"}, True),
        ({"Upgrade-Insecure-Requests": "1", "Accept": "text/html"}, {"Content-Type": "x/zip"}, True),
        # benign twins: shown in the tab, or data for a script
        (NAVIGATE, {"Content-Type": "text/html"}, False),
        (NAVIGATE, {"Content-Type": "image/png"}, False),
        (NAVIGATE, {"Content-Type": "application/json"}, False),
        (NAVIGATE, {"Content-Type": "text/html", "Content-Disposition": "inline"}, False),
        (FETCH, {"Content-Type": "application/octet-stream", "Content-Disposition": "attachment"}, False),
        ({"Accept": "*/*"}, {"Content-Type": "application/zip"}, False),  # a subresource, no Sec-Fetch
    ],
)
def test_what_makes_a_response_a_download(
    request_headers: dict[str, str], response_headers: dict[str, str], saved: bool
) -> None:
    from mitmproxy.test import tutils

    from pagewarden.proxy._downloads import download_of

    request = tutils.treq(path=b"/files/report")
    request.headers.clear()
    request.headers.update(request_headers)
    response = tutils.tresp(content=b"x")
    response.headers.clear()
    response.headers.update(response_headers)
    assert (download_of(request, response) is not None) is saved
