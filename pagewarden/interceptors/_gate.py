"""The navigation gate: with no proxy, a request the policies' egress rules refuse never leaves.

The facts reader stops what it can see in the page (a judged link or form that goes elsewhere,
a script navigation within its pin window), but some navigations start where no reader runs
yet: a popup that ``window.open`` opened (its first request leaves as the tab is created), a
new document whose own script moves it on load, a navigation long after the action; and a page
sends data without navigating at all (fetch, an image, a beacon, a websocket). Without a
network layer (`Guard.network` is None) the gate closes those: it routes the browser context's
requests through Playwright (`BrowserContext.route`, which also holds a popup's first request
until it is decided) and judges each exactly as the network layer's egress rules would
(`EgressRules.judge`): a **navigation** (a page's, a popup's or a frame's document) against the
URL and domain rules, **any other request** (fetch, XHR, images, beacons, pings, prefetches,
stylesheets, fonts, scripts, EventSource, a dedicated worker's requests) against the host
rules only (``domain_deny``, ``domain_allow``). **Websockets**, which request routes do not see,
go through `BrowserContext.route_web_socket` on a pattern of the host rules. The hops of HTTP
redirects of documents, which Playwright's routes do not see, are judged by a browser-level
DevTools session (`pagewarden.interceptors._hops`). The agent's own routes run behind the
gate, and removing routes on the guarded context puts the gate's back (`reroute`).

A refused navigation is answered with ``204 No Content``: the browser stays on the page it was
on (a frame or a popup stays blank), nothing reaches the refused host. A refused subresource
fails with ``net::ERR_BLOCKED_BY_CLIENT`` (as a content blocker's); a refused websocket is closed
(1008) before it connects. Every refusal is a ``network`` event (``layer: "gate"``) and a
``network_refused`` log line; a navigation, a redirect hop or a websocket also makes the
agent's running action (`signal`) or its next guarded call raise `ActionBlocked` naming it, as
the network layer's refusals do (one a frame loads by itself is a ``refusal`` trace line instead),
while a refused subresource is an event only (a page that keeps loading a third-party image
must not make every action raise). In ``monitor`` mode refusals are reported only.

Only requests whose URL *may* be refused reach Python: the route's pattern is a regular
expression built from the policies (hosts outside each allow-list, denied hosts, the literal
text of ``url_deny`` patterns, any percent-encoded URL), so navigations and subresources on
allowed hosts are continued by Playwright's driver without a round trip. A guard whose policies
have no URL or domain rule installs no gate. Playwright disables the HTTP cache of a context
whose requests it routes.

With a ``domain_allow`` rule, every document of a guarded context also gets a
Content-Security-Policy naming the allowed hosts (`pagewarden.interceptors._csp`): Chromium then
refuses what the routes do not see — the redirect hops of a subresource, websockets from workers
or from a constructor the page captured before the guard was attached — with no round trip.

Downloads a response starts (``Content-Disposition: attachment``, a type the browser does not
render: a zip, an executable, ``application/octet-stream``) on a link, a redirect, a form's post, a
script's navigation, a script-made ``<a download>`` or a frame are judged by the same DevTools
session at the response stage, before a byte of the body reaches the browser, as the network
layer judges them (`pagewarden.rules._downloads`): unless a download action the guard allowed
(and a human approved) led to that site in the last 30 s (`grant`), the request is aborted (the
page stays where it was, nothing is saved; a script-made ``<a download>`` shows as a cancelled
download) and recorded as a ``download`` refusal (``PW-DOWNLOAD``, rule ``download``), raised at
the agent like a refused navigation. This is why, without a proxy, every guarded session has a
gate, even with no URL or domain rule: then it routes no request and only that session runs.

Not seen by the gate (the network layer sees them): without an allow-list, a shared worker's or a
service worker's own requests (`launch` blocks service workers and shared workers when a gate is
needed), websockets opened outside Playwright's mock of the page's ``WebSocket``, the redirect hops
of a subresource; with one, a prefetch's redirect; always DNS prefetch / preconnect, WebRTC.
"""

from __future__ import annotations

