"""`launch(proxy=True)`: the proxy first, checked, then Chromium with every request through it."""

from __future__ import annotations

import asyncio
import contextlib
import threading

import pytest

import pagewarden.proxy as proxy_api
from pagewarden import ActionBlocked, launch
from pagewarden.guard import GuardEvent
from pagewarden.proxy import EgressPolicy, ProxyError, ProxyServer
from pagewarden.proxy import _session as session_module
from pagewarden.proxy._session import verify_enforcing
from pagewarden.sync_api import launch as launch_sync
from pagewarden.testing import LocalSite
from tests.heard import heard, heard_sync, refused_url, refused_url_async
from tests.proxy.conftest import policies

pytestmark = pytest.mark.browser


def _proxy_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("pagewarden-proxy-") and t.is_alive()]


async def test_launch_with_proxy_enforces_what_the_page_does_by_itself(netsite: LocalSite) -> None:
    async with launch(
        proxy=True, host_map={"*.test": netsite.port}, policies=policies({"domain_deny": ["evil.test"]})
    ) as page:
        await page.goto("http://site.test/")
        assert await page.title() == "Site"
        # the page leaves by itself: the goto fails with the refusal (or the next call does)
        async def next_call() -> None:
            assert await refused_url_async(page, "http://evil.test/script")
            await page.hover("body")

        blocked = await heard(lambda: page.goto("http://site.test/script-redirect.html"), next_call)
        assert "evil.test" in blocked.verdict.explanation
        # the tab stays where it was: no refusal page, the refused URL not in its history
        assert page.url == "http://site.test/script-redirect.html"
        assert "evil.test" not in await page.unwrap().evaluate("document.title + location.href")
    assert netsite.requests_to("evil.test") == []
    assert [r.path for r in netsite.requests_to("site.test")][:1] == ["/"]
    assert not _proxy_threads()


async def test_launch_refusals_are_network_events_of_the_guard(netsite: LocalSite) -> None:
    from pagewarden import Guard

    guard = Guard(policies=policies({"domain_deny": ["evil.test"]}))
    events: list[GuardEvent] = []
    guard.subscribe(events.append)
    async with launch(guard, proxy=True, host_map={"*.test": netsite.port}) as page:
        # the page's websocket to evil.test is raised at the agent (the goto, or its next call),
        # as the navigation gate's are; its images, scripts and beacons are events only
        with contextlib.suppress(ActionBlocked):
            await page.goto("http://site.test/subresources.html")
        await asyncio.sleep(0.5)
    # (the browser's own background traffic is refused too: rule no_session)
    network = [e.data for e in events if e.kind == "network" and e.data["rule"] != "no_session"]
    assert network and all(d["host"] == "evil.test" for d in network)
    assert {"policy_id": "P-NET", "rule": "domain_deny"}.items() <= network[0].items()
    assert any(d["url"] == "http://evil.test/img" for d in network)
    assert any(d["url"] == "ws://evil.test/ws" and d["action"] == "websocket" for d in network)


async def test_loopback_goes_through_the_proxy_too(netsite: LocalSite) -> None:
    from pagewarden import Guard
    from pagewarden.testing import Response

    loopback = f"http://127.0.0.1:{netsite.port}/loop.png"
    netsite.route("site.test", "/loopback.html", lambda r: Response(f"<img src='{loopback}'>"))
    guard = Guard(policies=policies({"domain_deny": ["127.0.0.1"]}))
    events: list[GuardEvent] = []
    guard.subscribe(events.append)
    async with launch(guard, proxy=True, host_map={"*.test": netsite.port}) as page:
        await page.goto("http://site.test/loopback.html")
        await asyncio.sleep(0.5)
    assert netsite.requests_to("127.0.0.1") == []
    refused = [e.data for e in events if e.kind == "network" and e.data["rule"] != "no_session"]
    assert [d["url"] for d in refused] == [loopback]


def test_launch_sync_with_proxy(netsite: LocalSite) -> None:
    with launch_sync(
        proxy=True, host_map={"*.test": netsite.port}, policies=policies({"domain_deny": ["evil.test"]})
    ) as page:
        # a meta refresh to a refused host: the goto fails with the refusal, or the next call does
        def next_call() -> None:
            assert refused_url(page, "http://evil.test/meta")
            page.hover("body")

        heard_sync(lambda: page.goto("http://site.test/meta.html"), next_call)
        assert page.url == "http://site.test/meta.html"
    assert netsite.requests_to("evil.test") == []
    assert not _proxy_threads()


