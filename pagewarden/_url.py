"""URL and host parsing the way a browser sees them, for policy decisions.

Parsing follows the WHATWG URL rules where they differ from `urllib` in ways an attacker
can use: leading and trailing control characters and spaces are dropped, tabs and newlines
anywhere are removed, backslashes count as slashes in special URLs (http, https, ws, wss,
ftp, file), userinfo (``https://good.com@evil.com``) is not the host, hosts are
percent-decoded, mapped the way IDNA/UTS #46 maps them (full-width letters and dots, case,
ignored characters such as zero-width spaces) and punycode-encoded, and IPv4 hosts written
in decimal, octal or hex are normalised. A host a browser would refuse (forbidden code
points, a numeric last label that is not a valid IPv4 address) makes the URL invalid:
`ParsedURL.valid` is False and its host is empty, so it matches no allow-list.
"""

from __future__ import annotations

import contextlib
import ipaddress
import re
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import unquote, urljoin, urlsplit

import idna as _idna  # IDNA 2008 / UTS #46, as browsers map hosts
from publicsuffix2 import PublicSuffixList

__all__ = [
    "ParsedURL",
    "host_matches",
    "host_of_pattern",
    "page_key",
    "parse_url",
    "registrable_domain",
    "resolve_url",
    "same_site",
]

SPECIAL_SCHEMES = frozenset({"http", "https", "ws", "wss", "ftp", "file"})
OPAQUE_SCHEMES = frozenset({"data", "javascript", "about", "mailto", "tel", "vbscript"})
_STRIP = re.compile(r"[\t\n\r]")
_EDGES = re.compile(r"^[\x00-\x20]+|[\x00-\x20]+$")
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*):")
# Code points a browser refuses in a (percent-decoded) domain.
_FORBIDDEN_HOST = re.compile(r"[\x00-\x20#%/:<>?@\[\\\]^|\x7f]")
_PSL = PublicSuffixList()


@dataclass(frozen=True, slots=True)
class ParsedURL:
    """A URL split into the parts policies look at."""

    url: str  # the normalised URL
    scheme: str
    host: str  # lower-case ASCII (punycode); "" for opaque or invalid URLs
    port: int | None
    path: str
    query: str
    fragment: str
    is_ip: bool = False
    has_userinfo: bool = False
    valid: bool = True  # False when a browser would refuse the URL (its host is then "")

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


def _number(part: str) -> int | None:
    """One IPv4 part as a browser reads it: 0x… hex, 0… octal, else decimal."""
    try:
        if part.startswith("0x"):
            return int(part[2:] or "0", 16) if re.fullmatch(r"[0-9a-f]*", part[2:]) else None
        if len(part) > 1 and part.startswith("0"):
            return int(part, 8) if re.fullmatch(r"[0-7]+", part) else None
        return int(part, 10) if re.fullmatch(r"[0-9]+", part) else None
    except ValueError:  # pragma: no cover - guarded by the patterns
        return None


def _ends_in_number(host: str) -> bool:
    """WHATWG "ends in a number": such a host must be a valid IPv4 address."""
    parts = host.split(".")
    if parts and parts[-1] == "" and len(parts) > 1:
        parts = parts[:-1]
    last = parts[-1] if parts else ""
    return bool(last) and bool(re.fullmatch(r"[0-9]+|0x[0-9a-f]*", last))


def _normalise_ipv4(host: str) -> str | None:
    """Browser IPv4 parsing: 0x7f.1 / 2130706433 / 0177.0.0.1 → dotted quad, else None."""
    parts = host.lower().split(".")
    if parts and parts[-1] == "" and len(parts) > 1:
        parts = parts[:-1]
    if not parts or len(parts) > 4:
        return None
    numbers = []
    for part in parts:
        if not part:
            return None
        n = _number(part)
        if n is None:
            return None
        numbers.append(n)
    *head, last = numbers
    if any(n > 255 for n in head) or last >= 256 ** (5 - len(numbers)):
        return None
    value = last
    for index, n in enumerate(head):
        value += n << (8 * (3 - index))
    return str(ipaddress.IPv4Address(value))


