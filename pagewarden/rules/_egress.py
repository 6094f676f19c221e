"""Egress rules without a proxy: which hosts and URLs the policies let the browser reach.

`EgressRules` (sans-I/O: a URL in, a `Refusal` or None out) is shared by the network layer
(`pagewarden.proxy`, which applies it to every request through mitmproxy) and by the
embedded navigation gate (`pagewarden.interceptors._gate`, which applies it to navigations,
subresources and websockets through Playwright's request routing when no proxy runs). A pattern means the same
thing to both, and to the rules tier (`pagewarden.rules.urls.UrlPattern`,
`pagewarden._url.host_matches`):

* ``domain_deny`` — every request (subresources, websockets, ``CONNECT``, each redirect hop)
  to a matching host is refused.
* ``domain_allow`` — every request must go to a host of *each* ``domain_allow`` rule (as in
  the rules tier, where every rule is checked on its own). A rule's ``subresources`` hosts pass
  it for what a page loads (subresources, websockets, ``CONNECT``, and a frame's document inside
  a page: ``frame=True``), never for a tab's document (a navigation, a popup, a redirect hop of
  either).
* ``url_deny`` / ``url_allow`` — judged on navigations (documents and frames: the requests
  a browser makes to show a page), every redirect hop included; subresources are not
  constrained by them.
* ``strict`` — only hosts on the allow-list pass: the ``domain_allow`` patterns, the hosts
  of ``url_allow`` patterns written as whole URLs, and the extra ``allow_hosts``. With
  strict and an empty allow-list nothing passes.
* A request with no host, or a host a browser would refuse, is refused.
* ``internal_addresses`` (the baseline's ``PW-ADDRESSES``) — every request to a cloud metadata or
  link-local address is refused, and one to a private address (loopback, RFC 1918 …) unless the
  session opened its block or a policy allows it (`pagewarden.rules._addresses`); the network
  layer also judges a name by the address it resolves to (`judge_address`).

`refusals_verdict` turns refusals the agent has not heard of into the BLOCK its next guarded
call raises (the same words for both layers).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from pagewarden._netaddr import IPAddress
from pagewarden._url import host_matches, parse_url
from pagewarden.rules._addresses import AddressRules, InternalAccess
from pagewarden.rules.urls import Destination, UrlPattern
from pagewarden.steps import Decision, Finding, Verdict

__all__ = [
    "AGENT_ACTIONS", "NETWORK_POLICY", "REFUSALS_KEPT", "EgressRules", "Refusal", "RefusalSink",
    "refusals_verdict", "reported_to_agent", "split_pending",
]  # fmt: skip

#: The policy id of the network layer's own refusals (strict mode, hostless requests).
NETWORK_POLICY = "PW-NETWORK"
#: How many of the latest refusals each layer keeps in memory (`.refusals`); every refusal is
#: also a `network` event and a log line, which keep them all.
REFUSALS_KEPT = 4096


@dataclass(frozen=True, slots=True)
class Refusal:
    """One request the network layer refused.

    ``action`` is what was refused (``request``, ``navigation``, ``connect``, ``websocket``,
    ``exfiltration``); ``rule`` the rule kind (``domain_deny``, ``domain_allow``,
    ``url_deny``, ``url_allow``, ``strict``, ``no_host``, ``grant``, ``sensitive_data``…);
    ``policy_id`` the policy it comes from (``PW-NETWORK`` for the network layer's own).
    ``subframe``: the request belongs to a frame inside a page (an embed, a widget, an ad
    frame), not to a tab's top document; no action of the agent leads there, so the refusal is
    recorded and never raised at the agent (see `reported_to_agent`). ``via``: the URLs whose
    redirects led to ``url``, first one first, where the layer saw them (empty: none known).
    """

    action: str
    url: str
    host: str
    rule: str
    policy_id: str
    reason: str
    method: str = "GET"
    tab: str | None = None
    ts: float = field(default_factory=time.time)
    subframe: bool = False
    via: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON form (the ``data`` of a ``network`` guard event)."""
        return asdict(self)


RefusalSink = Callable[[Refusal], None]

#: The kinds of refusal that tell the agent about what *its* tab tried (the others, a page's
#: subresources, are events only).
AGENT_ACTIONS = frozenset({"navigation", "redirect", "websocket", "exfiltration", "download"})


def reported_to_agent(refusal: Refusal) -> bool:
    """Whether `refusal` is raised at the agent (as `ActionBlocked`), not only recorded.

    Decided from evidence of causality: a tab's top document leaving the allowed sites (a
    navigation, a redirect hop, a popup), a websocket or data sent out are; what a page's own
    frames load (embeds, widgets, ad and analytics frames, their redirects and script
    navigations inside the frame) and a page's subresources are not: no action of the agent
    leads there, nothing reached the refused host, and raising them at the agent's next,
    unrelated action would teach it to ignore blocks."""
    return refusal.action in AGENT_ACTIONS and not refusal.subframe


def split_pending(
    pending: list[Refusal], kinds: frozenset[str] | None
) -> tuple[list[Refusal], list[Refusal]]:
    """(taken, kept): the refusals of `pending` whose action is one of `kinds` (all when None),
    and the others, which stay pending."""
    if kinds is None:
        return pending, []
    taken = [r for r in pending if r.action in kinds]
    return taken, [r for r in pending if r.action not in kinds]


@dataclass(frozen=True, slots=True)
class _HostRule:
    policy_id: str
    patterns: tuple[str, ...]
    #: hosts a page may load from (``domain_allow``'s ``subresources``), not navigate a tab to
    subresources: tuple[str, ...] = ()


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
    #: the internal-address rules (None: the policies have no ``internal_addresses`` rule)
    addresses: AddressRules | None = None

    @classmethod
    def from_policies(
        cls,
        policies: Iterable[object] | None,
        *,
        strict: bool = False,
        allow_hosts: Sequence[str] = (),
        deny_hosts: Sequence[str] = (),
        access: Callable[[], InternalAccess | None] | None = None,
    ) -> EgressRules:
        """Collect the URL and domain rules of `policies` (a `PolicySet` or policies).
        `access`: the session's opened private blocks (the guard's; None in a standalone proxy)."""
        policies = list(policies or ())
        rules = cls(strict=strict, allow_hosts=tuple(allow_hosts), deny_hosts=tuple(deny_hosts))
        family = AddressRules.from_policies(policies, allow_hosts=allow_hosts, access=access)
        rules.addresses = family if family is not None and family.enabled else None
        for policy in policies or ():
            for rule in getattr(policy, "rules", ()):
                kind = getattr(rule, "kind", "")
                patterns = tuple(getattr(rule, "patterns", ()) or ())
                pid = policy.id  # type: ignore[attr-defined]
                if kind == "domain_deny":
                    rules.domain_deny.append(_HostRule(pid, patterns))
                elif kind == "domain_allow":
                    loads = tuple(getattr(rule, "subresources", ()) or ())
                    rules.domain_allow.append(_HostRule(pid, patterns, loads))
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
        """Whether a subresource request to `host` passes the host rules (without a URL)."""
        return self.judge_host(host, action="request", url=host, subresource=True) is None

    def allow_listed(self, host: str) -> bool:
        """Whether the policies name `host` on an allow-list: some ``domain_allow`` rule lists
        hosts (not ``*``) and `host` passes every host rule. A page's navigation to such a host
        goes where the user said the agent may go: both layers let it through (the browser
        layer's pin and gate, the network layer's grants)."""
        named = any("*" not in (p.strip() for p in rule.patterns) for rule in self.domain_allow)
        return named and self.judge_host(host, action="navigation", url=host) is None

    def judge_host(
        self, host: str, *, action: str, url: str, method: str = "GET", subresource: bool = False,
        initiator: str | None = None,
    ) -> Refusal | None:
        """A refusal when `host` may not be reached at all, else None. `subresource`: what a
        page loads (not a tab's document), which a ``domain_allow`` rule's ``subresources``
        hosts pass. `initiator`: the URL of the page that sent the request, when known."""

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
        if self.addresses is not None:
            found = self.addresses.judge(host, initiator=initiator)
            if found is not None:
                return refuse(found[0], self.addresses.policy_id, found[1])
        extra = any(host_matches(host, p) for p in self.allow_hosts)
        for rule in self.domain_allow:
            if extra or any(host_matches(host, p) for p in rule.patterns):
                continue
            if not (subresource and any(host_matches(host, p) for p in rule.subresources)):
                return refuse(
                    "domain_allow",
                    rule.policy_id,
                    f"{host} is not among the allowed domains ({', '.join(rule.patterns)})",
                )
        if self.strict and not any(host_matches(host, p) for p in self.allow_list):
            loads = subresource and any(
                host_matches(host, p) for rule in self.domain_allow for p in rule.subresources
            )
            if not loads:
                return refuse("strict", NETWORK_POLICY, f"{host} is not on the allow-list (strict egress)")
        return None

    def judge_address(
        self, host: str, address: IPAddress, *, action: str, url: str, method: str = "GET",
        initiator: str | None = None,
    ) -> Refusal | None:
        """A refusal when `host`, resolved to `address` (the network layer resolves names to
        connect), is an internal address the session may not reach, else None."""
        if self.addresses is None:
            return None
        found = self.addresses.judge(host, address=address, initiator=initiator)
        if found is None:
            return None
        return Refusal(action, url, host, found[0], self.addresses.policy_id, found[1], method)

    def judge(
        self, url: str, *, navigation: bool, action: str | None = None, method: str = "GET",
        frame: bool = False, initiator: str | None = None,
    ) -> Refusal | None:
        """A refusal for a request to `url` (a navigation or a subresource), else None.
        `frame`: the navigation is a frame's inside a page (an embed), not a tab's document.
        `initiator`: the URL of the page that sent it, when known."""
        parsed = parse_url(url)
        kind = action or ("navigation" if navigation else "request")
        host = parsed.host if parsed.valid else ""
        loads = not navigation or frame
        refusal = self.judge_host(
            host, action=kind, url=url, method=method, subresource=loads, initiator=initiator
        )
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



def _article(word: str) -> str:
    return "an" if word[:1] in "aeiou" else "a"


#: what the agent is told when the page tried to leave during its own action
LEAVE_GUIDANCE = (
    "The page tried to leave the allowed sites; do not follow it. The tab stays usable: continue "
    "with the user's goal on the sites you chose, or tell the user."
)


#: What the agent is told of a download a response started that no approved download action led to.
DOWNLOAD_GUIDANCE = (
    "The page tried to save a file on the user's machine that no approved download action asked "
    "for; nothing was saved. Do not fetch it another way; if the task needs the file, ask the user."
)


def refusals_verdict(
    pending: Sequence[Refusal],
    step: Any,
    *,
    mode: str,
    enforced: bool,
    layer: str = "the network layer",
    during: str | None = None,
) -> Verdict | None:
    """The BLOCK for refusals the agent has not heard of (None when there are none): one
    finding per kind of refusal and host, at most five. `layer` names who refused (``the
    network layer``, ``the guard's navigation gate``). `during`: the URL the agent's action
    started from (its goto's URL, or the page it acted on) when the refusals happened while
    that action ran (the action fails with them); else they are told at the agent's next call."""
    if not pending:
        return None
    unique: dict[tuple[str, str, str, str], Refusal] = {}
    for r in pending:
        unique.setdefault((r.policy_id, r.rule, r.action, r.host), r)

    def finding(r: Refusal) -> Finding:
        evidence: dict[str, Any] = {"url": r.url, "host": r.host, "rule": r.rule, "action": r.action}
        guidance = LEAVE_GUIDANCE if r.action in ("navigation", "redirect") else (
            "The page tried to go or send data somewhere no judged action leads. Do not "
            "follow it; continue with the user's goal on the pages you chose, or tell the user."
        )
        if during is None:
            when = "after your last action the browser tried"
            if r.via:
                evidence["chain"] = [*r.via, r.url]
        else:
            hops = [u for u in r.via if u and u != during]
            chain = [u for u in (during, *hops, r.url) if u]
            evidence["chain"] = chain
            when = f"during this action ({' -> '.join(u[:120] for u in chain)}) the page tried"
        if r.action == "download":
            guidance = DOWNLOAD_GUIDANCE
        return Finding(
            policy_id=r.policy_id,
            rule=f"network:{r.rule}",
            message=f"{when} {_article(r.action)} {r.action} to {r.host or r.url}: {r.reason}; "
            f"{layer} refused it",
            risk_level="high",
            score=0.9,
            guidance=guidance,
            evidence=evidence,
        )

    findings = tuple(finding(r) for r in list(unique.values())[:5])
    return Verdict(
        decision=Decision.BLOCK,
        score=0.9,
        findings=findings,
        explanation="; ".join(f"[{f.policy_id}/{f.rule}] {f.message}" for f in findings[:3]),
        guidance=findings[0].guidance,
        mode=mode,
        enforced=enforced,
        step_index=getattr(step, "index", None),
    )
