"""A link inside a closed shadow root inside a frame (out of every script's reach, the reader's
included): with an allow-list, wherever the click sends the browser — the frame itself, the
top-level page, a new tab, through a redirect — nothing reaches a refused host: the guard
blocks the click (a same-origin frame's link read over CDP), the frame's own reader pins it,
or the navigation gate refuses it; either way the agent is told (at the click or at its next
call: a stop by the frame's own reader is handed to the top document's reader). The same markup
pointing at an allowed host still navigates. Real Chromium over 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import pytest
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page

from pagewarden import ActionBlocked, Guard, GuardError
from pagewarden.testing import LocalSite, Response

from .test_gate_hops import POLICIES, _hop, _landing, _reached, hop

INNER = """<!doctype html><body style="margin:0">
<x-link id="host" style="display:block;width:200px;height:60px"></x-link>
<script>
  const root = document.getElementById("host").attachShadow({mode: "closed"});
  root.innerHTML = '<a href="{D}" target="{T}" style="display:block;width:200px;height:60px">Docs</a>';
</script></body>"""


def _serve(site: LocalSite, frame_host: str, name: str, dest: str, target: str) -> str:
    inner = INNER.replace("{D}", dest).replace("{T}", target)
    site.route(frame_host, f"/shadow-frame/{name}", lambda _r: Response(inner))
    outer = (
        f'<!doctype html><body><iframe id="f" src="http://{frame_host}/shadow-frame/{name}"'
        ' style="width:300px;height:120px;border:0"></iframe></body>'
    )
    site.route("app.test", f"/shadow-page/{name}", lambda _r: Response(outer))
    for host in ("app.test", "other.test", "evil.test"):
        site.route(host, "/hop", _hop)
        site.route(host, "/landing", _landing)
    return f"http://app.test/shadow-page/{name}"


CASES = [
    (frame_host, target, via)
    for frame_host in ("app.test", "other.test")
    for target in ("_self", "_top", "_blank")
    for via in ("direct", "redirect")
]


async def _click(guarded: Any, how: str) -> GuardError | None:
    try:
        if how == "frame_locator":
            await guarded.frame_locator("#f").locator("#host").click()
        else:
            await guarded.click("#f", position={"x": 100, "y": 30})
    except GuardError as exc:
        return exc
    except PlaywrightError:
        pass
    return None


@pytest.mark.parametrize(("frame_host", "target", "via"), CASES, ids=["-".join(c) for c in CASES])
@pytest.mark.parametrize("how", ["frame_locator", "point_over_frame"])
async def test_a_closed_shadow_link_in_a_frame_never_reaches_a_refused_host(
    page: Page, site: LocalSite, frame_host: str, target: str, via: str, how: str
) -> None:
    guarded = Guard(POLICIES, goal="Use the app.").wrap(page)
    mark = f"shadow-frame-{frame_host}-{target}-{via}-{how}"
    dest = f"http://evil.test/landing?c={mark}"
    if via == "redirect":
        dest = hop("app.test", dest)
    await guarded.goto(_serve(site, frame_host, mark, dest, target))
    await page.frame_locator("#f").locator("#host").wait_for()
    earlier = await _click(guarded, how)
    await page.wait_for_timeout(700)
    assert _reached(site, "evil.test", mark) == []
    assert all(not f.url.startswith("http://evil.test") for p in page.context.pages for f in p.frames)
    gate = guarded._pw_shared.gate
    assert gate is not None
    if not isinstance(earlier, ActionBlocked):  # refused or stopped after the click: heard now
        with pytest.raises(ActionBlocked):
            await guarded.hover("body")


@pytest.mark.parametrize("target", ["_self", "_top"])
@pytest.mark.parametrize("frame_host", ["app.test", "other.test"])
async def test_the_allowed_twin_navigates(page: Page, site: LocalSite, frame_host: str, target: str) -> None:
    guarded = Guard(POLICIES, goal="Use the app.").wrap(page)
    mark = f"shadow-frame-twin-{frame_host}-{target}"
    await guarded.goto(_serve(site, frame_host, mark, f"http://other.test/landing?c={mark}", target))
    await page.frame_locator("#f").locator("#host").wait_for()
    with contextlib.suppress(PlaywrightError):
        await guarded.frame_locator("#f").locator("#host").click()
    for _ in range(80):
        if _reached(site, "other.test", mark):
            break
        await asyncio.sleep(0.05)
    assert _reached(site, "other.test", mark)