def _map_unicode(host: str) -> str:
    """UTS #46 mapping (case, full-width forms, ignored characters), as browsers apply it."""
    host = host.replace("\u3002", ".").replace("\uff0e", ".").replace("\uff61", ".")
    with contextlib.suppress(_idna.IDNAError, ValueError):
        return _idna.uts46_remap(host, std3_rules=False, transitional=False)
    return host.lower()


def _to_ascii(host: str) -> str | None:
    """Punycode form of a mapped host, or None when it cannot be encoded."""
    if host.isascii():
        return host.lower()
    with contextlib.suppress(_idna.IDNAError, UnicodeError, ValueError):
        return _idna.encode(host, uts46=False).decode("ascii")
    with contextlib.suppress(UnicodeError):
        return host.encode("idna").decode("ascii")
    return None


@lru_cache(maxsize=4096)
def _classify_host(raw: str) -> tuple[str, bool, bool]:
    """(normalised host, is an IP literal, valid) for the host part of a URL (memoised: every
    URL of a site has the same host, and UTS #46 mapping costs ~0.1 ms)."""
    host = unquote(raw, errors="strict") if "%" in raw else raw
    if host.startswith("[") and host.endswith("]"):
        try:
            return f"[{ipaddress.IPv6Address(host[1:-1]).compressed}]", True, "%" not in host
        except ValueError:
            return "", False, False
    host = _map_unicode(host)
    if _FORBIDDEN_HOST.search(host):
        return "", False, False
    ipv4 = _normalise_ipv4(host)
    if ipv4 is not None:
        return ipv4, True, True
    if _ends_in_number(host):
        return "", False, False
    ascii_host = _to_ascii(host.rstrip("."))
    if ascii_host is None or not ascii_host:
        return "", False, False
    return ascii_host, False, True


@lru_cache(maxsize=4096)
def _normalise_host(raw: str) -> tuple[str, bool]:
    """(normalised host, is an IP literal); an invalid host normalises to ""."""
    try:
        host, is_ip, _valid = _classify_host(raw)
    except UnicodeDecodeError:
        return "", False
    return host, is_ip


def _clean(url: str) -> str:
    """Remove tabs and newlines anywhere, control characters and spaces at the ends."""
    return _EDGES.sub("", _STRIP.sub("", url))


@lru_cache(maxsize=4096)
def parse_url(url: str, base: str | None = None) -> ParsedURL:
    """Parse `url` (relative ones against `base`) as a browser would navigate to it."""
    text = _clean(url)
    if base:
        text = resolve_url(text, base)
    scheme_match = _SCHEME.match(text)
    scheme = scheme_match.group(1).lower() if scheme_match else ""
    if scheme == "blob":
        inner = parse_url(text[5:])
        return ParsedURL(
            text,
            "blob",
            inner.host,
            inner.port,
            inner.path,
            "",
            "",
            inner.is_ip,
            inner.has_userinfo,
            inner.valid,
        )
    if scheme in OPAQUE_SCHEMES:
        return ParsedURL(text, scheme, "", None, text[len(scheme) + 1 :], "", "")
    if scheme in SPECIAL_SCHEMES:
        rest = text[len(scheme) + 1 :].replace("\\", "/")
        text = f"{scheme}://{rest.lstrip('/')}" if scheme != "file" else f"file://{_file_rest(rest)}"
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
    valid = True
    if port_raw:
        if port_raw.isdigit() and int(port_raw) <= 65535:
            port = int(port_raw)
        else:
            valid = False
    host, is_ip = "", False
    if host_raw:
        try:
            host, is_ip, host_valid = _classify_host(host_raw)
        except UnicodeDecodeError:
            host, is_ip, host_valid = "", False, False
        valid = valid and host_valid
    elif scheme in SPECIAL_SCHEMES and scheme != "file":
        valid = False
    if not valid:
        host, is_ip, port = "", False, None
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
        valid,
    )