import contextlib
import json
import re
import threading
import weakref
from collections import deque
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from pagewarden._calls import Call
from pagewarden._regex import trie_pattern
from pagewarden._url import host_of_pattern as _host_of_pattern
from pagewarden._url import parse_url, registrable_domain
from pagewarden.interceptors._csp import (
    REPORT_HOST,
    csp_policies,
    csp_script,
    new_binding_name,
    violation_url,
)
from pagewarden.interceptors._frames import FRAME_OWN, MONITORED, FrameActions, RefusalSignal, record_unraised
from pagewarden.interceptors._hops import HopGate, Steps, drive_hops_async, drive_hops_sync
from pagewarden.interceptors._webrtc import webrtc_hosts, webrtc_refusal, webrtc_script
from pagewarden.rules import (
    AGENT_ACTIONS,
    NETWORK_POLICY,
    REFUSALS_KEPT,
    DownloadGrants,
    EgressRules,
    Refusal,
    refusals_verdict,
    reported_to_agent,
    split_pending,
)
from pagewarden.steps import Verdict

__all__ = ["NavigationGate", "gate_needed", "navigation_pattern", "pin_hosts"]

_SCHEME = r"^https?://"
_WS_SCHEME = r"^wss?://"
_HOST_CHAR = r"[^/?#@:\[\]\s]"
#: the end of the host part of a URL (a port, then the path, query, fragment, or nothing)
_HOST_END = r"(?::\d+)?(?:[/?#]|$)"
LAYER = "the guard's navigation gate (no proxy runs)"
#: the refusals two layers may tell of for one request although it was refused (a subresource or
#: a websocket a route refuses and a content security policy reports; see `_told_already`)
_REPORTED_TWICE = frozenset({"request", "websocket"})


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


def navigation_pattern(
    rules: EgressRules, *, urls: bool = True, scheme: str = _SCHEME
) -> re.Pattern[str] | None:
    """The route pattern of the gate: a regex every URL the rules may refuse matches (other
    URLs may match too: the gate then judges and lets them through). None: nothing to refuse.
    ``urls=False``: the host rules only (``domain_allow``, ``domain_deny``: what refuses a
    websocket), for URLs of `scheme` (a regex of the scheme and ``://``)."""
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
            parts.append(scheme)
            continue
        parts.append(scheme + "(?!(?:" + "|".join(dict.fromkeys(known)) + ")" + _HOST_END + ")")
    ip_literal = False

    def denied_host(pattern: str) -> None:
        parsed = _host_of_pattern(pattern)
        if parsed is None:
            if pattern.strip().startswith("["):
                parts.append(scheme + r"[^/?#]*\[")
        elif parsed[0] == "*":
            parts.append(scheme)
        else:
            hosts.append(parsed[1])

    for host_rule in rules.domain_deny:
        for pattern in host_rule.patterns:
            denied_host(pattern)
            ip_literal = ip_literal or bool(re.fullmatch(r"[\d.]+|\[.*", pattern.strip()))
    for url_rule in rules.url_deny if urls else ():
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
                    parts.append(scheme)
                ip_literal = ip_literal or bool(re.fullmatch(r"[\d.]+|\[.*", host))
            else:
                literal = _longest_literal(url_pattern.path)
                if literal:
                    texts.append(literal)
                else:
                    parts.append(scheme)
                parts.append(scheme + ".*%")  # percent-encoded text is matched decoded
    if hosts:
        parts.append(scheme + r"[^/?#]*" + _trie(hosts))
    if texts:
        parts.append(scheme + ".*" + _trie(texts))
    if rules.url_allow and urls:
        parts.append(scheme)
    if ip_literal:
        parts.append(scheme + r"[^/?#]*\[")  # an IPv6 spelling of a denied IPv4 address
    if not parts:
        return None
    unique = list(dict.fromkeys(parts))
    if scheme in unique:
        return re.compile(scheme, re.IGNORECASE)
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


def gate_needed(guard: Any) -> bool:
    """Whether `guard`'s policies have a URL or domain rule (without a network layer, its
    guarded contexts are then routed through a navigation gate)."""
    try:
        return navigation_pattern(EgressRules.from_policies(getattr(guard, "policies", None))) is not None
    except Exception:  # noqa: BLE001 - policies it cannot read: the gate decides later
        return True


def session_access(guard: Any) -> Callable[[], Any]:
    """The guard's current session's opened private address blocks (`InternalAccess`)."""
    return lambda: getattr(getattr(guard, "session", None), "internal", None)


