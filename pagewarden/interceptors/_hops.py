"""Redirect hops: a document an allowed URL redirects to a refused host never loads.

Playwright's request routing (the navigation gate's `BrowserContext.route`) is not asked about
the hops of a redirect: an allowed URL (a same-site link, a form post, ``goto``, a popup, a
frame) answering ``301/302/303/307/308`` with a ``Location`` on a refused host would reach it.
Without a network layer the gate therefore also intercepts documents at the browser: one
browser-level DevTools session per browser (``Fetch.enable`` for ``Document`` requests at the
request stage, which Chromium pauses again for every hop, with ``redirectedRequestId`` set).
A document whose URL the gate's pattern cannot refuse is continued at once; one the egress
rules refuse, in a frame of a guarded context, is answered with ``204 No Content`` (the page or
frame stays where it was, as for the gate's other refusals) and recorded as the gate's refusal
(``action: "redirect"`` for a hop). Every hop of a chain is judged, whatever the status; the
first request of a document is judged too (the gate's route judges it as well, in Playwright's
driver: this one also covers a document Playwright does not route). A document of another
context of the same browser is continued.

The same session closes what Playwright's routes miss beyond documents
(`pagewarden.interceptors._csp`): with the gate's Content-Security-Policy (an allow-list), the
responses of ``Other`` requests (worker scripts: dedicated, shared and service workers; favicons)
are paused and continued with the policy added as a header (a worker's policy comes from its
script's response), with a ``report-uri`` on ``csp-report.pagewarden.invalid`` that is answered
here (or by the gate's route, for a dedicated worker) and recorded as the gate's refusal; and
requests of any kind to a host a ``domain_deny`` rule names (and the allow-list does not refuse
already) are paused at the request stage: a subresource's redirect hop to it, a shared or service
worker's request, is refused with ``net::ERR_BLOCKED_BY_CLIENT`` (``action: "request"``).

The cost: every document request of the browser (not subresources) waits for one DevTools
round trip to Python; so do worker scripts' and favicons' responses with an allow-list, and
requests whose URL names a denied host. Under the sync API a paused request continues only
while the agent's thread is inside a Playwright call (as for any Playwright route handler). A
persistent context (``launch_persistent_context``) has its browser object too; a context without
one gets no hop interception.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import weakref
from collections.abc import Generator
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from pagewarden._calls import Call, drive_async, drive_sync
from pagewarden._url import parse_url
from pagewarden.interceptors._csp import REPORT_HOST, deny_url_patterns
from pagewarden.rules import (
    INTERNAL_URL_GLOBS,
    NETWORK_POLICY,
    Refusal,
    download_refusal,
    internal_url,
    saved_file,
)

if TYPE_CHECKING:
    from pagewarden.interceptors._gate import NavigationGate

__all__ = ["HopGate", "drive_hops_async", "drive_hops_sync"]

_DOCUMENTS = {"urlPattern": "*", "resourceType": "Document", "requestStage": "Request"}
#: documents' answers: a download a response starts is judged before its body reaches the browser
_DOCUMENT_ANSWERS = {"urlPattern": "*", "resourceType": "Document", "requestStage": "Response"}
#: worker scripts (dedicated, shared, service) and favicons: their responses get the gate's policy
_WORKER_SCRIPTS = {"urlPattern": "*", "resourceType": "Other", "requestStage": "Response"}
_PENDING = object()
#: how many paused documents are remembered (to name a refused redirect hop's chain)
_DOCUMENTS_KEPT = 256
Steps = Generator[Call, Any, Any]


def drive_hops_sync(steps: Steps | None) -> Any:
    """Run `steps` under the sync API (each call made directly; the pipeline's driver)."""
    return None if steps is None else drive_sync(steps)


async def drive_hops_async(steps: Steps | None) -> Any:
    """Run `steps` under the async API (each awaitable awaited; the pipeline's driver)."""
    return None if steps is None else await drive_async(steps)


def saved_by(event: dict[str, Any]) -> tuple[str, str] | None:
    """``(content type, file name)`` when a paused document answer (`event`, at the response
    stage) makes the browser save a file, else None (`saved_file`). The download manager's fetch
    of an ``<a download>`` (saved whatever its type) is a document request with no network id
    and none of a navigation's headers."""
    if event.get("responseErrorReason"):
        return None
    headers: dict[str, list[str]] = {}
    for header in event.get("responseHeaders") or ():
        if isinstance(header, dict):
            headers.setdefault(str(header.get("name", "")).lower(), []).append(str(header.get("value", "")))
    dispositions = headers.get("content-disposition", [])
    disposition = next((d for d in dispositions if d.strip().lower().startswith("attachment")), None)
    request = event.get("request") or {}
    sent = {str(k).lower() for k in (request.get("headers") or {})}
    link = not event.get("networkId") and "upgrade-insecure-requests" not in sent
    try:
        status = int(event.get("responseStatusCode") or 0)
    except (TypeError, ValueError):
        status = 0
    return saved_file(
        status,
        disposition if disposition is not None else (dispositions[0] if dispositions else ""),
        (headers.get("content-type") or [""])[0],
        parse_url(str(request.get("url") or "")).path,
        download_link=link,
    )


def _frame_ids(tree: dict[str, Any]) -> set[str]:
    ids = {str(tree.get("frame", {}).get("id", ""))}
    for child in tree.get("childFrames", ()) or ():
        ids |= _frame_ids(child)
    return ids


class HopGate:
    """The redirect-hop interception of one navigation gate (see the module docstring)."""

    def __init__(self, gate: NavigationGate) -> None:
        self.gate = gate
        self._lock = threading.Lock()
        #: browser -> its DevTools session (or a marker while it is being opened)
        self._sessions: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()
        #: guarded contexts, per browser
        self._contexts: weakref.WeakKeyDictionary[Any, weakref.WeakSet[Any]] = weakref.WeakKeyDictionary()
        #: the latest paused documents: DevTools request id -> (URL, the id it is a redirect hop of)
        self._documents: dict[str, tuple[str, str | None]] = {}

    # -- installing -------------------------------------------------------------------------
    def patterns(self) -> list[dict[str, str]]:
        """What the browser's session pauses: every document request; with the gate's policy, the
        responses of worker scripts (to give them the policy) and the policy's violation reports;
        requests of any kind to a denied host the policy does not cover (each redirect hop, and
        the requests of shared and service workers, which Playwright's routes do not see)."""
        gate = self.gate
        out: list[dict[str, str]] = [_DOCUMENTS] if gate.pattern is not None else []
        out.append(_DOCUMENT_ANSWERS)
        if gate.csp:
            out.append(_WORKER_SCRIPTS)
            out.append({"urlPattern": f"*://{REPORT_HOST}/*", "resourceType": "CSPViolationReport"})
        for pattern in deny_url_patterns(gate.rules, covered=bool(gate.csp)):
            out.append({"urlPattern": pattern, "requestStage": "Request"})
        if gate.rules.addresses is not None:  # internal addresses: requests of any kind, any frame
            out.extend({"urlPattern": glob, "requestStage": "Request"} for glob in INTERNAL_URL_GLOBS)
        return out

    def install(self, context: Any, mode: str) -> Steps:
        """Steps that make `context`'s browser intercept redirect hops (once per browser)."""
        try:
            browser = context.browser
        except Exception:  # noqa: BLE001 - not a Playwright context
            return None
        if browser is None or not hasattr(browser, "new_browser_cdp_session"):
            return None  # a persistent context: no browser-level session to open
        with self._lock:
            self._contexts.setdefault(browser, weakref.WeakSet()).add(context)
            if browser in self._sessions:
                return None
            self._sessions[browser] = _PENDING
        with contextlib.suppress(Exception):
            context.once("close", lambda *_: self._closed(context, browser, mode))
        try:
            session = yield Call(browser.new_browser_cdp_session)
            make = self._handler_async if mode == "async" else self._handler_sync
            session.on("Fetch.requestPaused", make(session, browser))
            yield Call(session.send, ("Fetch.enable", {"patterns": self.patterns()}))
        except BaseException:
            with self._lock:
                self._sessions.pop(browser, None)
            raise
        with self._lock:
            self._sessions[browser] = session
        return None

    def _closed(self, context: Any, browser: Any, mode: str) -> None:
        """`context` closed: the browser's session is closed with its last guarded context."""
        with self._lock:
            contexts = self._contexts.get(browser)
            if contexts is not None:
                contexts.discard(context)
            if contexts:
                return
            session = self._sessions.pop(browser, None)
        if session is None or session is _PENDING:
            return
        with contextlib.suppress(Exception):
            if mode == "async":
                asyncio.get_running_loop().create_task(_quietly(session.detach()))
            else:
                session.detach()

    # -- judging ----------------------------------------------------------------------------
    def _handler_async(self, session: Any, browser: Any) -> Any:
        async def paused(event: dict[str, Any]) -> None:
            await drive_hops_async(self._decide(session, browser, event))

        return paused

    def _handler_sync(self, session: Any, browser: Any) -> Any:
        def paused(event: dict[str, Any]) -> None:
            drive_hops_sync(self._decide(session, browser, event))

        return paused

    def _decide(self, session: Any, browser: Any, event: dict[str, Any]) -> Steps:
        """Continue the paused request, or answer a refused one: a document with 204, any other
        request with a network error (never raises)."""
        request_id = event.get("requestId")
        if event.get("responseStatusCode") is not None or event.get("responseErrorReason"):
            if event.get("resourceType") == "Document":
                yield from self._answer(session, browser, event)
            else:
                yield from self._response(session, browser, event)
            return
        url = str((event.get("request") or {}).get("url") or "")
        if event.get("resourceType") == "CSPViolationReport" and parse_url(url).host == REPORT_HOST:
            yield from self._report(session, event)
            return
        refusal = self.judge(event)
        via = self._hop_of(event)
        if refusal is not None and via:
            refusal = replace(refusal, via=via)
        if refusal is not None:
            try:
                guarded = yield from self._guarded_frame(session, browser, str(event.get("frameId") or ""))
            except Exception:  # noqa: BLE001 - cannot tell whose frame: it is judged as ours
                guarded = True
            if not guarded:
                refusal = None
            elif event.get("resourceType") == "Document":
                top = yield from self._top_frame(session, str(event.get("frameId") or ""))
                if not top:  # a frame's document: a ``subresources`` host may serve it
                    refusal = self.judge(event, frame=True)
                    refusal = None if refusal is None else replace(refusal, subframe=True)
        try:
            if refusal is not None and self.gate.enforce:
                if event.get("resourceType") == "Document":
                    answer = {"requestId": request_id, "responseCode": 204}
                    yield Call(session.send, ("Fetch.fulfillRequest", answer))
                else:
                    failed = {"requestId": request_id, "errorReason": "BlockedByClient"}
                    yield Call(session.send, ("Fetch.failRequest", failed))
            else:
                yield Call(session.send, ("Fetch.continueRequest", {"requestId": request_id}))
        except Exception:  # noqa: BLE001 - the request or the browser went away meanwhile
            pass
        if refusal is not None:
            self.gate.refused(refusal)

    def _hop_of(self, event: dict[str, Any]) -> tuple[str, ...]:
        """Remember a paused document; the URLs whose redirects led to it (first one first)."""
        if event.get("resourceType") != "Document":
            return ()
        request_id = str(event.get("requestId") or "")
        previous = event.get("redirectedRequestId")
        url = str((event.get("request") or {}).get("url") or "")
        with self._lock:
            if len(self._documents) >= _DOCUMENTS_KEPT:
                self._documents.pop(next(iter(self._documents)))
            self._documents[request_id] = (url, str(previous) if previous else None)
            chain: list[str] = []
            while previous and previous in self._documents and len(chain) < 20:
                hop, previous = self._documents[previous]
                chain.append(hop)
        return tuple(reversed(chain))

    def _answer(self, session: Any, browser: Any, event: dict[str, Any]) -> Steps:
        """A document's answer: a download no allowed download action led to, in a guarded
        context, is aborted before its body reaches the browser (the page stays, nothing is
        saved) and recorded as the gate's ``download`` refusal; anything else goes on."""
        request_id = event.get("requestId")
        refusal = None
        found = saved_by(event)
        if found is not None:
            request = event.get("request") or {}
            url = str(request.get("url") or "")
            if not self.gate.downloads.allowed(url):
                method = str(request.get("method") or "GET")
                refusal = download_refusal(url, parse_url(url).host, *found, method)
                frame = str(event.get("frameId") or "")
                try:
                    guarded = yield from self._guarded_frame(session, browser, frame)
                except Exception:  # noqa: BLE001 - cannot tell whose frame: it is judged as ours
                    guarded = True
                if not guarded:
                    refusal = None
        try:
            if refusal is not None and self.gate.enforce:
                # aborted, not answered 204: Chromium may have taken a non-rendered type for a
                # download already, and a 204 then starts one (cancelled, but an event)
                failed = {"requestId": request_id, "errorReason": "Aborted"}
                yield Call(session.send, ("Fetch.failRequest", failed))
            else:
                yield Call(session.send, ("Fetch.continueRequest", {"requestId": request_id}))
        except Exception:  # noqa: BLE001 - the request or the browser went away meanwhile
            pass
        if refusal is not None:
            self.gate.refused(refusal)

    def _response(self, session: Any, browser: Any, event: dict[str, Any]) -> Steps:
        """A worker script's (or favicon's) response: in a guarded context it gets the gate's
        policy, with a ``report-uri`` this session answers (a worker's policy comes from its
        script's response, not from the document that started it)."""
        request_id = event.get("requestId")
        policies = self.gate.csp
        try:
            guarded = bool(policies) and not event.get("responseErrorReason")
            if guarded:
                guarded = yield from self._guarded_frame(session, browser, str(event.get("frameId") or ""))
        except Exception:  # noqa: BLE001 - cannot tell whose frame: it is judged as ours
            guarded = True
        try:
            if guarded:
                report = f"; report-uri http://{REPORT_HOST}/{self.gate.csp_binding}"
                headers = [h for h in event.get("responseHeaders") or () if isinstance(h, dict)]
                headers += [{"name": "Content-Security-Policy", "value": p + report} for p in policies]
                answer = {
                    "requestId": request_id, "responseCode": int(event.get("responseStatusCode") or 200),
                    "responseHeaders": headers,
                }  # fmt: skip
                if event.get("responseStatusText"):
                    answer["responsePhrase"] = str(event["responseStatusText"])
                yield Call(session.send, ("Fetch.continueResponse", answer))
            else:
                yield Call(session.send, ("Fetch.continueRequest", {"requestId": request_id}))
        except Exception:  # noqa: BLE001 - the request or the browser went away meanwhile
            pass

    def _report(self, session: Any, event: dict[str, Any]) -> Steps:
        """A worker's report that the gate's policy refused a request: answered here (it never
        leaves) and recorded as the gate's refusal."""
        with contextlib.suppress(Exception):  # the browser went away meanwhile
            answer = {"requestId": event.get("requestId"), "responseCode": 204}
            yield Call(session.send, ("Fetch.fulfillRequest", answer))
        self.gate.report(str((event.get("request") or {}).get("postData") or ""))

    def judge(self, event: dict[str, Any], *, frame: bool = False) -> Refusal | None:
        """The refusal of a paused request (None: allowed). A document (a redirect hop, or any
        other document: those are the route's to judge first; this catches a document
        Playwright's routing does not see) against the URL and host rules; any other request (a
        subresource's redirect hop, a worker's request) on a denied host against the host rules.
        `frame`: the document is a frame's inside a page (see `EgressRules.judge`)."""
        request = event.get("request") or {}
        url = str(request.get("url") or "")
        gate = self.gate
        method = str(request.get("method") or "GET")
        document = event.get("resourceType") == "Document"
        if document and (gate.pattern is None or not gate.pattern.search(url)) and not (
            gate.rules.addresses is not None and internal_url(url)
        ):
            return None  # a URL no rule can refuse (the pattern is a superset of the refusals)
        hop = bool(event.get("redirectedRequestId"))
        action = ("redirect" if hop else "navigation") if document else "request"
        try:
            return gate.rules.judge(url, navigation=document, action=action, method=method, frame=frame)
        except Exception as exc:  # noqa: BLE001 - cannot be judged: refused
            return Refusal(
                action, url, parse_url(url).host, "gate_error", NETWORK_POLICY,
                f"the {action} could not be judged ({type(exc).__name__})", method=method,
            )  # fmt: skip

    @staticmethod
    def _top_frame(session: Any, frame_id: str) -> Steps:
        """Whether `frame_id` is a tab's top document (a page target: its main frame's id is the
        target's), not a frame inside a page; a frame it cannot tell counts as a tab's."""
        if not frame_id:
            return True
        try:
            info = yield Call(session.send, ("Target.getTargetInfo", {"targetId": frame_id}))
        except Exception:  # noqa: BLE001 - no target of that id: a frame in its page's process
            return False
        kind = str((info or {}).get("targetInfo", {}).get("type", "page"))
        return kind not in ("iframe", "frame")

    def _guarded_frame(self, session: Any, browser: Any, frame_id: str) -> Steps:
        """Whether the frame `frame_id` of `browser` belongs to a guarded context."""
        with self._lock:
            guarded = list(self._contexts.get(browser, ()))
        if not guarded:
            return False
        try:
            if all(c in guarded for c in browser.contexts):
                return True  # every context of the browser is guarded
        except Exception:  # noqa: BLE001 - cannot list them: look the frame up
            pass
        try:  # a page's main frame or an out-of-process frame: a target naming its context
            info = yield Call(session.send, ("Target.getTargetInfo", {"targetId": frame_id}))
        except Exception:  # noqa: BLE001 - not a target: a frame inside some page's process
            info = None
        for context in guarded:
            for page in list(context.pages):
                cdp = yield Call(context.new_cdp_session, (page,))
                try:
                    if info is not None:
                        mine = yield Call(cdp.send, ("Target.getTargetInfo",))
                        wanted = info.get("targetInfo", {}).get("browserContextId")
                        if mine.get("targetInfo", {}).get("browserContextId") == wanted:
                            return True
                        break  # one page tells the context's id
                    tree = yield Call(cdp.send, ("Page.getFrameTree",))
                    if frame_id in _frame_ids(tree.get("frameTree", {})):
                        return True
                finally:
                    with contextlib.suppress(Exception):
                        yield Call(cdp.detach)
        return False


async def _quietly(awaitable: Any) -> None:
    with contextlib.suppress(Exception):
        await awaitable
