"""The network layer of one guarded session: the proxy `launch(proxy=True)` starts for a
guard, the Chromium flags that send every request through it, and the check that it
enforces before any browser starts."""

from __future__ import annotations

import socket
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from pagewarden._browser import WEBRTC_NO_UDP
from pagewarden.proxy._addresses import AddressCheck
from pagewarden.proxy._ca import CA_CERT, spki_pin
from pagewarden.proxy._downloads import DownloadGate
from pagewarden.proxy._egress import EgressPolicy
from pagewarden.proxy._exfil import ExfiltrationFilter
from pagewarden.proxy._grants import NavigationGrants, NetworkSession
from pagewarden.proxy._hostmap import HostMap
from pagewarden.proxy._recorder import Recorder
from pagewarden.proxy._refusal import REFUSED_HEADER, Refusal
from pagewarden.proxy._replay import Replay
from pagewarden.proxy._server import ProxyError, ProxyServer, free_port
from pagewarden.proxy._tokens import SessionTokens

__all__ = ["PROBE_HOST", "chromium_proxy_args", "session_proxy", "standalone_proxy", "verify_enforcing"]

#: A host every pagewarden proxy refuses; `verify_enforcing` asks for it.
PROBE_HOST = "enforcement-probe.pagewarden.invalid"


def _session_access(guard: Any) -> Any:
    """The guarded session's opened private address blocks (`InternalAccess`), read per request."""
    return lambda: getattr(getattr(guard, "session", None), "internal", None)


def _follow_policies(guard: Any, egress: EgressPolicy) -> None:
    """Keep `egress` on `guard`'s policies: each ``policies`` event (a guard following its
    policy store installed a new version, `Guard.reload_policies`) gives the proxy the new
    egress rules from the next request on, as the rules tier has them. The exfiltration
    filter reads the guard's policies on each request already."""
    subscribe = getattr(guard, "subscribe", None)
    if subscribe is None:
        return

    def follow(event: Any) -> None:
        if getattr(event, "kind", None) == "policies":
            egress.set_policies(guard.policies)

    subscribe(follow, kinds=("policies",))  # only these: a step event would cost a copy per step


def session_proxy(
    guard: Any,
    *,
    host_map: Mapping[str, int] | None = None,
    options: Mapping[str, Any] | None = None,
    addons: tuple[Any, ...] = (),
    grants: bool = True,
) -> ProxyServer:
    """A (not yet started) proxy enforcing `guard`'s policies for one guarded session.

    The session (`NetworkSession`, also set as ``guard.network`` so that the guard's pipeline
    grants navigations and hears of refusals) has a listen port of its own
    (``session.proxy_url``: the browser context's proxy setting; every request arriving there is
    the session's, preflights and workers' included) and a token its context sends
    (`accept_language`: it also names the tab); requests on the main port without the token —
    the browser's own traffic — are refused.
    Addon chain: `SessionTokens`, `EgressPolicy`, `NavigationGrants` (unless
    ``grants=False``), `ExfiltrationFilter`, `DownloadGate`, `Replay` (option ``pagewarden_replay``),
    `AddressCheck` (after every addon that may refuse or answer a request: it resolves only the
    names of requests that would leave),
    `Recorder` (option ``pagewarden_record``; ``guard.recording``'s flows file when the guard
    records a session), then `addons`, and `HostMap` last. Refusals are ``network`` events of
    the guard (redacted by it)."""
    session = NetworkSession(guard)
    session.port = free_port()
    guard.network = session
    sessions = {session.token: session}
    ports = {session.port: session.token}

    def route(refusal: Refusal) -> None:
        if refusal.host == PROBE_HOST:  # the start-up check, not the browser
            return
        owner = sessions.get(refusal.tab or "", session)
        owner.refused(replace(refusal, tab=None))

    def guard_for(flow: Any) -> Any:
        owner = sessions.get(flow.metadata.get("pagewarden_session", ""))
        return owner.guard if owner is not None else None

    def download_owner(url: str) -> str | None:
        return next((token for token, owner in sessions.items() if owner.download_allowed(url)), None)

    def port_owner(port: int) -> str | None:
        if port == main_port and session.shares_main_port:
            return session.token
        return ports.get(port)

    main_port = free_port()
    while main_port == session.port:  # two free ports, never the same one twice
        main_port = free_port()
    tokens = SessionTokens(
        known=sessions.__contains__, report=route, download_owner=download_owner, port_owner=port_owner
    )
    chain: list[Any] = [tokens]
    egress = EgressPolicy(
        guard.policies, on_refusal=route, open_refused_tunnels=True, access=_session_access(guard)
    )
    _follow_policies(guard, egress)
    chain.append(egress)
    mapped = HostMap(host_map) if host_map else None
    if grants:
        chain.append(NavigationGrants(sessions, egress))
    def route_flow(flow: Any, refusal: Refusal) -> None:
        route(replace(refusal, tab=flow.metadata.get("pagewarden_session")))

    chain.append(ExfiltrationFilter(guard_for, route_flow))
    def session_of(flow: Any) -> NetworkSession | None:
        return sessions.get(flow.metadata.get("pagewarden_session", ""))

    chain.append(DownloadGate(session_of, route_flow))

    def step_of(flow: Any) -> int | None:
        owner = sessions.get(flow.metadata.get("pagewarden_session", ""))
        if owner is None and flow.request.method == "CONNECT":  # on the main port: no token on it
            owner = session
        return owner.current_step if owner is not None else None

    chain += [Replay(), AddressCheck(egress, mapped)]  # (the last judge: see its module)
    chain.append(Recorder(redact=guard.secrets.redact, step_of=step_of))
    chain += addons
    if mapped is not None:  # last: the others judge the real URL
        chain.append(mapped)
    values = dict(options or {})
    recording = getattr(guard, "recording", None)
    if recording is not None:  # Guard(record=DIR): the flows go into the session directory
        values.setdefault("pagewarden_record", str(recording.flows_path))
    values["pagewarden_deny_hosts"] = [*values.get("pagewarden_deny_hosts", ()), PROBE_HOST]
    values.setdefault("pagewarden_require_session", True)
    server = ProxyServer(chain, port=main_port, options=values, extra_ports=(session.port,))
    session.proxy_url = server.url_of(session.port)
    return server


