"""Downloads a response starts: judged before any byte reaches the browser.

A download link (`<a download>`) is judged by the guard before the click (PW-DOWNLOAD: a
human's approval). A server can make any navigation a download by its answer —
``Content-Disposition: attachment``, or a type the browser does not render (a zip, an
executable, ``application/octet-stream``) — on a plain link, a redirect, a script's
``location = …``, a script-made ``<a download>``, a frame. `DownloadGate` looks at the response
headers of every document request of a guarded session (navigations, frames, and requests
Chromium makes for a download link) and, unless a download action the guard allowed (and a
human approved) led to that site in the last moments, answers ``204 No Content`` instead
(the page stays where it was, nothing is saved) and reports a ``download`` refusal
(``PW-DOWNLOAD``, rule ``download``): a ``network`` event, and `ActionBlocked` on the agent's
next call naming the file's URL, type and name. The response body is never forwarded.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mitmproxy import http

from pagewarden.proxy._refusal import REFUSED_HEADER, Refusal
from pagewarden.rules import DOWNLOAD_POLICY, download_refusal, saved_file

__all__ = ["DOWNLOAD_POLICY", "DownloadGate", "download_of", "refuse_download"]


def refuse_download(flow: http.HTTPFlow, refusal: Refusal) -> None:
    """Answer `flow` with ``204 No Content`` (the browser saves nothing, the page stays)."""
    headers = {"Cache-Control": "no-store", REFUSED_HEADER: DOWNLOAD_POLICY}
    flow.response = http.Response.make(204, b"", headers)
    flow.metadata["pagewarden_refusal"] = refusal.to_dict()


def _document(request: http.Request) -> bool:
    """A request whose answer the browser may save: a navigation or frame (``Sec-Fetch-Mode:
    navigate``), or an ``<a download>`` fetch (Chromium sends those with ``Sec-Fetch-Dest:
    empty`` and mode ``navigate`` or ``no-cors``, no ``Origin``)."""
    mode = request.headers.get("sec-fetch-mode")
    if mode is None:  # plain http to a non-trustworthy origin: no Sec-Fetch-* at all
        accept = request.headers.get("accept", "")
        return request.headers.get("upgrade-insecure-requests") == "1" or "text/html" in accept
    return mode == "navigate"


def download_of(request: http.Request, response: http.Response) -> tuple[str, str] | None:
    """``(content type, file name)`` when `response` to `request` makes the browser save a
    file, else None (`saved_file`)."""
    if not _document(request):
        return None
    return saved_file(
        response.status_code,
        response.headers.get("content-disposition", ""),
        response.headers.get("content-type", ""),
        request.path,
        # the download manager's fetch of an ``<a download>``: saved whatever its type (a service
        # worker's fetch of a navigation is ``empty`` too, but sends the navigation's ``Accept``)
        download_link=request.headers.get("sec-fetch-dest") == "empty" and "accept" not in request.headers,
    )


class DownloadGate:
    """mitmproxy addon: downloads a response starts, for a guarded session, need a download
    action the guard allowed (see the module docstring).

    `session_for(flow)` is the flow's `NetworkSession` (None: not a guarded session's, left
    alone); `report(flow, refusal)` files the refusal with it."""

    def __init__(
        self,
        session_for: Callable[[http.HTTPFlow], Any],
        report: Callable[[http.HTTPFlow, Refusal], None],
    ) -> None:
        self.session_for = session_for
        self.report = report

    def responseheaders(self, flow: http.HTTPFlow) -> None:
        response = flow.response
        if response is None or flow.metadata.get("pagewarden_refusal"):
            return
        session = self.session_for(flow)
        if session is None:
            return
        found = download_of(flow.request, response)
        if found is None:
            return
        kind, name = found
        request = flow.request
        url = request.pretty_url  # the URL the browser asked for (a host map rewrote the address)
        if session.download_allowed(url, flow.metadata.get("pagewarden_tab")):
            return
        refusal = download_refusal(url, request.pretty_host, kind, name, request.method)
        if session.enforce:
            response.stream = False  # held in the proxy: `response` replaces it, whole
            flow.metadata["pagewarden_refusal"] = refusal.to_dict()
            flow.metadata["pagewarden_download_refused"] = True
        self.report(flow, refusal)

    def response(self, flow: http.HTTPFlow) -> None:
        if flow.metadata.pop("pagewarden_download_refused", False):
            refuse_download(flow, Refusal(**flow.metadata["pagewarden_refusal"]))
