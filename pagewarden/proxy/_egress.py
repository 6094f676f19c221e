"""Egress policy: which hosts and URLs the browser may reach, judged per request.

The rules come from the policy set, matched with the rules tier's own code
(`pagewarden.policies.rules.urls.UrlPattern`, `pagewarden._url.host_matches`), so a pattern
means the same thing to the browser layer and to the network layer:

* ``domain_deny`` — every request (subresources, websockets, ``CONNECT``, each redirect hop)
  to a matching host is refused.
* ``domain_allow`` — every request must go to a host of *each* ``domain_allow`` rule (as in
  the rules tier, where every rule is checked on its own).
* ``url_deny`` / ``url_allow`` — judged on navigations (documents and frames: the requests
  a browser makes to show a page), every redirect hop included; subresources are not
  constrained by them.
* ``strict`` — only hosts on the allow-list pass: the ``domain_allow`` patterns, the hosts
  of ``url_allow`` patterns written as whole URLs, and the extra ``allow_hosts``. With
  strict and an empty allow-list nothing passes.
* A request with no host, or a host a browser would refuse, is refused.

`EgressRules` is sans-I/O (a URL in, a `Refusal` or None out); `EgressPolicy` is the
mitmproxy addon that applies it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

from mitmproxy import http

from pagewarden._url import host_matches, parse_url
from pagewarden.policies.rules.urls import Destination, UrlPattern
from pagewarden.proxy._refusal import REFUSED_HEADER, Refusal, RefusalSink, refusal_page

__all__ = ["NETWORK_POLICY", "EgressPolicy", "EgressRules", "is_navigation"]

#: The policy id of the network layer's own refusals (strict mode, hostless requests).
NETWORK_POLICY = "PW-NETWORK"


@dataclass(frozen=True, slots=True)
class _HostRule:
    policy_id: str
    patterns: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class _UrlRule:
    policy_id: str
    patterns: tuple[UrlPattern, ...]


@dataclass(slots=True)
class EgressRules:
    """The egress rules of a policy set (see the module docstring for what each does)."""

    domain_deny: list[_HostRule] = field(default_factory=list)
    domain_allow: list[_HostRule] = field(default_factory=list)
    url_deny: list[_UrlRule] = field(default_factory=list)
    url_allow: list[_UrlRule] = field(default_factory=list)
    allow_hosts: tuple[str, ...] = ()
    deny_hosts: tuple[str, ...] = ()
    strict: bool = False

    @classmethod
    def from_policies(
        cls,
        policies: Iterable[object] | None,
        *,
        strict: bool = False,
        allow_hosts: Sequence[str] = (),
        deny_hosts: Sequence[str] = (),
    ) -> EgressRules:
        """Collect the URL and domain rules of `policies` (a `PolicySet` or policies)."""
        rules = cls(strict=strict, allow_hosts=tuple(allow_hosts), deny_hosts=tuple(deny_hosts))
        for policy in policies or ():
            for rule in getattr(policy, "rules", ()):
                kind = getattr(rule, "kind", "")
                patterns = tuple(getattr(rule, "patterns", ()) or ())
                pid = policy.id  # type: ignore[attr-defined]
                if kind == "domain_deny":
                    rules.domain_deny.append(_HostRule(pid, patterns))
                elif kind == "domain_allow":
                    rules.domain_allow.append(_HostRule(pid, patterns))
                elif kind == "url_deny":
                    rules.url_deny.append(_UrlRule(pid, tuple(UrlPattern.compile(p) for p in patterns)))
                elif kind == "url_allow":
                    rules.url_allow.append(_UrlRule(pid, tuple(UrlPattern.compile(p) for p in patterns)))
        return rules

    @property
    def allow_list(self) -> tuple[str, ...]:
        """Host patterns a strict proxy lets through."""
        hosts: list[str] = [*self.allow_hosts]
        for rule in self.domain_allow:
            hosts.extend(rule.patterns)
        for url_rule in self.url_allow:
            hosts.extend(p.host for p in url_rule.patterns if p.form == "url" and p.host)
        return tuple(dict.fromkeys(hosts))

    def host_allowed(self, host: str) -> bool:
        """Whether a request to `host` passes the host rules (without a URL, e.g. CONNECT)."""
        return self.judge_host(host, action="request", url=host) is None

    def judge_host(self, host: str, *, action: str, url: str, method: str = "GET") -> Refusal | None:
        """A refusal when `host` may not be reached at all, else None."""

        def refuse(rule: str, policy_id: str, reason: str) -> Refusal:
            return Refusal(action, url, host, rule, policy_id, reason, method)

        if not host:
            return refuse("no_host", NETWORK_POLICY, "the request has no host a browser would accept")
        for pattern in self.deny_hosts:
            if host_matches(host, pattern):
                return refuse("deny_hosts", NETWORK_POLICY, f"{host} is on the proxy's deny list ({pattern})")
        for rule in self.domain_deny:
            hit = next((p for p in rule.patterns if host_matches(host, p)), None)
            if hit is not None:
                return refuse("domain_deny", rule.policy_id, f"{host} is on a denied domain ({hit})")
        extra = any(host_matches(host, p) for p in self.allow_hosts)
        for rule in self.domain_allow:
            if not extra and not any(host_matches(host, p) for p in rule.patterns):
                return refuse(
                    "domain_allow",
                    rule.policy_id,
                    f"{host} is not among the allowed domains ({', '.join(rule.patterns)})",
                )
        if self.strict and not any(host_matches(host, p) for p in self.allow_list):
            return refuse("strict", NETWORK_POLICY, f"{host} is not on the allow-list (strict egress)")
        return None

    def judge(
        self, url: str, *, navigation: bool, action: str | None = None, method: str = "GET"
    ) -> Refusal | None:
        """A refusal for a request to `url` (a navigation or a subresource), else None."""
        parsed = parse_url(url)
        kind = action or ("navigation" if navigation else "request")
        refusal = self.judge_host(parsed.host if parsed.valid else "", action=kind, url=url, method=method)
        if refusal is not None or not navigation:
            return refusal
        dest = Destination(parsed, url, "network")
        for rule in self.url_deny:
            hit = next((p for p in rule.patterns if p.matches_deny(dest)), None)
            if hit is not None:
                return Refusal(
                    kind, url, parsed.host, "url_deny", rule.policy_id,
                    f"the URL matches the denied pattern {hit.text!r}", method,
                )  # fmt: skip
        for rule in self.url_allow:
            if not any(p.matches_allow(dest) for p in rule.patterns):
                return Refusal(
                    kind, url, parsed.host, "url_allow", rule.policy_id,
                    "the URL is not among the allowed URLs", method,
                )  # fmt: skip
        return None


def is_navigation(request: http.Request) -> bool:
    """Whether the browser requests a document to show (a page or a frame), not a subresource.

    ``Sec-Fetch-Mode: navigate`` where the browser sends it (secure origins and loopback);
    otherwise a request with ``Upgrade-Insecure-Requests: 1`` that accepts HTML, which is
    what Chromium sends for navigations only.
    """
    mode = request.headers.get("sec-fetch-mode")
    if mode is not None:
        dest = request.headers.get("sec-fetch-dest", "")
        return mode == "navigate" or dest in ("document", "iframe", "frame")
    return request.headers.get("upgrade-insecure-requests") == "1" and "text/html" in request.headers.get(
        "accept", ""
    )


def refuse_flow(flow: http.HTTPFlow, refusal: Refusal) -> None:
    """Answer `flow` with the 403 refusal page instead of sending it upstream."""
    flow.response = http.Response.make(
        403,
        refusal_page(refusal),
        {
            "Content-Type": "text/html; charset=utf-8",
            "Cache-Control": "no-store",
            REFUSED_HEADER: refusal.policy_id,
        },
    )
    flow.metadata["pagewarden_refusal"] = refusal.to_dict()


class EgressPolicy:
    """mitmproxy addon: refuse requests the egress rules do not allow (deny by default for
    anything it cannot judge: no host, an unparsable URL).

    Options: ``pagewarden_strict`` (only allow-listed hosts), ``pagewarden_allow_hosts`` and
    ``pagewarden_deny_hosts`` (host patterns added to the policies' own).
    """

    def __init__(
        self, policies: Iterable[object] | None = None, on_refusal: RefusalSink | None = None
    ) -> None:
        self._policies = list(policies or ())
        self.rules = EgressRules.from_policies(self._policies)
        self.sinks: list[RefusalSink] = [on_refusal] if on_refusal is not None else []
        self.refusals: list[Refusal] = []

    def load(self, loader) -> None:
        loader.add_option("pagewarden_strict", bool, False, "Only allow-listed hosts may be reached.")
        loader.add_option(
            "pagewarden_allow_hosts", Sequence[str], [], "Host patterns allowed besides the policies' own."
        )
        loader.add_option("pagewarden_deny_hosts", Sequence[str], [], "Host patterns always refused.")

    def configure(self, updated: set[str]) -> None:
        from mitmproxy import ctx

        if updated & {"pagewarden_strict", "pagewarden_allow_hosts", "pagewarden_deny_hosts"}:
            self.rules = EgressRules.from_policies(
                self._policies,
                strict=ctx.options.pagewarden_strict,
                allow_hosts=ctx.options.pagewarden_allow_hosts,
                deny_hosts=ctx.options.pagewarden_deny_hosts,
            )

    def report(self, refusal: Refusal) -> None:
        """Remember `refusal` and hand it to every sink (a failing sink is skipped)."""
        self.refusals.append(refusal)
        for sink in list(self.sinks):
            with contextlib.suppress(Exception):  # a broken listener must not break the proxy
                sink(refusal)

    def http_connect(self, flow: http.HTTPFlow) -> None:
        host = flow.request.host
        refusal = self.rules.judge_host(
            parse_url(f"https://{host}/").host,
            action="connect",
            url=f"{host}:{flow.request.port}",
            method="CONNECT",
        )
        if refusal is not None:
            refusal = replace(refusal, tab=flow.metadata.get("pagewarden_session"))
            refuse_flow(flow, refusal)
            self.report(refusal)

    def request(self, flow: http.HTTPFlow) -> None:
        if flow.response is not None:  # answered already (replay, another addon's refusal)
            return
        request = flow.request
        navigation = is_navigation(request)
        websocket = request.headers.get("upgrade", "").lower() == "websocket"
        url = request.url if not websocket else request.url.replace("http", "ws", 1)
        refusal = self.rules.judge(
            url, navigation=navigation, action="websocket" if websocket else None, method=request.method
        )
        host_header = request.host_header
        header_host = parse_url(f"http://{host_header}/").host if host_header else ""
        if refusal is None and header_host and header_host != parse_url(url).host:
            # the Host header names another site than the one the proxy would connect to
            other = f"{request.scheme}://{host_header}{request.path}"
            refusal = self.rules.judge(other, navigation=navigation, method=request.method)
        if refusal is not None:
            refusal = replace(refusal, tab=flow.metadata.get("pagewarden_session"))
            refuse_flow(flow, refusal)
            self.report(refusal)
