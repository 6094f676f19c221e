"""`GuardedPage.release()` under Playwright's sync API (see test_release.py): guard A released
from a context, guard B's new page in the same context reaches what A refused, with nothing of
A's left there; before the release A's rules judged the context's new pages. Real Chromium."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Browser, BrowserContext

from pagewarden.interceptors._interception import existing_interception
from pagewarden.sync_api import ActionBlocked, Guard, GuardReleased
from pagewarden.testing import LocalSite

from .test_release import NOT_EVIL, ONLY_APP, SOCKET, policies, reached, serve


@pytest.fixture
def sync_context(sync_browser: Browser) -> Iterator[BrowserContext]:
    context = sync_browser.new_context()
    yield context
    context.close()


def marks_of(raw: Any, gate: Any) -> dict[str, Any]:
    """What of `gate`'s scripts and bindings a document carries."""
    return raw.evaluate(
        """([csp, rtc]) => ({
            csp_meta: document.querySelectorAll('meta[http-equiv="Content-Security-Policy" i]').length,
            csp_binding: typeof window[csp],
            rtc_binding: typeof window[rtc],
        })""",
        [gate.csp_binding, gate.webrtc_binding],
    )


def socket_reaches(raw: Any, site: LocalSite, host: str, mark: str) -> bool:
    raw.evaluate(SOCKET, f"ws://{host}/ws?c={mark}")
    return reached(site, host, mark)


def test_sync_release_leaves_nothing_for_the_next_guard(
    sync_context: BrowserContext, site: LocalSite
) -> None:
    context = sync_context
    page_a = Guard(policies(ONLY_APP), goal="Use the app.").wrap(context.new_page())
    start, _ = serve(site, "app.test")
    page_a.goto(start)
    gate_a = page_a._pw_shared.built_gate

    # Before the release, A's rules judge the context's pages, its new ones too.
    refused_url, refused_mark = serve(site, "other.test")
    with pytest.raises(ActionBlocked):
        page_a.goto(refused_url)
    raw_new = context.new_page()
    raw_new.goto(start)
    assert marks_of(raw_new, gate_a) == {"csp_meta": len(gate_a.csp), "csp_binding": "function",
                                         "rtc_binding": "function"}  # fmt: skip
    assert not socket_reaches(raw_new, site, "other.test", "sync-rel-ws-before")
    assert not reached(site, "other.test", refused_mark)
    raw_new.close()
    impl = context._impl_obj
    assert len(impl._routes) == 1 and len(impl._web_socket_routes) == 1
    assert gate_a.hops in existing_interception(context.browser).members

    page_a.release()
    refusals_before = len(gate_a.refusals)
    assert impl._routes == [] and impl._web_socket_routes == []
    interception = existing_interception(context.browser)
    assert interception is None or gate_a.hops not in interception.members
    with pytest.raises(GuardReleased):
        page_a.goto(start)

    page_b = Guard(policies(NOT_EVIL), goal="Use the app.").wrap(context.new_page())
    allowed_url, allowed_mark = serve(site, "other.test")
    page_b.goto(allowed_url)
    assert reached(site, "other.test", allowed_mark)
    page_b.goto(start)
    assert marks_of(page_b.unwrap(), gate_a) == {"csp_meta": 0, "csp_binding": "undefined",
                                                 "rtc_binding": "undefined"}  # fmt: skip
    assert socket_reaches(page_b.unwrap(), site, "other.test", "sync-rel-ws-after")
    page_b.hover("body")
    assert len(gate_a.refusals) == refusals_before
    denied_url, denied_mark = serve(site, "evil.test")
    with pytest.raises(ActionBlocked):
        page_b.goto(denied_url)
    assert not reached(site, "evil.test", denied_mark)