def page_site(url: str) -> str | None:
    """The registrable domain of a page URL (None for pages with no host)."""
    host = parse_url(url).host if url else ""
    return (registrable_domain(host) or host or None) if host else None


def keep_dispose(undo: list[Callable[[], Any]], disposable: Any) -> None:
    """Remember how to undo an ``add_init_script`` / ``expose_binding``: the Disposable they
    return (Playwright >= 1.57; its Python API names the undoing ``close()``)."""
    close = getattr(disposable, "close", None)
    if callable(close):
        undo.append(close)


def _websocket_unroute(context: Any, mode: str) -> Callable[[], Any]:
    """A call removing the gate's websocket route (just added: the first of `context`'s) from
    `context`. Playwright has no per-route ``unroute`` for websockets (only ``unroute_all``, which
    would take the agent's too): the route's entry is removed from the context's list and the
    browser told the remaining patterns, as Playwright's own ``route_web_socket`` does."""
    impl = getattr(context, "_impl_obj", context)
    entry = impl._web_socket_routes[0]

    def unroute() -> Any:
        if entry in impl._web_socket_routes:
            impl._web_socket_routes.remove(entry)
        update = impl._update_web_socket_interception_patterns()
        return context._sync(update) if mode == "sync" else update

    return unroute


def _in_subframe(request: Any) -> bool:
    """Whether a navigation request is a frame's inside a page (an embed, an ad frame), not a
    tab's top document; a request whose frame cannot be told counts as the top document's."""
    try:
        return request.frame.parent_frame is not None
    except Exception:  # noqa: BLE001 - a popup's first request, a closed page
        return False


