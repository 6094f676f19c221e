"""Egress policy: which hosts and URLs the browser may reach, judged per request.

The rules come from the policy set, matched with the rules tier's own code
(`pagewarden.rules.urls.UrlPattern`, `pagewarden._url.host_matches`), so a pattern
means the same thing to the browser layer and to the network layer:

* ``domain_deny`` — every request (subresources, websockets, ``CONNECT``, each redirect hop)
  to a matching host is refused.
* ``domain_allow`` — every request must go to a host of *each* ``domain_allow`` rule (as in
  the rules tier, where every rule is checked on its own). A rule's ``subresources`` hosts pass
  it for subresources, websockets, ``CONNECT`` and a frame's document that the browser labels
  as one (``Sec-Fetch-Dest: iframe`` / ``frame``, sent to HTTPS and loopback origins); a tab's
  document there, or a document the browser does not label (plain HTTP), is refused.
* ``url_deny`` / ``url_allow`` — judged on navigations (documents and frames: the requests
  a browser makes to show a page), every redirect hop included; subresources are not
  constrained by them.
* ``strict`` — only hosts on the allow-list pass: the ``domain_allow`` patterns, the hosts
  of ``url_allow`` patterns written as whole URLs, and the extra ``allow_hosts``. With
  strict and an empty allow-list nothing passes.
* A request with no host, or a host a browser would refuse, is refused.

`EgressRules` is sans-I/O (a URL in, a `Refusal` or None out; it lives in
`pagewarden.rules._egress`, shared with the embedded navigation gate); `EgressPolicy` is the
mitmproxy addon that applies it.
"""

from __future__ import annotations

import contextlib
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import Any

from mitmproxy import http

from pagewarden._url import parse_url
from pagewarden.proxy._refusal import REFUSED_HEADER, Refusal, RefusalSink, refusal_page
from pagewarden.rules import NETWORK_POLICY, REFUSALS_KEPT, EgressRules

__all__ = ["NETWORK_POLICY", "EgressPolicy", "EgressRules", "is_navigation"]


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


def initiator_of(request: http.Request) -> str | None:
    """The page a request says it comes from (``Origin``, else ``Referer``; None: not said)."""
    return request.headers.get("origin") or request.headers.get("referer") or None


def refuse_flow(flow: http.HTTPFlow, refusal: Refusal) -> None:
    """Answer `flow` instead of sending it upstream: a navigation (a tab's, a popup's or a
    frame's document, each redirect hop) with ``204 No Content``, so the tab stays on the page
    it was on — no refusal page, and neither the refused URL (which may carry what the agent
    typed) in its address bar nor in its history; the refusal reaches the agent as
    `ActionBlocked`, the trace and the console. Any other request with the 403 refusal page
    (what a fetch or an HTTP client reads). Both carry ``X-Pagewarden-Refused``."""
    headers = {"Cache-Control": "no-store", REFUSED_HEADER: refusal.policy_id}
    if flow.request.method != "CONNECT" and is_navigation(flow.request):
        flow.response = http.Response.make(204, b"", headers)
    else:
        headers["Content-Type"] = "text/html; charset=utf-8"
        flow.response = http.Response.make(403, refusal_page(refusal), headers)
    flow.metadata["pagewarden_refusal"] = refusal.to_dict()


