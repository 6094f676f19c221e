"""js/names.js on its own (real Chromium): the accessible name in the accessibility tree's order
(aria-labelledby, aria-label, the <label>s in tree order), the implicit role, the aria text, and
the index of labels by `for` following the page's changes."""

from __future__ import annotations

import pytest
from playwright.async_api import Page

from pagewarden.testing import LocalSite
from tests.observe._reader import call, load

pytestmark = pytest.mark.browser

PAGE = """
<span id=t1>Billing</span><span id=t2>address</span>
<input id=by aria-labelledby="t1 t2" aria-label="ignored">
<input id=aria aria-label="Search the shop">
<label for=both>First</label><label>Second <input id=both></label><label for=both>Third</label>
<input id=none>
<a id=link href=/x>Go</a><a id=anchor>no href</a><input id=sub type=submit><input id=chk type=checkbox>
<select id=multi multiple></select><h3 id=head>Title</h3><div id=edit contenteditable=true></div>
<img id=pic alt="A cat" title="Cat picture" aria-describedby=t1>
"""


async def test_the_accessible_name_follows_the_accessibility_tree(page: Page, site: LocalSite) -> None:
    await load(page, site, PAGE, ["accessibleName"])
    names = await call(page, "['by', 'aria', 'both', 'none'].map((id) => I.accessibleName($(id)))")
    assert names == ["Billing address", "Search the shop", "First Second Third", ""]


async def test_implicit_roles_and_aria_text(page: Page, site: LocalSite) -> None:
    await load(page, site, PAGE, ["implicitRole", "ariaText"])
    ids = ["link", "anchor", "sub", "chk", "multi", "head", "edit", "pic", "none"]
    roles = await call(page, "arg.map((id) => I.implicitRole($(id)))", ids)
    assert roles == ["link", None, "button", "checkbox", "listbox", "heading", "textbox", "img", "textbox"]
    assert await call(page, "I.ariaText($('pic'))") == "Cat picture | A cat | Billing"


async def test_the_label_index_follows_changes(page: Page, site: LocalSite) -> None:
    await load(page, site, PAGE, ["accessibleName"])
    name = "I.accessibleName($('none'))"
    assert await call(page, name) == ""
    # a label added after the index was made, then one whose `for` is changed to the field
    await call(page, "document.body.insertAdjacentHTML('beforeend', '<label for=none>Added</label>')")
    assert await call(page, name) == "Added"
    await call(page, "$('aria').insertAdjacentHTML('beforebegin', '<label id=moved for=x>Moved</label>')")
    assert await call(page, name) == "Added"
    await call(page, "$('moved').htmlFor = 'none'")
    assert await call(page, name) == "Moved Added"  # tree order: the moved label comes first
    await call(page, "$('moved').htmlFor = 'x'")
    assert await call(page, name) == "Added"
