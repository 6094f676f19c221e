"""The server's transports: stdio (a client starts ``pagewarden mcp``: one session) and
streamable HTTP (``pagewarden mcp --port N``: the endpoint is ``http(s)://HOST:PORT/mcp``, a
session per client).

Over HTTP every request passes the gate first (`_admission`: the bearer token, the request's
size, the number of sessions); requests whose ``Host`` is not one of the allowed hosts are refused
(DNS rebinding; Playwright MCP's ``--allowed-hosts``), and so are cross-origin browser requests
from pages not on those hosts. Beyond loopback the server speaks TLS (or sits behind a reverse
proxy that does), as the console does (`pagewarden.console.check_binding`); `check_http` refuses
anything else before a socket is bound.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator
from typing import Any

from pagewarden.console import check_binding, is_loopback, public_origin
from pagewarden.integrations.mcp._admission import Gate, Limits
from pagewarden.integrations.mcp._browser import profile_dir
from pagewarden.integrations.mcp._options import HttpOptions
from pagewarden.integrations.mcp._server import GuardedBrowserServer

__all__ = ["check_http", "endpoint_url", "http_app", "run_http", "run_stdio"]

_WELL_KNOWN = "/.well-known/oauth-protected-resource"


class _ClosedStreamNoise(logging.Filter):
    """Drops the MCP SDK's traceback for a client's event stream that closed as its session
    ended (``Error in standalone SSE writer`` with ``ClosedResourceError``): printed on every
    disconnect, it reports nothing wrong."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        return not (type(error).__name__ == "ClosedResourceError" and "SSE writer" in record.getMessage())


_QUIET = _ClosedStreamNoise()


async def run_stdio(server: GuardedBrowserServer) -> None:
    """Serve one client over stdin/stdout until it disconnects, then close the browser."""
    from mcp.server.stdio import stdio_server

    server.single_session = True
    try:
        async with stdio_server() as (read, write):
            await server.server.run(read, write, server.server.create_initialization_options())
    finally:
        await server.aclose()


def endpoint_url(options: HttpOptions) -> str:
    """The URL clients use: ``PUBLIC_URL/mcp``, else ``http(s)://HOST:PORT/mcp``."""
    if options.public_url is not None:
        return options.public_url.rstrip("/") + "/mcp"
    host = f"[{options.host}]" if ":" in options.host and not options.host.startswith("[") else options.host
    return f"{'https' if options.tls else 'http'}://{host}:{options.port}/mcp"


def check_http(server: GuardedBrowserServer, options: HttpOptions) -> None:
    """Refuse, with a `ValueError` that says what to do, a configuration the server must not be
    served with: beyond loopback without TLS (or a TLS-terminating proxy), without tokens, or
    with ``auth=False`` beyond loopback or with any ``Host`` allowed; a persistent profile for
    several clients; a tokens file whose client policies clash with the server's."""
    if (options.tls_cert is None) != (options.tls_key is None):
        raise ValueError("TLS needs both a certificate (--tls-cert) and its key (--tls-key)")
    check_binding(
        options.host,
        tls=options.tls,
        behind_proxy=options.behind_proxy,
        public_url=options.public_url,
        service="the MCP server",
        api="HttpOptions",
    )
    if options.public_url is not None:
        public_origin(options.public_url)  # a clear error for a URL that is not an origin
    Limits(options.max_sessions, options.max_sessions_per_client, options.max_request_bytes)
    if options.session_idle_timeout is not None and not options.session_idle_timeout > 0:
        raise ValueError("the session idle timeout must be a positive number of seconds (or None: never)")
    if not options.auth:
        if not is_loopback(options.host) or options.behind_proxy:
            raise ValueError(
                "--no-auth is for a server on loopback only: beyond it every request needs a token "
                "(PAGEWARDEN_MCP_TOKEN or --tokens-file; see docs/guides/mcp.md#tokens)"
            )
        if "*" in options.allowed_hosts:
            # no token and no Host check: a web page the user opens could rebind its name to
            # 127.0.0.1 and drive this browser
            raise ValueError(
                "--no-auth with --allowed-hosts '*' would let any web page the user opens drive this "
                "browser (DNS rebinding): name the allowed hosts, or use a token"
            )
    elif options.clients is None:
        raise ValueError(
            "no token for the MCP server: set PAGEWARDEN_MCP_TOKEN or give a tokens file "
            "(--tokens-file, PAGEWARDEN_MCP_TOKENS_FILE); see docs/guides/mcp.md#tokens"
        )
    if profile_dir(server.options) is not None and not server.shares_one_session:
        raise ValueError(
            "over HTTP each client gets a browser context of its own, and a persistent profile "
            "(--user-data-dir, or the default one) is a single context: use --isolated (with "
            "--storage-state to start signed in), or --shared-context to let every client share it"
        )
    clients = options.clients.clients if options.auth and options.clients is not None else ()
    limited = [c for c in clients if c.policy_sets or c.goal is not None]
    if limited and server.shares_one_session:
        names = ", ".join(c.name or c.key for c in limited)
        raise ValueError(
            f"--shared-context gives every client one guard, so the policies or goal a token is "
            f"limited to cannot apply ({names}): leave out --shared-context"
        )
    if server.options.guard:
        from pagewarden.guard import Guard

        for client in limited:
            if client.policy_sets:
                # the same policy id in the server's and the client's files: say so now
                Guard(policies=[*server.policies, *client.policy_sets], telemetry=False).close()


