"""What a navigation gate does with the requests its browser's DevTools session pauses.

Playwright's request routing (the navigation gate's `BrowserContext.route`) is not asked about
the hops of a redirect: an allowed URL (a same-site link, a form post, ``goto``, a popup, a
frame) answering ``301/302/303/307/308`` with a ``Location`` on a refused host would reach it.
Without a network layer the gate therefore also pauses requests at the browser, through the one
browser-level DevTools session every gate on that browser shares
(`pagewarden.interceptors._interception`: it routes each paused request to the gate of the
browser context it belongs to, and continues at once what no gate would act on). `HopGate` is
one gate's side of it: what the gate asks the session to pause (`HopGate.patterns`), whether it
would act on a paused request if it were its own (`HopGate.wants`, no I/O), and how it answers
one of its own (`HopGate.answer`). One handler per kind of request, each changeable on its own:

* **Documents' requests** (``Document`` at the request stage, when the gate's policies can refuse
  a URL; Chromium pauses every redirect hop again, with ``redirectedRequestId`` set): one the
  egress rules refuse, in a frame of a guarded context, is answered with ``204 No Content`` (the
  page or frame stays where it was, as for the gate's other refusals) and recorded as the gate's
  refusal (``action: "redirect"`` for a hop, with the chain of URLs that led there). Every hop of
  a chain is judged, whatever the status; the first request of a document is judged too (the
  gate's route judges it as well, in Playwright's driver: this also covers a document Playwright
  does not route — an ``<a download>``'s fetch, a URL an agent's route handler rewrote, a context
  whose routes tooling removed); a frame's document may go to a ``subresources`` host.
* **Documents' answers** (``Document`` at the response stage): a **download** a response starts
  (`pagewarden.rules._downloads`) that no allowed download action led to is aborted before its
  body reaches the browser (``download`` refusal).
* **Worker scripts** (``Other`` at the response stage; with the gate's Content-Security-Policy,
  `pagewarden.interceptors._csp`): the responses of dedicated, shared and service workers'
  scripts (and favicons) get the policy as a header, with a ``report-uri`` on
  ``csp-report.pagewarden.invalid/<the gate's binding>``.
* **Reports** of that policy (``CSPViolationReport`` to that host) are answered here (they never
  leave) and recorded as the gate the path names' refusal.
* **Requests to denied hosts** (any kind, at the request stage, on a ``domain_deny`` host the
  allow-list does not refuse already): a subresource's redirect hop there, a shared or service
  worker's request, is refused with ``net::ERR_BLOCKED_BY_CLIENT`` (``action: "request"``).

The cost: every document of the browser (not subresources) waits for two DevTools round trips to
Python (its request, its answer), whatever the number of gates; so do worker scripts' and
favicons' responses with an allow-list, and requests whose URL names a denied host. Under the
sync API a paused request continues only while the agent's thread is inside a Playwright call
(as for any Playwright route handler). A persistent context (``launch_persistent_context``) has
its browser object too; a context without one gets no hop interception.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from pagewarden._calls import Call, drive_async, drive_sync
from pagewarden._url import parse_url
from pagewarden.interceptors._csp import REPORT_HOST, deny_url_patterns
from pagewarden.interceptors._interception import (
    CSP_REPORT,
    DOCUMENT_ANSWER,
    DOCUMENT_REQUEST,
    REQUEST,
    WORKER_SCRIPT,
    Answer,
    Where,
    existing_interception,
    interception_for,
)
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

__all__ = ["HopGate", "drive_hops_async", "drive_hops_sync", "saved_by"]

#: documents' requests: each one (Chromium pauses every redirect hop again, with
#: ``redirectedRequestId`` set), judged before it leaves
_DOCUMENTS = {"urlPattern": "*", "resourceType": "Document", "requestStage": "Request"}
#: documents' answers: a download a response starts is judged before its body reaches the browser
_DOCUMENT_ANSWERS = {"urlPattern": "*", "resourceType": "Document", "requestStage": "Response"}
#: worker scripts (dedicated, shared, service) and favicons: their responses get the gate's policy
_WORKER_SCRIPTS = {"urlPattern": "*", "resourceType": "Other", "requestStage": "Response"}
#: the reports of the gate's policy (any gate's: the path names the gate)
_REPORTS = {"urlPattern": f"*://{REPORT_HOST}/*", "resourceType": "CSPViolationReport"}
Steps = Generator[Call, Any, Any]


def drive_hops_sync(steps: Steps | None) -> Any:
    """Run `steps` under the sync API (each call made directly; the pipeline's driver)."""
    return None if steps is None else drive_sync(steps)


async def drive_hops_async(steps: Steps | None) -> Any:
    """Run `steps` under the async API (each awaitable awaited; the pipeline's driver)."""
    return None if steps is None else await drive_async(steps)


def _headers(event: dict[str, Any]) -> dict[str, list[str]]:
    headers: dict[str, list[str]] = {}
    for header in event.get("responseHeaders") or ():
        if isinstance(header, dict):
            headers.setdefault(str(header.get("name", "")).lower(), []).append(str(header.get("value", "")))
    return headers


def _status(event: dict[str, Any]) -> int:
    try:
        return int(event.get("responseStatusCode") or 0)
    except (TypeError, ValueError):
        return 0


def saved_by(event: dict[str, Any]) -> tuple[str, str] | None:
    """``(content type, file name)`` when a paused document answer (`event`, at the response
    stage) makes the browser save a file, else None (`saved_file`). The download manager's fetch
    of an ``<a download>`` (saved whatever its type) is a document request with no network id
    and none of a navigation's headers."""
    if event.get("responseErrorReason"):
        return None
    headers = _headers(event)
    dispositions = headers.get("content-disposition", [])
    disposition = next((d for d in dispositions if d.strip().lower().startswith("attachment")), None)
    request = event.get("request") or {}
    sent = {str(k).lower() for k in (request.get("headers") or {})}
    link = not event.get("networkId") and "upgrade-insecure-requests" not in sent
    return saved_file(
        _status(event),
        disposition if disposition is not None else (dispositions[0] if dispositions else ""),
        (headers.get("content-type") or [""])[0],
        parse_url(str(request.get("url") or "")).path,
        download_link=link,
    )


class HopGate:
    """One navigation gate's side of its browser's shared DevTools session (module docstring)."""

    def __init__(self, gate: NavigationGate) -> None:
        self.gate = gate

    # -- installing -------------------------------------------------------------------------
    def patterns(self) -> list[dict[str, str]]:
        """What this gate asks the browser's session to pause: every document's request (when its
        policies can refuse a URL) and answer; with the gate's policy, the responses of worker
        scripts (to give them the policy) and the policy's violation reports; requests of any
        kind to a denied host the policy does not cover (each redirect hop, and the requests of
        shared and service workers, which Playwright's routes do not see)."""
        gate = self.gate
        out: list[dict[str, str]] = [_DOCUMENTS] if gate.pattern is not None else []
        out.append(_DOCUMENT_ANSWERS)
        if gate.csp:
            out.append(_WORKER_SCRIPTS)
            out.append(_REPORTS)
        for pattern in deny_url_patterns(gate.rules, covered=bool(gate.csp)):
            out.append({"urlPattern": pattern, "requestStage": "Request"})
        if gate.rules.addresses is not None:  # internal addresses: requests of any kind, any frame
            out.extend({"urlPattern": glob, "requestStage": "Request"} for glob in INTERNAL_URL_GLOBS)
        return out

    def install(self, context: Any, mode: str) -> Steps:
        """Steps that make `context`'s browser pause what this gate judges (its shared session,
        opened with the first gate on that browser)."""
        try:
            browser = context.browser
        except Exception:  # noqa: BLE001 - not a Playwright context
            return None
        if browser is None or not hasattr(browser, "new_browser_cdp_session"):
            return None  # a persistent context: no browser-level session to open
        yield from interception_for(browser, mode).join(self, context)
        return None

    def release(self, context: Any) -> Steps:
        """Steps that take `context` off this gate's membership of its browser's session (the
        patterns narrow, the session is detached with its last member)."""
        try:
            browser = context.browser
        except Exception:  # noqa: BLE001 - not a Playwright context
            return None
        if browser is None or not hasattr(browser, "new_browser_cdp_session"):
            return None
        interception = existing_interception(browser)
        if interception is not None:
            yield from interception.depart(self, context)
        return None

    # -- would it act, were it its own (no I/O) ------------------------------------------------
    def wants(self, kind: str, event: dict[str, Any]) -> bool:
        """Whether this gate would do anything but let the paused request go on, if it came from
        one of its contexts (the session then looks up whose it is)."""
        if kind == DOCUMENT_ANSWER:
            return self._download(event) is not None
        if kind == WORKER_SCRIPT:
            return bool(self.gate.csp) and not event.get("responseErrorReason")
        if kind == CSP_REPORT:
            path = parse_url(str((event.get("request") or {}).get("url") or "")).path
            return path.strip("/") == self.gate.csp_binding
        if kind in (REQUEST, DOCUMENT_REQUEST):
            return self.judge(event) is not None
        return False

    # -- answering its own ----------------------------------------------------------------------
    def answer(self, kind: str, event: dict[str, Any], where: Where, chain: tuple[str, ...]) -> Answer | None:
        """How this gate answers a paused request of one of its contexts (None: it goes on)."""
        if kind == DOCUMENT_ANSWER:
            return self._document_answer(event)
        if kind == WORKER_SCRIPT:
            return self._worker_script(event)
        if kind == CSP_REPORT:
            return self._report(event)
        if kind in (REQUEST, DOCUMENT_REQUEST):
            return self._request(event, where, chain)
        return None

    def _refused(self, refusal: Refusal, method: str, params: dict[str, Any]) -> Answer:
        """`params` sent if the gate enforces (else the request goes on); the refusal recorded."""
        gate = self.gate
        if not gate.enforce:
            method, params = "Fetch.continueRequest", {}
        return Answer(method, params, lambda: gate.refused(refusal))

    def _document_answer(self, event: dict[str, Any]) -> Answer | None:
        """A download no allowed download action led to is aborted before its body reaches the
        browser (the page stays, nothing is saved); anything else goes on."""
        refusal = self._download(event)
        if refusal is None:
            return None
        # aborted, not answered 204: Chromium may have taken a non-rendered type for a download
        # already, and a 204 then starts one (cancelled, but an event)
        return self._refused(refusal, "Fetch.failRequest", {"errorReason": "Aborted"})

    def _download(self, event: dict[str, Any]) -> Refusal | None:
        """The refusal of a download a document's answer starts that no allowed action led to."""
        found = saved_by(event)
        if found is None:
            return None
        request = event.get("request") or {}
        url = str(request.get("url") or "")
        if self.gate.downloads.allowed(url):
            return None
        method = str(request.get("method") or "GET")
        return download_refusal(url, parse_url(url).host, *found, method)

    def _worker_script(self, event: dict[str, Any]) -> Answer | None:
        """A worker script's (or favicon's) response gets the gate's policy, with a ``report-uri``
        the session answers (a worker's policy comes from its script's response, not from the
        document that started it)."""
        policies = self.gate.csp
        if not policies or event.get("responseErrorReason"):
            return None
        report = f"; report-uri http://{REPORT_HOST}/{self.gate.csp_binding}"
        headers = [h for h in event.get("responseHeaders") or () if isinstance(h, dict)]
        headers += [{"name": "Content-Security-Policy", "value": p + report} for p in policies]
        params: dict[str, Any] = {"responseCode": _status(event) or 200, "responseHeaders": headers}
        if event.get("responseStatusText"):
            params["responsePhrase"] = str(event["responseStatusText"])
        return Answer("Fetch.continueResponse", params)

    def _report(self, event: dict[str, Any]) -> Answer:
        """A worker's report that the gate's policy refused a request: answered here (it never
        leaves) and recorded as the gate's refusal."""
        body = str((event.get("request") or {}).get("postData") or "")
        gate = self.gate
        return Answer("Fetch.fulfillRequest", {"responseCode": 204}, lambda: gate.report(body))

    def _request(self, event: dict[str, Any], where: Where, chain: tuple[str, ...]) -> Answer | None:
        """A document the egress rules refuse (its first request, or a redirect hop) is answered
        ``204 No Content`` (the page or frame stays where it was, as for the gate's other
        refusals; a frame's document may go to a ``subresources`` host); any other request to a
        denied host fails as a content blocker's would."""
        document = event.get("resourceType") == "Document"
        refusal = self.judge(event, frame=document and not where.top)
        if refusal is None:
            return None
        if document:
            refusal = replace(refusal, via=chain, subframe=not where.top)
            return self._refused(refusal, "Fetch.fulfillRequest", {"responseCode": 204})
        return self._refused(refusal, "Fetch.failRequest", {"errorReason": "BlockedByClient"})

    def judge(self, event: dict[str, Any], *, frame: bool = False) -> Refusal | None:
        """The refusal of a paused request (None: allowed): a document against the URL and host
        rules, any other request (a subresource's redirect hop, a worker's request) on a denied
        host against the host rules. `frame`: the document is a frame's inside a page (see
        `EgressRules.judge`)."""
        request = event.get("request") or {}
        url = str(request.get("url") or "")
        document = event.get("resourceType") == "Document"
        internal = self.gate.rules.addresses is not None and internal_url(url)
        if document and (self.gate.pattern is None or not self.gate.pattern.search(url)) and not internal:
            return None
        hop = bool(event.get("redirectedRequestId"))
        action = ("redirect" if hop else "navigation") if document else "request"
        method = str(request.get("method") or "GET")
        return self._judged(url, action, method, navigation=document, frame=frame)

    def _judged(self, url: str, action: str, method: str, *, navigation: bool, frame: bool) -> Refusal | None:
        rules = self.gate.rules
        try:
            return rules.judge(url, navigation=navigation, action=action, method=method, frame=frame)
        except Exception as exc:  # noqa: BLE001 - cannot be judged: refused
            return Refusal(
                action, url, parse_url(url).host, "gate_error", NETWORK_POLICY,
                f"the {action} could not be judged ({type(exc).__name__})", method=method,
            )  # fmt: skip
