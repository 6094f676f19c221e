"""js/mutations.js on its own (real Chromium): the DOM versions each kind of change moves, and the
change log a cache catches up from: changes since a position, an added subtree taken once (not
again for the nodes inside it, not when it left the page), and a cache too far behind told so."""

from __future__ import annotations

import pytest
from playwright.async_api import Page

from pagewarden.testing import LocalSite
from tests.observe._reader import call, load

pytestmark = pytest.mark.browser

INTERNALS = ["observeChanges", "observing", "domVersion", "textVersion", "treeVersion", "logEnd", "catchUp"]
VERSIONS = "(I.observeChanges(), [I.domVersion, I.textVersion, I.treeVersion])"
TAKEN = (
    "(() => { const out = []; const ok = I.catchUp(arg, ([kind, node, name]) =>"
    " out.push(kind + ':' + (node.id || node.nodeName) + (name ? ':' + name : '')));"
    " return ok ? out : null; })()"
)


async def test_each_kind_of_change_moves_its_versions(page: Page, site: LocalSite) -> None:
    await load(page, site, "<p id=p>text</p><div id=box></div>", INTERNALS)
    base = await call(page, VERSIONS)
    assert await call(page, "I.observing") is True
    assert await call(page, VERSIONS) == base  # nothing changed
    await call(page, "$('p').setAttribute('data-x', '1')")
    d, t, e = base
    assert await call(page, VERSIONS) == [d + 1, t, e]  # an attribute: any change only
    await call(page, "$('p').firstChild.data = 'other'")
    assert await call(page, VERSIONS) == [d + 2, t + 1, e]  # characters: text
    await call(page, "$('box').append(document.createElement('span'))")
    assert await call(page, VERSIONS) == [d + 3, t + 2, e + 1]  # an element: text and tree


async def test_the_log_gives_each_change_since_a_position(page: Page, site: LocalSite) -> None:
    await load(page, site, "<p id=p>text</p><a id=a href=/x>x</a><div id=box></div>", INTERNALS)
    await call(page, "I.observeChanges()")
    pos = await call(page, "I.logEnd()")
    await call(
        page,
        "(() => { $('a').href = '/y'; $('a').className = 'not logged'; $('p').firstChild.data = 'new';"
        " const outer = document.createElement('section'); outer.id = 'outer';"
        " const inner = document.createElement('b'); inner.id = 'inner'; $('box').append(outer);"
        " outer.append(inner); const gone = document.createElement('i'); gone.id = 'gone';"
        " $('box').append(gone); gone.remove(); I.observeChanges(); })()",
    )
    assert await call(page, TAKEN, pos) == ["attr:a:href", "text:#text", "add:outer"]
    after = await call(page, "I.logEnd()")
    assert after > pos
    assert await call(page, TAKEN, after) == []


async def test_a_cache_too_far_behind_is_told_to_start_anew(page: Page, site: LocalSite) -> None:
    await load(page, site, "<div id=box></div>", INTERNALS)
    await call(page, "I.observeChanges()")
    pos = await call(page, "I.logEnd()")
    await call(
        page,
        "(() => { for (let i = 0; i < 3000; i++) { $('box').append(document.createElement('i'));"
        " if (i % 500 === 0) I.observeChanges(); } I.observeChanges(); })()",
    )
    assert await call(page, TAKEN, pos) is None
    assert await call(page, TAKEN, await call(page, "I.logEnd()")) == []