class NavigationGate:
    """The gate of one guarded session (see the module docstring). Thread-safe: the route
    handler runs on Playwright's dispatcher, the pipeline on the agent's thread."""

    def __init__(self, guard: Any, rules: EgressRules, pattern: re.Pattern[str] | None) -> None:
        self.guard = guard
        self.rules = rules
        #: the URLs the gate's route judges (None: the policies refuse no URL; nothing is routed)
        self.pattern = pattern
        #: the downloads judged download actions may start
        self.downloads = DownloadGrants()
        #: the websockets that may be refused (host rules only; None: none can be)
        self.websocket_pattern = navigation_pattern(rules, urls=False, scheme=_WS_SCHEME)
        self._lock = threading.Lock()
        self._pending: list[Refusal] = []
        #: (url, rule, action) -> when it was last recorded (see `_REPORTED_TWICE`)
        self._recent: dict[tuple[str, str, str], float] = {}
        #: the session's latest refusals (monitor mode's too), oldest first; bounded, so a page that
        #: keeps requesting a refused host for hours does not grow memory (each refusal is also a
        #: `network` event and a log line, which keep them all)
        self.refusals: deque[Refusal] = deque(maxlen=REFUSALS_KEPT)
        self._contexts: weakref.WeakSet[Any] = weakref.WeakSet()
        #: per routed context, what the gate installed there, as the calls that undo it (`release`)
        self._undo: weakref.WeakKeyDictionary[Any, list[Callable[[], Any]]] = weakref.WeakKeyDictionary()
        #: the Content-Security-Policies the gate gives documents and worker scripts (one per
        #: ``domain_allow`` rule CSP can express; see `pagewarden.interceptors._csp`); empty
        #: without an allow-list, and in monitor mode (a policy cannot only report in ``<meta>``)
        self.csp: list[str] = csp_policies(rules.domain_allow, rules.allow_hosts) if self.enforce else []
        #: the name of the binding the documents' policies report violations through
        self.csp_binding = new_binding_name()
        #: the name of the binding the documents' WebRTC script reports refusals through
        self.webrtc_binding = new_binding_name()
        #: the redirect hops' interception (see `pagewarden.interceptors._hops`)
        self.hops = HopGate(self)
        #: when the agent acts inside a frame (a frame's refused navigation is then its own)
        self.frame_actions = FrameActions()
        #: fired for each refusal raised at the agent (a running action then ends at once)
        self.signal = RefusalSignal(lambda: bool(self._pending))

    @classmethod
    def for_guard(cls, guard: Any) -> NavigationGate:
        """The gate for `guard` (with no URL or domain rule it routes nothing and judges the
        downloads responses start only)."""
        rules = EgressRules.from_policies(getattr(guard, "policies", None), access=session_access(guard))
        return cls(guard, rules, navigation_pattern(rules))

    def grant(self, step: Any, verdict: Verdict) -> None:
        """`step` is about to run, allowed by `verdict`: a download it starts may be saved."""
        self.downloads.grant(step, verdict)

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
                undo = self._undo.setdefault(context, [])
                await drive_hops_async(self._install_csp(context))
                await drive_hops_async(self._install_webrtc(context))
                if self.pattern is not None:
                    await context.route(self.pattern, self._route_async)
                    undo.append(lambda: context.unroute(self.pattern, self._route_async))
                if self.websocket_pattern is not None:
                    try:
                        await context.route_web_socket(self.websocket_pattern, self._websocket_async)
                        undo.append(_websocket_unroute(context, "async"))
                    except Exception as exc:  # noqa: BLE001 - an older Playwright: websockets stay open
                        self._websockets_failed(exc)
                await self._install_hops_async(context)

            return route_async

        def route_sync() -> None:
            undo = self._undo.setdefault(context, [])
            drive_hops_sync(self._install_csp(context))
            drive_hops_sync(self._install_webrtc(context))
            if self.pattern is not None:
                context.route(self.pattern, self._route_sync)
                undo.append(lambda: context.unroute(self.pattern, self._route_sync))
            if self.websocket_pattern is not None:
                try:
                    context.route_web_socket(self.websocket_pattern, self._websocket_sync)
                    undo.append(_websocket_unroute(context, "sync"))
                except Exception as exc:  # noqa: BLE001 - see route_async
                    self._websockets_failed(exc)
            try:
                drive_hops_sync(self.hops.install(context, "sync"))
            except Exception as exc:  # noqa: BLE001 - no DevTools session (not Chromium): frames and
                self._hops_failed(exc)  # top-level navigations stay gated

        return route_sync

    def _install_csp(self, context: Any) -> Steps:
        """Steps giving `context`'s documents the gate's policies: later ones by an init script,
        loaded ones now (see `pagewarden.interceptors._csp`); run by `drive_hops_async` /
        `drive_hops_sync`."""
        if not self.csp:
            return
        script = csp_script(self.csp, self.csp_binding)
        undo = self._undo.setdefault(context, [])
        try:
            keep_dispose(undo, (yield Call(context.expose_binding, (self.csp_binding, self._violation))))
        except Exception as exc:  # noqa: BLE001 - violations are then not reported (still refused)
            self._csp_failed(exc, "reporting")
        try:
            keep_dispose(undo, (yield Call(context.add_init_script, (script,))))
        except Exception as exc:  # noqa: BLE001 - the routes still judge what they see
            self._csp_failed(exc, "install")
            return
        for page in list(context.pages):
            for frame in list(page.frames):
                with contextlib.suppress(Exception):  # a frame navigating away gets the init script
                    yield Call(frame.evaluate, (script,))

    def _install_webrtc(self, context: Any) -> Steps:
        """Steps giving `context`'s documents the WebRTC judgement of the host rules (later ones by
        an init script, loaded ones now; see `pagewarden.interceptors._webrtc`)."""
        hosts = webrtc_hosts(self.rules) if self.enforce else None
        if hosts is None:
            return
        binding = self.webrtc_binding
        script = webrtc_script(hosts, binding)
        undo = self._undo.setdefault(context, [])
        try:
            keep_dispose(undo, (yield Call(context.expose_binding, (binding, self._webrtc_report))))
        except Exception as exc:  # noqa: BLE001 - refusals are then not reported (still refused)
            self._csp_failed(exc, "webrtc reporting")
        try:
            keep_dispose(undo, (yield Call(context.add_init_script, (script,))))
        except Exception as exc:  # noqa: BLE001
            self._csp_failed(exc, "webrtc")
            return
        for page in list(context.pages):
            for frame in list(page.frames):
                with contextlib.suppress(Exception):  # a frame navigating away gets the init script
                    yield Call(frame.evaluate, (script,))

    def _webrtc_report(self, source: Any, payload: Any = None) -> None:
        """A document's report of a WebRTC connection its script refused (the binding's callback),
        judged again (`webrtc_refusal`) and recorded as the gate's refusal."""
        refusal = webrtc_refusal(self.rules, payload)
        if refusal is not None:
            self.refused(refusal)

    def _csp_failed(self, exc: Exception, what: str) -> None:
        self.guard.log.warning(
            "navigation_gate_csp_unavailable", error=f"{type(exc).__name__}: {exc}", part=what,
            detail="redirect hops of subresources and websockets outside Playwright's routes may leave",
        )  # fmt: skip

    def _violation(self, source: Any, payload: Any = None) -> None:
        """A document's report that the gate's policy refused a request (the binding's callback):
        recorded as the gate's refusal of it (``websocket`` or ``request``). The page can call
        the binding too: what it says is judged like a request, never raised beyond that."""
        try:
            data = json.loads(payload) if isinstance(payload, str) and len(payload) < 16384 else None
        except ValueError:
            return
        found = violation_url(data)
        if found is None:
            return
        self.refused(self.csp_refusal(*found))

    def _reported(self, request: Any) -> bool:
        """Whether `request` is a worker's report of a violation of the gate's policy (its
        ``report-uri``: a dedicated worker's reports pass Playwright's routes): recorded as the
        refusal it reports; the caller answers it (it never leaves)."""
        if not self.csp:
            return False
        try:
            url = str(request.url)
            if parse_url(url).host != REPORT_HOST:
                return False
            body = request.post_data or ""
        except Exception:  # noqa: BLE001 - not a request we can read: judged as any other
            return False
        self.report(body)
        return True

    def report(self, body: str) -> None:
        """Record the violation a ``report-uri`` report (`body`, JSON) tells of."""
        try:
            report = json.loads(body).get("csp-report") if len(body) < 65536 else None
        except (ValueError, AttributeError):
            report = None
        if not isinstance(report, dict):
            return
        blocked = {"url": report.get("blocked-uri"), "directive": report.get("effective-directive")}
        found = violation_url(blocked)
        if found is not None:
            self.refused(self.csp_refusal(*found))

    def csp_refusal(self, url: str, directive: str) -> Refusal:
        """The refusal of a request the gate's policy refused (`url`, as the browser reports it:
        for a redirect hop, the allowed URL that redirected)."""
        action = "websocket" if url[:3].lower() in ("ws:", "wss") else "request"
        try:
            refusal = self.rules.judge(url, navigation=False, action=action)
        except Exception:  # noqa: BLE001 - cannot be judged: the policy's word stands
            refusal = None
        if refusal is not None:
            return refusal
        host = parse_url(url).host
        rule = self.rules.domain_allow[0] if self.rules.domain_allow else None
        return Refusal(
            action, url, host, "domain_allow", rule.policy_id if rule else NETWORK_POLICY,
            f"a request to {host or url} was redirected to a host outside the allowed domains "
            f"({directive}); the browser's content security policy refused the hop",
        )  # fmt: skip

    async def _install_hops_async(self, context: Any) -> None:
        try:
            await drive_hops_async(self.hops.install(context, "async"))
        except Exception as exc:  # noqa: BLE001 - see route_sync
            self._hops_failed(exc)

    def _websockets_failed(self, exc: Exception) -> None:
        self.guard.log.warning(
            "navigation_gate_websockets_unavailable", error=f"{type(exc).__name__}: {exc}",
            detail="websockets to refused hosts are not intercepted in this browser context",
        )  # fmt: skip

    def _hops_failed(self, exc: Exception) -> None:
        self.guard.log.warning(
            "navigation_gate_hops_unavailable", error=f"{type(exc).__name__}: {exc}",
            detail="redirect hops to refused hosts are not intercepted in this browser",
        )  # fmt: skip

    def reroute(self, context: Any, mode: str) -> Callable[[], Any] | None:
        """A call that puts the gate's route back on `context` after the agent removed routes
        there (``unroute_all``, ``unroute``): ours is removed if it is left, then added again,
        ahead of the agent's (None when `context` was never routed through the gate)."""
        if self.pattern is None:
            return None
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
        if self.pattern is None:
            return None
        refusal = self.judge(request)
        if refusal is None:
            return None
        self.refused(refusal)
        if not self.enforce:
            return None
        try:
            answer = self._refuse(route, refusal)
        except Exception:  # noqa: BLE001 - the page or context closed meanwhile
            return True
        return answer if answer is not None else True

    def release(self, context: Any) -> Steps:
        """Steps that take the gate off `context` (see `pagewarden.interceptors._release`): its
        route, websocket route, bindings and init scripts removed, its context left in the
        browser's DevTools interception; the gate judges nothing of `context` afterwards (the
        policies its scripts gave documents already loaded stay in those documents)."""
        self._contexts.discard(context)
        undo = self._undo.pop(context, [])
        for step in reversed(undo):
            with contextlib.suppress(Exception):  # a closed context has nothing left to undo
                yield Call(step)
        with contextlib.suppress(Exception):
            yield from self.hops.release(context)

    def uninstalled(self, context: Any) -> None:
        """`context` is not routed after all (the next action tries again)."""
        self._contexts.discard(context)

    # -- judging ----------------------------------------------------------------------------
    def judge(self, request: Any) -> Refusal | None:
        """The refusal of a request the policies refuse, else None: a navigation (a page's, a
        popup's or a frame's document) against the URL and host rules, any other request (an
        image, a fetch, a beacon, a ping, a prefetch, a stylesheet or font, a worker's request)
        against the host rules only (``domain_deny``, ``domain_allow``), as the network layer
        judges them (`EgressRules.judge`). A frame's document inside a page passes a
        ``domain_allow`` rule's ``subresources`` hosts; a tab's (a popup's first request, a
        frame it cannot tell) does not."""
        url = str(request.url)
        method = "GET"
        try:
            method = str(request.method)
            navigation = bool(request.is_navigation_request())
        except Exception:  # noqa: BLE001 - cannot tell: judged as a subresource (host rules)
            navigation = False
        action = "navigation" if navigation else "request"
        frame = navigation and _in_subframe(request)
        try:
            refusal = self.rules.judge(url, navigation=navigation, action=action, method=method, frame=frame)
        except Exception as exc:  # noqa: BLE001 - cannot be judged: refused
            host = parse_url(url).host
            refusal = Refusal(
                action, url, host, "gate_error", NETWORK_POLICY,
                f"the {action} could not be judged ({type(exc).__name__})", method,
            )  # fmt: skip
        if refusal is not None and frame:
            refusal = replace(refusal, subframe=True)
        return refusal

    @staticmethod
    def _refuse(route: Any, refusal: Refusal) -> Any:
        """Answer a refused request: a navigation with ``204 No Content`` (the tab or frame
        stays where it was), any other request with a network error, as a content blocker does
        (``net::ERR_BLOCKED_BY_CLIENT``: a fetch rejects, an image fails, nothing is sent)."""
        if refusal.action == "navigation":
            return route.fulfill(status=204)
        return route.abort("blockedbyclient")

    async def _route_async(self, route: Any, request: Any) -> None:
        if self._reported(request):
            with contextlib.suppress(Exception):  # the page or context closed meanwhile
                await route.fulfill(status=204)
            return
        refusal = self.judge(request)
        try:
            if refusal is not None and self.enforce:
                await self._refuse(route, refusal)
            else:
                await route.fallback()
        except Exception:  # noqa: BLE001 - the page or context closed meanwhile
            pass
        if refusal is not None:
            self.refused(refusal)

    def _route_sync(self, route: Any, request: Any) -> None:
        if self._reported(request):
            with contextlib.suppress(Exception):  # the page or context closed meanwhile
                route.fulfill(status=204)
            return
        refusal = self.judge(request)
        try:
            if refusal is not None and self.enforce:
                self._refuse(route, refusal)
            else:
                route.fallback()
        except Exception:  # noqa: BLE001 - the page or context closed meanwhile
            pass
        if refusal is not None:
            self.refused(refusal)

    def judge_websocket(self, url: str) -> Refusal | None:
        """The refusal of a websocket to `url` (host rules, as for any subresource), else None."""
        try:
            return self.rules.judge(url, navigation=False, action="websocket")
        except Exception as exc:  # noqa: BLE001 - cannot be judged: refused
            return Refusal(
                "websocket", url, parse_url(url).host, "gate_error", NETWORK_POLICY,
                f"the websocket could not be judged ({type(exc).__name__})",
            )  # fmt: skip

    async def _websocket_async(self, ws: Any) -> None:
        refusal = self.judge_websocket(str(ws.url))
        try:
            if refusal is not None and self.enforce:
                await ws.close(code=1008, reason="refused by pagewarden")  # never connected
            else:
                ws.connect_to_server()
        except Exception:  # noqa: BLE001 - the page or context closed meanwhile
            pass
        if refusal is not None:
            self.refused(refusal)

    def _websocket_sync(self, ws: Any) -> None:
        refusal = self.judge_websocket(str(ws.url))
        try:
            if refusal is not None and self.enforce:
                ws.close(code=1008, reason="refused by pagewarden")
            else:
                ws.connect_to_server()
        except Exception:  # noqa: BLE001 - the page or context closed meanwhile
            pass
        if refusal is not None:
            self.refused(refusal)

    def refused(self, refusal: Refusal) -> None:
        """Record a refusal: a ``network`` event, a log line and (enforced, for a navigation,
        a redirect hop or a websocket, as the network layer does) a verdict for the agent's next
        call. A refused subresource is recorded only: a page that keeps loading a third-party
        image must not make every action of the agent raise."""
        with self._lock:
            if self._told_already(refusal):
                return
            self.refusals.append(refusal)
            raised = self.enforce and self._to_agent(refusal)
            if raised:
                self._pending.append(refusal)
        data = refusal.to_dict()
        data.pop("tab", None)
        data["layer"] = "gate"
        self.guard.emit("network", data)
        self.guard.log.info(
            "network_refused", action=refusal.action, host=refusal.host, rule=refusal.rule,
            policy_id=refusal.policy_id, layer="gate",
        )  # fmt: skip
        if raised:
            self.signal.fire(refusal)
        elif refusal.action in AGENT_ACTIONS:
            # a frame's own, or monitor mode: recorded in the trace with why it was not raised
            why = FRAME_OWN if self.enforce else MONITORED
            record_unraised(self.guard, refusal, layer="gate", why=why)

    def _told_already(self, refusal: Refusal) -> bool:
        """Whether `refusal` is one already recorded, told by a second layer (call with the lock
        held). A navigation the route and the DevTools session both judge is refused by the first
        (the other never sees it): enforced, a refusal is the same as one still waiting to be
        told to the agent, never one the agent heard already (the agent going back to a refused
        URL is refused again, and told again). A subresource or a websocket (a route's refusal
        and a policy's report), and anything in monitor mode (both layers let it pass): the same
        within 1 s."""
        key = (refusal.url, refusal.rule, refusal.action)
        if self.enforce and refusal.action not in _REPORTED_TWICE:
            return any((p.url, p.rule, p.action) == key for p in self._pending)
        if refusal.action == "download":
            return False  # judged once, at its answer: a second one is another download
        seen = self._recent.get(key)
        if seen is not None and refusal.ts - seen < 1:
            return True
        if len(self._recent) > 512:
            self._recent = {k: t for k, t in self._recent.items() if refusal.ts - t < 1}
        self._recent[key] = refusal.ts
        return False

    def _to_agent(self, refusal: Refusal) -> bool:
        """A tab's refusal (`reported_to_agent`), or a frame's while the agent acts in a frame."""
        if refusal.subframe and refusal.action in AGENT_ACTIONS and self.frame_actions.active():
            return True
        return reported_to_agent(refusal)

    # -- the agent's side -------------------------------------------------------------------
    def has_pending(self, kinds: frozenset[str] | None = None) -> bool:
        """Whether refusals (of `kinds` of action; None: any) wait to be reported to the agent."""
        pending = self._pending
        return bool(pending) if kinds is None else any(r.action in kinds for r in list(pending))

    def pending_verdict(
        self, step: Any, during: str | None = None, kinds: frozenset[str] | None = None
    ) -> Verdict | None:
        """The BLOCK for the refusals since the agent's last call (reported once), or None;
        `during`: see `refusals_verdict`; `kinds`: only refusals of these actions (the others
        stay pending)."""
        with self._lock:
            pending, self._pending = split_pending(self._pending, kinds)
        return refusals_verdict(
            pending, step, mode=self.guard.mode, enforced=self.enforce, layer=LAYER, during=during
        )
