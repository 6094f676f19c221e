"""One browser-level DevTools session per browser, shared by every navigation gate on that browser.

Playwright's routes do not see everything a guard must judge without a network layer (redirect
hops, a download a response starts, worker scripts, requests of shared and service workers: see
`pagewarden.interceptors._hops`), so a navigation gate also pauses requests at the browser, with
``Fetch.enable`` on a browser-level DevTools session. Chromium pauses a request once *per session*
that matches it, one session after the other, so one session per gate would make every agent's
document wait for every other gate on the same browser. Hence one `BrowserInterception` per
browser object, which every gate on that browser joins:

* **Patterns** are the union of its members' (`HopGate.patterns`), sent again when a member joins
  or leaves; each paused request is handled once, whatever the number of gates.
* **Routing.** A paused request goes to the gate that owns its browser context. Each member's
  context is learnt once, when it joins (its ``browserContextId``, from a page's DevTools target);
  a paused request names its frame, whose context is looked up in a cache of targets (a tab's main
  frame and an out-of-process frame are DevTools targets: ``Target.getTargetInfo``, a browser-side
  call, once per target) and, for a frame inside a page's process, in the frame trees of the
  pages of the gates that would act on it (once per frame, cached). No lookup is made unless some
  member would do something other than let the request go on (`HopGate.wants`): requests of every
  other context, and every benign request, are continued at once.
* **Membership** is reference-counted: a context that closes leaves; its gate's other contexts,
  and the other gates, stay; the session is detached with the last member.

A handler never sends anything to a page while a request is paused (a page whose navigation is
paused does not answer: a command sent there would wait for the navigation, which waits for
the handler), except ``Page.getFrameTree`` for a frame no target names, bounded by a timeout.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pagewarden._calls import Call, drive_async, drive_sync

if TYPE_CHECKING:
    from pagewarden.interceptors._hops import HopGate

__all__ = [
    "Answer", "BrowserInterception", "Where", "existing_interception", "interception_for", "paused_kind",
]

Steps = Generator[Call, Any, Any]

#: the kinds of paused request (see `paused_kind`)
DOCUMENT_ANSWER = "document_answer"
DOCUMENT_REQUEST = "document_request"
WORKER_SCRIPT = "worker_script"
CSP_REPORT = "csp_report"
REQUEST = "request"

#: seconds a frame-tree lookup (a page's process) may take before the frame counts as nobody's
FRAME_LOOKUP_TIMEOUT = 2.0
#: frames (of pages' processes) and targets whose context is remembered
_FRAMES_KEPT = 4096
#: paused documents remembered (to name a refused redirect hop's chain)
_DOCUMENTS_KEPT = 512

_registry_lock = threading.Lock()
_registry: weakref.WeakKeyDictionary[Any, BrowserInterception] = weakref.WeakKeyDictionary()


def existing_interception(browser: Any) -> BrowserInterception | None:
    """The shared interception of `browser` if one is open (None: none was made, or it closed)."""
    with _registry_lock:
        found = _registry.get(browser)
        return None if found is None or found.closed else found


def interception_for(browser: Any, mode: str) -> BrowserInterception:
    """The shared interception of `browser` (made on first use; `mode`: "async" or "sync")."""
    with _registry_lock:
        found = _registry.get(browser)
        if found is None or found.closed:
            found = _registry[browser] = BrowserInterception(browser, mode)
        return found


def paused_kind(event: dict[str, Any], report_host: str) -> str:
    """What a ``Fetch.requestPaused`` `event` is: a document's answer (response stage), a
    document's request, a worker script's answer (``Other`` at the response stage), a report of
    the gate's content security policy (to `report_host`), or any other request."""
    answered = event.get("responseStatusCode") is not None or bool(event.get("responseErrorReason"))
    kind = event.get("resourceType")
    if kind == "Document":
        return DOCUMENT_ANSWER if answered else DOCUMENT_REQUEST
    if answered:
        return WORKER_SCRIPT
    if kind == "CSPViolationReport" and _host(_url(event)) == report_host:
        return CSP_REPORT
    return REQUEST


def _url(event: dict[str, Any]) -> str:
    return str((event.get("request") or {}).get("url") or "")


