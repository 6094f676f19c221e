"""The guard's reader throws nothing into the page: an agent listening for page errors (and a
page watching for them) sees a guarded action as it would see the raw one.

A click's pin walks the event's composed path, which ends with the window (no node): reading
its node type there threw an uncaught ``TypeError`` on every guarded click. Real Chromium.
"""

from __future__ import annotations

from playwright.async_api import Page

from pagewarden import Guard
from pagewarden.testing import LocalSite, Response

PAGE = """<!doctype html><body>
<button id="b" type="button" onclick="this.dataset.n = (+this.dataset.n || 0) + 1">Count</button>
<a id="same" href="#section">Section</a>
<label for="f">Name</label><input id="f">
<svg width="20" height="20"><a href="#svg"><rect id="r" width="20" height="20"/></a></svg>
</body>"""


async def test_guarded_actions_raise_no_page_error(page: Page, site: LocalSite) -> None:
    site.route("app.test", "/page-errors", lambda _r: Response(PAGE))
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    guarded = Guard(goal="Use the app.").wrap(page)
    await guarded.goto("http://app.test/page-errors")
    await guarded.click("#b")
    await guarded.locator("#same").click()
    await guarded.locator("#r").click()
    await guarded.fill("#f", "Ada")
    await guarded.press("#f", "a")
    await guarded.hover("#b")
    assert await page.get_attribute("#b", "data-n") == "1"
    assert errors == []
