"""The navigation gate: with no proxy, a top-level navigation the policies refuse never leaves.

The facts reader stops what it can see in the page (a judged link or form that goes elsewhere,
a script navigation within its pin window), but some navigations start where no reader runs
yet: a popup that ``window.open`` opened (its first request leaves as the tab is created), a
new document whose own script moves it on load, a navigation long after the action. Without a
network layer (`Guard.network` is None) the gate closes those: it routes the browser context's
requests through Playwright (`BrowserContext.route`, which also holds a popup's first request
until it is decided) and judges every **navigation** (a page's, a popup's or a frame's
document; subresources are not judged) against the policies' URL and domain rules, exactly as
the network layer's egress rules would (`EgressRules`). The hops of HTTP redirects, which
Playwright's routes do not see, are judged by a browser-level DevTools session
(`pagewarden.interceptors._hops`). The agent's own routes run behind the gate, and removing
routes on the guarded context puts the gate's back (`reroute`). A refused navigation is
answered with ``204 No Content``: the browser stays on the page it was on (a frame or a popup
stays blank), nothing reaches the refused host, and the agent's next guarded call raises
`ActionBlocked` naming it, as it does for the network layer's refusals; the refusal is also a
``network`` event and a ``network_refused`` log line. In ``monitor`` mode it is reported only.

Only requests whose URL *may* be refused reach Python: the route's pattern is a regular
expression built from the policies (hosts outside each allow-list, denied hosts, the literal
text of ``url_deny`` patterns, any percent-encoded URL), so navigations and subresources on
allowed hosts are continued by Playwright's driver without a round trip. A guard whose policies
have no URL or domain rule installs no gate. Playwright disables the HTTP cache of a context
whose requests it routes.
"""

from __future__ import annotations

import re
import threading
import weakref
from collections.abc import Callable
from typing import Any

from pagewarden._regex import trie_pattern
from pagewarden._url import _normalise_host, parse_url, registrable_domain
from pagewarden.guard._verdict import Verdict
from pagewarden.interceptors._hops import HopGate, drive_hops_async, drive_hops_sync
from pagewarden.policies._egress import NETWORK_POLICY, EgressRules, Refusal, refusals_verdict

__all__ = ["NavigationGate", "navigation_pattern", "pin_hosts"]

_SCHEME = r"^https?://"
_HOST_CHAR = r"[^/?#@:\[\]\s]"
#: the end of the host part of a URL (a port, then the path, query, fragment, or nothing)
_HOST_END = r"(?::\d+)?(?:[/?#]|$)"
LAYER = "the guard's navigation gate (no proxy runs)"


def _host_of_pattern(pattern: str) -> tuple[str, str] | None:
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


def _allowed_host_re(pattern: str) -> str | None:
    """A regex for hosts `pattern` certainly matches (a subset: exclusion from the gate's
    pattern is safe); None when it cannot say ('' for ``*``: every host)."""
    parsed = _host_of_pattern(pattern)
    if parsed is None:
        return None
    prefix, host = parsed
    if prefix == "*":
        return ""
    literal = re.escape(host)
    if prefix == "*.":
        return rf"{_HOST_CHAR}+\.{literal}"
    if prefix == ".":
        return rf"(?:{_HOST_CHAR}+\.)?{literal}"
    return literal


def _longest_literal(text: str) -> str:
    return max(text.split("*"), key=len)


def _trie(literals: list[str]) -> str:
    """One alternation of `literals` with shared prefixes factored out (`trie_pattern`): the
    pattern of thousands of policies stays fast in Playwright's driver, which tests it on every
    request of the context. A literal that another one extends is enough alone (the search
    looks for a literal anywhere), so the longer ones are dropped. Letters are lower-cased (the
    pattern is case-insensitive)."""
    kept: list[str] = []
    for literal in sorted({lit.lower() if lit.isascii() else lit for lit in literals}):
        if not kept or not literal.startswith(kept[-1]):  # sorted: a prefix comes just before
            kept.append(literal)
    return trie_pattern(kept)


