"""URL and host parsing the way a browser sees them, for policy decisions.

Parsing follows the WHATWG URL rules where they differ from `urllib` in ways an attacker
can use: backslashes count as slashes in http(s) URLs, tabs and newlines are removed,
userinfo (``https://good.com@evil.com``) is not the host, hosts are lower-cased and
IDNA-encoded (punycode), and IPv4 hosts written in decimal, octal or hex are normalised.
"""

from __future__ import annotations

import contextlib
import ipaddress
import re
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import unquote, urljoin, urlsplit

from publicsuffix2 import PublicSuffixList

__all__ = [
    "ParsedURL",
    "host_matches",
    "parse_url",
    "registrable_domain",
    "resolve_url",
    "same_site",
]

SPECIAL_SCHEMES = frozenset({"http", "https", "ws", "wss", "ftp"})
OPAQUE_SCHEMES = frozenset({"data", "javascript", "about", "mailto", "tel", "vbscript"})
_STRIP = re.compile(r"[\t\n\r]")
_PSL = PublicSuffixList()


@dataclass(frozen=True, slots=True)
class ParsedURL:
    """A URL split into the parts policies look at."""

    url: str  # the normalised URL
    scheme: str
    host: str  # lower-case ASCII (punycode); "" for opaque URLs
    port: int | None
    path: str
    query: str
    fragment: str
    is_ip: bool = False
    has_userinfo: bool = False

    @property
    def opaque(self) -> bool:
        """data:, javascript:, about: … URLs: no host to check."""
        return self.scheme in OPAQUE_SCHEMES

    @property
    def origin(self) -> str:
        """scheme://host[:port], or "null" for opaque URLs."""
        if not self.host:
            return "null"
        default = {"http": 80, "https": 443, "ws": 80, "wss": 443}.get(self.scheme)
        port = f":{self.port}" if self.port and self.port != default else ""
        return f"{self.scheme}://{self.host}{port}"


def _normalise_ipv4(host: str) -> str | None:
    """Browser IPv4 parsing: 0x7f.1 / 2130706433 / 0177.0.0.1 → dotted quad, else None."""
    parts = host.split(".")
    if parts and parts[-1] == "":
        parts = parts[:-1]
    if not parts or len(parts) > 4:
        return None
    numbers = []
    for part in parts:
        if not part:
            return None
        try:
            if part.lower().startswith("0x"):
                numbers.append(int(part[2:] or "0", 16))
            elif len(part) > 1 and part.startswith("0"):
                numbers.append(int(part, 8))
            else:
                numbers.append(int(part, 10))
        except ValueError:
            return None
    *head, last = numbers
    if any(n > 255 for n in head) or last >= 256 ** (5 - len(numbers)):
        return None
    value = last
    for index, n in enumerate(head):
        value += n << (8 * (3 - index))
    return str(ipaddress.IPv4Address(value))


def _normalise_host(raw: str) -> tuple[str, bool]:
    host = unquote(raw).strip().rstrip(".").lower()
    if host.startswith("[") and host.endswith("]"):
        try:
            return f"[{ipaddress.IPv6Address(host[1:-1]).compressed}]", True
        except ValueError:
            return host, False
    ipv4 = _normalise_ipv4(host)
    if ipv4 is not None:
        return ipv4, True
    # Full-width dots and other separators normalise to "." in IDNA.
    host = host.replace("\u3002", ".").replace("\uff0e", ".").replace("\uff61", ".")
    with contextlib.suppress(UnicodeError):  # else leave as is: it matches no ASCII host
        host = host.encode("idna").decode("ascii")
    return host, False


