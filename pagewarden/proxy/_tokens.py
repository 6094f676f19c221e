"""Session tokens: which guarded session (browser context) a request comes from.

Two signs, the first one decides:

* **The port.** A session's browser context goes through a listen port of its own (the
  context's proxy setting, `NetworkSession.proxy_url`; the browser-wide ``--proxy-server`` is the
  proxy's main port). Chromium sends every request of that context there — the page's, its
  frames', CORS preflights, keepalive requests and beacons sent while it unloads, its
  dedicated, shared and service workers' requests and their scripts, downloads — while its
  browser-wide traffic (updates, accounts, safe browsing) goes to the main port. The page can
  neither choose nor forge the port its requests arrive on. A request on the session's port
  without the token is the session's when a document or worker made it (`sent_by_a_page`);
  what Chromium itself sends for the context there (autofill queries) names no one and is
  refused like its other traffic.
* **The token.** The browser context also gets an extra ``Accept-Language`` entry,
  ``x-pw-<token>;q=0.01`` (and a tab id, ``x-pw-<token>-t2``, set on each page the guard acts in:
  the per-tab grants read it). It stays the only sign where the context shares the proxy's
  main port (a persistent profile, whose own traffic goes through the same proxy setting; a
  context set up by hand with `accept_language`).

The token's entry: the browser context gets an extra ``Accept-Language`` entry, ``x-pw-<token>;q=0.01``, set
with Playwright's ``context.set_extra_http_headers``. ``Accept-Language`` is a
CORS-safelisted header (its value uses only safelisted characters), so adding it triggers no
preflight, and Chromium sends it on every request of the context: documents, frames,
subresources, fetch and XHR, beacons, pings, prefetches, websocket handshakes and pages the
page opens. `SessionTokens` reads the token, removes it before the request goes upstream
(the server sees the plain language list), and, when the proxy requires sessions, refuses
requests that come on no session's port and carry no token — the browser's own
background traffic (updates, accounts, safe browsing) — and requests a token cannot reach
(CORS preflights, workers' requests, keepalive during unload) where the port does not say.
"""

from __future__ import annotations

import re
import secrets as _random
from collections.abc import Callable

from mitmproxy import http

from pagewarden.proxy._egress import NETWORK_POLICY, refuse_flow
from pagewarden.proxy._refusal import Refusal
from pagewarden.proxy._server import listen_port_of

__all__ = ["SessionTokens", "accept_language", "new_token", "sent_by_a_page", "split_entry", "split_token"]

_ENTRY = re.compile(r"^x-pw-([0-9a-f]{16,64})(?:-(t[0-9]{1,6}))?\s*;\s*q=0\.01$", re.IGNORECASE)


def new_token() -> str:
    """A fresh random session token (hex)."""
    return _random.token_hex(12)


def accept_language(token: str, locale: str | None = None, tab: str | None = None) -> str:
    """The ``Accept-Language`` value carrying `token` (and the guard's id of one tab, set on
    that page only: ``x-pw-<token>-t2``) after the locale's own languages."""
    base = locale or "en-US"
    languages = f"{base},{base.split('-')[0]};q=0.9" if "-" in base else base
    suffix = f"-{tab}" if tab else ""
    return f"{languages},x-pw-{token}{suffix};q=0.01"


def split_token(value: str) -> tuple[str | None, str]:
    """``(token or None, the value without it)``."""
    token, _, rest = split_entry(value)
    return token, rest


def split_entry(value: str) -> tuple[str | None, str | None, str]:
    """``(token or None, tab id or None, the value without the entry)``."""
    token = tab = None
    kept = []
    for entry in (value or "").split(","):
        match = _ENTRY.match(entry.strip())
        if match is not None:
            token = match.group(1).lower()
            tab = match.group(2).lower() if match.group(2) else None
        elif entry.strip():
            kept.append(entry.strip())
    return token, tab, ",".join(kept) if token is not None else value


def sent_by_a_page(request: http.Request) -> bool:
    """Whether a request without the session token was made by a document or a worker (a CORS
    preflight, a keepalive fetch or a beacon while a page unloads, a worker's script or its
    requests), not by Chromium itself for the context (autofill queries, which also arrive on
    the context's port): those name who made them — an ``Origin``, a ``Referer``, or a
    ``Sec-Fetch-Site`` other than ``none`` — and Chromium's own name nobody. A page that strips
    all three (a worker's ``GET`` with ``referrerPolicy: "no-referrer"`` to a plain-HTTP host,
    which gets no ``Sec-Fetch-*``) is refused as ``no_session``, never let through unjudged."""
    headers = request.headers
    site = headers.get("sec-fetch-site")
    return "origin" in headers or "referer" in headers or (site is not None and site.lower() != "none")