def _host(url: str) -> str:
    from pagewarden._url import parse_url

    return parse_url(url).host


@dataclass(frozen=True, slots=True)
class Where:
    """Where a paused request comes from: its browser context (None: not found), and whether its
    frame is a tab's top document (False: a frame inside a page)."""

    context_id: str | None
    top: bool


@dataclass(slots=True)
class Answer:
    """How a paused request goes on: a ``Fetch`` method and its parameters (the request id is
    added), and what the gate does once it was sent (records its refusal)."""

    method: str
    params: dict[str, Any]
    then: Callable[[], None] | None = None


_CONTINUE = Answer("Fetch.continueRequest", {})


def _frame_ids(tree: dict[str, Any]) -> set[str]:
    ids = {str(tree.get("frame", {}).get("id", ""))}
    for child in tree.get("childFrames", ()) or ():
        ids |= _frame_ids(child)
    return ids


class _Bounded(OrderedDict[str, Any]):
    """A mapping that forgets its oldest entries beyond `limit`."""

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.limit = limit

    def put(self, key: str, value: Any) -> None:
        self[key] = value
        self.move_to_end(key)
        while len(self) > self.limit:
            self.popitem(last=False)


class BrowserInterception:
    """The DevTools session of one browser, shared by its gates' `HopGate`s (module docstring).
    Thread-safe for its bookkeeping; its handlers run on Playwright's dispatcher."""

    def __init__(self, browser: Any, mode: str) -> None:
        self.browser = browser
        self.mode = mode
        self.closed = False
        self._lock = threading.Lock()
        self._session: Any = None
        self._opening: Any = None  # the async opening task
        self._patterns_lock: asyncio.Lock | None = None
        self._sent_patterns: list[dict[str, Any]] | None = None
        #: member -> the ids of its contexts that are open
        self._members: dict[HopGate, set[str]] = {}
        #: context id -> its members (a context two guards wrap has two)
        self._owners: dict[str, list[HopGate]] = {}
        #: the contexts joined: context -> its id
        self._context_ids: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()
        #: target id (a tab's main frame, an out-of-process frame, a worker) -> (context id, type)
        self._targets = _Bounded(_FRAMES_KEPT)
        #: a frame inside a page's process -> its context id
        self._frames = _Bounded(_FRAMES_KEPT)
        #: pages' DevTools sessions (one per page, for frame lookups; closed with their page)
        self._page_sessions: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()
        #: (member, context id) -> the context's close listener that makes the member leave
        self._close_listeners: dict[tuple[HopGate, str], Callable[..., Any]] = {}
        #: the latest paused documents: request id -> (URL, the id it is a redirect hop of)
        self._documents = _Bounded(_DOCUMENTS_KEPT)

    # -- membership -------------------------------------------------------------------------
    @property
    def members(self) -> list[HopGate]:
        """The gates whose contexts this session serves now."""
        with self._lock:
            return list(self._members)

    def contexts_of(self, member: HopGate) -> set[str]:
        """The ids of `member`'s open contexts."""
        with self._lock:
            return set(self._members.get(member, ()))

    def join(self, member: HopGate, context: Any) -> Steps:
        """Steps making this session serve `member` for `context` (its id learnt once; the session
        opened with the first member; the patterns widened as needed)."""
        context_id = yield from self._context_id(context)
        with self._lock:
            if self.closed:
                raise RuntimeError("the browser's interception was closed")
            known = self._members.setdefault(member, set())
            new = context_id not in known
            known.add(context_id)
            owners = self._owners.setdefault(context_id, [])
            if member not in owners:
                owners.append(member)
        if new:
            with contextlib.suppress(Exception):  # not an event emitter: left when the browser goes

                def closed(*_: Any) -> None:
                    self._close_listeners.pop((member, context_id), None)
                    self.leave(member, context_id)

                context.once("close", closed)
                self._close_listeners[(member, context_id)] = closed
        try:
            yield from self._open()
            yield Call(self._apply_patterns)
        except BaseException:
            self.leave(member, context_id, detach=False)
            raise

    def leave(self, member: HopGate, context_id: str, *, detach: bool = True) -> None:
        """`member` no longer serves the context `context_id` (it closed): the patterns narrow;
        the session is detached with the last member."""
        last, session = self._drop(member, context_id, detach=detach)
        if session is None:
            return
        if last and detach:
            self._run_later(session.detach)
        elif not last:
            self._run_later(self._apply_patterns)

    def _drop(self, member: HopGate, context_id: str, *, detach: bool) -> tuple[bool, Any]:
        """Take `member` off `context_id`: (whether it was the last member, the session)."""
        with self._lock:
            contexts = self._members.get(member)
            if contexts is not None:
                contexts.discard(context_id)
                if not contexts:
                    del self._members[member]
            owners = self._owners.get(context_id)
            if owners is not None and member in owners:
                owners.remove(member)
                if not owners:
                    del self._owners[context_id]
            last = not self._members
            session = self._session
            if last and detach:
                self.closed = True
                self._session = None
        return last, session

    def depart(self, member: HopGate, context: Any) -> Steps:
        """Steps taking `member` off `context` while both live (a guard released from it): its
        close listener removed, the patterns narrowed (or the session detached with the last
        member), the page sessions opened in `context` detached once no member serves it."""
        with self._lock:
            context_id = self._context_ids.get(context)
        if context_id is None:
            return None
        closed = self._close_listeners.pop((member, context_id), None)
        if closed is not None:
            with contextlib.suppress(Exception):
                context.remove_listener("close", closed)
        last, session = self._drop(member, context_id, detach=True)
        with self._lock:
            orphan = context_id not in self._owners
        if orphan:
            for page in list(context.pages):
                page_session = self._page_sessions.pop(page, None)
                if page_session is not None:
                    with contextlib.suppress(Exception):  # the page closed meanwhile
                        yield Call(page_session.detach)
        if session is None:
            return None
        with contextlib.suppress(Exception):  # the browser went away
            yield Call(session.detach if last else self._apply_patterns)
        return None

    def _run_later(self, fn: Callable[[], Any]) -> None:
        """Call `fn` from an event callback: as a task under the async API (errors dropped)."""
        try:
            if self.mode == "async":
                asyncio.get_running_loop().create_task(_quietly(fn))
            else:
                fn()
        except Exception:  # noqa: BLE001 - the browser or the loop went away
            pass

    def _context_id(self, context: Any) -> Steps:
        """`context`'s DevTools id (``browserContextId``), learnt once from one of its pages."""
        with self._lock:
            known = self._context_ids.get(context)
        if known is not None:
            return known
        pages = list(context.pages)
        if not pages:
            raise RuntimeError("a browser context with no page: its id cannot be learnt")
        page = pages[0]
        session = yield Call(context.new_cdp_session, (page,))
        info = yield Call(session.send, ("Target.getTargetInfo",))
        target = (info or {}).get("targetInfo") or {}
        context_id = str(target.get("browserContextId") or "")
        if not context_id:
            raise RuntimeError("the page's DevTools target names no browser context")
        with self._lock:
            self._context_ids[context] = context_id
            self._targets.put(str(target.get("targetId") or ""), (context_id, "page"))
            self._page_sessions[page] = session
        return context_id

    def _open(self) -> Steps:
        """The browser's session, opened once (under the async API, concurrent joiners await
        the same opening)."""
        if self._session is not None:
            return self._session
        if self.mode == "async":
            if self._opening is None or (self._opening.done() and self._opening.exception() is not None):
                self._opening = asyncio.ensure_future(self._open_async())
            session = yield Call(_awaited, (self._opening,))
            return session
        session = yield Call(self.browser.new_browser_cdp_session)
        session.on("Fetch.requestPaused", self._paused_sync)
        self._session = session
        return session

    async def _open_async(self) -> Any:
        session = await self.browser.new_browser_cdp_session()
        session.on("Fetch.requestPaused", self._paused_async)
        self._session = session
        return session

    def patterns(self) -> list[dict[str, Any]]:
        """The union of the members' patterns (in a stable order)."""
        seen: dict[str, dict[str, Any]] = {}
        for member in self.members:
            for pattern in member.patterns():
                seen.setdefault(repr(sorted(pattern.items())), pattern)
        return list(seen.values())

    def _apply_patterns(self) -> Any:
        """Send the members' patterns if they changed (serialised: the last one sent is the
        union of the members at that time)."""
        if self.mode == "sync":
            wanted = self.patterns()
            session = self._session
            if session is not None and wanted != self._sent_patterns:
                session.send("Fetch.enable", {"patterns": wanted})
                self._sent_patterns = wanted
            return None
        return self._apply_patterns_async()

    async def _apply_patterns_async(self) -> None:
        if self._patterns_lock is None:
            self._patterns_lock = asyncio.Lock()
        async with self._patterns_lock:
            wanted = self.patterns()
            session = self._session
            if session is not None and wanted != self._sent_patterns:
                await session.send("Fetch.enable", {"patterns": wanted})
                self._sent_patterns = wanted

    # -- paused requests ----------------------------------------------------------------------
    async def _paused_async(self, event: dict[str, Any]) -> None:
        await drive_async(self._paused(event))

    def _paused_sync(self, event: dict[str, Any]) -> None:
        drive_sync(self._paused(event))

    def _paused(self, event: dict[str, Any]) -> Steps:
        """Route one paused request: continued at once unless a member would act on it and owns
        its context (never raises; the request always goes on, one way or another)."""
        from pagewarden.interceptors._csp import REPORT_HOST

        session = self._session
        request_id = event.get("requestId")
        answer: Answer | None = None
        wanting: list[HopGate] = []
        try:
            kind = paused_kind(event, REPORT_HOST)
            if kind in (DOCUMENT_ANSWER, DOCUMENT_REQUEST):
                self._remember(event)
            wanting = [m for m in self.members if m.wants(kind, event)]
            if wanting:
                answer = yield from self._decide(kind, event, wanting)
        except Exception as exc:  # noqa: BLE001 - a gate would act on it, and it cannot be told: refused
            answer = _failed_closed(event, wanting, exc) if wanting else None
        answer = answer or _CONTINUE
        with contextlib.suppress(Exception):  # the request, the page or the browser went away meanwhile
            yield Call(session.send, (answer.method, {"requestId": request_id, **answer.params}))
        if answer.then is not None:
            with contextlib.suppress(Exception):
                answer.then()

    def _decide(self, kind: str, event: dict[str, Any], wanting: list[HopGate]) -> Steps:
        """The answer of the member that owns the paused request (None: it goes on)."""
        if kind == CSP_REPORT:
            return (yield from self._report(event, wanting))
        where = yield from self.locate(event, wanting, documents=kind in (DOCUMENT_ANSWER, DOCUMENT_REQUEST))
        if where.context_id is None:
            return None
        with self._lock:
            owners = [m for m in self._owners.get(where.context_id, ()) if m in wanting]
        for member in owners:
            answer = member.answer(kind, event, where, self.chain(event))
            if answer is not None:
                return answer
        return None

    def _report(self, event: dict[str, Any], wanting: list[HopGate]) -> Steps:
        """A report of a gate's policy: answered here (it never leaves), recorded by the gate its
        path names, unless the request comes from a context known to be another's."""
        where = yield from self.locate(event, wanting, documents=False)
        for member in wanting:
            if where.context_id is not None and where.context_id not in self.contexts_of(member):
                continue
            return member.answer(CSP_REPORT, event, where, ())
        return Answer("Fetch.fulfillRequest", {"responseCode": 204})

    def _remember(self, event: dict[str, Any]) -> None:
        request_id = str(event.get("requestId") or "")
        previous = event.get("redirectedRequestId")
        with self._lock:
            self._documents.put(request_id, (_url(event), str(previous) if previous else None))

    def chain(self, event: dict[str, Any]) -> tuple[str, ...]:
        """The URLs of the documents whose redirects led to the paused one (first one first)."""
        previous = event.get("redirectedRequestId")
        chain: list[str] = []
        with self._lock:
            while previous and previous in self._documents and len(chain) < 20:
                hop, previous = self._documents[previous]
                chain.append(hop)
        return tuple(reversed(chain))

    # -- whose is it --------------------------------------------------------------------------
    def locate(self, event: dict[str, Any], wanting: list[HopGate], *, documents: bool) -> Steps:
        """Where the paused request comes from (`Where`). A frame a target names (a tab's main
        frame, an out-of-process frame, a worker) is looked up once; a frame inside a page's
        process is searched for in the frame trees of the pages of the `wanting` members' contexts
        only (a frame found nowhere there is some other context's: nothing to do)."""
        frame = str(event.get("frameId") or "")
        session = self._session
        if not frame:  # a frame it cannot tell counts as a tab's (the only member's, if alone)
            return Where(self._sole_context(), True)
        with self._lock:
            target = self._targets.get(frame)
            in_page = self._frames.get(frame)
        if target is None and in_page is None:
            try:
                info = yield Call(session.send, ("Target.getTargetInfo", {"targetId": frame}))
                found = (info or {}).get("targetInfo") or {}
                target = (str(found.get("browserContextId") or ""), str(found.get("type") or "page"))
                with self._lock:
                    self._targets.put(frame, target)
            except Exception:  # noqa: BLE001 - no target of that id: a frame in some page's process
                target = None
        if target is not None:
            return Where(target[0] or None, target[1] not in ("iframe", "frame"))
        if in_page is None:
            in_page = self._sole_context()
        if in_page is None:
            in_page = yield from self._search(frame, wanting)
        return Where(in_page, False)

    def _sole_context(self) -> str | None:
        """The context id when the browser's every context is one member's one context (no
        lookup is needed then), else None."""
        with self._lock:
            if len(self._owners) != 1:
                return None
            (only,) = self._owners
        try:
            contexts = list(self.browser.contexts)
        except Exception:  # noqa: BLE001 - cannot list them: look the frame up
            return None
        ids = [self._context_ids.get(c) for c in contexts]
        return only if len(ids) == 1 and ids[0] == only else None

    def _search(self, frame: str, wanting: list[HopGate]) -> Steps:
        """The context of `frame`, a frame inside some page's process, among the pages of the
        `wanting` members (None: not theirs)."""
        with self._lock:
            theirs = set().union(*(self._members.get(m, set()) for m in wanting))
            contexts = [(c, i) for c, i in self._context_ids.items() if i in theirs]
        for context, context_id in contexts:
            for page in list(getattr(context, "pages", ())):
                try:
                    session = self._page_sessions.get(page)
                    if session is None:
                        session = yield Call(context.new_cdp_session, (page,))
                        self._page_sessions[page] = session
                    tree = yield Call(_bounded, (session.send, "Page.getFrameTree", self.mode))
                except Exception:  # noqa: BLE001 - a page closing, or not answering in time
                    continue
                ids = _frame_ids((tree or {}).get("frameTree", {}))
                if frame in ids:
                    with self._lock:
                        for each in ids:
                            self._frames.put(each, context_id)
                    return context_id
        return None


