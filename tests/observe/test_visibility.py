"""js/visibility.js on its own (real Chromium): why an element would not be seen, for each kind
of hiding a page can use, and an element's effective opacity through its ancestors."""

from __future__ import annotations

import pytest
from playwright.async_api import Page

from pagewarden.testing import LocalSite
from tests.observe._reader import call, load

pytestmark = pytest.mark.browser

PAGE = """
<p id=shown>Shown text</p>
<div style="display:none"><span id=none>in a display:none parent</span></div>
<span id=invisible style="visibility:hidden">hidden</span>
<div style="opacity:0.01"><span id=faded>faded</span></div>
<span id=aria aria-hidden=true>aria hidden</span>
<span id=clipped style="position:absolute;clip:rect(0px,0px,0px,0px)">clipped</span>
<div style="overflow:hidden;width:0;height:20px"><span id=boxed>in a zero box</span></div>
<span id=empty style="display:inline-block;width:0;height:0"></span>
<span id=away style="position:absolute;left:-5000px;top:0">off-screen</span>
<span id=tiny style="font-size:2px">tiny</span>
<div style="background:rgb(250,250,250)"><span id=camo style="color:rgb(255,255,255)">same colour</span></div>
<div style="opacity:0.5"><div style="opacity:0.5"><span id=quarter>quarter</span></div></div>
"""
REASONS = {
    "shown": None,
    "none": "display:none",
    "invisible": "visibility:hidden",
    "faded": "transparent (opacity)",
    "aria": "aria-hidden",
    "clipped": "clipped",
    "boxed": "clipped by a zero-size box",
    "empty": "zero size",
    "away": "off-screen",
    "tiny": "tiny font",
    "camo": "text colour equals background",
}


async def test_each_way_of_hiding_has_its_reason(page: Page, site: LocalSite) -> None:
    await load(page, site, PAGE, ["hiddenReason"])
    found = await call(page, "Object.fromEntries(arg.map((id) => [id, I.hiddenReason($(id))]))", [*REASONS])
    assert found == REASONS
    detached = await call(page, "I.hiddenReason(document.createElement('span'))")
    assert detached == "detached"


async def test_effective_opacity_multiplies_the_ancestors(page: Page, site: LocalSite) -> None:
    await load(page, site, PAGE, ["effectiveOpacity"])
    assert await call(page, "I.effectiveOpacity($('quarter'))") == 0.25
    assert await call(page, "I.effectiveOpacity($('shown'))") == 1