def saves_a_file(request: http.Request) -> bool:
    """Whether `request` is Chromium's download manager fetching a download a page started
    (``<a download>``): it carries no extra headers of the context (no session token), a
    ``Referer``, and no ``Accept``."""
    headers = request.headers
    return request.method == "GET" and "referer" in headers and "accept" not in headers


class SessionTokens:
    """mitmproxy addon (first in the chain): the session token of each request into
    ``flow.metadata["pagewarden_session"]``, removed from the request; with the option
    ``pagewarden_require_session``, a request without a known token is refused.

    A request that came in on a session's own port (`port_owner(port)` names its token)
    belongs to that session whatever it carries; its tab id counts only with that session's
    token. A download Chromium's download manager fetches carries no token (`saves_a_file`): it
    belongs to the session `download_owner(url)` names (one a download action the guard
    allowed led there), else it is refused as a download (``204``: nothing is saved)."""

    def __init__(
        self,
        known: Callable[[str], bool] | None = None,
        report: Callable[[Refusal], None] | None = None,
        download_owner: Callable[[str], str | None] | None = None,
        port_owner: Callable[[int], str | None] | None = None,
    ) -> None:
        self.known = known or (lambda token: True)
        self.report = report
        self.download_owner = download_owner
        self.port_owner = port_owner
        self.require = False

    def load(self, loader) -> None:
        loader.add_option(
            "pagewarden_require_session", bool, False,
            "Refuse requests that carry no pagewarden session token (the browser's own traffic).",
        )  # fmt: skip

    def configure(self, updated: set[str]) -> None:
        from mitmproxy import ctx

        if "pagewarden_require_session" in updated:
            self.require = bool(ctx.options.pagewarden_require_session)

    def _owner(self, flow: http.HTTPFlow) -> str | None:
        """The token of the session whose own port `flow` came in on, else None."""
        if self.port_owner is None:
            return None
        port = listen_port_of(flow)
        return self.port_owner(port) if port is not None else None

    def http_connect(self, flow: http.HTTPFlow) -> None:
        owner = self._owner(flow)
        if owner is not None:  # Chromium sends no extra header on a CONNECT: the port says
            flow.metadata["pagewarden_session"] = owner

    def requestheaders(self, flow: http.HTTPFlow) -> None:
        header = flow.request.headers.get("accept-language")
        token, tab, rest = split_entry(header or "")
        if token is not None:
            if rest:
                flow.request.headers["accept-language"] = rest
            else:
                del flow.request.headers["accept-language"]
        owner = self._owner(flow)
        if owner is not None and token is None and saves_a_file(flow.request):
            self._download(flow, owner)  # the download manager fetches a download of the session
            return
        if owner is not None and (token is not None or sent_by_a_page(flow.request)):
            flow.metadata["pagewarden_session"] = owner
            if tab is not None and token == owner:
                flow.metadata["pagewarden_tab"] = tab
            if token is None:  # no page's extra headers: a worker's, a preflight, a keepalive
                flow.metadata["pagewarden_untagged"] = True
            return
        if owner is None and token is not None and self.known(token):
            flow.metadata["pagewarden_session"] = token
            if tab is not None:  # the guard's id of the tab (page) that sent it
                flow.metadata["pagewarden_tab"] = tab
        elif self.download_owner is not None and saves_a_file(flow.request) and flow.response is None:
            owner = self.download_owner(flow.request.pretty_url)
            if owner is not None:
                flow.metadata["pagewarden_session"] = owner
            elif self.require:
                self._refuse_download(flow)
        elif self.require and flow.response is None:
            refusal = Refusal(
                "request", flow.request.url, flow.request.host, "no_session", NETWORK_POLICY,
                "the request comes from no guarded page (the browser's own traffic, or another client)",
                flow.request.method,
            )  # fmt: skip
            refuse_flow(flow, refusal)
            if self.report is not None:
                self.report(refusal)

    def _download(self, flow: http.HTTPFlow, owner: str) -> None:
        """A download fetch on `owner`'s port (no token: the download manager's): the session's,
        refused as a download unless a download action the guard allowed led there (as for one
        on the main port)."""
        flow.metadata["pagewarden_session"] = owner
        granted = self.download_owner(flow.request.pretty_url) if self.download_owner is not None else None
        if granted is None and self.require and flow.response is None:
            self._refuse_download(flow)

    def _refuse_download(self, flow: http.HTTPFlow) -> None:
        from pagewarden.proxy._downloads import DOWNLOAD_POLICY, refuse_download

        request = flow.request
        refusal = Refusal(
            "download", request.pretty_url, request.pretty_host, "download", DOWNLOAD_POLICY,
            "the page started a download (a script-made download link) that no download action "
            "the guard allowed led to: do not follow it, or ask the user for the file",
            request.method,
        )  # fmt: skip
        refuse_download(flow, refusal)
        if self.report is not None:
            self.report(refusal)
