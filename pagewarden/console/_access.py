"""Who may do what on the console: tokens, roles, the Host and Origin checks, where it may
listen, security headers.

* Three tokens, random, compared in constant time: the full one (watch, approve, pause, take
  over; guards may use it too), a read-only one (watch only) and a guard one (only the guards'
  API: register, send events and frames, fetch commands; it cannot read or approve anything),
  which is the one to hand to agents on other machines.
* A state-changing request must carry the full token in the ``Authorization`` header (a
  form or an ``<img>`` on another site cannot set it), an ``Origin`` that is the console's
  own when there is one (browsers always send it on POST), and no cross-site fetch metadata.
* Every request must name the console in its ``Host`` header (its bound address, or the
  public URL it is reached at), which defeats DNS rebinding.
* Beyond loopback the console listens only with TLS, or behind a reverse proxy that the
  operator says terminates TLS (`check_binding`).
* Every answer forbids inline script, framing, sniffing and referrers (see `CONSOLE_CSP`).
* Who answered an approval is a person, not "the console": each person may have a full token
  of their own (`people`: name -> token), and behind a reverse proxy that authenticates people
  the name it forwards in a header (`user_header`) is taken (`person`).
"""

from __future__ import annotations

import hmac
import ipaddress
import secrets
import unicodedata
from collections.abc import Mapping
from typing import Literal
from urllib.parse import urlsplit

__all__ = [
    "CONSOLE_CSP",
    "REPORT_CSP",
    "SECURITY_HEADERS",
    "Access",
    "Role",
    "check_binding",
    "is_loopback",
    "new_token",
    "person_name",
    "public_origin",
]

#: the longest person's name recorded as who answered an approval
MAX_NAME = 80
#: the shortest token a person may have
MIN_PERSON_TOKEN = 16

Role = Literal["full", "view", "guard"]

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


def _is_wildcard(host: str) -> bool:
    try:
        return ipaddress.ip_address(host.strip("[]")).is_unspecified
    except ValueError:
        return host in ("", "*")


def person_name(value: object) -> str | None:
    """A person's name as the console records it: printable text, at most `MAX_NAME`
    characters, blank space collapsed; None for anything else (empty, not text)."""
    if not isinstance(value, str):
        return None
    text = "".join(c if unicodedata.category(c)[0] not in "CZ" else " " for c in value)
    text = " ".join(text.split())[:MAX_NAME]
    return text or None


