"""Watching the document while an action runs: did the page navigate or replace itself."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    pass

__all__ = ["DocumentWatch"]


class DocumentWatch:
    """Whether the page's main frame committed a new document while an action ran.

    Playwright's frame `navigated` event says so (`newDocument`); a click that navigated returns
    after that event, so when it came, the judged document (and any navigation its reader
    stopped) is gone and nothing needs asking. When the event cannot be watched (a Playwright
    without it), `replaced` stays False and the guard asks, as before."""

    def __init__(self, page: Any) -> None:
        self.replaced = False
        self._emitter: Any = None
        try:
            frame = page.main_frame
            emitter = getattr(frame, "_impl_obj", frame)._event_emitter
            emitter.on("navigated", self._on_navigated)
            self._emitter = emitter
        except Exception:  # noqa: BLE001 - not watchable: the report is read instead
            self._emitter = None

    def _on_navigated(self, event: Any) -> None:
        if isinstance(event, dict) and event.get("newDocument") is not None and not event.get("error"):
            self.replaced = True

    def close(self) -> None:
        """Stop watching (idempotent)."""
        if self._emitter is not None:
            with contextlib.suppress(Exception):  # already removed
                self._emitter.remove_listener("navigated", self._on_navigated)
            self._emitter = None
