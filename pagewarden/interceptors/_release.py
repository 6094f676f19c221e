"""Releasing a guard from a browser context: everything its wrapping installed there is undone.

`GuardedPage.release()` (awaitable under the async API) takes the guard off the page's context,
so that another guard (or none) can use the same context afterwards with nothing of this one
left to judge its pages. What wrapping installs, and how each piece is undone here:

* the navigation gate (no network layer; `pagewarden.interceptors._gate.NavigationGate.install`):
  its request route (``unroute``), its websocket route (removed from the context's list: there
  is no per-route ``unroute`` for websockets), the Content-Security-Policy and WebRTC bindings
  and init scripts (the Disposables they returned, closed), and the context's membership of the
  browser's shared DevTools interception (`_interception.BrowserInterception.depart`: the
  patterns narrow, the browser session is detached with its last member, the context's page
  sessions once no gate serves it);
* the facts reader's main-world init script, when the reader could not be registered as a
  selector engine (its Disposable, closed);
* the per-page DevTools sessions of the facts reader (`observe._direct`) and of the closed
  shadow-root probe (`observe._shadow`): detached;
* the network layer's request listener (`proxy._grants.SessionNetwork.watch_frames`): removed;
* the gate's judgement ahead of the agent's own route handlers (`SharedState.gate_first`): the
  agent's routes stay (they are the agent's), the released gate no longer judges through them
  (`SharedState.gate_for`).

What cannot be undone: the facts reader's selector engine (Playwright registers engines for the
context's lifetime; it is named with an unguessable name and reads only when this guard asks),
and the policies the gate's scripts already gave documents loaded before the release (a page
keeps its ``<meta>`` Content-Security-Policy until it navigates). A page the network layer
tagged keeps its ``Accept-Language`` header (the proxy is the browser's, not the context's).

After a release every stand-in of the context (the page, its locators, frames, the context)
raises `GuardReleased` on use; ``unwrap()`` still gives the raw page. Wrapping a page of the
context again installs the guard again.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

from pagewarden._calls import Call, Pipeline

if TYPE_CHECKING:
    from pagewarden.interceptors._wrappers import SharedState

__all__ = ["release_steps"]


def release_steps(shared: SharedState, page: Any) -> Pipeline:
    """Steps that release `shared`'s guard from `page`'s context (see the module docstring).
    The installs started at wrap time are awaited first, so none lands after the release."""
    context = shared.context_of(page)
    shared.released.add(context)
    for pending in (shared.pending_registration(page), shared.pending_gate(page)):
        if pending is not None:
            yield Call(lambda pending=pending: pending)
    gate = shared.built_gate
    if gate is not None:
        yield from gate.release(context)
    for step in reversed(shared.undo.pop(context, [])):
        with contextlib.suppress(Exception):  # a closed context has nothing left to undo
            yield Call(step)
    for each in list(context.pages):
        sessions = []
        reader = shared.direct_readers.pop(each, None)
        if reader is not None:
            sessions.append(reader.session)
        probe = shared.cdp_sessions.pop(each, None)
        if probe is not None:
            sessions.append(probe)
        for session in sessions:
            with contextlib.suppress(Exception):  # the page closed meanwhile
                yield Call(session.detach)
    unwatch = getattr(getattr(shared.guard, "network", None), "unwatch_frames", None)
    if unwatch is not None:
        unwatch(context)