def public_origin(url: str) -> tuple[str, str, int | None]:
    """``(scheme, host, port)`` of a console's public URL (``https://console.example.com``);
    a clear `ValueError` for anything else (a path, a query, another scheme)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"the public URL must look like https://console.example.com, not {url!r}")
    if parts.path not in ("", "/") or parts.query or parts.fragment or parts.username or parts.password:
        raise ValueError(
            "the public URL is the console's origin only (scheme, host, port): the console "
            "serves from / and cannot live under a path of the proxy"
        )
    try:
        port = parts.port
    except ValueError:
        raise ValueError(f"the public URL has a bad port: {url!r}") from None
    return parts.scheme, parts.hostname.lower(), port


def check_binding(
    host: str,
    *,
    tls: bool,
    behind_proxy: bool,
    public_url: str | None,
    service: str = "the console",
    api: str = "Console",
) -> None:
    """Refuse an address `service` must not listen on as configured (a `ValueError` that
    says what to do): beyond loopback only with TLS or behind a TLS-terminating reverse proxy,
    and a wildcard address or a proxy only with the public URL that names it. `api` is the
    Python name whose options the message cites (the MCP server shares these rules)."""
    where = "docs/guides/fleet.md"
    if not _is_loopback(host) and not tls and not behind_proxy:
        raise ValueError(
            f"refusing to listen on {host or '*'} without TLS: tokens and page content would "
            f"cross the network in clear. Pass --tls-cert and --tls-key ({api}(tls_cert=, "
            "tls_key=)), or --behind-proxy when a reverse proxy in front terminates TLS "
            f"(see {where}); or listen on 127.0.0.1"
        )
    if public_url is None and (_is_wildcard(host) or behind_proxy):
        why = "behind a reverse proxy" if behind_proxy else f"listening on every address ({host or '*'})"
        raise ValueError(
            f"{why}, {service} needs the address people and guards use, to refuse requests "
            "for any other name (DNS rebinding): pass --public-url https://NAME[:PORT] "
            f"({api}(public_url=...)); see {where}"
        )


def is_loopback(host: str) -> bool:
    """Whether `host` (an address, or ``localhost``) is a loopback address."""
    return _is_loopback(host)


class Access:
    """The console's access rules for one bound address (and the public URL it is reached at)."""

    def __init__(
        self,
        token: str,
        view_token: str,
        host: str,
        *,
        guard_token: str | None = None,
        tls: bool = False,
        public_url: str | None = None,
        behind_proxy: bool = False,
        people: Mapping[str, str] | None = None,
        user_header: str | None = None,
    ) -> None:
        people = dict(people or {})
        tokens = [t for t in (token, view_token, guard_token, *people.values()) if t is not None]
        if not token or not view_token or (guard_token is not None and not guard_token):
            raise ValueError("the console's tokens must not be empty")
        if any(hmac.compare_digest(a, b) for i, a in enumerate(tokens) for b in tokens[i + 1 :]):
            raise ValueError("the full, the read-only, the guard and every person's token must differ")
        self._people: list[tuple[bytes, str]] = []
        for name, secret in people.items():
            shown = person_name(name)
            if shown is None or shown != name:
                raise ValueError(f"a person's name must be printable text of at most {MAX_NAME} characters")
            if not isinstance(secret, str) or len(secret) < MIN_PERSON_TOKEN:
                raise ValueError(f"{name}'s token must be at least {MIN_PERSON_TOKEN} characters")
            self._people.append((secret.encode(), name))
        if user_header is not None and not behind_proxy:
            raise ValueError(
                "a user header is only believed behind a reverse proxy that sets it (--behind-proxy): "
                "otherwise anyone could name themselves in it"
            )
        self.user_header = user_header
        self._token = token.encode()
        self._view = view_token.encode()
        self._guard = guard_token.encode() if guard_token is not None else None
        self.host = host
        self.port = 0
        self.tls = tls
        self.behind_proxy = behind_proxy
        self.public = public_origin(public_url) if public_url is not None else None

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
        if self._person_of(given) is not None:
            return "full"
        if hmac.compare_digest(given, self._view):
            return "view"
        if self._guard is not None and hmac.compare_digest(given, self._guard):
            return "guard"
        return None

    def _person_of(self, given: bytes) -> str | None:
        found = None
        for secret, name in self._people:  # every one compared: the time does not tell which
            if hmac.compare_digest(given, secret):
                found = name
        return found

    def person(self, token: str | None, headers: Mapping[str, str] | None = None) -> str | None:
        """Who is acting: the name of the person whose own token `token` is, else the user the
        reverse proxy names in `user_header` (only behind one), else None (the shared full
        token: the console records "console")."""
        if token:
            name = self._person_of(token.encode())
            if name is not None:
                return name
        if self.user_header is not None and headers is not None:
            return person_name(headers.get(self.user_header))
        return None

    def _public_hosts(self) -> set[str]:
        if self.public is None:
            return set()
        scheme, name, port = self.public
        name = f"[{name}]" if ":" in name else name
        default = 443 if scheme == "https" else 80
        if port is None or port == default:
            return {name, f"{name}:{default}"}
        return {f"{name}:{port}"}

    def hosts(self) -> set[str]:
        """``Host`` header values that name this console: its bound address (every loopback
        name when bound to loopback; none for a wildcard address, nor beyond loopback behind a
        proxy, where the public name is the only one) and its public URL's."""
        names = {self.host, "127.0.0.1", "localhost", "[::1]"} if self.loopback else {self.host}
        if _is_wildcard(self.host) or (self.behind_proxy and not self.loopback):
            names = set()
        if ":" in self.host and not self.host.startswith("["):
            names.add(f"[{self.host}]")
        return {f"{name}:{self.port}" for name in names} | self._public_hosts()

    def origins(self) -> set[str]:
        """``Origin`` values of the console's own page."""
        public = self._public_hosts()
        scheme = "https" if self.tls else "http"
        found = {f"{scheme}://{h}" for h in self.hosts() - public}
        if self.public is not None:
            found |= {f"{self.public[0]}://{h}" for h in public}
            # a browser omits the default port from Origin
            found |= {o.rsplit(":", 1)[0] for o in list(found) if o.endswith((":443", ":80"))}
        return found

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
        return origin.lower() in self.origins()
