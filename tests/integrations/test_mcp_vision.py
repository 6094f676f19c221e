"""The --caps vision tools in real Chromium: offered only with the capability, with Playwright
MCP's arguments; benign coordinate input works; the element that really receives the input is
what the guard judges: an invisible overlay over a harmless button, and a button the page swaps
for another when the pointer arrives (after the screenshot the model looked at)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from pagewarden.integrations.mcp import ServerOptions
from pagewarden.testing import LocalSite, Response
from tests.integrations._mcp_client import mcp_session, text_of

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

_BOX = "position:absolute;width:160px;height:60px;margin:0"
_OVERLAY = "position:absolute;left:200px;top:0;width:200px;height:100px;opacity:0;z-index:9"
_DELETE = (
    '<button style="width:160px;height:60px" onclick="out.textContent = &quot;deleted&quot;">'
    "Delete account</button>"
)
BOARD = f"""<!doctype html><title>Board</title>
<style>body {{ margin:0; height:3000px }} button {{ font-size:18px }}</style>
<button id="count" style="{_BOX};left:20px;top:20px"
  onclick="out.textContent = 'count ' + (++n)">Count</button>
<button id="pay" style="{_BOX};left:220px;top:20px" onclick="out.textContent = 'paid'">Pay</button>
<a href="http://evil.test/steal" style="{_OVERLAY}" aria-label="x"></a>
<div id="slot" style="{_BOX};left:420px;top:20px">
  <button id="save" style="width:160px;height:60px">Save</button></div>
<div id="pad" style="{_BOX};left:20px;top:120px;background:#ddd"></div>
<p id="out" style="position:absolute;left:20px;top:220px">-</p>
<script>
let n = 0;
// the page slides another button under the pointer when it arrives (after any screenshot)
document.getElementById("save").addEventListener("pointerover", () => {{
  slot.innerHTML = {_DELETE!r};
}}, {{once: true}});
pad.addEventListener("pointerdown", e => {{ pad.dataset.down = e.clientX + "," + e.clientY; }});
pad.addEventListener("pointerup", e => {{
  out.textContent = "drag " + pad.dataset.down + " to " + e.clientX + "," + e.clientY;
}});
addEventListener("scroll", () => {{ out.textContent = "scrolled " + Math.round(scrollY); }});
</script>"""
POLICY = """version: 1
policies:
  - id: NO-EVIL
    category: boundary
    risk_level: high
    description: Never talk to evil.test.
    rules:
      - domain_deny: [evil.test]
  - id: NO-DELETE
    category: boundary
    risk_level: high
    description: Never delete the account.
    rules:
      - forbid_element: {match: ["Delete account"], actions: [click]}
"""
VISION = {
    "browser_mouse_click_xy",
    "browser_mouse_move_xy",
    "browser_mouse_drag_xy",
    "browser_mouse_down",
    "browser_mouse_up",
    "browser_mouse_wheel",
}


@pytest.fixture(scope="module")
def site() -> Iterator[LocalSite]:
    with LocalSite() as local:
        local.route("app.test", "/", lambda r: Response(BOARD))
        local.route("evil.test", "/steal", lambda r: Response("<title>evil</title>"))
        yield local


def _options(site: LocalSite, tmp_path: Path, **changes) -> ServerOptions:
    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY)
    base = dict(
        isolated=True, host_map={"*.test": site.port}, output_dir=tmp_path / "out", policies=(policy,),
        proxy=False, caps=("vision",), goal="Count on the board at app.test.",
    )  # fmt: skip
    return ServerOptions(**{**base, **changes})


def _out(text: str) -> str:
    return next(line for line in text.splitlines() if "paragraph" in line and "[ref=" in line)


async def test_vision_tools_only_with_the_capability(site: LocalSite, tmp_path: Path) -> None:
    async with mcp_session(_options(site, tmp_path, caps=())) as (client, _):
        names = {tool.name for tool in (await client.list_tools()).tools}
    assert not names & VISION
    async with mcp_session(_options(site, tmp_path)) as (client, _):
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert set(tools) >= VISION
    click = tools["browser_mouse_click_xy"].inputSchema
    assert {"x", "y", "button", "clickCount", "delay"} <= set(click["properties"])
    assert set(click["required"]) == {"x", "y"}
    assert set(tools["browser_mouse_drag_xy"].inputSchema["required"]) == {"startX", "startY", "endX", "endY"}
    assert {"deltaX", "deltaY"} <= set(tools["browser_mouse_wheel"].inputSchema["properties"])


async def test_coordinates_are_judged_at_the_element_really_there(site: LocalSite, tmp_path: Path) -> None:
    async with mcp_session(_options(site, tmp_path)) as (client, _):
        opened = await client.call_tool(
            "browser_navigate", {"url": site.url("app.test"), "intent": "Open it."}
        )
        assert not opened.isError, text_of(opened)
        counted = await client.call_tool(
            "browser_mouse_click_xy", {"x": 100, "y": 50, "intent": "The user asked me to count."}
        )
        assert not counted.isError, text_of(counted)
        assert "count 1" in _out(text_of(counted))
        twice = await client.call_tool("browser_mouse_click_xy", {"x": 100, "y": 50, "clickCount": 2})
        assert not twice.isError and "count 3" in _out(text_of(twice)), text_of(twice)

        # "Pay" shows at (300, 50), but an invisible link to evil.test lies over it: that is judged
        overlay = await client.call_tool("browser_mouse_click_xy", {"x": 300, "y": 50, "element": "Pay"})
        assert overlay.isError, text_of(overlay)
        assert text_of(overlay).startswith("pagewarden refused this action.") and "NO-EVIL" in text_of(
            overlay
        )

        # "Save" shows at (500, 50); when the pointer arrives the page puts "Delete account" there
        swapped = await client.call_tool("browser_mouse_click_xy", {"x": 500, "y": 50, "element": "Save"})
        assert swapped.isError and "NO-DELETE" in text_of(swapped), text_of(swapped)
        after = text_of(await client.call_tool("browser_snapshot", {}))
        assert "deleted" not in _out(after) and "paid" not in _out(after)

        dragged = await client.call_tool(
            "browser_mouse_drag_xy", {"startX": 40, "startY": 140, "endX": 150, "endY": 160}
        )
        assert not dragged.isError, text_of(dragged)
        assert "drag 40,140 to 150,160" in _out(text_of(dragged))
        moved = await client.call_tool("browser_mouse_move_xy", {"x": 60, "y": 150})
        pressed = await client.call_tool("browser_mouse_down", {})
        released = await client.call_tool("browser_mouse_up", {})
        assert not (moved.isError or pressed.isError or released.isError), text_of(pressed)
        assert "drag 60,150 to 60,150" in _out(text_of(released))
        scrolled = await client.call_tool("browser_mouse_wheel", {"deltaX": 0, "deltaY": 400})
        assert not scrolled.isError, text_of(scrolled)
        await client.call_tool("browser_wait_for", {"text": "scrolled"})
    assert site.requests_to("evil.test") == []
