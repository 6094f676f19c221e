"""The server's transports: stdio (a client starts ``pagewarden mcp``) and streamable HTTP
(``pagewarden mcp --port N``: the endpoint is ``http://HOST:PORT/mcp``).

Over HTTP, requests whose ``Host`` is not one of the allowed hosts are refused (DNS
rebinding; Playwright MCP's ``--allowed-hosts``), and so are cross-origin browser requests
from pages not on those hosts. All HTTP clients share the one guarded browser.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Sequence
from typing import Any

from pagewarden.integrations.mcp._server import GuardedBrowserServer

__all__ = ["http_app", "run_http", "run_stdio"]


async def run_stdio(server: GuardedBrowserServer) -> None:
    """Serve one client over stdin/stdout until it disconnects, then close the browser."""
    from mcp.server.stdio import stdio_server

    try:
        async with stdio_server() as (read, write):
            await server.server.run(read, write, server.server.create_initialization_options())
    finally:
        await server.aclose()


def _security(host: str, port: int, allowed_hosts: Sequence[str]) -> Any:
    from mcp.server.transport_security import TransportSecuritySettings

    if "*" in allowed_hosts:
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    hosts = list(allowed_hosts) or [host, "localhost", "127.0.0.1", "[::1]"]
    with_ports = [h if ":" in h.strip("[]") or h.endswith("]:*") else f"{h}:{port}" for h in hosts]
    origins = [f"{scheme}://{h}" for h in with_ports for scheme in ("http", "https")]
    return TransportSecuritySettings(allowed_hosts=with_ports, allowed_origins=origins)


def http_app(server: GuardedBrowserServer, host: str, port: int, allowed_hosts: Sequence[str] = ()) -> Any:
    """The Starlette app serving `server` at ``/mcp`` (streamable HTTP)."""
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from starlette.applications import Starlette
    from starlette.routing import Route

    manager = StreamableHTTPSessionManager(
        app=server.server, security_settings=_security(host, port, allowed_hosts)
    )

    @contextlib.asynccontextmanager
    async def lifespan(_: Any) -> AsyncIterator[None]:
        try:
            async with manager.run():
                yield
        finally:
            await server.aclose()

    return Starlette(routes=[Route("/mcp", endpoint=_Endpoint(manager))], lifespan=lifespan)


class _Endpoint:
    """The ASGI endpoint handing each request to the session manager (a class: Starlette
    routes a plain function as a request/response handler instead)."""

    def __init__(self, manager: Any) -> None:
        self.manager = manager

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await self.manager.handle_request(scope, receive, send)


async def run_http(
    server: GuardedBrowserServer,
    host: str = "127.0.0.1",
    port: int = 8931,
    allowed_hosts: Sequence[str] = (),
    ready: Any = None,
) -> None:
    """Serve streamable HTTP on `host`:`port` until cancelled (Ctrl-C). `ready(url)` is called
    once it listens."""
    import uvicorn

    config = uvicorn.Config(
        http_app(server, host, port, allowed_hosts), host=host, port=port, log_level="warning"
    )
    uv = uvicorn.Server(config)
    if ready is None:
        await uv.serve()
        return
    import asyncio

    task = asyncio.ensure_future(uv.serve())
    while not uv.started and not task.done():
        await asyncio.sleep(0.05)
    if uv.started:
        ready(f"http://{host}:{port}/mcp")
    await task
