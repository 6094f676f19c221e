"""Egress in real Chromium through the real proxy: nothing reaches a host the policies forbid
(the local site's request log is the evidence), whatever the page does on its own."""

from __future__ import annotations

import asyncio
import contextlib
import urllib.error
import urllib.request
from collections.abc import Callable

import pytest
from playwright.async_api import Browser, Error

from pagewarden.proxy import REFUSED_HEADER, EgressPolicy, ProxyServer
from pagewarden.testing import LocalSite
from tests.proxy.conftest import policies, proxied_context

pytestmark = pytest.mark.browser

DENY_EVIL = {"domain_deny": ["evil.test"]}


async def _settle(netsite: LocalSite, seconds: float = 0.6) -> None:
    """Give the page's own requests time to leave (they are fire-and-forget)."""
    await asyncio.sleep(seconds)


async def test_a_refused_navigation_keeps_the_tab_where_it_was(
    plain_browser: Browser, netsite: LocalSite, start_proxy: Callable[..., ProxyServer]
) -> None:
    """A refused navigation is answered ``204 No Content`` naming the policy: the tab stays on
    its page, with neither a refusal page nor the refused URL in its history."""
    proxy = start_proxy(policies(DENY_EVIL))
    context = await proxied_context(plain_browser, proxy)
    page = await context.new_page()
    await page.goto("http://site.test/")
    before = await page.evaluate("history.length")
    async with page.expect_response("http://evil.test/landing?d=typed") as answer:
        with pytest.raises(Error, match="ERR_ABORTED"):
            await page.goto("http://evil.test/landing?d=typed")
    response = await answer.value
    assert response.status == 204 and response.headers[REFUSED_HEADER.lower()] == "P-NET"
    assert page.url == "http://site.test/" and await page.title() == "Site"
    assert await page.evaluate("history.length") == before
    assert netsite.requests_to("evil.test") == []
    await context.close()


def test_other_refused_requests_get_a_403_page_naming_the_policy(
    netsite: LocalSite, start_proxy: Callable[..., ProxyServer]
) -> None:
    """A request that is not a navigation (here an HTTP client's) reads the refusal page."""
    proxy = start_proxy(policies(DENY_EVIL))
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({"http": proxy.url}))
    with pytest.raises(urllib.error.HTTPError) as refused:
        opener.open("http://evil.test/landing", timeout=30)
    assert refused.value.code == 403 and refused.value.headers[REFUSED_HEADER] == "P-NET"
    assert b"Blocked by pagewarden" in refused.value.read()
    assert netsite.requests_to("evil.test") == []


async def test_allowed_host_loads(
    plain_browser: Browser, netsite: LocalSite, start_proxy: Callable[..., ProxyServer]
) -> None:
    proxy = start_proxy(policies(DENY_EVIL))
    context = await proxied_context(plain_browser, proxy)
    page = await context.new_page()
    response = await page.goto("http://site.test/cdn.html")
    assert response is not None and response.status == 200
    await page.wait_for_function("window.fetched !== undefined")
    assert "/cdn.html" in [r.path for r in netsite.requests_to("site.test")]
    assert {r.path for r in netsite.requests_to("cdn.test")} == {"/img", "/fetch"}
    await context.close()


@pytest.mark.parametrize(
    ("start", "final"),
    [
        ("/redirect", "http://evil.test/redirected"),  # 302
        ("/redirect-hop", "http://evil.test/redirected"),  # 302 to a 302
        ("/meta.html", "http://evil.test/meta"),  # meta refresh
        ("/script-redirect.html", "http://evil.test/script"),  # location = … from a script
    ],
)
async def test_redirects_to_a_blocked_host_are_refused(
    plain_browser: Browser, netsite, start_proxy, start: str, final: str
) -> None:
    proxy = start_proxy(policies(DENY_EVIL))
    context = await proxied_context(plain_browser, proxy)
    page = await context.new_page()
    async with page.expect_response(final) as refused:
        with contextlib.suppress(Error):  # a redirect's 204 aborts the goto itself
            await page.goto(f"http://site.test{start}")
    assert (await refused.value).status == 204
    assert page.url != final and "evil.test" not in await page.evaluate("location.href")
    assert netsite.requests_to("evil.test") == []
    assert final in [r.url for r in proxy.addon(EgressPolicy).refusals]
    await context.close()


async def test_subresources_beacons_websockets_and_pings_never_reach_a_blocked_host(
    plain_browser: Browser, netsite, start_proxy
) -> None:
    proxy = start_proxy(policies(DENY_EVIL))
    context = await proxied_context(plain_browser, proxy)
    page = await context.new_page()
    await page.goto("http://site.test/subresources.html")
    await page.wait_for_function("window.results.ws !== undefined && window.results.fetch !== undefined")
    assert await page.evaluate("[results.ws, results.fetch]") == ["error", "ok"]  # no-cors: opaque 403
    await page.click("#ping")
    await page.wait_for_url("http://site.test/plain.html")
    await _settle(netsite)
    assert netsite.requests_to("evil.test") == []
    refused = {r.url.removeprefix("http://evil.test").removeprefix("ws://evil.test") for r in
               proxy.addon(EgressPolicy).refusals}
    # each route was tried by the browser and refused by the proxy
    assert {"/img", "/js", "/css", "/iframe", "/fetch", "/beacon", "/ping"} <= refused, refused
    actions = {r.url.rsplit("/", 1)[-1]: r.action for r in proxy.addon(EgressPolicy).refusals}
    assert actions["iframe"] == "navigation" and actions["img"] == "request"
    # Chromium opens a websocket through a proxy with CONNECT, even for ws://: refused there
    assert any(r.action in ("connect", "websocket") and r.host == "evil.test"
               for r in proxy.addon(EgressPolicy).refusals)
    await context.close()


async def test_prefetch_to_a_blocked_host_never_reaches_it(
    plain_browser: Browser, netsite: LocalSite, start_proxy: Callable[..., ProxyServer]
) -> None:
    proxy = start_proxy(policies(DENY_EVIL))
    context = await proxied_context(plain_browser, proxy)
    page = await context.new_page()
    await page.set_content("")
    await page.goto("http://site.test/subresources.html")
    await _settle(netsite, 1.0)
    assert netsite.requests_to("evil.test", "/prefetch") == []
    await context.close()


async def test_domain_allow_confines_subresources(
    plain_browser: Browser, netsite: LocalSite, start_proxy: Callable[..., ProxyServer]
) -> None:
    proxy = start_proxy(policies({"domain_allow": ["site.test"]}))
    context = await proxied_context(plain_browser, proxy)
    page = await context.new_page()
    await page.goto("http://site.test/cdn.html")
    await _settle(netsite)
    assert netsite.requests_to("cdn.test") == []
    assert {r.rule for r in proxy.addon(EgressPolicy).refusals} == {"domain_allow"}
    await context.close()


async def test_strict_refuses_everything_off_the_allow_list(
    plain_browser: Browser, netsite: LocalSite, start_proxy: Callable[..., ProxyServer]
) -> None:
    proxy = start_proxy(policies(DENY_EVIL), pagewarden_strict=True, pagewarden_allow_hosts=["site.test"])
    context = await proxied_context(plain_browser, proxy)
    page = await context.new_page()
    assert (await page.goto("http://site.test/cdn.html")).status == 200
    await _settle(netsite)
    assert netsite.requests_to("cdn.test") == []
    with pytest.raises(Error, match="ERR_ABORTED"):  # refused: 204, the tab stays
        await page.goto("http://other.test/")
    assert page.url == "http://site.test/cdn.html"
    assert netsite.requests_to("other.test") == []
    await context.close()
