"""The navigation gate stays when the agent (or its tooling) manages routes on the wrapped page:
``unroute_all`` / ``unroute`` on the context put the gate back, and the agent's own route
handlers (which Playwright asks before the gate's) cannot let a refused navigation through with
``continue_()``. The agent's benign routes keep working. Real Chromium over 127.0.0.1.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page, Route

from pagewarden import ActionBlocked, Guard
from pagewarden.testing import LocalSite, Response
from tests.heard import heard

from .test_gate_hops import POLICIES, _landing, _reached

SCRIPT = '<button id="t" type="button" onclick="location.href=\'{D}\'">Go</button>'
#: the agent's route registrations need the user's consent (PW-SCRIPT): the user says yes
YES = {"approver": lambda _verdict, _step: True}
FRAME = (
    '<button id="t" type="button" onclick="const f = document.createElement(\'iframe\');'
    " f.src = '{D}'; document.body.append(f)\">Show</button>"
)
POPUP = '<button id="t" type="button" onclick="window.open(\'{D}\')">Help</button>'


def _serve(site: LocalSite, name: str, body: str) -> str:
    site.route("app.test", f"/routes/{name}", lambda _r: Response(f"<!doctype html><body>{body}</body>"))
    for host in ("app.test", "other.test", "evil.test"):
        site.route(host, "/landing", _landing)
    return f"http://app.test/routes/{name}"


async def _refused(page: Page, guarded: Any, site: LocalSite, name: str, markup: str = POPUP) -> None:
    """A page's own navigation to evil.test (not judged by the reader: a popup) never leaves."""
    mark = f"routes-{name}"
    await guarded.goto(_serve(site, name, markup.replace("{D}", f"http://evil.test/landing?c={mark}")))
    if markup == FRAME:
        await guarded.click("#t")
        await page.wait_for_timeout(700)
        assert _reached(site, "evil.test", mark) == []
        # a frame the page made, not the tab, was refused: recorded, never raised at the agent
        refusals = guarded._pw_shared.gate.refusals
        assert any(r.host == "evil.test" and r.subframe and mark in r.url for r in refusals)
        await guarded.hover("body")
        return

    async def next_call() -> None:
        await page.wait_for_timeout(700)
        await guarded.hover("body")

    # the click fails with the refusal (it came while the click ran), or the next call does
    blocked = await heard(lambda: guarded.click("#t"), next_call)
    await page.wait_for_timeout(700)
    assert _reached(site, "evil.test", mark) == []
    assert all(not p.url.startswith("http://evil.test") for p in page.context.pages)
    # (a script navigation right after the click may be stopped by the reader's pin first)
    allowed = {"network:domain_allow"} | ({"destination_pinning"} if markup == SCRIPT else set())
    assert blocked.verdict.findings[0].rule in allowed


@pytest.mark.parametrize("how", ["context_unroute_all", "context_unroute_all_ignore", "page_unroute_all",
                                 "context_unroute_gate_pattern"])  # fmt: skip
async def test_removing_routes_does_not_remove_the_gate(page: Page, site: LocalSite, how: str) -> None:
    guarded = Guard(POLICIES, goal="Use the app.", **YES).wrap(page)
    await guarded.goto("http://app.test/plain.html")
    gate = guarded._pw_shared.gate
    assert gate is not None
    if how == "context_unroute_all":
        await guarded.context.unroute_all()
    elif how == "context_unroute_all_ignore":
        await guarded.context.unroute_all(behavior="ignoreErrors")
    elif how == "page_unroute_all":
        await guarded.unroute_all()
    else:
        await guarded.context.unroute(gate.pattern)
    await _refused(page, guarded, site, how)


async def test_a_benign_route_added_after_unroute_all_still_works(page: Page, site: LocalSite) -> None:
    guarded = Guard(POLICIES, goal="Use the app.", **YES).wrap(page)
    await guarded.goto("http://app.test/plain.html")
    await guarded.context.unroute_all()
    seen: list[str] = []

    async def mock(route: Route) -> None:
        seen.append(route.request.url)
        await route.fulfill(body="<title>mocked</title><p>mocked</p>", content_type="text/html")

    await guarded.context.route("**/mocked-page", mock)
    await guarded.goto("http://app.test/mocked-page")
    assert await page.title() == "mocked" and seen == ["http://app.test/mocked-page"]
    await guarded.context.unroute("**/mocked-page", mock)
    await _refused(page, guarded, site, "after-benign")


