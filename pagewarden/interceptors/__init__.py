"""Playwright wrappers: every action of a wrapped page goes through the guard first."""

from __future__ import annotations

from typing import Any

from pagewarden.interceptors._frames import FRAME_OWN, MONITORED, FrameActions, RefusalSignal, record_unraised
from pagewarden.interceptors._gate import gate_needed
from pagewarden.interceptors._methods import ACTIONS, READ_ONLY, ActionSpec, spec_for
from pagewarden.interceptors._pipeline import guarded_action
from pagewarden.interceptors._wrappers import Guarded, GuardedPage, SharedState

__all__ = [
    "ACTIONS",
    "FRAME_OWN",
    "MONITORED",
    "READ_ONLY",
    "ActionSpec",
    "FrameActions",
    "Guarded",
    "GuardedPage",
    "RefusalSignal",
    "SharedState",
    "gate_needed",
    "guarded_action",
    "record_unraised",
    "spec_for",
    "wrap_page",
]


def wrap_page(guard: Any, page: Any) -> Any:
    """A guarded stand-in for `page` (a Playwright Page, BrowserContext or Browser).

    The API (async or sync) is taken from the object itself; everything reached from the
    stand-in (popups, frames, locators, new pages of its context) is guarded by `guard`.
    """
    if isinstance(page, Guarded):
        if page._pw_shared.guard is guard:
            return page
        page = page._pw_obj
    module = type(page).__module__
    if module == "playwright.async_api._generated":
        mode = "async"
    elif module == "playwright.sync_api._generated":
        mode = "sync"
    else:
        raise TypeError(
            f"guard.wrap() takes a Playwright Page (async or sync API), not {type(page).__name__}"
        )
    shared = getattr(guard, "_shared_states", None)
    if shared is None:
        shared = {}
        guard._shared_states = shared
    state = shared.get(mode)
    if state is None:
        state = shared[mode] = SharedState(guard, mode)
    wrapped = state.wrap(page)
    if state.released and type(page).__name__ == "Page":
        state.unrelease(page)
    if not isinstance(wrapped, Guarded):
        raise TypeError(f"cannot guard a {type(page).__name__}")
    if type(page).__name__ == "Page":
        # The facts reader is registered now, before Playwright sets up the utility world of
        # documents the agent opens next (a document whose utility world already exists is
        # read by the main-world reader instead).
        state.register_reader_early(page)
        # … and, without a network layer, the navigation gate routes its context's requests.
        state.install_gate_early(page)
    return wrapped