def standalone_proxy(
    guard: Any,
    *,
    port: int = 0,
    host: str = "127.0.0.1",
    host_map: Mapping[str, int] | None = None,
    options: Mapping[str, Any] | None = None,
    on_refusal: Any = None,
) -> ProxyServer:
    """The network layer alone, for any browser or agent (`pagewarden proxy`): the egress
    rules and the exfiltration filter of `guard`'s policies for every request (there is no
    guarded session to tell it about navigations, so no grants and no session tokens), the
    replay and the recorder. `on_refusal(refusal)` hears each refusal."""

    def report(refusal: Refusal) -> None:
        if refusal.host != PROBE_HOST and on_refusal is not None:
            on_refusal(refusal)

    egress = EgressPolicy(guard.policies, on_refusal=report)
    _follow_policies(guard, egress)
    mapped = HostMap(host_map) if host_map else None
    chain: list[Any] = [
        egress,
        ExfiltrationFilter(lambda flow: guard, lambda flow, refusal: report(refusal)),
        Replay(),
        AddressCheck(egress, mapped),  # last of the judges: names of requests that leave only
        Recorder(redact=guard.secrets.redact),
    ]
    if mapped is not None:  # last: the others judge the real URL
        chain.append(mapped)
    values = dict(options or {})
    values["pagewarden_deny_hosts"] = [*values.get("pagewarden_deny_hosts", ()), PROBE_HOST]
    return ProxyServer(chain, host=host, port=port, options=values)


def verify_enforcing(server: ProxyServer, timeout: float = 10.0) -> None:
    """Raise `ProxyError` unless the proxy answers a request for `PROBE_HOST` with
    pagewarden's refusal (so a browser started behind it is really guarded)."""
    request = f"GET http://{PROBE_HOST}/ HTTP/1.1\r\nHost: {PROBE_HOST}\r\nConnection: close\r\n\r\n"
    try:
        with socket.create_connection((server.host, server.port), timeout=timeout) as sock:
            sock.sendall(request.encode("ascii"))
            answer = b""
            while b"\r\n\r\n" not in answer:
                chunk = sock.recv(4096)
                if not chunk:
                    break
                answer += chunk
    except OSError as exc:
        raise ProxyError(f"the proxy at {server.url} does not answer: {exc}") from exc
    head = answer.split(b"\r\n\r\n", 1)[0].decode("latin-1").lower()
    if not head.startswith("http/1.1 403") or REFUSED_HEADER.lower() not in head:
        raise ProxyError(f"the proxy at {server.url} is not enforcing: it did not refuse {PROBE_HOST}")


def chromium_proxy_args(server: ProxyServer) -> tuple[str, ...]:
    """Flags sending all of Chromium's traffic through `server` and nothing beside it:

    * ``--proxy-server`` with ``--proxy-bypass-list=<-loopback>``: loopback (``localhost``,
      ``127.0.0.0/8``, ``[::1]``) goes through the proxy too (Chromium bypasses it by default);
    * ``--disable-quic``: no HTTP/3 over UDP;
    * ``--webrtc-ip-handling-policy=disable_non_proxied_udp`` and its ``--force-`` twin (the
      headless shell reads only that one): WebRTC gathers no UDP candidates and sends no
      STUN/TURN datagrams (TURN over TCP goes through the proxy and is judged there like any
      ``CONNECT``);
    * ``--host-resolver-rules``: Chromium resolves no name itself (it would otherwise look up
      the hosts of preloads, images and refused navigations in DNS, a channel beside the
      proxy: ``secret.evil.example``); every name maps to the proxy's own address, so even a
      direct connection could only reach the proxy;
    * the proxy's CA trusted by its SPKI pin (not by ignoring certificate errors)."""
    cert = server.confdir / CA_CERT if server.confdir is not None else None
    return (
        f"--proxy-server={server.url}",
        "--proxy-bypass-list=<-loopback>",
        "--disable-quic",
        *WEBRTC_NO_UDP,
        f"--host-resolver-rules=MAP * {server.host}:{server.port}, EXCLUDE {server.host}",
        f"--ignore-certificate-errors-spki-list={spki_pin(cert)}",
    )
