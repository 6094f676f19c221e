"""Fixtures for the network layer: a local site with an allowed and a blocked origin, a
Chromium with no proxy of its own (each test's context goes through its own proxy), and a
factory that starts a proxy for a policy set."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Browser, BrowserContext, async_playwright

from pagewarden._browser import chromium_launch_options
from pagewarden.policies import PolicySet
from pagewarden.proxy import EgressPolicy, HostMap, ProxyServer
from pagewarden.testing import LocalSite, Response

NET_PAGES = Path(__file__).parent / "pages"


@pytest.fixture(scope="session")
def proxy_config_dir(test_home: Path) -> Path:
    """The per-user directory of the test session (the root conftest's `test_home`), where
    the proxy's CA goes; never the user's own."""
    return Path(os.environ["PAGEWARDEN_CONFIG_DIR"])


def _redirect(location: str) -> Callable[[Any], Response]:
    return lambda request: Response("", status=302, headers={"Location": location})


@pytest.fixture
def netsite() -> Iterator[LocalSite]:
    """``site.test`` serves tests/proxy/pages; ``evil.test`` and ``cdn.test`` answer 200 to
    anything (so only the proxy can keep a request from them). A fresh server per test: its
    request log is the evidence."""
    server = LocalSite()
    server.add_directory("site.test", NET_PAGES)
    server.route("site.test", "/redirect", _redirect("http://evil.test/redirected"))
    server.route("site.test", "/redirect-hop", _redirect("http://site.test/redirect"))
    for host in ("evil.test", "cdn.test", "other.test"):
        for path in ("/", "/redirected", "/meta", "/script", "/img", "/js", "/fetch", "/beacon", "/ws",
                     "/prefetch", "/ping", "/landing", "/opened", "/form", "/css", "/font", "/iframe"):
            server.route(host, path, lambda request: Response("<p>reached</p>"))
    with server:
        yield server


def policies(*rules: dict[str, Any], pid: str = "P-NET") -> PolicySet:
    """A policy set with one boundary policy holding `rules`."""
    return PolicySet.from_dict(
        {
            "version": 1,
            "policies": [
                {"id": pid, "category": "boundary", "risk_level": "high", "description": "Network test",
                 "rules": list(rules)}
            ],
        }
    )


@pytest.fixture(scope="session")
async def plain_browser() -> AsyncIterator[Browser]:
    """A Chromium with no host mapping: behind a proxy, the proxy resolves names."""
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(**chromium_launch_options())
        yield browser
        await browser.close()


@pytest.fixture
def start_proxy(netsite: LocalSite) -> Iterator[Callable[..., ProxyServer]]:
    """`start_proxy(policy_set, **options)` → a running proxy mapping ``*.test`` to the site."""
    started: list[ProxyServer] = []

    def start(policy_set: PolicySet | None = None, *addons: Any, **options: Any) -> ProxyServer:
        server = ProxyServer(
            [EgressPolicy(policy_set), *addons, HostMap({"*.test": netsite.port})], options=options
        ).start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


async def proxied_context(browser: Browser, proxy: ProxyServer) -> BrowserContext:
    """A browser context whose every request goes through `proxy`."""
    return await browser.new_context(proxy={"server": proxy.url})
