"""The facts reader called over CDP in Playwright's utility world, without a selector round trip.

The reader runs as a content-script selector engine in Playwright's utility world (an isolated
world the page's scripts cannot reach; see `_gather.register_reader`). A read through the engine
is a Playwright `get_attribute` on an engine selector: the driver parses the selector, resolves
it in the utility world, then reads the attribute — several milliseconds on a loaded machine.
The same read as one `Runtime.evaluate` in that same world, over a CDP session of the page, is
one message each way (measured at load 7: 1.8 ms against 4.6-8.4 ms).

`DirectReader` follows the page's main-frame documents from the session's execution-context
events and keeps the `uniqueId` of Playwright's utility world of the page (named after the
page's guid) (unique across renderer processes, unlike
context ids); it calls the reader that lives there under `window[name]` (the engine's, or one
it installs there first, which the engine then reuses: one reader, one pin, one report per
document). Only reads rooted at the main frame's document go this way; whenever the world is
not known, or the call fails, the caller reads through the engine as before. Chromium only.
"""

from __future__ import annotations

import json
from typing import Any

from pagewarden.observe._gather import Call, Gather, _is_timeout, _world_reader

__all__ = ["DirectReader", "direct_reader"]

UTILITY_WORLD = "__playwright_utility_world_"
#: How long a direct read may wait for the page before the caller reads the usual way (a busy
#: main thread: the usual read then waits within the action's own timeout, as before).
DIRECT_TIMEOUT_MS = 2000.0


class DirectReader:
    """Calls the facts reader `name` in the utility world of one page's main frame over `session`."""

    def __init__(self, session: Any, frame_id: str, world_name: str, name: str) -> None:
        self.session = session
        self.frame_id = frame_id
        self.world_name = world_name  # Playwright's utility world of this page
        self.name = name
        self.world: str | None = None  # uniqueId of the current document's utility world
        self._world_id: int | None = None
        self._installed = False  # the reader is known to be in `world`
        self._short: str = f"window[{json.dumps(name)}]"
        self._full = _world_reader(name)

    # -- execution contexts (session events) ----------------------------------------------
    def on_created(self, event: dict[str, Any]) -> None:
        """A new execution context: the main frame's utility world of a new document."""
        context = event.get("context") if isinstance(event, dict) else None
        if not isinstance(context, dict):
            return
        aux = context.get("auxData") or {}
        name = context.get("name")
        if aux.get("frameId") != self.frame_id or aux.get("isDefault"):
            return
        if name != self.world_name:
            return
        unique = context.get("uniqueId")
        self.world = unique if isinstance(unique, str) else None
        self._world_id = context.get("id")
        self._installed = False

    def on_destroyed(self, event: dict[str, Any]) -> None:
        """A context went away: forget the world when it is ours."""
        if isinstance(event, dict) and (
            event.get("executionContextId") == self._world_id
            or (self.world is not None and event.get("executionContextUniqueId") == self.world)
        ):
            self.forget()

    def forget(self, *_: Any) -> None:
        """Forget the world (contexts cleared, a call failed): reads go the usual way until the
        next document's utility world is announced."""
        self.world = None
        self._world_id = None
        self._installed = False

    # -- reading -----------------------------------------------------------------------------
    def _send(self, expression: str, world: str) -> Any:
        params = {"expression": expression, "uniqueContextId": world, "returnByValue": True}
        return self.session.send("Runtime.evaluate", params, timeout=DIRECT_TIMEOUT_MS)

    def read(self, entry: str, opts: dict[str, Any]) -> Gather:
        """`entry` of the reader at the main frame's document: its JSON answer (a string), or
        None when it could not be read this way (the caller then reads through the engine)."""
        world = self.world
        if world is None:
            return None
        body = json.dumps(json.dumps({**opts, "entry": entry}, separators=(",", ":")))
        reader = self._short if self._installed else self._full
        try:
            answer = yield Call(self._send, (f"{reader}.direct({body})", world))
        except Exception as exc:  # noqa: BLE001 - the document went away, a busy page: the usual read
            if self.world == world and not _is_timeout(exc):
                self.forget()  # (a busy page keeps its world: the next read tries it again)
            return None
        if not isinstance(answer, dict) or answer.get("exceptionDetails"):
            self._installed = False
            return None
        value = answer.get("result") or {}
        if not isinstance(value, dict) or value.get("type") != "string":
            self._installed = False
            return None
        self._installed = True
        return value.get("value")


def direct_reader(readers: dict[Any, Any], page: Any, name: str) -> Gather:
    """The page's `DirectReader` for the reader `name` (set up once per page: a CDP session of
    its own, the main frame's id, the session's execution-context events), or None where CDP is
    not there (not Chromium) or the setup failed; the guard then reads through the engine alone."""
    known = readers.get(page, False)
    if known is not False:
        return known if known is not None and known.name == name else None
    readers[page] = None
    guid = getattr(getattr(page, "_impl_obj", None), "_guid", None)
    if not isinstance(guid, str) or not guid:
        return None
    try:
        session = yield Call(page.context.new_cdp_session, (page,))
        tree = yield Call(session.send, ("Page.getFrameTree",))
        reader = DirectReader(session, tree["frameTree"]["frame"]["id"], UTILITY_WORLD + guid, name)
        session.on("Runtime.executionContextCreated", reader.on_created)
        session.on("Runtime.executionContextDestroyed", reader.on_destroyed)
        session.on("Runtime.executionContextsCleared", reader.forget)
        # Enabling reports every context there is now (the events arrive before the answer).
        yield Call(session.send, ("Runtime.enable",))
    except Exception:  # noqa: BLE001 - not Chromium, a closed page: the engine alone
        return None
    readers[page] = reader
    return reader
