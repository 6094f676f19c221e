"""`internal_addresses`, `url_credentials`, `lookalike_hosts`: where an address leads, judged
before the agent goes there (goto, a link or form, a new page, ``page.request``, a ping).

* `internal_addresses` — a cloud metadata or link-local address is refused; a private one
  (loopback, RFC 1918, shared address space, unique local IPv6) needs approval when the session
  has not opened its block (`pagewarden.rules._addresses`): the session did not start there, no
  allowed action went there, and the tab is not on a page of that block. The page's own requests
  are judged by the same rule in the navigation gate and the network layer (`EgressRules`).
* `url_credentials` — a URL with a user name or password in it (``user:pass@host``) is
  refused: the browser would send them to the host after the ``@``, which is also how
  ``https://trusted.test@evil.test/`` passes for ``trusted.test``. The trace never shows them
  (`pagewarden.secrets.redact_credentials`).
* `lookalike_hosts` — a host imitating one the goal or an allow-list names is refused as
  deceptive, naming the real host (`pagewarden.rules._lookalike`).

Allowances (`allow`) are read from every rule of the kind in the policy set, so a policy of
yours allows what the baseline's copy of the rule would refuse.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from pagewarden._netaddr import zone_of
from pagewarden._url import host_matches, host_of_pattern, parse_url
from pagewarden.rules._addresses import AddressRules
from pagewarden.rules._base import CompiledRule, RuleContext, register
from pagewarden.rules._lookalike import deception, goal_hosts, standalone_deception
from pagewarden.rules.urls import Destination, destinations
from pagewarden.steps import Finding

__all__ = ["InternalAddresses", "LookalikeHosts", "UrlCredentials"]

_KINDS = frozenset(
    {"goto", "click", "dblclick", "tap", "press", "new_page", "request", "type", "check", "uncheck", "drag"}
)
_METADATA_GUIDANCE = (
    "Do not open this address: it is the cloud's instance metadata service or a link-local "
    "address, where machine credentials live. No task on a web page needs it. If it is really "
    "wanted, a policy must name the address (internal_addresses: {{allow: [{host}]}})."
)
_PRIVATE_GUIDANCE = (
    "This address is inside a private network ({what}), and the session is on public sites. "
    "Go there only if the user's task needs it: a person must approve it, or a policy must allow "
    "the range (internal_addresses: {{allow: [{block}]}})."
)
_CREDENTIALS_GUIDANCE = (
    "Do not put a user name or password into a URL: the browser would send them to {host} (the "
    "host after the '@'), whatever comes before it. Open https://{host}/ without them and use the "
    "site's own login form if the task needs a login."
)
_LOOKALIKE_GUIDANCE = (
    "{host} is not {real}: it only looks like it. Do not follow links or addresses to it. If "
    "the task needs {real}, open {real} yourself (type the address the user gave), or tell the user."
)


def _shown(dest: Destination) -> str:
    text = dest.url.url
    return text if len(text) <= 120 else text[:117] + "..."


def _family(book: Sequence[CompiledRule]) -> AddressRules | None:
    seen: dict[int, object] = {}
    for rule in book:
        seen.setdefault(id(rule.policy), rule.policy)
    return AddressRules.from_policies(list(seen.values()))


@register("internal_addresses")
class InternalAddresses(CompiledRule):
    """Evaluator of `internal_addresses` rules."""

    kinds = _KINDS

    def __init__(self, policy, rule) -> None:
        super().__init__(policy, rule)
        self.addresses = AddressRules.from_policies([policy]) or AddressRules(policy.id)

    def bind(self, book: Sequence[CompiledRule]) -> None:
        family = _family(book)
        if family is not None:
            self.addresses = family

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        for dest in destinations(ctx):
            host = dest.url.host
            zone = zone_of(host) if host else None
            if zone is None or self.addresses.allows(host, zone):
                continue
            evidence = {"destination": dest.url.url, "host": host, "block": zone.block, "via": dest.via}
            if zone.metadata:
                yield self.finding(
                    f"{dest.via} to {_shown(dest)}: {host} is {zone.what}",
                    guidance=_METADATA_GUIDANCE.format(host=host),
                    evidence=evidence,
                )
                return
            if zone.block in ctx.session.internal:
                continue
            here = zone_of(ctx.page_url.host) if ctx.page_url.host else None
            if here is not None and here.block == zone.block:
                continue
            tab = ctx.session.tab
            if not ctx.page_url.host and (tab is None or tab.start is None):
                continue  # the session's first page: it starts there, and may keep using it
            yield self.finding(
                f"{dest.via} to {_shown(dest)} leads from a public page into {zone.what} ({zone.block})",
                guidance=_PRIVATE_GUIDANCE.format(what=zone.what, block=zone.block),
                requires_approval=True,
                evidence=evidence,
            )
            return


@register("url_credentials")
class UrlCredentials(CompiledRule):
    """Evaluator of `url_credentials` rules."""

    kinds = _KINDS

    def __init__(self, policy, rule) -> None:
        super().__init__(policy, rule)
        self.allowed: tuple[str, ...] = tuple(rule.allow)

    def bind(self, book: Sequence[CompiledRule]) -> None:
        family = _family(book)
        if family is not None:
            self.allowed = family.credential_hosts

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        el = ctx.target
        for dest in destinations(ctx):
            url = dest.url
            written = [dest.raw]
            if dest.via == "link" and el is not None and el.href:
                written.append(el.href)  # (the predicted URL is normalised: no user name in it)
            carries = url.has_userinfo or any(parse_url(w, url.url).has_userinfo for w in written)
            if not url.host or not carries:
                continue
            if any(host_matches(url.host, pattern) for pattern in self.allowed):
                continue
            yield self.finding(
                f"{dest.via} to a URL that carries a user name or password before its host "
                f"(…@{url.host}); the browser would send them to {url.host}",
                guidance=_CREDENTIALS_GUIDANCE.format(host=url.host),
                evidence={"destination": url.url, "host": url.host, "via": dest.via},
            )
            return


def _named_hosts(book: Sequence[CompiledRule]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(hosts the allow-lists and `protect` fields name, `allow` patterns) across the book."""
    named: list[str] = []
    allowed: list[str] = []
    for compiled in book:
        rule = compiled.rule
        kind = rule.kind
        if kind == "domain_allow":
            patterns = list(getattr(rule, "patterns", ()))
        elif kind == "url_allow":
            urls = [p for p in getattr(rule, "patterns", ()) if "://" in p]
            patterns = [p.split("://", 1)[1].split("/", 1)[0] for p in urls]
        elif kind == "lookalike_hosts":
            patterns = list(getattr(rule, "protect", ()))
            allowed.extend(getattr(rule, "allow", ()))
        else:
            continue
        for pattern in patterns:
            parsed = host_of_pattern(pattern)
            if parsed is not None and parsed[1] and "*" not in parsed[1]:
                named.append(parsed[1])
    return tuple(dict.fromkeys(named)), tuple(dict.fromkeys(allowed))