def navigation_pattern(rules: EgressRules) -> re.Pattern[str] | None:
    """The route pattern of the gate: a regex every URL the rules may refuse matches (other
    URLs may match too: the gate then judges and lets them through). None: nothing to refuse."""
    parts: list[str] = []
    hosts: list[str] = []  # text the host part of a refused URL contains
    texts: list[str] = []  # text a refused URL contains after its scheme
    seen_allow: set[tuple[str, ...]] = set()
    for rule in rules.domain_allow:
        if rule.patterns in seen_allow:
            continue
        seen_allow.add(rule.patterns)
        subs = [_allowed_host_re(p) for p in rule.patterns]
        if "" in subs:
            continue  # `*`: this rule allows every host
        known = [s for s in subs if s]
        if not known:
            parts.append(_SCHEME)
            continue
        parts.append(_SCHEME + "(?!(?:" + "|".join(dict.fromkeys(known)) + ")" + _HOST_END + ")")
    ip_literal = False

    def denied_host(pattern: str) -> None:
        parsed = _host_of_pattern(pattern)
        if parsed is None:
            if pattern.strip().startswith("["):
                parts.append(_SCHEME + r"[^/?#]*\[")
        elif parsed[0] == "*":
            parts.append(_SCHEME)
        else:
            hosts.append(parsed[1])

    for host_rule in rules.domain_deny:
        for pattern in host_rule.patterns:
            denied_host(pattern)
            ip_literal = ip_literal or bool(re.fullmatch(r"[\d.]+|\[.*", pattern.strip()))
    for url_rule in rules.url_deny:
        for url_pattern in url_rule.patterns:
            if url_pattern.form == "url":
                host = url_pattern.host
                literal = _longest_literal(host)
                named = _host_of_pattern(host) is not None or host.strip().startswith("[")
                if "*" not in host[2:] and named:
                    denied_host(host)
                elif literal.strip("."):
                    hosts.append(literal)
                else:
                    parts.append(_SCHEME)
                ip_literal = ip_literal or bool(re.fullmatch(r"[\d.]+|\[.*", host))
            else:
                literal = _longest_literal(url_pattern.path)
                if literal:
                    texts.append(literal)
                else:
                    parts.append(_SCHEME)
                parts.append(_SCHEME + ".*%")  # percent-encoded text is matched decoded
    if hosts:
        parts.append(_SCHEME + r"[^/?#]*" + _trie(hosts))
    if texts:
        parts.append(_SCHEME + ".*" + _trie(texts))
    if rules.url_allow:
        parts.append(_SCHEME)
    if ip_literal:
        parts.append(_SCHEME + r"[^/?#]*\[")  # an IPv6 spelling of a denied IPv4 address
    if not parts:
        return None
    unique = list(dict.fromkeys(parts))
    if _SCHEME in unique:
        return re.compile(_SCHEME, re.IGNORECASE)
    return re.compile("|".join(f"(?:{p})" for p in unique), re.IGNORECASE)


def pin_hosts(rules: EgressRules) -> list[list[str]]:
    """The policies' allow-list for the facts reader's pin: one list of normalised host
    patterns (``x.com``, ``*.x.com``, ``.x.com``, ``*``) per ``domain_allow`` rule (a host must
    match each); empty when the policies have no allow-list."""
    out: list[list[str]] = []
    for rule in rules.domain_allow:
        patterns: list[str] = []
        for pattern in rule.patterns:
            parsed = _host_of_pattern(pattern)
            if parsed is not None:
                prefix, host = parsed
                patterns.append("*" if prefix == "*" else prefix + host)
        if patterns not in out:
            out.append(patterns)
    return out


def page_site(url: str) -> str | None:
    """The registrable domain of a page URL (None for pages with no host)."""
    host = parse_url(url).host if url else ""
    return (registrable_domain(host) or host or None) if host else None


