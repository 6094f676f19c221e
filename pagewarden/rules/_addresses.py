"""Internal addresses as every layer judges them: what the policies allow, what a session has
opened, and the judgement itself (sans-I/O).

The rule (baseline ``PW-ADDRESSES``, rule kind ``internal_addresses``):

* a **metadata** address (`pagewarden._netaddr`: link-local, the clouds' fixed metadata
  addresses and host names) is refused to everyone — the agent's actions, the page's own
  navigations and subresources, redirect hops, ``page.request`` — unless a policy names it
  explicitly: the address itself, the host name, or a range inside link-local space
  (``169.254.169.254``, ``metadata.google.internal``, ``169.254.0.0/16``; a wider range such as
  ``0.0.0.0/0`` does not count);
* a **private** address (loopback, RFC 1918, shared address space, unique local IPv6) is a
  boundary: an agent on a public page needs approval to go there (ASK), and a page's own
  requests there are refused, unless a policy allows it (an ``internal_addresses`` rule's
  ``allow`` naming the address, a range holding it or the host name; a ``domain_allow`` or
  ``url_allow`` naming the host; the network layer's ``--allow-host``) or the session has
  **opened** its block: the session started there (its first page), or an action that went there
  was allowed (approved). Each private range is its own block (``10.0.0.0/8``,
  ``192.168.0.0/16`` …; loopback, ``0.0.0.0/8``, ``::1`` and ``localhost`` are one).

Names the user maps to an address (``host_map``, Chromium's ``--host-resolver-rules``) are
configuration, not DNS: they are judged by their name (a test site on ``127.0.0.1`` under
``app.test`` is a public host). The network layer, which resolves every other name anyway,
judges a name by the address it resolves to (`AddressRules.judge` with `address`).
"""

from __future__ import annotations

import ipaddress
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from pagewarden._netaddr import IPAddress, Zone, ip_of, zone_of, zone_of_ip
from pagewarden._url import host_matches, host_of_pattern, parse_url

__all__ = [
    "ADDRESS_RULES",
    "INTERNAL_URL_GLOBS",
    "AddressRules",
    "InternalAccess",
    "blocks_reached",
    "internal_url",
]

#: The rule kinds of this family (their allowances are read across the whole policy set).
ADDRESS_RULES = frozenset({"internal_addresses", "url_credentials", "lookalike_hosts"})
Network = ipaddress.IPv4Network | ipaddress.IPv6Network
#: DevTools ``Fetch`` URL patterns (globs) every URL of an internal address matches, as the
#: browser writes request URLs (IPv4 dotted, IPv6 in brackets, names lower-case): a superset,
#: the gate judges what they pause
INTERNAL_URL_GLOBS: tuple[str, ...] = (
    "*://10.*", "*://127.*", "*://0.*", "*://169.254.*", "*://172.*", "*://192.168.*", "*://100.*",
    "*://192.0.0.192*", "*://168.63.129.16*", "*://[*", "*://localhost*", "*://*.localhost*",
    "*://metadata*", "*://instance-data*",
)  # fmt: skip


def internal_url(url: str) -> bool:
    """Whether `url`'s host is a metadata or private address (or name)."""
    return zone_of(parse_url(url).host) is not None


