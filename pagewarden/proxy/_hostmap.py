"""`HostMap`: resolve made-up host names to a local port (tests, the demo, LocalSite).

Chromium's ``--host-resolver-rules`` does not apply once the browser talks to a proxy (the
proxy resolves names), so the proxy needs the same mapping.
"""

from __future__ import annotations

from collections.abc import Mapping

from pagewarden._url import host_matches

__all__ = ["HostMap"]


class HostMap:
    """mitmproxy addon: connect to ``127.0.0.1:PORT`` for hosts matching a pattern.

    `host_map` maps host patterns (``*.test``, ``site.test``) to a port on 127.0.0.1 (or to a
    ``(host, port)`` pair). Requests keep their URL and ``Host`` header: only the upstream
    connection is redirected.
    """

    def __init__(self, host_map: Mapping[str, int | tuple[str, int]]) -> None:
        self.host_map = dict(host_map)

    def resolve(self, host: str) -> tuple[str, int] | None:
        """Where a connection to `host` goes instead, or None."""
        for pattern, target in self.host_map.items():
            if host_matches(host, pattern) or (pattern.startswith("*.") and host_matches(host, pattern[2:])):
                return target if isinstance(target, tuple) else ("127.0.0.1", int(target))
        return None

    def request(self, flow) -> None:
        # Last in the chain: the other addons judged the real URL. The request goes to the
        # mapped address (so mitmproxy reuses its upstream connections), keeping its Host
        # header; the URL is restored before the response is seen or recorded.
        if flow.response is not None or flow.request.scheme != "http":
            return
        target = self.resolve(flow.request.host)
        if target is not None:
            flow.metadata["pagewarden_mapped"] = (flow.request.host, flow.request.port)
            host_header = flow.request.host_header
            flow.request.host, flow.request.port = target
            flow.request.host_header = host_header

    def _restore(self, flow) -> None:
        original = flow.metadata.pop("pagewarden_mapped", None)
        if original is not None:
            host_header = flow.request.host_header
            flow.request.host, flow.request.port = original
            flow.request.host_header = host_header

    def responseheaders(self, flow) -> None:
        self._restore(flow)

    def error(self, flow) -> None:
        self._restore(flow)

    def server_connect(self, data) -> None:
        # HTTPS (CONNECT) and websockets: redirect the connection itself
        if data.server.error or not data.server.address:
            return
        host = str(data.server.address[0])
        target = self.resolve(host)
        if target is not None:
            if data.server.sni is None and data.server.tls:
                data.server.sni = host
            data.server.address = target
