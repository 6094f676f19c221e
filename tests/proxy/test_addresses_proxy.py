"""Issue 37 under the network layer: internal addresses refused however a request starts, and a
name judged by the address it resolves to (DNS rebinding).

Names resolve through a resolver the test gives the proxy (no DNS). A `Catcher` addon placed
after pagewarden's, before the connection, sends any upstream connection that is not to loopback
to the test's site instead and records it: even if the guard failed, nothing would leave this
machine, and the test sees it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from playwright.async_api import Browser, Error, Page

from pagewarden.policies import PolicySet, baseline_policies
from pagewarden.proxy import REFUSED_HEADER, EgressPolicy, HostMap, ProxyServer
from pagewarden.proxy._addresses import AddressCheck
from pagewarden.rules import InternalAccess
from pagewarden.testing import LocalSite, Response
from tests.proxy.conftest import proxied_context

pytestmark = pytest.mark.browser

NAMES = {"rebind.test": ["10.9.8.7"], "meta.test": ["169.254.169.254"], "public.test": ["93.184.216.34"],
         "six.test": ["fd00:ec2::254"], "mixed.test": ["93.184.216.34", "192.168.1.20"]}  # fmt: skip
PAGE = """<!doctype html><title>News</title><h1>News</h1>
<script>
window.results = {};
for (const host of ["rebind.test", "meta.test", "public.test", "denied.test"]) {
  fetch("http://" + host + "/api", {mode: "no-cors"})
    .then(() => window.results[host] = "sent", () => window.results[host] = "refused");
}
</script>"""


class Catcher:
    """Redirects every upstream connection that is not to loopback to `port` and records it."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.caught: list[str] = []

    def server_connect(self, data: Any) -> None:
        if data.server.error or not data.server.address:
            return
        host = str(data.server.address[0])
        if host.startswith("127.") or host in ("::1", "localhost"):
            return
        self.caught.append(host)
        data.server.address = ("127.0.0.1", self.port)


async def _refused_navigation(page: Page, url: str) -> None:
    """A refused navigation is answered ``204`` (the tab stays) naming the policy."""
    async with page.expect_response(url) as answered:
        with contextlib.suppress(Error):  # (a 204 ends the navigation: Playwright may say aborted)
            await page.goto(url)
    response = await answered.value
    assert response.status == 204, url
    assert (await response.all_headers()).get(REFUSED_HEADER.lower()) == "PW-ADDRESSES"


@pytest.fixture
def names_site() -> Iterator[LocalSite]:
    with LocalSite() as site:
        site.route("news.test", "/", lambda _r: Response(PAGE))
        site.route("*", "/api", lambda _r: Response("ok", content_type="text/plain"))
        site.route("*", "/", lambda _r: Response("<p>reached</p>"))
        yield site


@pytest.fixture
def address_proxy(names_site: LocalSite) -> Iterator[Callable[..., tuple[ProxyServer, Catcher]]]:
    started: list[ProxyServer] = []
    asked: list[str] = []

    def start(access: InternalAccess | None = None) -> tuple[ProxyServer, Catcher]:
        async def resolver(host: str, port: int) -> list[str]:
            asked.append(host)
            return list(NAMES.get(host, ()))

        deny = PolicySet.from_dict({"version": 1, "policies": [{
            "id": "DENY", "category": "boundary", "risk_level": "high", "description": "denied",
            "rules": [{"domain_deny": ["denied.test"]}],
        }]})  # fmt: skip
        policies = [*baseline_policies(), *deny]
        egress = EgressPolicy(policies, access=(lambda: access) if access is not None else None)
        mapped = HostMap({"news.test": names_site.port})  # configuration: judged by its name
        catcher = Catcher(names_site.port)
        server = ProxyServer(
            [egress, AddressCheck(egress, mapped, resolver=resolver), catcher, mapped]
        ).start()
        started.append(server)
        return server, catcher

    yield start
    for server in started:
        server.stop()
    assert "denied.test" not in asked  # a refused request's name is never looked up


async def test_a_name_is_judged_by_the_address_it_resolves_to(
    plain_browser: Browser, names_site: LocalSite, address_proxy: Callable[..., tuple[ProxyServer, Catcher]]
) -> None:
    proxy, catcher = address_proxy(InternalAccess())  # a guarded session that opened nothing
    context = await proxied_context(plain_browser, proxy)
    page = await context.new_page()
    await page.goto("http://news.test/")
    await page.wait_for_function("Object.keys(window.results).length === 4")  # the page's own fetches
    for name in ("meta.test", "rebind.test", "six.test", "mixed.test"):
        await _refused_navigation(page, f"http://{name}/")
    response = await page.goto("http://public.test/")
    assert response is not None and response.status == 200
    assert set(catcher.caught) == {"93.184.216.34"}  # only the public name left, pinned to its address
    reached = {r.host for r in names_site.requests}
    assert reached == {"news.test", "public.test"}
    refusals = proxy.addon(EgressPolicy).refusals
    assert {r.host for r in refusals} >= {"rebind.test", "meta.test", "six.test", "mixed.test"}
    assert all(r.policy_id == "PW-ADDRESSES" for r in refusals if r.host != "denied.test")
    assert {r.policy_id for r in refusals if r.host == "denied.test"} == {"DENY"}
    await context.close()


async def test_an_opened_block_or_a_page_inside_it_may_use_it(
    plain_browser: Browser, names_site: LocalSite, address_proxy: Callable[..., tuple[ProxyServer, Catcher]]
) -> None:
    access = InternalAccess()
    access.open("10.0.0.0/8")  # the session started there, or an approved action went there
    proxy, catcher = address_proxy(access)
    context = await proxied_context(plain_browser, proxy)
    page = await context.new_page()
    response = await page.goto("http://rebind.test/")
    assert response is not None and response.status == 200
    await _refused_navigation(page, "http://meta.test/")  # metadata: never by an opened block
    assert set(catcher.caught) == {"10.9.8.7"}
    await context.close()
    # a proxy for any browser (no session): a private address is refused to a public page only
    standalone, caught = address_proxy(None)
    context = await proxied_context(plain_browser, standalone)
    page = await context.new_page()
    response = await page.goto("http://rebind.test/")  # typed: nothing says a public page led here
    assert response is not None and response.status == 200
    await page.goto("http://news.test/")
    await page.wait_for_function("Object.keys(window.results).length === 4")  # Referer: news.test
    assert "10.9.8.7" in caught.caught and set(caught.caught) <= {"10.9.8.7", "93.184.216.34"}
    assert "rebind.test" in {r.host for r in standalone.addon(EgressPolicy).refusals}
    await context.close()