def test_a_proxy_that_does_not_enforce_is_detected() -> None:
    with ProxyServer([]) as bare, pytest.raises(ProxyError, match="not enforcing"):  # no EgressPolicy
        verify_enforcing(bare)


async def test_launch_refuses_to_start_the_browser_behind_a_proxy_that_does_not_enforce(
    netsite: LocalSite, monkeypatch: pytest.MonkeyPatch
) -> None:
    # launch() takes the session proxy from the package (pagewarden.proxy), where it is patched
    monkeypatch.setattr(proxy_api, "session_proxy", lambda guard, **kw: ProxyServer([]))
    launched: list[object] = []
    from playwright.async_api import BrowserType

    original = BrowserType.launch

    async def spy(self, **kwargs):
        launched.append(kwargs)
        return await original(self, **kwargs)

    monkeypatch.setattr(BrowserType, "launch", spy)
    with pytest.raises(ProxyError):
        async with launch(proxy=True, host_map={"*.test": netsite.port}):
            pass
    assert launched == []
    assert not _proxy_threads()


async def test_launch_stops_the_proxy_when_the_agent_fails(netsite: LocalSite) -> None:
    with pytest.raises(RuntimeError, match="agent crashed"):
        async with launch(proxy=True, host_map={"*.test": netsite.port}) as page:
            await page.goto("http://site.test/")
            assert _proxy_threads()
            raise RuntimeError("agent crashed")
    assert not _proxy_threads()


def test_the_session_addon_chain() -> None:
    from pagewarden import Guard
    from pagewarden.proxy import HostMap, Recorder, Replay
    from pagewarden.proxy._addresses import AddressCheck
    from pagewarden.proxy._downloads import DownloadGate
    from pagewarden.proxy._exfil import ExfiltrationFilter
    from pagewarden.proxy._grants import NavigationGrants
    from pagewarden.proxy._tokens import SessionTokens

    guard = Guard()
    server = session_module.session_proxy(guard, host_map={"*.test": 1})
    kinds = [SessionTokens, EgressPolicy, NavigationGrants, ExfiltrationFilter, DownloadGate]
    kinds += [Replay, AddressCheck, Recorder, HostMap]
    assert [type(a) for a in server.addons] == kinds
    assert session_module.PROBE_HOST in server.extra_options["pagewarden_deny_hosts"]
    assert server.extra_options["pagewarden_require_session"] is True
    assert guard.network is not None and len(guard.network.token) == 24


async def test_the_proxy_follows_a_new_version_of_the_guards_store(netsite: LocalSite, tmp_path) -> None:
    """A guard following its store hands each new version to the network layer too: a host an
    administrator denies while the session runs is refused on the wire from then on, for what
    the page requests by itself (before, the proxy kept the rules it started with)."""
    from pagewarden import Guard
    from pagewarden.policies.store import PolicyStore
    from tests.policies.store.workers import policy

    db = str(tmp_path / "policies.db")
    with PolicyStore(db, actor="admin") as admin:
        admin.put([policy("P-NET", "Do not reach other.test.", rules=[{"domain_deny": ["other.test"]}])])
        guard = Guard(policies=PolicyStore(db), baseline=False)
        events: list[GuardEvent] = []
        guard.subscribe(events.append)
        async with launch(guard, proxy=True, host_map={"*.test": netsite.port}) as page:
            await page.goto("http://site.test/cdn.html")  # its image and fetch go to cdn.test
            await page.wait_for_function("window.fetched !== undefined")
            reached = len(netsite.requests_to("cdn.test"))
            assert reached == 2
            admin.put([policy("P-NET", "Do not reach cdn.test.", rules=[{"domain_deny": ["cdn.test"]}])])
            for _ in range(750):  # SQLite: a revision poll every 0.5 s
                if guard.follower.reloads >= 1:
                    break
                await asyncio.sleep(0.02)
            assert guard.follower.reloads >= 1
            await page.goto("http://site.test/cdn.html")
            await page.wait_for_function("window.fetched !== undefined")
            await asyncio.sleep(0.3)
        guard.close()
    refused = [e.data for e in events if e.kind == "network" and e.data.get("host") == "cdn.test"]
    assert refused and {"policy_id": "P-NET", "rule": "domain_deny"}.items() <= refused[0].items()
    assert len(netsite.requests_to("cdn.test")) == reached  # nothing more reached cdn.test
