"""URL and domain rules: `url_deny`, `url_allow`, `domain_allow`, `domain_deny`.

They judge where an action takes the browser: the static world model's navigation
(`goto`, a link click, a form submission, with relative links already resolved against
the page) and the URL of `new_page` / `request` actions. Hosts are compared after
browser-like parsing (`pagewarden._url`): userinfo, backslashes, IDN, IPv4 spellings and
percent-encoding cannot disguise a destination.

URL pattern semantics (case-insensitive; ``*`` matches any run of characters):

* ``scheme://host/path`` — a whole URL: the scheme must be equal, the host must match as a
  domain pattern (``*.x.com`` allowed), and the path (with query) must start with the
  pattern's path at a segment boundary (or match it as a glob when it has ``*``).
* ``/path`` — in `url_deny`, text found anywhere in the URL after its scheme, like any
  plain pattern below; in `url_allow`, the destination's path (with query) must start
  with it at a segment boundary (or match it as a glob).
* anything else — text found anywhere in the percent-decoded URL after its scheme
  (``host[:port]/path?query#fragment``).

A deny pattern is also looked for in the two other spellings of the destination that
ST-WebAgentBench's ``is_url_match`` / ``contains_any`` evaluator (and a person reading the
address bar) would see: ``host/path#fragment`` without the query, and the URL as written,
userinfo included. So every URL that evaluator flags is flagged here; in addition a
pattern found only in the query string (``index.php?module=Users``) is flagged too,
because that is what the policy means.

Destinations with no host (``data:``, ``javascript:``, ``file:``, invalid URLs) are never
on a domain or URL allow-list, except ``about:blank``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import unquote

from pagewarden._url import ParsedURL, host_matches, parse_url
from pagewarden.rules._base import CompiledRule, RuleContext, register
from pagewarden.rules._index import host_pattern_keys, trigram_keys, union
from pagewarden.steps import Finding

__all__ = ["DomainAllow", "DomainDeny", "UrlAllow", "UrlDeny", "UrlPattern", "destinations"]

_NAV_KINDS = frozenset(
    {"goto", "click", "dblclick", "tap", "press", "new_page", "request", "type", "check", "uncheck", "drag"}
)
_HARMLESS = frozenset({"about:blank", "about:srcdoc"})
_ACTIVATE = frozenset({"click", "dblclick", "tap"})


@dataclass(frozen=True, slots=True)
class Destination:
    """A URL the action would load, and how it gets there."""

    url: ParsedURL
    raw: str
    via: str


def destinations(ctx: RuleContext) -> list[Destination]:
    """Where this step would take the browser (empty when it navigates nowhere)."""
    found = ctx.memo.get("destinations")
    if found is None:
        found = ctx.memo["destinations"] = _destinations(ctx)
    return found  # type: ignore[return-value]


def _destinations(ctx: RuleContext) -> list[Destination]:
    out: list[Destination] = []
    nav = ctx.prediction.navigation
    if nav is not None and nav.via in ("goto", "link", "form"):
        raw = ctx.action.value if nav.via == "goto" and ctx.action.value else nav.url
        out.append(Destination(parse_url(nav.url), raw, nav.via))
    kind = ctx.action.kind
    if kind in ("new_page", "request") and ctx.action.value:
        page = ctx.step.observation.url or None
        out.append(Destination(parse_url(ctx.action.value, page), ctx.action.value, kind))
    el = ctx.target
    activates = el is not None and (kind in _ACTIVATE or el.activation is not None)
    if nav is None and el is not None and el.href and activates:
        # a javascript: (or other hostless) link runs in the page rather than navigating;
        # it still goes nowhere an allow-list vouches for
        href = parse_url(el.href)
        if href.opaque:
            out.append(Destination(href, el.href, "link"))
    if el is not None and activates and el.href:
        # hyperlink auditing: following the link also POSTs to each `ping` URL
        page = ctx.step.observation.url or None
        out.extend(Destination(parse_url(p, page), p, "ping") for p in el.pings)
    if el is not None and activates and el.frame_content:
        # the action lands in a frame of another origin whose content cannot be read: judged
        # as going to that origin
        out.append(Destination(parse_url(el.frame_content), el.frame_content, "frame"))
    return out


def _decode(text: str) -> str:
    return unquote(text).lower()


def _hostport(url: ParsedURL) -> str:
    return url.host + (f":{url.port}" if url.port is not None else "")


@lru_cache(maxsize=4096)
def _views(dest: Destination, *, raw: bool) -> tuple[str, ...]:
    """Spellings of the destination a pattern is looked for in (lower-case, decoded)."""
    url = dest.url
    if not url.host:
        return (_decode(url.url),) if raw or url.opaque else ()
    fragment = f"#{url.fragment}" if url.fragment else ""
    query = f"?{url.query}" if url.query else ""
    full = _decode(f"{_hostport(url)}{url.path}{query}{fragment}")
    views = [full, _decode(f"{_hostport(url)}{url.path}{fragment}")]
    if raw:
        text = re.sub(r"^[A-Za-z][A-Za-z0-9+.\-]*:/*", "", dest.raw.strip())
        views.append(_decode(text.replace("\\", "/")))
    return tuple(dict.fromkeys(views))


@lru_cache(maxsize=4096)
def _glob(pattern: str, anchored: bool) -> re.Pattern[str]:
    body = ".*".join(re.escape(part) for part in pattern.split("*"))
    return re.compile(f"^{body}" if anchored else body, re.DOTALL)


def _prefix(path: str, prefix: str) -> bool:
    """`path` starts with `prefix` at a segment boundary (``/a`` covers ``/a/b``, not ``/ab``)."""
    if not prefix or prefix == "/":
        return True
    if prefix.endswith("/"):
        return path.startswith(prefix)
    return path == prefix or path.startswith((prefix + "/", prefix + "?", prefix + "#"))


@dataclass(frozen=True, slots=True)
class UrlPattern:
    """One compiled URL pattern (see the module docstring for its forms)."""

    text: str
    form: str  # "url" | "path" | "text"
    scheme: str = ""
    host: str = ""
    path: str = ""

    @classmethod
    def compile(cls, pattern: str) -> UrlPattern:
        text = pattern.strip()
        lowered = text.lower()
        if "://" in lowered:
            scheme, _, rest = lowered.partition("://")
            host, slash, path = rest.partition("/")
            host = host.rsplit("@", 1)[-1]
            return cls(text, "url", scheme, host, _decode(slash + path) if slash else "")
        cleaned = lowered.rstrip("/") if len(lowered) > 1 else lowered
        if text.startswith("/"):
            return cls(text, "path", path=_decode(cleaned))
        return cls(text, "text", path=_decode(cleaned))

    def _url_matches(self, dest: Destination) -> bool:
        url = dest.url
        if not url.host or (self.scheme not in ("*", url.scheme)):
            return False
        if not host_matches(url.host, self.host):
            return False
        path = _decode(url.path + (f"?{url.query}" if url.query else ""))
        if "*" in self.path:
            return bool(_glob(self.path, True).match(path))
        return _prefix(path, self.path)

    def matches_deny(self, dest: Destination) -> bool:
        """Whether a destination falls under this pattern in a deny list (broad)."""
        if self.form == "url":
            return self._url_matches(dest)
        views = _views(dest, raw=True)
        if "*" in self.path:
            regex = _glob(self.path, False)
            return any(regex.search(v) for v in views)
        return any(self.path in v for v in views)

    def matches_allow(self, dest: Destination) -> bool:
        """Whether a destination is covered by this pattern in an allow list (strict)."""
        url = dest.url
        if self.form == "url":
            return self._url_matches(dest)
        if not url.host:
            return False
        if self.form == "path":
            path = _decode(url.path + (f"?{url.query}" if url.query else ""))
            if "*" in self.path:
                return bool(_glob(self.path, True).match(path))
            return _prefix(path, self.path)
        views = _views(dest, raw=False)
        if "*" in self.path:
            regex = _glob(self.path, False)
            return any(regex.search(v) for v in views)
        return any(self.path in v for v in views)


def _shown(dest: Destination) -> str:
    text = dest.url.url
    return text if len(text) <= 120 else text[:117] + "..."


class _UrlRule(CompiledRule):
    kinds = _NAV_KINDS

    def __init__(self, policy, rule) -> None:
        super().__init__(policy, rule)
        self.patterns = [UrlPattern.compile(p) for p in rule.patterns]


def _deny_keys(pattern: UrlPattern) -> frozenset[tuple] | None:
    """Keys a destination must have for a deny pattern to match it (see `_index`)."""
    if pattern.form == "url":
        return host_pattern_keys(pattern.host)
    literal = max(pattern.path.split("*"), key=len)
    return trigram_keys("tri", literal)


@register("url_deny")
class UrlDeny(_UrlRule):
    """Evaluator of `url_deny` rules."""

    def __init__(self, policy, rule) -> None:
        super().__init__(policy, rule)
        self._keys = union(_deny_keys(p) for p in self.patterns)

    def index_keys(self, kind: str) -> frozenset[tuple] | None:
        return self._keys

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        for dest in destinations(ctx):
            hit = next((p for p in self.patterns if p.matches_deny(dest)), None)
            if hit is not None:
                yield self.finding(
                    f"{dest.via} to {_shown(dest)} matches the denied URL pattern {hit.text!r}",
                    guidance="Do not open this page. Stay within the pages the policy allows.",
                    evidence={"destination": dest.url.url, "pattern": hit.text, "via": dest.via},
                )
                return


@register("url_allow")
class UrlAllow(_UrlRule):
    """Evaluator of `url_allow` rules."""

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        for dest in destinations(ctx):
            if dest.url.url in _HARMLESS:
                continue
            if any(p.matches_allow(dest) for p in self.patterns):
                continue
            yield self.finding(
                f"{dest.via} to {_shown(dest)} is not among the allowed URLs",
                guidance=f"Only these URLs may be opened: {', '.join(p.text for p in self.patterns)}.",
                evidence={"destination": dest.url.url, "allowed": [p.text for p in self.patterns]},
            )
            return


#: Actions that act on the page the tab shows (judged when that page is outside an allow-list).
_ON_PAGE = frozenset(
    {"click", "dblclick", "tap", "press", "type", "fill", "clear", "check", "uncheck", "select_option",
     "set_input_files", "drag", "drop", "dispatch_event", "hover", "focus", "select_text", "accept_dialog",
     "evaluate", "add_script_tag", "add_style_tag", "set_content", "reload"}
)  # fmt: skip


@lru_cache(maxsize=4096)
def _allowed_host(host: str, patterns: tuple[str, ...]) -> bool:
    """Whether `host` matches one of `patterns` (shared by allow-lists with the same patterns)."""
    return any(host_matches(host, p) for p in patterns)


@register("domain_allow")
class DomainAllow(CompiledRule):
    """Evaluator of `domain_allow` rules.

    Besides where an action leads, it judges where the tab already is: once the tab shows a
    page outside the allow-list (however it got there: a redirect, a script, a popup), actions
    on that page are refused, with guidance to go back. Leaving it (`go_back`, `goto` an allowed
    page) is not.

    The rule's ``subresources`` hosts are never a destination (a goto, a link, a form, a new
    page, `page.request` there is refused); an action inside an embedded frame they serve (a
    video player's play button) is not judged as going there.
    """

    kinds = _NAV_KINDS | _ON_PAGE

    def __init__(self, policy, rule) -> None:
        super().__init__(policy, rule)
        self._patterns = tuple(rule.patterns)
        self._embeds = tuple(getattr(rule, "subresources", ()) or ())
        self._memo_key = "domain_allow\u0000" + "\u0000".join(self._patterns) + "\u0001" + "\u0000".join(
            self._embeds
        )

    def _outside(self, ctx: RuleContext) -> str | None:
        url = ctx.page_url
        if ctx.action.kind not in _ON_PAGE or not ctx.step.observation.url or url.url in _HARMLESS:
            return None
        if url.scheme in ("about", "chrome-error") and not url.host:
            return None
        if url.host and _allowed_host(url.host, self._patterns):
            return None
        return url.host or f"a {url.scheme or 'relative'}: page"

    def _judged(self, ctx: RuleContext) -> tuple[str | None, tuple[tuple[Destination, str | None], ...]]:
        """Where the tab is outside the list (or None), and the destinations that leave it:
        the same for every allow-list with the same patterns, so computed once per step."""
        found = ctx.memo.get(self._memo_key)
        if found is None:
            leaving = tuple(
                (dest, dest.url.host)
                for dest in destinations(ctx)
                if dest.url.url not in _HARMLESS
                and not (dest.url.host and _allowed_host(dest.url.host, self._patterns))
                and not (dest.via == "frame" and dest.url.host and _allowed_host(dest.url.host, self._embeds))
            )
            found = ctx.memo[self._memo_key] = (self._outside(ctx), leaving)
        return found  # type: ignore[return-value]

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        where, leaving = self._judged(ctx)
        if where is not None:
            allowed = ", ".join(self.rule.patterns)
            yield self.finding(
                f"the tab is on {where}, outside the allowed domains; actions on that page are not allowed",
                guidance=f"This page is outside the allowed domains ({allowed}). Do not act on it: go back "
                "(page.go_back()) or open a page on an allowed domain (page.goto(...)), then continue.",
                evidence={"page": ctx.page_url.url, "allowed": list(self.rule.patterns)},
            )
            return
        for dest, host in leaving:
            where = host or f"a {dest.url.scheme or 'relative'}: URL with no host"
            yield self.finding(
                f"{dest.via} to {where} leaves the allowed domains",
                guidance=f"Stay on the allowed domains: {', '.join(self.rule.patterns)}.",
                evidence={"destination": dest.url.url, "host": host, "allowed": list(self.rule.patterns)},
            )
            return


@register("domain_deny")
class DomainDeny(CompiledRule):
    """Evaluator of `domain_deny` rules."""

    kinds = _NAV_KINDS

    def __init__(self, policy, rule) -> None:
        super().__init__(policy, rule)
        self._keys = union(host_pattern_keys(p) for p in rule.patterns)

    def index_keys(self, kind: str) -> frozenset[tuple] | None:
        return self._keys

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        for dest in destinations(ctx):
            host = dest.url.host
            hit = next((p for p in self.rule.patterns if host and host_matches(host, p)), None)
            if hit is not None:
                yield self.finding(
                    f"{dest.via} to {host} is on a denied domain ({hit})",
                    guidance="Do not go to this site.",
                    evidence={"destination": dest.url.url, "host": host, "pattern": hit},
                )
                return
