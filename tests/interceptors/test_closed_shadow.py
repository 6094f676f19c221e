"""Closed shadow roots: what a click lands on inside one (no script reads it, the browser
follows it) is read over CDP and judged like any link. Real Chromium, `domain_allow: [app.test]`;
each attack has a benign twin (the same markup pointing same-site) that must run.
"""

from __future__ import annotations

import asyncio

import pytest
from playwright.async_api import Page

from pagewarden import ActionBlocked, Guard
from pagewarden.testing import LocalSite, Response

from .test_activation import ALLOW_APP

BOX = "display:block;width:240px;height:40px"
HOST = "display:inline-block"
CASES = {
    # attachShadow({mode: "closed"}) from a script; the host is an empty <div>
    "imperative": f'<div id="t" style="{HOST}"></div><script>document.getElementById("t")'
    '.attachShadow({mode: "closed"})'
    f'.innerHTML = \'<a href="{{D}}" style="{BOX}"><b>Continue</b></a>\';</script>',
    # declarative: no script at all, the parser attaches the root
    "declarative": f'<div id="t" style="{HOST}"><template shadowrootmode="closed">'
    f'<a href="{{D}}" style="{BOX}">Continue</a></template></div>',
    # a custom element whose light text is not slotted: the reader sees "Settings"
    "custom_element": f'<x-nav id="t" style="{HOST}">Settings</x-nav>'
    '<script>customElements.define("x-nav", class extends '
    'HTMLElement { constructor() { super(); this.attachShadow({mode: "closed"}).innerHTML = '
    f'\'<a href="{{D}}" style="{BOX}">Settings</a>\'; }} }});</script>',
}


def _serve(site: LocalSite, name: str, twin: str) -> str:
    dest = f"http://evil.test/plain.html?c=cs-{name}" if twin == "evil" else f"/plain.html?c=cs-{name}"
    html = f"<!doctype html><body>{CASES[name].replace('{D}', dest)}</body>"
    path = f"/cs/{name}-{twin}.html"
    site.route("app.test", path, lambda _r: Response(html))
    return f"http://app.test{path}"


@pytest.mark.parametrize("name", sorted(CASES))
async def test_link_inside_a_closed_shadow_root_is_judged(page: Page, site: LocalSite, name: str) -> None:
    guarded = Guard(ALLOW_APP, goal="Use the app.").wrap(page)
    await guarded.goto(_serve(site, name, "evil"))
    with pytest.raises(ActionBlocked) as caught:
        await guarded.click("#t")
    verdict = caught.value.verdict
    assert verdict.findings[0].rule == "domain_allow", verdict.explanation  # judged before the click
    assert "evil.test" in verdict.explanation
    await page.wait_for_timeout(300)
    assert [r for r in site.requests_to("evil.test") if r.query.get("c") == [f"cs-{name}"]] == []


@pytest.mark.parametrize("name", sorted(CASES))
async def test_same_site_link_inside_a_closed_shadow_root_runs(
    page: Page, site: LocalSite, name: str
) -> None:
    guarded = Guard(ALLOW_APP, goal="Use the app.").wrap(page)
    await guarded.goto(_serve(site, name, "ok"))
    await guarded.click("#t")
    for _ in range(60):
        if [r for r in site.requests_to("app.test") if r.query.get("c") == [f"cs-{name}"]]:
            break
        await asyncio.sleep(0.05)
    assert [r for r in site.requests_to("app.test") if r.query.get("c") == [f"cs-{name}"]]


async def test_plain_text_and_buttons_are_not_probed(page: Page) -> None:
    """Ordinary elements never cost the CDP read: text the caret finds in the element itself."""
    guarded = Guard(ALLOW_APP, goal="Use the app.").wrap(page)
    await guarded.goto("http://app.test/plain.html")
    await page.set_content('<div id="d" onclick="1">plain text here</div><button id="b">OK</button>')
    await guarded.click("#d")
    await guarded.click("#b")
    assert guarded._pw_shared.cdp_sessions.get(page) is None