def _security(options: HttpOptions) -> Any:
    from mcp.server.transport_security import TransportSecuritySettings

    if "*" in options.allowed_hosts:
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    port = options.port
    hosts = list(options.allowed_hosts) or [options.host, "localhost", "127.0.0.1", "[::1]"]
    with_ports = [h if ":" in h.strip("[]") or h.endswith("]:*") else f"{h}:{port}" for h in hosts]
    origins = [f"{scheme}://{h}" for h in with_ports for scheme in ("http", "https")]
    if options.public_url is not None:
        scheme, name, public_port = public_origin(options.public_url)
        name = f"[{name}]" if ":" in name else name
        default = 443 if scheme == "https" else 80
        if public_port is None or public_port == default:
            with_ports += [name, f"{name}:{default}"]
            origins.append(f"{scheme}://{name}")
        else:
            with_ports.append(f"{name}:{public_port}")
            origins.append(f"{scheme}://{name}:{public_port}")
    return TransportSecuritySettings(allowed_hosts=with_ports, allowed_origins=origins)


def http_app(server: GuardedBrowserServer, options: HttpOptions | None = None) -> Any:
    """The Starlette app serving `server` at ``/mcp`` (streamable HTTP), behind the gate, and
    its protected-resource metadata (RFC 9728) at ``/.well-known/oauth-protected-resource/mcp``.
    `check_http` runs first."""
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from starlette.applications import Starlette
    from starlette.responses import Response
    from starlette.routing import Route

    options = options or HttpOptions()
    check_http(server, options)
    sdk_log = logging.getLogger("mcp.server.streamable_http")
    if _QUIET not in sdk_log.filters:
        sdk_log.addFilter(_QUIET)
    manager = StreamableHTTPSessionManager(
        app=server.server,
        security_settings=_security(options),
        session_idle_timeout=options.session_idle_timeout,
        max_request_body_size=options.max_request_bytes,
        max_sessions=options.max_sessions,
    )
    resource = endpoint_url(options)
    metadata_url = resource.split("/mcp")[0] + _WELL_KNOWN + "/mcp"
    gate = Gate(
        _Endpoint(manager),
        clients=options.clients if options.auth else None,
        limits=Limits(options.max_sessions, options.max_sessions_per_client, options.max_request_bytes),
        counts=lambda client: (server.connections(), server.connections(client, any_client=False)),
        resource_metadata=metadata_url if options.auth and options.port else None,
    )
    metadata = json.dumps({
        "resource": resource,
        "bearer_methods_supported": ["header"],
        "resource_name": "pagewarden MCP server (a guarded browser)",
    })  # fmt: skip

    async def protected_resource(_: Any) -> Response:
        # pagewarden gives out its tokens itself: no OAuth authorization server to name
        return Response(metadata, media_type="application/json", headers={"Cache-Control": "no-store"})

    @contextlib.asynccontextmanager
    async def lifespan(_: Any) -> AsyncIterator[None]:
        try:
            async with manager.run():
                yield
        finally:
            await server.aclose()

    routes = [
        Route("/mcp", endpoint=gate),
        Route(_WELL_KNOWN + "/mcp", endpoint=protected_resource, methods=["GET"]),
        Route(_WELL_KNOWN, endpoint=protected_resource, methods=["GET"]),
    ]
    return Starlette(routes=routes, lifespan=lifespan)


class _Endpoint:
    """The ASGI endpoint handing each request to the session manager (a class: Starlette
    routes a plain function as a request/response handler instead)."""

    def __init__(self, manager: Any) -> None:
        self.manager = manager

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await self.manager.handle_request(scope, receive, send)


async def run_http(
    server: GuardedBrowserServer, options: HttpOptions | None = None, ready: Any = None
) -> None:
    """Serve streamable HTTP as `options` say until cancelled (Ctrl-C); `ready(url)` is called
    once it listens. Refuses to start (`ValueError`) where `check_http` does."""
    import uvicorn

    options = options or HttpOptions()
    app = http_app(server, options)
    tls: dict[str, Any] = {}
    if options.tls:
        tls = {"ssl_certfile": str(options.tls_cert), "ssl_keyfile": str(options.tls_key)}
    config = uvicorn.Config(
        app, host=options.host, port=options.port, log_level="warning", lifespan="on", **tls
    )
    uv = uvicorn.Server(config)
    task = asyncio.ensure_future(uv.serve())
    try:
        while not uv.started and not task.done():
            await asyncio.sleep(0.05)
        if uv.started and ready is not None:
            ready(endpoint_url(options))
        await asyncio.shield(task)
    except asyncio.CancelledError:
        uv.should_exit = True
        with contextlib.suppress(Exception):
            await asyncio.wait_for(task, 30)
        raise
