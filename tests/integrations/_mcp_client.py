"""Helpers for the MCP server's tests: an in-process client session from the MCP SDK, and
reading refs out of the snapshot text the server returns (as a model would)."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from mcp import ClientSession
from mcp.shared.memory import create_connected_server_and_client_session

from pagewarden.demo.site import DemoSite
from pagewarden.integrations.mcp import GuardedBrowserServer, ServerOptions

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
