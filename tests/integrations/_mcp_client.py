"""Helpers for the MCP server's tests: an in-process client session from the MCP SDK, a server
over streamable HTTP on a free loopback port with the SDK's HTTP client, and reading refs out
of the snapshot text the server returns (as a model would)."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import re
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
from mcp import ClientSession, types
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.memory import create_connected_server_and_client_session

from pagewarden.demo.site import DemoSite
from pagewarden.integrations.mcp import GuardedBrowserServer, HttpOptions, ServerOptions, run_http

_LINE = re.compile(r'^\s*- \'?(?P<role>[\w/-]+)(?: "(?P<name>(?:[^"\\]|\\.)*)")?(?P<rest>.*)$')


def signed_in_state(site: DemoSite, directory: Path) -> Path:
    """A Playwright storage-state file whose browser is signed in to tracker.test."""
    cookie = {**site.session_cookie(site.sign_in_session()), "expires": -1, "httpOnly": False,
              "secure": False, "sameSite": "Lax"}  # fmt: skip
    path = directory / "state.json"
    path.write_text(json.dumps({"cookies": [cookie], "origins": []}))
    return path


@asynccontextmanager
async def mcp_session(options: ServerOptions) -> AsyncIterator[tuple[ClientSession, GuardedBrowserServer]]:
    """A guarded server and an MCP client session connected to it in memory."""
    server = GuardedBrowserServer(options)
    try:
        async with create_connected_server_and_client_session(server.server) as client:
            yield client, server
    finally:
        await server.aclose()


def text_of(result: Any) -> str:
    """The text parts of a tool result, joined."""
    return "\n".join(part.text for part in result.content if getattr(part, "type", "") == "text")


def ref(
    snapshot: str, role: str, name: str | None = None, *, contains: str | None = None, nth: int = 0
) -> str:
    """The ref of the `nth` element of `role` named `name` (or whose name contains `contains`)."""
    found = []
    for line in snapshot.splitlines():
        match = _LINE.match(line)
        if match is None or match.group("role") != role:
            continue
        label = match.group("name") or ""
        if name is not None and label != name:
            continue
        if contains is not None and contains not in label:
            continue
        refs = re.search(r"\[ref=([\w]+)\]", match.group("rest"))
        if refs:
            found.append(refs.group(1))
    if len(found) <= nth:
        raise AssertionError(f"no {role} named {name or contains!r} in the snapshot:\n{snapshot[:6000]}")
    return found[nth]


def stripped_ref(snapshot: str, role: str, name: str | None = None, *, contains: str | None = None) -> str:
    """The ref of the element of `role` named `name`, or, when the server took the name out as
    injected orders, of the first such element whose name it removed (a naive model clicks it
    all the same)."""
    try:
        return ref(snapshot, role, name, contains=contains)
    except AssertionError:
        return ref(snapshot, role, contains="removed by pagewarden")


def free_port() -> int:
    """A free TCP port on 127.0.0.1."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@asynccontextmanager
async def http_server(
    options: ServerOptions, http: HttpOptions
) -> AsyncIterator[tuple[str, GuardedBrowserServer]]:
    """A guarded server serving streamable HTTP on a free 127.0.0.1 port: ``(endpoint, server)``."""
    http = dataclasses.replace(http, host="127.0.0.1", port=free_port())
    server = GuardedBrowserServer(options)
    listening: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    task = asyncio.ensure_future(run_http(server, http, ready=listening.set_result))
    try:
        await asyncio.wait({listening, task}, timeout=60, return_when=asyncio.FIRST_COMPLETED)
        if task.done():
            task.result()  # it failed to start: say why
        yield listening.result(), server
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await server.aclose()


@asynccontextmanager
async def http_client(
    url: str,
    token: str | None = None,
    *,
    name: str = "test-client",
    terminate_on_close: bool = True,
    verify: Any = True,
) -> AsyncIterator[ClientSession]:
    """An initialised MCP client session of the SDK over streamable HTTP, sending `token`
    (`verify`: httpx's, e.g. an `ssl.SSLContext` trusting a test CA)."""
    headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
    timeout = httpx.Timeout(60, read=300)
    info = types.Implementation(name=name, version="1.0")
    async with (
        httpx.AsyncClient(headers=headers, timeout=timeout, verify=verify) as http,
        streamable_http_client(url, http_client=http, terminate_on_close=terminate_on_close) as streams,
        ClientSession(streams[0], streams[1], client_info=info) as session,
    ):
        await session.initialize()
        yield session


def initialize_request(name: str = "raw-client") -> dict[str, Any]:
    """The JSON-RPC ``initialize`` request a client opens a session with."""
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": types.LATEST_PROTOCOL_VERSION,
            "capabilities": {},
            "clientInfo": {"name": name, "version": "1.0"},
        },
    }


MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
