"""Downloads a response starts: what makes an answer a saved file, and who may save one.

A download link (``<a download>``) is judged by the guard before the click (PW-DOWNLOAD: a
human's approval). A server can make any navigation a download by its answer —
``Content-Disposition: attachment``, or a type the browser does not render (a zip, an
executable, ``application/octet-stream``) — on a plain link, a redirect, a form's post, a
script's ``location = …``, a script-made ``<a download>``, a frame. Both layers that see
responses judge those the same way (sans-I/O, shared here): the network layer
(`pagewarden.proxy._downloads`) and, without a proxy, the navigation gate's browser-level
DevTools session (`pagewarden.interceptors._hops`). Sans-I/O: headers and a step in, a
decision out. A download is let through only when a
download action the guard allowed (and a human approved) led to its site moments before
(`DownloadGrants`); otherwise it is refused before a byte of the body reaches the browser
(`download_refusal`: ``PW-DOWNLOAD``, rule ``download``).
"""

from __future__ import annotations

import re
import threading
import time
from typing import Any

from pagewarden._url import parse_url, registrable_domain, resolve_url
from pagewarden.rules._egress import Refusal

__all__ = ["DOWNLOAD_POLICY", "DownloadGrants", "download_refusal", "saved_file"]

DOWNLOAD_POLICY = "PW-DOWNLOAD"
#: types Chromium shows in the tab rather than saving (prefixes end with "/")
_RENDERED = (
    "text/", "image/", "audio/", "video/", "multipart/x-mixed-replace", "application/xhtml+xml",
    "application/xml", "application/json", "application/javascript", "application/ecmascript",
    "application/rss+xml", "application/atom+xml", "application/ld+json", "application/manifest+json",
    "application/wasm", "application/x-javascript", "application/problem+json",
)  # fmt: skip
_FILENAME = re.compile(r"filename\*?\s*=\s*(?:UTF-8'')?\"?([^\";]+)", re.IGNORECASE)


def saved_file(
    status: int, disposition: str, content_type: str, path: str, *, download_link: bool = False
) -> tuple[str, str] | None:
    """``(content type, file name)`` when a document's answer (`status`, its
    ``Content-Disposition`` and ``Content-Type`` headers; `path`: the request's path) makes the
    browser save a file, else None. `download_link`: the request is the browser's fetch of an
    ``<a download>`` (saved whatever its type)."""
    if status in (204, 205) or 300 <= status < 400:
        return None
    kind = content_type.split(";", 1)[0].strip().lower()
    name_match = _FILENAME.search(disposition)
    last = path.split("?", 1)[0].rsplit("/", 1)[-1]
    name = name_match.group(1).strip()[:120] if name_match else last[:120]
    if disposition.strip().lower().startswith("attachment") or download_link:
        return kind or "unknown type", name
    if kind and not kind.startswith(_RENDERED):
        return kind, name
    return None


def download_refusal(url: str, host: str, kind: str, name: str, method: str = "GET") -> Refusal:
    """The refusal of a download (`kind`, `name`) from `url` no allowed download action led to."""
    return Refusal(
        "download", url, host, "download", DOWNLOAD_POLICY,
        f"the response starts a download ({kind}, {name!r}) that no download action the guard "
        "allowed led to: the page tried to save a file on the user's machine; do not follow "
        "it, or ask the user for the file",
        method,
    )  # fmt: skip


def _site(url: str) -> str:
    host = parse_url(url).host
    return (registrable_domain(host) or host) if host else ""


class DownloadGrants:
    """Which sites may start a download now: a download action the guard allowed (a finding
    ``PW-DOWNLOAD`` a human approved) lets its link's site save a file, in its tab (and in a
    page not tagged with a tab yet), for `ttl` seconds. Thread-safe."""

    def __init__(self, ttl: float = 30.0) -> None:
        self.ttl = ttl
        self._lock = threading.Lock()
        #: per tab (None: a page not tagged yet): site -> expiry (monotonic)
        self._grants: dict[str | None, dict[str, float]] = {}

    def grant(self, step: Any, verdict: Any) -> str | None:
        """Grant the download `step` (allowed by `verdict`) starts; returns the site, or None
        when the verdict judged no download."""
        if not any(f.policy_id == DOWNLOAD_POLICY for f in verdict.findings):
            return None
        target = step.observation.target
        href = getattr(target, "href", None) if target is not None else None
        page = step.observation.url or None
        site = _site(resolve_url(href, page) if href and page else href or "")
        if not site:
            return None
        expiry = time.monotonic() + self.ttl
        with self._lock:
            for tab in {getattr(step.observation, "tab", None), None}:
                self._grants.setdefault(tab, {})[site] = expiry
        return site

    def allowed(self, url: str, tab: str | None = None) -> bool:
        """Whether a download from `url` in `tab` was led to by a download action the guard
        allowed (a live grant of that tab, or of a page not tagged yet)."""
        site = _site(url)
        if not site:
            return False
        now = time.monotonic()
        with self._lock:
            pools = [self._grants.get(key, {}) for key in dict.fromkeys((tab, None))]
            return any((pool.get(site) or 0.0) >= now for pool in pools)