class NavigationGate:
    """The gate of one guarded session (see the module docstring). Thread-safe: the route
    handler runs on Playwright's dispatcher, the pipeline on the agent's thread."""

    def __init__(self, guard: Any, rules: EgressRules, pattern: re.Pattern[str]) -> None:
        self.guard = guard
        self.rules = rules
        self.pattern = pattern
        self._lock = threading.Lock()
        self._pending: list[Refusal] = []
        #: every refusal of the session (monitor mode's too), oldest first
        self.refusals: list[Refusal] = []
        self._contexts: weakref.WeakSet[Any] = weakref.WeakSet()
        #: the redirect hops' interception (see `pagewarden.interceptors._hops`)
        self.hops = HopGate(self)

    @classmethod
    def for_guard(cls, guard: Any) -> NavigationGate | None:
        """The gate for `guard`, or None when its policies have no URL or domain rule."""
        rules = EgressRules.from_policies(getattr(guard, "policies", None))
        pattern = navigation_pattern(rules)
        return cls(guard, rules, pattern) if pattern is not None else None

    @property
    def enforce(self) -> bool:
        """Refusals are enforced unless the guard only monitors."""
        return getattr(self.guard, "mode", "enforce") == "enforce"

    # -- installing -------------------------------------------------------------------------
    def install(self, context: Any, mode: str) -> Callable[[], Any] | None:
        """A call that routes `context`'s requests through the gate (None when that is done
        already): it returns an awaitable under the async API and routes at once under the
        sync API. Call `uninstalled(context)` if the call could not be made or failed."""
        try:
            if context in self._contexts:
                return None
            self._contexts.add(context)
        except TypeError:  # not weak-referenceable: not a Playwright context
            return None
        if mode == "async":

            async def route_async() -> None:
                await context.route(self.pattern, self._route_async)
                await self._install_hops_async(context)

            return route_async

        def route_sync() -> None:
            context.route(self.pattern, self._route_sync)
            try:
                drive_hops_sync(self.hops.install(context, "sync"))
            except Exception as exc:  # noqa: BLE001 - no DevTools session (not Chromium): frames and
                self._hops_failed(exc)  # top-level navigations stay gated

        return route_sync

    async def _install_hops_async(self, context: Any) -> None:
        try:
            await drive_hops_async(self.hops.install(context, "async"))
        except Exception as exc:  # noqa: BLE001 - see route_sync
            self._hops_failed(exc)

    def _hops_failed(self, exc: Exception) -> None:
        self.guard.log.warning(
            "navigation_gate_hops_unavailable", error=f"{type(exc).__name__}: {exc}",
            detail="redirect hops to refused hosts are not intercepted in this browser",
        )  # fmt: skip

    def reroute(self, context: Any, mode: str) -> Callable[[], Any] | None:
        """A call that puts the gate's route back on `context` after the agent removed routes
        there (``unroute_all``, ``unroute``): ours is removed if it is left, then added again,
        ahead of the agent's (None when `context` was never routed through the gate)."""
        try:
            if context not in self._contexts:
                return None
        except TypeError:
            return None
        if mode == "async":

            async def again_async() -> None:
                await context.unroute(self.pattern, self._route_async)
                await context.route(self.pattern, self._route_async)

            return again_async

        def again_sync() -> None:
            context.unroute(self.pattern, self._route_sync)
            context.route(self.pattern, self._route_sync)

        return again_sync

    def before_route_handler(self, route: Any, request: Any) -> Any:
        """For a route handler of the agent (which Playwright asks before the gate): refuse a
        navigation the gate refuses, so that the handler's ``continue_()`` cannot let it pass.
        Returns None when the handler may run, else what the route handler should return (the
        awaitable of the 204 answer under the async API)."""
        refusal = self.judge(request)
        if refusal is None:
            return None
        self.refused(refusal)
        if not self.enforce:
            return None
        try:
            answer = route.fulfill(status=204)
        except Exception:  # noqa: BLE001 - the page or context closed meanwhile
            return True
        return answer if answer is not None else True

    def uninstalled(self, context: Any) -> None:
        """`context` is not routed after all (the next action tries again)."""
        self._contexts.discard(context)

    # -- judging ----------------------------------------------------------------------------
    def judge(self, request: Any) -> Refusal | None:
        """The refusal of a navigation the policies refuse (a page's, a popup's or a frame's
        document: the egress rules judge frames as navigations); None for anything else."""
        try:
            if not request.is_navigation_request():
                return None
        except Exception:  # noqa: BLE001 - not a request the gate can judge: not a navigation
            return None
        url = str(request.url)
        try:
            return self.rules.judge(url, navigation=True, action="navigation", method=request.method)
        except Exception as exc:  # noqa: BLE001 - cannot be judged: refused
            host = parse_url(url).host
            return Refusal(
                "navigation", url, host, "gate_error", NETWORK_POLICY,
                f"the navigation could not be judged ({type(exc).__name__})",
            )  # fmt: skip

    async def _route_async(self, route: Any, request: Any) -> None:
        refusal = self.judge(request)
        try:
            if refusal is not None and self.enforce:
                await route.fulfill(status=204)
            else:
                await route.fallback()
        except Exception:  # noqa: BLE001 - the page or context closed meanwhile
            pass
        if refusal is not None:
            self.refused(refusal)

    def _route_sync(self, route: Any, request: Any) -> None:
        refusal = self.judge(request)
        try:
            if refusal is not None and self.enforce:
                route.fulfill(status=204)
            else:
                route.fallback()
        except Exception:  # noqa: BLE001 - the page or context closed meanwhile
            pass
        if refusal is not None:
            self.refused(refusal)

    def refused(self, refusal: Refusal) -> None:
        """Record a refusal: a ``network`` event, a log line and (enforced) a verdict for the
        agent's next call."""
        with self._lock:
            last = self.refusals[-1] if self.refusals else None
            same = last is not None and (last.url, last.rule) == (refusal.url, refusal.rule)
            if same and last is not None and refusal.ts - last.ts < 1:
                return  # the same request, judged by the route and by the DevTools session
            self.refusals.append(refusal)
            if self.enforce:
                self._pending.append(refusal)
        data = refusal.to_dict()
        data.pop("tab", None)
        data["layer"] = "gate"
        self.guard.emit("network", data)
        self.guard.log.info(
            "network_refused", action=refusal.action, host=refusal.host, rule=refusal.rule,
            policy_id=refusal.policy_id, layer="gate",
        )  # fmt: skip

    # -- the agent's side -------------------------------------------------------------------
    def has_pending(self) -> bool:
        """Whether refusals wait to be reported to the agent."""
        return bool(self._pending)

    def pending_verdict(self, step: Any) -> Verdict | None:
        """The BLOCK for the refusals since the agent's last call (reported once), or None."""
        with self._lock:
            pending, self._pending = self._pending, []
        return refusals_verdict(pending, step, mode=self.guard.mode, enforced=self.enforce, layer=LAYER)