@lru_cache(maxsize=4096)
def parse_url(url: str, base: str | None = None) -> ParsedURL:
    """Parse `url` (relative ones against `base`) as a browser would navigate to it."""
    text = _STRIP.sub("", url).strip()
    if base:
        text = resolve_url(text, base)
    scheme_match = re.match(r"^([A-Za-z][A-Za-z0-9+.\-]*):", text)
    scheme = scheme_match.group(1).lower() if scheme_match else ""
    if scheme == "blob":
        inner = parse_url(text[5:])
        return ParsedURL(text, "blob", inner.host, inner.port, inner.path, "", "", inner.is_ip)
    if scheme in OPAQUE_SCHEMES:
        return ParsedURL(text, scheme, "", None, text[len(scheme) + 1 :], "", "")
    if scheme in SPECIAL_SCHEMES:
        rest = text[len(scheme) + 1 :].replace("\\", "/")
        text = f"{scheme}://{rest.lstrip('/')}"
    parts = urlsplit(text)
    netloc = parts.netloc
    has_userinfo = "@" in netloc
    hostport = netloc.rsplit("@", 1)[-1]
    port: int | None = None
    if hostport.startswith("["):
        host_raw, _, port_raw = hostport.partition("]")
        host_raw += "]"
        port_raw = port_raw.lstrip(":")
    else:
        host_raw, _, port_raw = hostport.partition(":")
    if port_raw.isdigit():
        port = int(port_raw)
    host, is_ip = _normalise_host(host_raw) if host_raw else ("", False)
    port_text = f":{port}" if port is not None else ""
    normalised = f"{parts.scheme.lower()}://{host}{port_text}{parts.path or '/'}" if host else text
    if host and parts.query:
        normalised += f"?{parts.query}"
    if host and parts.fragment:
        normalised += f"#{parts.fragment}"
    return ParsedURL(
        normalised,
        scheme or parts.scheme.lower(),
        host,
        port,
        parts.path or "/",
        parts.query,
        parts.fragment,
        is_ip,
        has_userinfo,
    )


def resolve_url(url: str, base: str) -> str:
    """`url` made absolute against `base` (backslashes read as slashes for http(s))."""
    text = _STRIP.sub("", url).strip()
    if re.match(r"^[A-Za-z][A-Za-z0-9+.\-]*:", text):
        return text
    base_scheme = base.split(":", 1)[0].lower()
    if base_scheme in SPECIAL_SCHEMES:
        text = text.replace("\\", "/")
    return urljoin(base, text)


@lru_cache(maxsize=4096)
def registrable_domain(host: str) -> str:
    """The registrable domain ("site") of a host: eTLD+1, IPs and single labels as is.

    Unknown top-level domains (``.test``, ``.internal``) count as public suffixes, so
    ``a.forum.test`` and ``b.forum.test`` share a site and ``evil.test`` does not.
    """
    host = host.lower().rstrip(".")
    if not host or host.startswith("[") or _normalise_ipv4(host) == host:
        return host
    if "." not in host:
        return host
    sld = _PSL.get_sld(host, strict=True)
    if sld:
        return sld
    labels = host.split(".")
    return ".".join(labels[-2:])


def same_site(host_a: str, host_b: str) -> bool:
    """Whether two hosts belong to the same registrable domain."""
    if not host_a or not host_b:
        return False
    return registrable_domain(host_a) == registrable_domain(host_b)


def host_matches(host: str, pattern: str) -> bool:
    """Host against a domain pattern: ``x.com`` exact, ``*.x.com`` any subdomain (not x.com),
    ``.x.com`` x.com and its subdomains, ``*`` anything."""
    pattern = pattern.strip().lower().rstrip(".")
    host = host.lower().rstrip(".")
    if not host:
        return False
    if pattern == "*":
        return True
    if "://" in pattern:
        pattern = parse_url(pattern).host
    if pattern.startswith("*."):
        suffix = _normalise_host(pattern[2:])[0]
        return host.endswith("." + suffix)
    if pattern.startswith("."):
        suffix = _normalise_host(pattern[1:])[0]
        return host == suffix or host.endswith("." + suffix)
    pattern_host = _normalise_host(pattern.split(":")[0] if not pattern.startswith("[") else pattern)[0]
    return host == pattern_host
