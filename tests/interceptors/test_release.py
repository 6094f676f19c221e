"""Releasing a guard from a browser context (`GuardedPage.release()`): after it, nothing of the
guard is left in the context to judge later pages. Guard A (an allow-list of ``app.test``: it
refuses ``other.test``, with its route, websocket route, Content-Security-Policy and WebRTC
scripts and bindings, and the browser's DevTools interception) wraps a page and is released;
guard B (which allows ``other.test``) wraps a NEW page of the SAME context: B's page reaches
``other.test`` (the local server's request log says so), A records no refusal, A's scripts and
bindings are not in B's documents. Before the release A's rules do judge the context's new pages
(the checks below can fail). Several guards on one browser: releasing one leaves the others'
gates working. Real Chromium over 127.0.0.1.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from playwright.async_api import Browser, BrowserContext

from pagewarden import ActionBlocked, Guard, GuardReleased, PolicySet
from pagewarden.interceptors._interception import existing_interception
from pagewarden.testing import LocalSite, Response

_COUNTER = itertools.count()


def policies(rule: dict[str, Any]) -> PolicySet:
    """One boundary policy with `rule`."""
    return PolicySet.from_dict(
        {
            "version": 1,
            "policies": [
                {"id": "R-1", "category": "boundary", "risk_level": "high", "description": "Where to go.",
                 "rules": [rule]},
            ],
        }
    )  # fmt: skip


#: guard A: only app.test (other.test refused; a CSP and a WebRTC script in every document)
ONLY_APP = {"domain_allow": ["app.test"]}
#: guard B: everything but evil.test (other.test allowed; no CSP)
NOT_EVIL = {"domain_deny": ["evil.test"]}


def serve(site: LocalSite, host: str) -> tuple[str, str]:
    """A page on `host` (its URL) and the mark its requests carry."""
    mark = f"rel{next(_COUNTER)}"
    path = f"/release/{mark}.html"
    site.route(host, path, lambda _r: Response(f"<!doctype html><head><title>{mark}</title></head><p>{mark}"))
    return f"http://{host}{path}?c={mark}", mark


def reached(site: LocalSite, host: str, mark: str) -> bool:
    return any(r.query.get("c") == [mark] for r in site.requests_to(host))


def gate_of(page: Any) -> Any:
    """The navigation gate of a guarded page's session."""
    return page._pw_shared.built_gate


async def marks_of(raw: Any, gate: Any) -> dict[str, Any]:
    """What of `gate`'s scripts and bindings a document carries."""
    return await raw.evaluate(
        """([csp, rtc]) => ({
            csp_mark: Object.prototype.hasOwnProperty.call(document, csp),
            csp_meta: document.querySelectorAll('meta[http-equiv="Content-Security-Policy" i]').length,
            csp_binding: typeof window[csp],
            rtc_binding: typeof window[rtc],
        })""",
        [gate.csp_binding, gate.webrtc_binding],
    )


async def fetch_reaches(raw: Any, site: LocalSite, url: str, mark: str) -> bool:
    """Whether a page's own fetch of `url` reaches its host (no route, no policy stops it)."""
    await raw.evaluate("(u) => fetch(u, {mode: 'no-cors'}).then(() => true, () => false)", url)
    return reached(site, url.split("/")[2], mark)


#: opens a websocket and waits for it to open, fail or close (the server's answer, or a refusal)
SOCKET = """(u) => new Promise((done) => {
    const ws = new WebSocket(u);
    ws.onopen = ws.onerror = ws.onclose = () => done(true);
    setTimeout(() => done(false), 5000);
})"""


async def socket_reaches(raw: Any, site: LocalSite, host: str) -> bool:
    """Whether a page's own websocket to `host` reaches it (no websocket route, no policy)."""
    mark = f"ws{next(_COUNTER)}"
    await raw.evaluate(SOCKET, f"ws://{host}/ws?c={mark}")
    return reached(site, host, mark)


