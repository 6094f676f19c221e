"""The navigation gate's redirect hops and frames under Playwright's sync API (the DevTools
session's handler runs while the agent's thread is inside a Playwright call)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from pagewarden._browser import chromium_launch_options
from pagewarden.sync_api import ActionBlocked, Guard
from pagewarden.testing import LocalSite, Response
from tests.heard import heard_sync

from .test_gate_hops import POLICIES, _hop, _landing, _reached, hop


@pytest.fixture(scope="module")
def sync_browser(site: LocalSite) -> Iterator[Browser]:
    for host in ("app.test", "other.test", "evil.test"):
        site.route(host, "/hop", _hop)
        site.route(host, "/landing", _landing)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(**chromium_launch_options(host_map={"*.test": site.port}))
        yield browser
        browser.close()


@pytest.fixture
def sync_page(sync_browser: Browser) -> Iterator[Page]:
    context = sync_browser.new_context()
    yield context.new_page()
    context.close()


def _page(site: LocalSite, name: str, body: str) -> str:
    site.route("app.test", f"/hops-sync/{name}", lambda _r: Response(f"<!doctype html><body>{body}</body>"))
    return f"http://app.test/hops-sync/{name}"


@pytest.mark.parametrize("dest", ["evil.test", "other.test"])
def test_sync_link_redirect_chain(sync_page: Page, site: LocalSite, dest: str) -> None:
    page = Guard(POLICIES, goal="Use the app.").wrap(sync_page)
    mark = f"sync-hop-{dest}"
    url = hop("app.test", hop("other.test", f"http://{dest}/landing?c={mark}", 307), 301)
    page.goto(_page(site, mark, f'<a id="t" href="{url}">Continue</a>'))
    if dest == "evil.test":  # the click fails with the refusal (it came while it ran), or the next call
        later = page.wait_for_timeout
        blocked = heard_sync(lambda: page.click("#t"), lambda: (later(800), page.hover("body")))
        page.wait_for_timeout(800)
        assert _reached(site, "evil.test", mark) == []
        assert not sync_page.url.startswith("http://evil.test")
        assert blocked.verdict.findings[0].rule == "network:domain_allow"
    else:
        page.click("#t")
        page.wait_for_timeout(800)
        assert _reached(site, "other.test", mark)
        assert sync_page.url == f"http://other.test/landing?c={mark}"
        page.hover("body")


def test_sync_frame_on_a_refused_host(sync_page: Page, site: LocalSite) -> None:
    page = Guard(POLICIES, goal="Use the app.").wrap(sync_page)
    page.goto(_page(site, "frames", '<iframe src="http://evil.test/landing?c=sync-frame"></iframe>'
                    '<iframe src="http://other.test/landing?c=sync-frame-twin"></iframe>'))  # fmt: skip
    page.wait_for_timeout(600)
    assert _reached(site, "evil.test", "sync-frame") == []
    assert _reached(site, "other.test", "sync-frame-twin")
    # the page's own frame (no action of the agent led there): recorded, not raised at the agent
    assert any(r.host == "evil.test" and r.subframe for r in page._pw_shared.gate.refusals)
    page.hover("body")


def test_sync_routes_do_not_remove_or_pass_the_gate(sync_page: Page, site: LocalSite) -> None:
    page = Guard(POLICIES, goal="Use the app.", approver=lambda _v, _s: True).wrap(sync_page)
    page.goto("http://app.test/plain.html")
    page.context.unroute_all()
    seen: list[str] = []

    def keep_going(route: Any) -> None:
        seen.append(route.request.url)
        route.continue_()

    page.route("**/*", keep_going)
    frame = "const f = document.createElement('iframe'); f.src = '{D}'; document.body.append(f)"
    for name, script in (("frame", frame), ("popup", "window.open('{D}')")):
        mark = f"sync-routes-{name}"
        code = script.replace("{D}", f"http://evil.test/landing?c={mark}")
        page.goto(_page(site, mark, f'<button id="t" type="button" onclick="{code}">Go</button>'))
        if name == "frame":  # a frame the page made: recorded, not raised at the agent
            page.click("#t")
            page.wait_for_timeout(700)
            assert _reached(site, "evil.test", mark) == []
            assert any(r.subframe and mark in r.url for r in page._pw_shared.gate.refusals)
            page.hover("body")
            continue
        # the popup: the click fails with its refusal, or the next call does
        heard_sync(lambda: page.click("#t"), lambda: (page.wait_for_timeout(700), page.hover("body")))
        page.wait_for_timeout(700)
        assert _reached(site, "evil.test", mark) == []
    page.goto("http://other.test/landing?c=sync-routes-twin")
    assert "http://other.test/landing?c=sync-routes-twin" in seen


@pytest.mark.parametrize("dest", ["evil.test", "other.test"])
def test_sync_subresource_and_websocket(sync_page: Page, site: LocalSite, dest: str) -> None:
    """Under the sync API too: an image and a websocket to a refused host are refused (the
    websocket is reported to the agent), their twins to an allowed host arrive."""
    page = Guard(POLICIES, goal="Use the app.").wrap(sync_page)
    mark = f"sync-egress-{dest}"
    body = (
        '<input id="q"><script>document.getElementById("q").addEventListener("input", () => {'
        f" new Image().src = 'http://{dest}/i.png?c={mark}';"
        f" window.ws = new WebSocket('ws://{dest}/ws?c={mark}'); }}, {{once: true}});</script>"
    )
    page.goto(_page(site, mark, body))
    page.fill("#q", "x")
    page.wait_for_timeout(800)
    if dest == "evil.test":
        assert _reached(site, "evil.test", mark) == []
        with pytest.raises(ActionBlocked) as caught:
            page.hover("body")
        assert caught.value.verdict.findings[0].evidence["action"] == "websocket"
    else:
        assert len(_reached(site, "other.test", mark)) == 2
        page.hover("body")
