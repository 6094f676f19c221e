"""`AddressCheck`: a name is judged by the address it resolves to (DNS rebinding).

The egress rules judge a request by its URL: an IP literal in a private range or the cloud's
metadata address is refused there (`pagewarden.rules._addresses`). A public-looking name whose
DNS answer is ``169.254.169.254`` or ``10.0.0.5`` (a rebinding attack, or an internal name) is
not visible in the URL; the proxy resolves every name anyway to connect, so this addon resolves
it first and judges the address by the same rule:

* on each plain-HTTP request (``request`` hook), where the refusal is the 403 page naming a
  navigation or a request, as the egress rules' own;
* on each upstream connection (``server_connect``: HTTPS tunnels, websockets, and what the
  request hook let through), where the connection is killed before it is opened and the refusal
  is a ``connect``. The connection then goes to the address that was judged (pinned), so an
  answer that changes between the check and the connection changes nothing.

It runs after every addon that may refuse or answer a request (grants, the exfiltration filter,
downloads, replay), so only the names of requests that would leave are resolved: a refused
request's host name never reaches DNS (``secret.evil.example`` is no channel). Names the user
maps to an address (`HostMap`: tests, the demo, ``--map``) are configuration,
not DNS: they are left to their mapping. An IP literal is the egress rules' to judge. A name
that does not resolve is left to mitmproxy (which then fails to connect). Answers are kept for
`TTL` seconds (at most `CACHED` names).
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import socket
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any

from mitmproxy import http

from pagewarden._netaddr import IPAddress, ip_of
from pagewarden._url import parse_url
from pagewarden.proxy._egress import EgressPolicy, initiator_of, is_navigation, refuse_flow
from pagewarden.proxy._hostmap import HostMap
from pagewarden.proxy._refusal import Refusal

__all__ = ["AddressCheck", "Resolver"]

#: ``resolver(host, port)`` -> the addresses a name resolves to (the default asks the system)
Resolver = Callable[[str, int], Awaitable[list[str]]]
TTL = 30.0
CACHED = 1024


async def system_resolver(host: str, port: int) -> list[str]:
    """The addresses the system's resolver gives for `host` (as mitmproxy would connect)."""
    loop = asyncio.get_running_loop()
    infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


class AddressCheck:
    """mitmproxy addon: judge a name by the address it resolves to (see the module docstring)."""

    def __init__(
        self,
        egress: EgressPolicy,
        host_map: HostMap | None = None,
        resolver: Resolver | None = None,
        session_of: Callable[[Any], str | None] | None = None,
    ) -> None:
        self.egress = egress
        self.host_map = host_map
        self.resolver = resolver or system_resolver
        self.session_of = session_of or (lambda flow: flow.metadata.get("pagewarden_session"))
        self._answers: OrderedDict[str, tuple[float, list[IPAddress]]] = OrderedDict()

    def _judged_by_name(self, host: str) -> bool:
        """Whether `host` is left to its name: mapped by the user, an IP literal, or nothing the
        rules judge (no ``internal_addresses`` rule)."""
        if self.egress.rules.addresses is None or not host:
            return True
        if ip_of(host) is not None:
            return True
        return self.host_map is not None and self.host_map.resolve(host) is not None

    async def _addresses(self, host: str, port: int) -> list[IPAddress]:
        now = time.monotonic()
        known = self._answers.get(host)
        if known is not None and now - known[0] < TTL:
            return known[1]
        try:
            answers = await self.resolver(host, port)
        except (OSError, UnicodeError, ValueError):
            return []
        addresses: list[IPAddress] = []
        for text in answers:
            with contextlib.suppress(ValueError):
                address = ipaddress.ip_address(text.split("%", 1)[0])
                addresses.append(ip_of(str(address)) or address)
        self._answers[host] = (now, addresses)
        self._answers.move_to_end(host)
        while len(self._answers) > CACHED:
            self._answers.popitem(last=False)
        return addresses

    def _judge(self, host: str, addresses: list[IPAddress], **how: Any) -> Refusal | None:
        for address in addresses:
            refusal = self.egress.rules.judge_address(host, address, **how)
            if refusal is not None:
                return refusal
        return None

    async def request(self, flow: http.HTTPFlow) -> None:
        if flow.response is not None or flow.request.scheme != "http":
            return
        request = flow.request
        host = parse_url(f"http://{request.pretty_host}/").host
        if self._judged_by_name(host):
            return
        refusal = self._judge(
            host, await self._addresses(host, request.port),
            action="navigation" if is_navigation(request) else "request", url=request.url,
            method=request.method, initiator=initiator_of(request),
        )  # fmt: skip
        if refusal is not None:
            refusal = replace(refusal, tab=self.session_of(flow))
            refuse_flow(flow, refusal)
            self.egress.report(refusal)

    async def server_connect(self, data: Any) -> None:
        server = data.server
        if server.error or not server.address:
            return
        name, port = str(server.address[0]), int(server.address[1])
        host = parse_url(f"http://{name}/").host
        if self._judged_by_name(host):
            return
        addresses = await self._addresses(host, port)
        if not addresses:
            return
        refusal = self._judge(host, addresses, action="connect", url=f"{host}:{port}", method="CONNECT")
        if refusal is not None:
            server.error = f"refused by pagewarden: {refusal.reason}"
            self.egress.report(refusal)
            return
        if server.tls and server.sni is None:
            server.sni = name
        first = sorted(addresses, key=lambda a: a.version)[0]  # IPv4 first, as most hosts reach it
        server.address = (str(first), port)  # the address judged is the one connected to
