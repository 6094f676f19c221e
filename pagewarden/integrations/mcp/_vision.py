"""Playwright MCP's coordinate tools (``--caps vision``), judged like every other action.

Each tool drives the guarded page's ``mouse``, which judges what is at the point when the
input comes, not what a screenshot showed: ``mouse.move(x, y)`` is a hover over the element
at (x, y), ``mouse.down()`` a click on the element under the mouse (read after the move, so
a page that swaps or slides an element under the pointer on ``pointerover`` gets the new one
judged), through invisible overlays, open shadow roots and same-origin frames, with the
destination pinned until the press has run (`pagewarden.interceptors`). ``mouse.up`` and the
wheel are not actions of their own: the click a release completes was judged at the press.

* ``browser_mouse_click_xy``: move, then press and release (``clickCount`` times; each press
  judged), as Playwright MCP does;
* ``browser_mouse_drag_xy``: move to the start, press (judged on the element there), move to
  the end (judged as a hover over the drop target), release;
* ``browser_mouse_move_xy``, ``browser_mouse_down``, ``browser_mouse_up``,
  ``browser_mouse_wheel``: one input each.
"""

from __future__ import annotations

import asyncio
from typing import Any

from pagewarden.integrations.mcp import _tools as t

__all__ = ["HANDLERS"]


def _at(x: float, y: float) -> str:
    return f"({x:g}, {y:g})"


async def _mouse(server: Any, intent: str | None) -> Any:
    page = await server.guarded_page(intent)
    return page, page.mouse


def _reason(server: Any, page: Any, intent: str | None) -> None:
    """The intent again before each judged input after the first (each is its own step)."""
    if intent and server.guard is not None:
        page.reasoning(intent)


async def click_xy(server: Any, args: t.MouseClick) -> list:
    """Move to (x, y), then press and release there ``clickCount`` times."""
    page, mouse = await _mouse(server, args.intent)
    button = args.button or "left"
    count = args.clickCount or 1

    async def clicking() -> None:
        await mouse.move(args.x, args.y)
        for n in range(1, count + 1):
            _reason(server, page, args.intent)
            await mouse.down(button=button, click_count=n)
            if args.delay:
                await asyncio.sleep(args.delay / 1000)
            await mouse.up(button=button, click_count=n)

    what = "Clicked" if count == 1 else f"Clicked {count} times"
    return await server.act(f"{what} at {_at(args.x, args.y)}", clicking())


async def move_xy(server: Any, args: t.MouseMove) -> list:
    """Move the mouse to (x, y) (a hover over what is there)."""
    _, mouse = await _mouse(server, args.intent)
    return await server.act(f"Moved the mouse to {_at(args.x, args.y)}", mouse.move(args.x, args.y))


async def drag_xy(server: Any, args: t.MouseDrag) -> list:
    """Press at the start, move to the end, release."""
    page, mouse = await _mouse(server, args.intent)

    async def dragging() -> None:
        await mouse.move(args.startX, args.startY)
        _reason(server, page, args.intent)
        await mouse.down()
        _reason(server, page, args.intent)
        await mouse.move(args.endX, args.endY, steps=5)
        await mouse.up()

    where = f"from {_at(args.startX, args.startY)} to {_at(args.endX, args.endY)}"
    return await server.act(f"Dragged {where}", dragging())


async def mouse_down(server: Any, args: t.MouseButton) -> list:
    """Press a button where the mouse is (a click on what is there)."""
    _, mouse = await _mouse(server, args.intent)
    return await server.act("Pressed the mouse button", mouse.down(button=args.button or "left"))


async def mouse_up(server: Any, args: t.MouseButton) -> list:
    """Release a button."""
    _, mouse = await _mouse(server, args.intent)
    return await server.act("Released the mouse button", mouse.up(button=args.button or "left"))


async def mouse_wheel(server: Any, args: t.MouseWheel) -> list:
    """Scroll by (deltaX, deltaY)."""
    _, mouse = await _mouse(server, args.intent)
    return await server.act(
        f"Scrolled the mouse wheel by {_at(args.deltaX, args.deltaY)}", mouse.wheel(args.deltaX, args.deltaY)
    )


HANDLERS = {
    "browser_mouse_click_xy": click_xy,
    "browser_mouse_move_xy": move_xy,
    "browser_mouse_drag_xy": drag_xy,
    "browser_mouse_down": mouse_down,
    "browser_mouse_up": mouse_up,
    "browser_mouse_wheel": mouse_wheel,
}
