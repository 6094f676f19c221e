"""Recorder and replay: a session recorded through the proxy replays with the origin down."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from mitmproxy import io

from pagewarden import ActionBlocked, approve_all, launch
from pagewarden.proxy import REPLAY_HEADER
from pagewarden.testing import LocalSite, Response
from tests.proxy.conftest import NET_PAGES

pytestmark = pytest.mark.browser

#: a 1×1 GIF
GIF = bytes.fromhex("47494638396101000100800000000000ffffff21f90401000000002c00000000010001000002024401003b")


def _read(path: Path) -> list:
    with path.open("rb") as handle:
        return list(io.FlowReader(handle).stream())


async def test_record_then_replay_with_the_origin_stopped(tmp_path: Path) -> None:
    record = tmp_path / "session"
    site = LocalSite()
    site.add_directory("site.test", NET_PAGES)
    site.route("cdn.test", "/img", lambda r: Response(GIF, content_type="image/gif"))
    with site:
        async with launch(proxy=True, host_map={"*.test": site.port}, record=record, goal="Read") as page:
            await page.goto("http://site.test/record.html")
            await page.click("#next")
            await page.wait_for_url("http://site.test/plain.html")
        recorded_paths = [(r.host, r.path) for r in site.requests if r.path != "/favicon.ico"]
    assert ("site.test", "/record.js") in recorded_paths and ("cdn.test", "/img") in recorded_paths
    flows = _read(record / "flows.mitm")
    urls = [f.request.url for f in flows]
    assert "http://site.test/record.html" in urls and "http://cdn.test/img" in urls
    steps = {f.request.url: f.metadata.get("pagewarden_step") for f in flows}
    assert steps["http://site.test/record.html"] == 1  # the goto (step 1); its subresources too
    assert steps["http://cdn.test/img"] == 1 and steps["http://site.test/plain.html"] == 2  # the click
    # the origin is gone: nothing listens on its port any more
    async with launch(
        proxy=True, host_map={"*.test": site.port}, proxy_options={"pagewarden_replay": str(record)},
        approver=approve_all,  # the test reads the page with evaluate
    ) as page:
        response = await page.goto("http://site.test/record.html")
        assert response is not None and response.status == 200
        assert response.headers[REPLAY_HEADER.lower()] == "hit"
        assert await page.title() == "Recorded"
        assert await page.locator("#logo").evaluate("img => img.naturalWidth") == 1
        assert await page.evaluate("window.recordedScript") == "ran"
        await page.click("#next")
        await page.wait_for_url("http://site.test/plain.html")
        assert await page.title() == "Plain"
        missing = await page.goto("http://site.test/never-recorded.html")
        assert missing is not None and missing.status == 502
        assert missing.headers[REPLAY_HEADER.lower()] == "miss"
        assert "Not in the recording" in await page.content()


async def test_recorded_flows_carry_no_secret(tmp_path: Path, netsite: LocalSite) -> None:
    from pagewarden import Secret

    record = tmp_path / "session"
    secret = "tok-Recorder-Zebra-31337"
    async with launch(
        proxy=True, host_map={"*.test": netsite.port}, record=record,
        secrets=[Secret(secret, allow_domains=["site.test"])],
    ) as page:
        await page.goto("http://site.test/exfil.html")
        await page.fill("#token", secret)  # the page's script sends it to evil.test: refused
        for _ in range(100):  # all six routes of the page refused (slow under load)
            if len([r for r in page.guard.network.refusals if r.rule == "sensitive_data"]) >= 6:
                break
            await asyncio.sleep(0.1)
        await asyncio.sleep(0.3)
        with pytest.raises(ActionBlocked):  # ... and the agent hears of it
            await page.goto("http://site.test/plain.html")
        await page.goto(f"http://site.test/plain.html?token={secret}")  # allowed: site.test may get it
    raw = (record / "flows.mitm").read_bytes()
    assert secret.encode() not in raw
    assert b"REDACTED" in raw