class EgressPolicy:
    """mitmproxy addon: refuse requests the egress rules do not allow (deny by default for
    anything it cannot judge: no host, an unparsable URL).

    Options: ``pagewarden_strict`` (only allow-listed hosts), ``pagewarden_allow_hosts`` and
    ``pagewarden_deny_hosts`` (host patterns added to the policies' own).

    A ``CONNECT`` to a refused host is answered 403, unless `open_refused_tunnels` (the session
    proxy of a browser that trusts the proxy's CA): then the tunnel opens to the proxy alone —
    no connection to the host is ever made (`server_connect`), anything but HTTP inside it is
    killed (`tcp_start`) — and each request inside is refused on its own, so a tab's HTTPS
    navigation there gets the navigations' ``204`` and stays where it was (a refused tunnel
    shows Chromium's error page at the refused URL).
    """

    def __init__(
        self,
        policies: Iterable[object] | None = None,
        on_refusal: RefusalSink | None = None,
        *,
        open_refused_tunnels: bool = False,
        access: Callable[[], Any] | None = None,
    ) -> None:
        self._policies = list(policies or ())
        #: the proxy's own options (`configure`), kept to rebuild the rules in `set_policies`;
        #: `access`: the guarded session's opened private address blocks (None: any browser)
        self._options: dict[str, Any] = {"access": access} if access is not None else {}
        self.rules = EgressRules.from_policies(self._policies, **self._options)
        self.sinks: list[RefusalSink] = [on_refusal] if on_refusal is not None else []
        # the latest refusals (each is also a `network` event and a log line): bounded, so a page
        # that keeps requesting a refused host for hours does not grow memory
        self.refusals: deque[Refusal] = deque(maxlen=REFUSALS_KEPT)
        self.open_refused_tunnels = open_refused_tunnels
        #: client connection id -> the refusal of the tunnel it opened (see the class docstring)
        self._refused_tunnels: dict[str, Refusal] = {}

    def load(self, loader) -> None:
        loader.add_option("pagewarden_strict", bool, False, "Only allow-listed hosts may be reached.")
        loader.add_option(
            "pagewarden_allow_hosts", Sequence[str], [], "Host patterns allowed besides the policies' own."
        )
        loader.add_option("pagewarden_deny_hosts", Sequence[str], [], "Host patterns always refused.")

    def configure(self, updated: set[str]) -> None:
        from mitmproxy import ctx

        if updated & {"pagewarden_strict", "pagewarden_allow_hosts", "pagewarden_deny_hosts"}:
            self._options = {
                **({"access": self._options["access"]} if "access" in self._options else {}),
                "strict": ctx.options.pagewarden_strict,
                "allow_hosts": list(ctx.options.pagewarden_allow_hosts),
                "deny_hosts": list(ctx.options.pagewarden_deny_hosts),
            }
            self.rules = EgressRules.from_policies(self._policies, **self._options)

    def set_policies(self, policies: Iterable[object]) -> None:
        """Enforce `policies` from the next request on (a guard following its policy store
        installed a new version), with the options the proxy was configured with. The rules
        are built first and swapped in whole, so a request is judged by the old or the new.
        (Not named ``update``: that is a mitmproxy event, called with flows.)"""
        listed = list(policies)
        rules = EgressRules.from_policies(listed, **self._options)
        self._policies, self.rules = listed, rules

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
            subresource=True,  # each request inside the tunnel is judged on its own
        )
        if refusal is not None:
            refusal = replace(refusal, tab=flow.metadata.get("pagewarden_session"))
            if self.open_refused_tunnels:
                self._refused_tunnels[flow.client_conn.id] = refusal
                flow.metadata["pagewarden_tunnel_refused"] = refusal.to_dict()
                return
            refuse_flow(flow, refusal)
            self.report(refusal)

    def server_connect(self, data: Any) -> None:
        """No connection ever goes to the host of a refused tunnel."""
        refusal = self._refused_tunnels.get(data.client.id)
        if refusal is not None:
            data.server.error = f"refused by pagewarden ({refusal.policy_id}/{refusal.rule})"

    def tcp_start(self, flow: Any) -> None:
        """Anything but HTTP inside a refused tunnel (TURN over TCP, a raw socket) is killed."""
        refusal = self._refused_tunnels.get(flow.client_conn.id)
        if refusal is not None:
            flow.kill()
            self.report(refusal)

    def client_disconnected(self, client: Any) -> None:
        self._refused_tunnels.pop(client.id, None)

    def request(self, flow: http.HTTPFlow) -> None:
        if flow.response is not None:  # answered already (replay, another addon's refusal)
            return
        tunnel = self._refused_tunnels.get(flow.client_conn.id) if self._refused_tunnels else None
        request = flow.request
        navigation = is_navigation(request)
        websocket = request.headers.get("upgrade", "").lower() == "websocket"
        url = request.url if not websocket else request.url.replace("http", "ws", 1)
        frame = navigation and request.headers.get("sec-fetch-dest", "") in ("iframe", "frame")
        refusal = self.rules.judge(
            url, navigation=navigation, action="websocket" if websocket else None, method=request.method,
            frame=frame, initiator=initiator_of(request),
        )
        host_header = request.host_header
        header_host = parse_url(f"http://{host_header}/").host if host_header else ""
        if refusal is None and header_host and header_host != parse_url(url).host:
            # the Host header names another site than the one the proxy would connect to
            other = f"{request.scheme}://{host_header}{request.path}"
            refusal = self.rules.judge(other, navigation=navigation, method=request.method, frame=frame)
        if refusal is None and tunnel is not None:  # a request in a refused tunnel: refused with it
            action = "navigation" if navigation else ("websocket" if websocket else "request")
            refusal = replace(tunnel, action=action, url=url, method=request.method)
        if refusal is not None:
            refusal = replace(refusal, tab=flow.metadata.get("pagewarden_session"), subframe=frame)
            refuse_flow(flow, refusal)
            self.report(refusal)