def _failed_closed(event: dict[str, Any], wanting: list[HopGate], exc: Exception) -> Answer:
    """The answer to a request some gate would act on when deciding it failed: refused (a
    document's request with ``204``, anything else with a network error), and logged by the gates
    that wanted it (not raised at an agent: whose it was is not known)."""
    for member in wanting:
        with contextlib.suppress(Exception):
            member.gate.guard.log.warning(
                "navigation_gate_request_refused_unjudged", error=f"{type(exc).__name__}: {exc}",
                url=_url(event)[:200], detail="a paused request could not be decided: refused",
            )  # fmt: skip
    if event.get("resourceType") == "Document" and event.get("responseStatusCode") is None:
        return Answer("Fetch.fulfillRequest", {"responseCode": 204})
    return Answer("Fetch.failRequest", {"errorReason": "BlockedByClient"})


def _bounded(send: Any, method: str, mode: str) -> Any:
    """`send(method)` within `FRAME_LOOKUP_TIMEOUT` under the async API (as is under the sync API)."""
    if mode == "async":
        return asyncio.wait_for(send(method), FRAME_LOOKUP_TIMEOUT)
    return send(method)


async def _awaited(future: Any) -> Any:
    return await future


async def _quietly(fn: Callable[[], Any]) -> None:
    with contextlib.suppress(Exception):
        value = fn()
        if asyncio.iscoroutine(value) or asyncio.isfuture(value):
            await value