@pytest.mark.parametrize("where", ["page", "context"])
@pytest.mark.parametrize("kind", ["sync_handler", "async_handler", "one_argument"])
async def test_a_route_handler_continuing_everything_does_not_pass_the_gate(
    page: Page, site: LocalSite, where: str, kind: str
) -> None:
    guarded = Guard(POLICIES, goal="Use the app.", **YES).wrap(page)
    await guarded.goto("http://app.test/plain.html")
    seen: list[str] = []

    def sync_handler(route: Route, request: Any) -> Any:
        seen.append(request.url)
        return route.continue_()

    async def async_handler(route: Route, request: Any) -> None:
        seen.append(request.url)
        await route.continue_()

    def one_argument(route: Route) -> Any:
        seen.append(route.request.url)
        return route.continue_()

    handlers = {"sync_handler": sync_handler, "async_handler": async_handler, "one_argument": one_argument}
    handler = handlers[kind]
    owner = guarded if where == "page" else guarded.context
    await owner.route("**/*", handler)
    for markup in (FRAME, POPUP, SCRIPT):
        await _refused(page, guarded, site, f"continue-{where}-{kind}-{len(markup)}", markup)
    # the benign twin: the handler still sees (and continues) allowed navigations
    await guarded.goto("http://other.test/landing?c=routes-twin")
    assert page.url == "http://other.test/landing?c=routes-twin"
    assert "http://other.test/landing?c=routes-twin" in seen
    await owner.unroute("**/*", handler)
    seen.clear()
    await guarded.goto("http://app.test/plain.html")
    assert seen == []  # unroute found the handler


async def test_monitor_mode_lets_the_agents_route_run(page: Page, site: LocalSite) -> None:
    guard = Guard(POLICIES, goal="Use the app.", mode="monitor", **YES)
    guarded = guard.wrap(page)
    await guarded.goto("http://app.test/plain.html")
    seen: list[str] = []

    async def handler(route: Route) -> None:
        seen.append(route.request.url)
        await route.continue_()

    await guarded.route("**/*", handler)
    await guarded.goto(_serve(site, "monitor", SCRIPT.replace("{D}", "http://evil.test/landing?c=routes-mon")))
    await guarded.click("#t")
    for _ in range(60):
        if _reached(site, "evil.test", "routes-mon"):
            break
        await asyncio.sleep(0.05)
    assert "http://evil.test/landing?c=routes-mon" in seen
    gate = guarded._pw_shared.gate
    assert gate is not None and any(r.host == "evil.test" for r in gate.refusals)


async def test_the_devtools_layer_holds_when_the_raw_context_drops_every_route(
    page: Page, site: LocalSite
) -> None:
    """Tooling holding the raw context (not the guarded one) removes the gate's route: the
    browser-level DevTools session still refuses documents on refused hosts."""
    guarded = Guard(POLICIES, goal="Use the app.", **YES).wrap(page)
    await guarded.goto("http://app.test/plain.html")
    await page.context.unroute_all()
    for markup in (FRAME, POPUP):
        await _refused(page, guarded, site, f"raw-unroute-{len(markup)}", markup)
    await guarded.goto("http://other.test/landing?c=raw-unroute-twin")
    assert page.url == "http://other.test/landing?c=raw-unroute-twin"


@pytest.mark.parametrize("dest", ["evil.test", "other.test"])
async def test_a_route_handler_rewriting_a_navigations_url_is_judged_at_the_new_url(
    page: Page, site: LocalSite, dest: str
) -> None:
    """``route.continue_(url=…)`` in the agent's handler: the browser-level session sees the
    document request at its new URL."""
    guarded = Guard(POLICIES, goal="Use the app.", **YES).wrap(page)
    await guarded.goto("http://app.test/plain.html")
    _serve(site, "rewrite", "")
    mark = f"routes-rewrite-{dest}"

    async def rewrite(route: Route) -> None:
        await route.continue_(url=f"http://{dest}/landing?c={mark}")

    await guarded.route("**/rewrite-me", rewrite)
    blocked: ActionBlocked | None = None
    try:
        await guarded.goto("http://app.test/rewrite-me")
    except ActionBlocked as during:  # the goto fails with the refusal itself (issue 24)
        blocked = during
    except PlaywrightError:
        pass
    await page.wait_for_timeout(300)
    if dest == "evil.test":
        assert _reached(site, "evil.test", mark) == []
        if blocked is None:
            with pytest.raises(ActionBlocked) as caught:
                await guarded.hover("body")
            blocked = caught.value
        assert blocked.verdict.findings[0].rule == "network:domain_allow"
    else:
        assert _reached(site, "other.test", mark)
        await guarded.hover("body")
