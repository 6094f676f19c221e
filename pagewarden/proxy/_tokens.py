"""Session tokens: which guarded session (browser context) a request comes from.

The browser context gets an extra ``Accept-Language`` entry, ``x-pw-<token>;q=0.01``, set
with Playwright's ``context.set_extra_http_headers``. ``Accept-Language`` is a
CORS-safelisted header (its value uses only safelisted characters), so adding it triggers no
preflight, and Chromium sends it on every request of the context: documents, frames,
subresources, fetch and XHR, beacons, pings, prefetches, websocket handshakes and pages the
page opens. `SessionTokens` reads the token, removes it before the request goes upstream
(the server sees the plain language list), and, when the proxy requires sessions, refuses
requests that carry none — the browser's own background traffic (updates, accounts,
safe browsing) has none.
"""

from __future__ import annotations

import re
import secrets as _random
from collections.abc import Callable

from mitmproxy import http

from pagewarden.proxy._egress import NETWORK_POLICY, refuse_flow
from pagewarden.proxy._refusal import Refusal

__all__ = ["SessionTokens", "accept_language", "new_token", "split_entry", "split_token"]

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

    A download Chromium's download manager fetches carries no token (`saves_a_file`): it
    belongs to the session `download_owner(url)` names (one a download action the guard
    allowed led there), else it is refused as a download (``204``: nothing is saved)."""

    def __init__(
        self,
        known: Callable[[str], bool] | None = None,
        report: Callable[[Refusal], None] | None = None,
        download_owner: Callable[[str], str | None] | None = None,
    ) -> None:
        self.known = known or (lambda token: True)
        self.report = report
        self.download_owner = download_owner
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

    def requestheaders(self, flow: http.HTTPFlow) -> None:
        header = flow.request.headers.get("accept-language")
        token, tab, rest = split_entry(header or "")
        if token is not None:
            if rest:
                flow.request.headers["accept-language"] = rest
            else:
                del flow.request.headers["accept-language"]
        if token is not None and self.known(token):
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
