"""Evidence of who caused a refused frame navigation: the URLs a session's frames show, and
when the agent last acted inside a frame."""

from __future__ import annotations

import threading
import time
from typing import Any

__all__ = ["FRAME_ACTION_TAIL", "FrameActions", "subframe_urls"]


def subframe_urls(page: Any) -> frozenset[str]:
    """The URLs shown by frames inside the pages of `page`'s context and by no tab's top
    document (Playwright's own record of the frames: no round trip to the browser)."""
    try:
        pages = list(page.context.pages)
    except Exception:  # noqa: BLE001 - a closed page: nothing is known
        return frozenset()
    tops: set[str] = set()
    inner: set[str] = set()
    for each in pages:
        try:
            main = each.main_frame
            tops.add(main.url)
            inner.update(f.url for f in each.frames if f is not main)
        except Exception:  # noqa: BLE001 - a page closing meanwhile
            continue
    return frozenset(inner - tops)


#: Seconds after an action inside a frame during which a refused navigation of a frame is
#: still that action's (a link's navigation starts after the click returns).
FRAME_ACTION_TAIL = 1.5


class FrameActions:
    """When the agent last acted inside a frame: a refused frame navigation then, or within
    `FRAME_ACTION_TAIL` seconds after, is the agent's (a link it clicked in the frame); any
    other is the page's own (an embed, an ad frame loading). Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running = 0
        self._until = 0.0

    def began(self) -> None:
        """An action inside a frame starts."""
        with self._lock:
            self._running += 1

    def ended(self) -> None:
        """An action inside a frame has run (or failed)."""
        with self._lock:
            self._running = max(0, self._running - 1)
            self._until = time.monotonic() + FRAME_ACTION_TAIL

    def active(self) -> bool:
        """Whether a frame navigation now is the agent's."""
        with self._lock:
            return self._running > 0 or time.monotonic() < self._until
