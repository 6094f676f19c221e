"""js/hit_test.js on its own (real Chromium): the element at a viewport point through open shadow
roots, an image map's <area> under the point, a closed shadow root's host asking for the CDP
probe, and the elements a click can only land on themselves."""

from __future__ import annotations

import pytest
from playwright.async_api import Page

from pagewarden.testing import LocalSite
from tests.observe._reader import call, load

pytestmark = pytest.mark.browser

PAGE = """
<div id=host style="position:absolute;left:0;top:0;width:200px;height:40px"></div>
<img id=map usemap=#m style="position:absolute;left:0;top:100px;width:200px;height:100px"
  src="data:image/gif;base64,R0lGODlhAQABAAAAACw=">
<map name=m><area id=left shape=rect coords="0,0,100,100" href=/left>
  <area id=round shape=circle coords="150,50,20" href=/round><area id=rest shape=default href=/rest></map>
<div id=closed style="position:absolute;left:0;top:250px;width:200px;height:40px"></div>
<div id=own style="position:absolute;left:0;top:320px;font-size:20px">own text</div>
<em id=leaf>leaf</em><span id=spanleaf>a span may host a closed root</span>
<button id=withkids><b>x</b></button><my-widget id=custom></my-widget>
<script>
  const root = document.getElementById('host').attachShadow({mode: 'open'});
  root.innerHTML = '<button id=inner style="width:200px;height:40px">Inside</button>';
  const hidden = document.getElementById('closed').attachShadow({mode: 'closed'});
  hidden.innerHTML = '<a href=/secret style="display:block;width:200px;height:40px">Closed</a>';
</script>
"""
HIT = "(() => { const el = I.hitAt(document, arg[0], arg[1]); return el ? el.id || el.tagName : null; })()"


async def test_the_hit_goes_through_open_shadow_roots_and_image_maps(page: Page, site: LocalSite) -> None:
    await load(page, site, PAGE, ["hitAt"])
    assert await call(page, HIT, [100, 20]) == "inner"
    assert await call(page, HIT, [50, 150]) == "left"
    assert await call(page, HIT, [150, 150]) == "round"
    assert await call(page, HIT, [190, 190]) == "rest"


async def test_a_closed_shadow_host_asks_for_the_probe(page: Page, site: LocalSite) -> None:
    await load(page, site, PAGE, ["closedShadowAt"])
    probe = await call(page, "I.closedShadowAt($('closed'), document, 100, 270)")
    assert probe == "100,270"
    assert await call(page, "I.closedShadowAt($('host'), document, 100, 20)") is None  # its root is open
    assert await call(page, "I.closedShadowAt($('own'), document, 10, 330)") is None  # its own text there
    assert await call(page, "I.closedShadowAt($('withkids'), document, 5, 5)") is None  # cannot host one


async def test_only_plain_leaves_land_on_themselves(page: Page, site: LocalSite) -> None:
    await load(page, site, PAGE, ["landsOnItself"])
    ids = ["leaf", "spanleaf", "withkids", "custom", "map", "host"]
    found = await call(page, "arg.map((id) => I.landsOnItself($(id)))", ids)
    assert found == [True, False, False, False, False, False]