class InternalAccess:
    """The private blocks one session has opened (thread-safe: the gate and the proxy read it
    on their threads while the agent's pipeline opens blocks)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._blocks: set[str] = set()

    def open(self, block: str) -> None:
        """Let the session use `block` from now on."""
        with self._lock:
            self._blocks.add(block)

    def is_open(self, block: str) -> bool:
        """Whether `block` was opened."""
        with self._lock:
            return block in self._blocks

    @property
    def blocks(self) -> frozenset[str]:
        """The blocks opened so far."""
        with self._lock:
            return frozenset(self._blocks)


def _entry(text: str) -> tuple[Network | None, str | None]:
    """An ``allow`` entry as a network (an address is a /32 or /128) or a host pattern."""
    value = text.strip()
    bare = value[1:-1] if value.startswith("[") and value.endswith("]") else value
    try:
        return ipaddress.ip_network(bare, strict=False), None
    except ValueError:
        pass
    address = ip_of(parse_url(f"http://{value}/").host) if "/" not in value else None
    if address is not None:
        return ipaddress.ip_network(address), None
    return None, value


@dataclass(slots=True)
class AddressRules:
    """The internal-address family of a policy set: whether it is on, and what its policies
    allow. `access` gives the session's `InternalAccess` (None: no session, as in a standalone
    proxy for any browser: then a private address is refused only to a request that names a
    page outside its block as its origin, ``Origin`` or ``Referer``)."""

    policy_id: str = ""
    networks: tuple[Network, ...] = ()
    hosts: tuple[str, ...] = ()
    #: hosts a ``url_credentials`` rule lets a URL carry a user name or password for
    credential_hosts: tuple[str, ...] = ()
    credentials_policy: str = ""
    access: Callable[[], InternalAccess | None] | None = None
    named: tuple[str, ...] = field(default=())

    @classmethod
    def from_policies(
        cls,
        policies: Iterable[object] | None,
        *,
        allow_hosts: Iterable[str] = (),
        access: Callable[[], InternalAccess | None] | None = None,
    ) -> AddressRules | None:
        """The family in `policies` (None when no policy has an ``internal_addresses`` rule)."""
        policy_id = ""
        credentials_policy = ""
        networks: list[Network] = []
        hosts: list[str] = []
        credential_hosts: list[str] = []
        named: list[str] = []
        for policy in policies or ():
            for rule in getattr(policy, "rules", ()):
                kind = getattr(rule, "kind", "")
                if kind == "internal_addresses":
                    policy_id = policy_id or policy.id  # type: ignore[attr-defined]
                    for item in getattr(rule, "allow", ()):
                        net, host = _entry(item)
                        if net is not None:
                            networks.append(net)
                        elif host:
                            hosts.append(host)
                elif kind == "url_credentials":
                    credentials_policy = credentials_policy or policy.id  # type: ignore[attr-defined]
                    credential_hosts.extend(getattr(rule, "allow", ()))
                elif kind == "domain_allow":
                    patterns = getattr(rule, "patterns", ())
                    named.extend(p for p in patterns if host_of_pattern(p) not in (None, ("*", "")))
                elif kind == "url_allow":
                    for pattern in getattr(rule, "patterns", ()):
                        if "://" in pattern:
                            host = pattern.split("://", 1)[1].split("/", 1)[0].rsplit("@", 1)[-1]
                            if host and host_of_pattern(host) not in (None, ("*", "")):
                                named.append(host)
        named.extend(h for h in allow_hosts if h.strip() and h.strip() != "*")
        if not policy_id and not credentials_policy:
            return None
        for item in named:
            net, host = _entry(item)
            if net is not None:
                networks.append(net)
            elif host:
                hosts.append(host)
        return cls(
            policy_id, tuple(dict.fromkeys(networks)), tuple(dict.fromkeys(hosts)),
            tuple(dict.fromkeys(credential_hosts)), credentials_policy, access, tuple(named),
        )  # fmt: skip

    @property
    def enabled(self) -> bool:
        """Whether internal addresses are judged (an ``internal_addresses`` rule is in force)."""
        return bool(self.policy_id)

    # -- what the policies allow -------------------------------------------------------------
    def allows(self, host: str, zone: Zone, address: IPAddress | None = None) -> bool:
        """Whether a policy allows `host` (reached at `address`, when known) in `zone`. A
        metadata address needs the address, the host name or a link-local range itself."""
        address = address if address is not None else ip_of(host)
        if zone.metadata:
            if address is not None and any(_names(n, address) for n in self.networks):
                return True
            return any(_exact_host(host, pattern) for pattern in self.hosts)
        if address is not None and any(address in n for n in self.networks if n.version == address.version):
            return True
        return any(host_matches(host, pattern) for pattern in self.hosts)

    def credentials_allowed(self, host: str) -> bool:
        """Whether a policy lets a URL to `host` carry a user name or password."""
        return any(host_matches(host, pattern) for pattern in self.credential_hosts)

    def opened(self, block: str) -> bool:
        """Whether the session has opened `block`."""
        access = self.access() if self.access is not None else None
        return access is not None and access.is_open(block)

    @property
    def has_session(self) -> bool:
        """Whether a session's opened blocks are known (not a standalone proxy)."""
        return self.access is not None and self.access() is not None

    # -- the judgement of a request ------------------------------------------------------------
    def judge(
        self, host: str, *, address: IPAddress | None = None, initiator: str | None = None
    ) -> tuple[str, str] | None:
        """``(rule, reason)`` when a page's request (or a redirect hop) to `host` must be
        refused, else None. `address`: what the name resolved to (the network layer);
        `initiator`: the URL of the page that sent it, when known."""
        if not self.enabled or not host:
            return None
        zone = zone_of_ip(address) if address is not None else zone_of(host)
        if zone is None:
            return None
        if self.allows(host, zone, address):
            return None
        shown = host if address is None or str(address) == host else f"{host} ({address})"
        if zone.metadata:
            return "internal_address", (
                f"{shown} is {zone.what}; only a policy naming it explicitly allows it"
            )
        if self.opened(zone.block):
            return None
        if initiator and initiator != "null":
            origin = zone_of(parse_url(initiator).host)
            if origin is not None and origin.block == zone.block:
                return None  # a page in that block talking to its own block
        elif not initiator and not self.has_session:
            return None  # a proxy of no session (any browser): nothing says a public page led here
        return "private_address", (
            f"{shown} is {zone.what} ({zone.block}), which this session has not opened; "
            "a page on a public host may not reach it"
        )


_LINK_LOCAL = (ipaddress.ip_network("169.254.0.0/16"), ipaddress.ip_network("fe80::/10"))


def _names(net: Network, address: IPAddress) -> bool:
    """Whether `net` names the metadata `address` explicitly: the address itself, or a range
    inside link-local space that holds it (not a wider range that happens to)."""
    if net.version != address.version or address not in net:
        return False
    if net.num_addresses == 1:
        return True
    return any(net.version == ll.version and net.subnet_of(ll) for ll in _LINK_LOCAL)  # type: ignore[arg-type]


def _exact_host(host: str, pattern: str) -> bool:
    text = pattern.strip().lower()
    return not text.startswith(("*", ".")) and host_matches(host, text)


def blocks_reached(urls: Iterable[str]) -> set[str]:
    """The private blocks of `urls`' hosts (what an allowed action that goes there opens)."""
    out: set[str] = set()
    for url in urls:
        if not url:
            continue
        zone = zone_of(parse_url(url).host)
        if zone is not None and not zone.metadata:
            out.add(zone.block)
    return out