async def test_release_leaves_nothing_for_the_next_guard(context: BrowserContext, site: LocalSite) -> None:
    guard_a = Guard(policies(ONLY_APP), goal="Use the app.", approver=lambda _v, _s: True)
    page_a = guard_a.wrap(await context.new_page())
    start, _ = serve(site, "app.test")
    await page_a.goto(start)
    gate_a = gate_of(page_a)
    # the agent's own route on the context (it stays after the release: the agent's, not A's),
    # which A's gate judges first while A guards the context
    await page_a.context.route("**/release/*", lambda route: route.continue_())
    assert gate_a is not None and gate_a.csp

    # Before the release, A's rules judge the context's pages, its new ones too.
    refused_url, refused_mark = serve(site, "other.test")
    with pytest.raises(ActionBlocked):
        await page_a.goto(refused_url)
    raw_new = await context.new_page()  # not wrapped: the context's gate still judges it
    await raw_new.goto(start)
    assert (await marks_of(raw_new, gate_a)) == {
        "csp_mark": True, "csp_meta": len(gate_a.csp), "csp_binding": "function", "rtc_binding": "function",
    }  # fmt: skip
    fetched_url, fetched_mark = serve(site, "other.test")
    assert not await fetch_reaches(raw_new, site, fetched_url, fetched_mark)
    assert not await socket_reaches(raw_new, site, "other.test")
    assert not reached(site, "other.test", refused_mark)
    interception = existing_interception(context.browser)
    assert interception is not None and gate_a.hops in interception.members
    assert page_a.unwrap() in interception._page_sessions  # the session that learnt the context's id
    await raw_new.close()
    impl = context._impl_obj  # the context's routes (Playwright's lists): A's route and websocket route
    assert len(impl._routes) == 2 and len(impl._web_socket_routes) == 1
    reader = page_a._pw_shared.direct_readers.get(page_a.unwrap())  # A's DevTools session on its page
    assert reader is not None
    assert (await reader.session.send("Runtime.evaluate", {"expression": "1"}))["result"]["value"] == 1

    await page_a.release()
    refusals_before = len(gate_a.refusals)  # (a policy's report may arrive late: counted after)
    assert len(impl._routes) == 1 and impl._web_socket_routes == []  # the agent's route only
    with pytest.raises(Exception, match=r"(?i)detach|closed"):  # its DevTools sessions are detached
        await reader.session.send("Runtime.evaluate", {"expression": "1"})
    assert page_a.unwrap() not in interception._page_sessions

    # A's stand-ins refuse use; the raw page is still there.
    with pytest.raises(GuardReleased):
        await page_a.goto(start)
    with pytest.raises(GuardReleased):
        page_a.locator("p")
    assert page_a.unwrap().url == start
    interception = existing_interception(context.browser)
    assert interception is None or gate_a.hops not in interception.members

    # B wraps a new page of the same context: other.test is reached, A says nothing.
    guard_b = Guard(policies(NOT_EVIL), goal="Use the app.")
    page_b = guard_b.wrap(await context.new_page())
    allowed_url, allowed_mark = serve(site, "other.test")
    await page_b.goto(allowed_url)
    assert reached(site, "other.test", allowed_mark)
    assert await page_b.title() == allowed_mark
    await page_b.goto(start)
    assert (await marks_of(page_b.unwrap(), gate_a)) == {
        "csp_mark": False, "csp_meta": 0, "csp_binding": "undefined", "rtc_binding": "undefined",
    }  # fmt: skip
    fetched_url, fetched_mark = serve(site, "other.test")
    assert await fetch_reaches(page_b.unwrap(), site, fetched_url, fetched_mark)
    assert await socket_reaches(page_b.unwrap(), site, "other.test")  # A's websocket route is gone
    await page_b.get_by_text(allowed_mark[:3]).first.hover()  # a judged action: A's pending refusals stay A's
    assert len(gate_a.refusals) == refusals_before
    # B's own rules still hold in the shared context.
    denied_url, denied_mark = serve(site, "evil.test")
    with pytest.raises(ActionBlocked):
        await page_b.goto(denied_url)
    assert not reached(site, "evil.test", denied_mark)


async def test_release_before_any_action_and_wrap_again(context: BrowserContext, site: LocalSite) -> None:
    """Released at once after the wrap (its installs still on their way: awaited first), then
    the same guard wraps a page of the context again: its rules are back."""
    guard = Guard(policies(ONLY_APP), goal="Use the app.")
    page = guard.wrap(await context.new_page())
    await page.release()
    raw = await context.new_page()
    start, _ = serve(site, "app.test")
    await raw.goto(start)
    gate = gate_of(page)
    assert (await marks_of(raw, gate))["csp_binding"] == "undefined"
    url, mark = serve(site, "other.test")
    await raw.goto(url)
    assert reached(site, "other.test", mark)

    again = guard.wrap(raw)
    await again.goto(start)
    url, mark = serve(site, "other.test")
    with pytest.raises(ActionBlocked):
        await again.goto(url)
    assert not reached(site, "other.test", mark)


async def test_releasing_one_guard_keeps_the_others_on_the_browser(browser: Browser, site: LocalSite) -> None:
    """Three guards, three contexts, one browser (one shared DevTools interception): the one
    released leaves; the others still refuse, redirect hops included (the interception's)."""
    contexts = [await browser.new_context() for _ in range(3)]
    try:
        guards = [Guard(policies(ONLY_APP), goal="Use the app.") for _ in contexts]
        pages = [guard.wrap(await ctx.new_page()) for guard, ctx in zip(guards, contexts, strict=True)]
        start, _ = serve(site, "app.test")
        for page in pages:
            await page.goto(start)
        await pages[0].release()
        interception = existing_interception(browser)
        assert interception is not None
        members = interception.members
        assert gate_of(pages[0]).hops not in members
        assert all(gate_of(p).hops in members for p in pages[1:])

        freed = await contexts[0].new_page()
        url, mark = serve(site, "other.test")
        await freed.goto(url)
        assert reached(site, "other.test", mark)
        for page in pages[1:]:
            landing, mark = serve(site, "other.test")
            hop_path = f"/release/hop-{mark}"
            moved = Response("", status=302, headers={"Location": landing})
            site.route("app.test", hop_path, lambda _r, moved=moved: moved)
            with pytest.raises(ActionBlocked):
                await page.goto(f"http://app.test{hop_path}")
            assert not reached(site, "other.test", mark)
    finally:
        for ctx in contexts:
            await ctx.close()
