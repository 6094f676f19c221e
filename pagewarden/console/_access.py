"""Who may do what on the console: tokens, roles, the Host and Origin checks, security headers.

* Two tokens: the full one (watch, approve, pause, take over; also what guards in other
  processes use) and a read-only one (watch only), both random, compared in constant time.
* A state-changing request must carry the full token in the ``Authorization`` header (a
  form or an ``<img>`` on another site cannot set it), an ``Origin`` that is the console's
  own when there is one (browsers always send it on POST), and no cross-site fetch metadata.
* Every request must name the console in its ``Host`` header, which defeats DNS rebinding.
* Every answer forbids inline script, framing, sniffing and referrers (see `CONSOLE_CSP`).
"""

from __future__ import annotations

import hmac
import ipaddress
import secrets
from typing import Literal

__all__ = ["CONSOLE_CSP", "REPORT_CSP", "SECURITY_HEADERS", "Access", "Role", "new_token"]

Role = Literal["full", "view"]

#: The console page: its own script and styles only; Trusted Types forbid HTML string sinks
#: (innerHTML and friends throw), so page-derived text can only ever be inserted as text.
CONSOLE_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'; "
    "require-trusted-types-for 'script'; trusted-types 'none'"
)
#: The session report: no script at all.
REPORT_CSP = (
    "default-src 'none'; style-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; "
    "frame-ancestors 'none'"
)
SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
}


def new_token() -> str:
    """A fresh random token (192 bits, URL-safe)."""
    return secrets.token_urlsafe(24)


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return host == "localhost"


class Access:
    """The console's access rules for one bound address."""

    def __init__(self, token: str, view_token: str, host: str) -> None:
        if not token or not view_token or hmac.compare_digest(token, view_token):
            raise ValueError("the full and the read-only token must be set and differ")
        self._token = token.encode()
        self._view = view_token.encode()
        self.host = host
        self.port = 0

    @property
    def loopback(self) -> bool:
        """Whether the console listens on a loopback address only."""
        return _is_loopback(self.host)

    def role(self, token: str | None) -> Role | None:
        """The role a token grants (None for a missing or wrong token)."""
        if not token:
            return None
        given = token.encode()
        if hmac.compare_digest(given, self._token):
            return "full"
        if hmac.compare_digest(given, self._view):
            return "view"
        return None

    def hosts(self) -> set[str]:
        """``Host`` header values that name this console."""
        names = {self.host, "127.0.0.1", "localhost", "[::1]"} if self.loopback else {self.host}
        if ":" in self.host and not self.host.startswith("["):
            names.add(f"[{self.host}]")
        return {f"{name}:{self.port}" for name in names}

    def host_ok(self, host_header: str | None) -> bool:
        """Whether the request was addressed to this console (not a rebound name)."""
        return bool(host_header) and host_header.lower() in self.hosts()

    def origin_ok(self, origin: str | None, fetch_site: str | None) -> bool:
        """Whether a state-changing request comes from the console's own page (or from no
        page at all: a guard in another process sends no Origin)."""
        if fetch_site is not None and fetch_site not in ("same-origin", "none"):
            return False
        if origin is None:
            return True
        return origin.lower() in {f"http://{h}" for h in self.hosts()}
