"""Refused HTTPS hosts: the CONNECT is answered 403 (nothing reaches the host, no TLS is
set up for it), the refusal is a ``network`` event of the session like any other, and the
refused CONNECT is in the session's recorded flows, linked to the step that caused it."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from mitmproxy import io

from pagewarden import Guard, launch
from pagewarden.guard import GuardEvent
from pagewarden.testing import LocalSite, Response
from tests.proxy.conftest import policies
from tests.proxy.tls import HTTPSServer, make_ca, make_server_cert

pytestmark = pytest.mark.browser

PAGE = """<!doctype html><title>Shop</title>
<button id=go onclick="document.body.append(Object.assign(new Image(), {src: 'https://evil.test/p.gif'}))">
Continue</button>"""


@pytest.fixture
def evil(tmp_path: Path) -> Iterator[HTTPSServer]:
    _, key, cert = make_ca(tmp_path)
    server = HTTPSServer(*make_server_cert(tmp_path, "evil.test", key, cert))
    yield server
    server.close()


async def test_a_refused_connect_is_recorded_and_reported(tmp_path: Path, evil: HTTPSServer) -> None:
    record = tmp_path / "session"
    site = LocalSite()
    site.route("shop.test", "/", lambda _r: Response(PAGE))
    with site:
        host_map = {"shop.test": site.port, "evil.test": evil.port}
        guard = Guard(policies=policies({"domain_allow": ["shop.test"]}), record=record, goal="Buy the book")
        events: list[GuardEvent] = []
        guard.subscribe(events.append)
        async with launch(guard, proxy=True, host_map=host_map) as page:
            await page.goto("http://shop.test/")
            await page.click("#go")  # step 2; the page then asks evil.test for an image over HTTPS
            for _ in range(100):
                if any(r.host == "evil.test" for r in guard.network.refusals):
                    break
                await asyncio.sleep(0.1)
    assert evil.paths == []
    refusal = next(r for r in guard.network.refusals if r.host == "evil.test")
    assert (refusal.action, refusal.method, refusal.rule, refusal.url) == (
        "connect", "CONNECT", "domain_allow", "evil.test:443"
    )
    reported = [e.data for e in events if e.kind == "network" and e.data["host"] == "evil.test"]
    assert reported and reported[0]["rule"] == "domain_allow" and reported[0]["policy_id"] == "P-NET"
    with (record / "flows.mitm").open("rb") as handle:
        flows = list(io.FlowReader(handle).stream())
    connects = [f for f in flows if f.request.method == "CONNECT" and f.request.host == "evil.test"]
    assert connects, [f.request.url for f in flows]
    flow = connects[0]
    assert flow.response is not None and flow.response.status_code == 403
    assert flow.metadata["pagewarden_refusal"]["rule"] == "domain_allow"
    assert flow.metadata["pagewarden_step"] == 2  # the click
    assert "pagewarden_session" not in flow.metadata
    events_file = (record / "events.jsonl").read_text()
    assert '"evil.test"' in events_file and "domain_allow" in events_file