def _file_rest(rest: str) -> str:
    """The part of a file: URL after ``file://`` (an optional host, then the path)."""
    if rest.startswith("//"):
        return rest[2:]
    return "/" + rest.lstrip("/")


def resolve_url(url: str, base: str) -> str:
    """`url` made absolute against `base` (backslashes read as slashes for special URLs).

    ``http:foo`` on an ``http:`` page is a relative reference, as in browsers.
    """
    text = _clean(url)
    base_scheme = base.split(":", 1)[0].lower()
    match = _SCHEME.match(text)
    if match:
        scheme = match.group(1).lower()
        rest = text[len(scheme) + 1 :]
        special_relative = (
            scheme == base_scheme and scheme in SPECIAL_SCHEMES and not rest.startswith(("/", "\\"))
        )
        if not special_relative:
            return text
        text = rest
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


def _ip_forms(host: str) -> set[str]:
    """A host and, for an IPv4-mapped IPv6 literal, the IPv4 address it reaches."""
    forms = {host}
    if host.startswith("[") and host.endswith("]"):
        with contextlib.suppress(ValueError):
            mapped = ipaddress.IPv6Address(host[1:-1]).ipv4_mapped
            if mapped is not None:
                forms.add(str(mapped))
    return forms


@lru_cache(maxsize=16384)
def host_matches(host: str, pattern: str) -> bool:
    """Host against a domain pattern: ``x.com`` exact, ``*.x.com`` any subdomain (not x.com),
    ``.x.com`` x.com and its subdomains, ``*`` anything.

    Both sides are normalised like a browser host (case, IDNA, IPv4 forms), and an
    IPv4-mapped IPv6 literal matches its IPv4 address.
    """
    pattern = pattern.strip()
    if not host:
        return False
    host = _normalise_host(host)[0] if not host.startswith("[") else host.lower()
    if not host:
        return False
    if pattern == "*":
        return True
    if "://" in pattern:
        pattern = parse_url(pattern).host
        if not pattern:
            return False
    forms = _ip_forms(host)
    if pattern.startswith("*."):
        suffix = _normalise_host(pattern[2:])[0]
        return bool(suffix) and any(h.endswith("." + suffix) for h in forms)
    if pattern.startswith("."):
        suffix = _normalise_host(pattern[1:])[0]
        return bool(suffix) and any(h == suffix or h.endswith("." + suffix) for h in forms)
    if pattern.startswith("["):
        pattern_host = _normalise_host(pattern.split("]")[0] + "]")[0]
    else:
        pattern_host = _normalise_host(pattern.rsplit(":", 1)[0] if pattern.count(":") == 1 else pattern)[0]
    return bool(pattern_host) and (pattern_host in forms or bool(_ip_forms(pattern_host) & forms))


def page_key(url: str) -> str:
    """A page's identity: host (and port), path and query, without scheme and fragment; "" for
    URLs without a host."""
    parsed = parse_url(url or "about:blank")
    if not parsed.host:
        return ""
    path = parsed.path.rstrip("/") or "/"
    port = f":{parsed.port}" if parsed.port else ""
    return f"{parsed.host}{port}{path}" + (f"?{parsed.query}" if parsed.query else "")


def host_of_pattern(pattern: str) -> tuple[str, str] | None:
    """(prefix, normalised host) of a domain pattern: prefix ``*.``, ``.`` or ``""``; None when
    it names no host a browser would use (``*`` alone is ``("*", "")``)."""
    text = pattern.strip().lower()
    if text == "*":
        return "*", ""
    if "://" in text:
        text = parse_url(text).host
    prefix = ""
    for mark in ("*.", "."):
        if text.startswith(mark):
            prefix, text = mark, text[len(mark) :]
            break
    if not text or text.startswith("["):
        return None
    if text.count(":") == 1:
        text = text.rsplit(":", 1)[0]
    host = _normalise_host(text)[0]
    return (prefix, host) if host else None