@register("lookalike_hosts")
class LookalikeHosts(CompiledRule):
    """Evaluator of `lookalike_hosts` rules."""

    kinds = _KINDS

    def __init__(self, policy, rule) -> None:
        super().__init__(policy, rule)
        self.named: tuple[str, ...] = ()
        self.allowed: tuple[str, ...] = tuple(rule.allow)

    def bind(self, book: Sequence[CompiledRule]) -> None:
        self.named, self.allowed = _named_hosts(book)

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        references: tuple[str, ...] | None = None
        for dest in destinations(ctx):
            host = dest.url.host
            if not host or dest.url.is_ip or any(host_matches(host, p) for p in self.allowed):
                continue
            if references is None:
                references = (*goal_hosts(ctx.goal), *self.named)
            found = deception(host, references)
            why, real = (found.why, found.real) if found is not None else (standalone_deception(host), "")
            if not why:
                continue
            shown = f"the real {real}" if real else "a site it imitates"
            yield self.finding(
                f"{dest.via} to {host}, which is deceptive: {why}",
                guidance=_LOOKALIKE_GUIDANCE.format(host=host, real=real or "the site you meant")
                if real
                else f"{host} is made to look like another site ({why}). Do not go there; "
                f"open {shown} yourself if the task needs it, or tell the user.",
                evidence={"destination": dest.url.url, "host": host, "real_host": real or None, "why": why},
            )
            return
