"""One MCP session: what a client that connected to the server has of its own.

Each session (a stdio connection, a streamable HTTP session, an in-memory client) has its own
guard (the goal, the memory of earlier steps, budgets, the trace or recording), its own browser
context (cookies, storage, tabs) and its own goal lock and snapshots, so two clients of one
server never see each other's pages. Every tool finds them here (`GuardedBrowserServer.session`);
the session's calls run one at a time, the sessions side by side.

The guard is made at the session's first tool call, once the client has said who it is: the
agent name the console, the trace and OpenTelemetry show is the name of the client's token (see
`_clients`) or, without one, the client's own ``clientInfo`` name.
"""

from __future__ import annotations

import asyncio
import re
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pagewarden.guard import Guard
from pagewarden.integrations.mcp._browser import BrowserSession, SharedBrowser
from pagewarden.integrations.mcp._clients import Client
from pagewarden.integrations.mcp._options import ServerOptions

__all__ = ["McpSession", "agent_label"]

_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f-\x9f]+")
_SLUG = re.compile(r"[^A-Za-z0-9_.-]+")


def agent_label(text: Any) -> str | None:
    """A name a client gave itself, fit to show (printable, at most 120 characters), or None."""
    if not isinstance(text, str):
        return None
    text = _UNPRINTABLE.sub(" ", text).strip()[:120].strip()
    return text or None


class McpSession:
    """One client's session: `guard`, `browser` (its context and tabs), `goal_locked`,
    `snapshots` (the latest snapshot text of each tab, for checking refs) and `lock` (its tool
    calls run one at a time).

    `client` is the credential the session was opened with (None: stdio, or a server without
    tokens); `policies` the loaded policy sets its guard judges with (the server's, then its
    client's); `record` the server's ``--record`` directory (one subdirectory per session with
    `record_per_session`); `guard` given: the session uses that guard (a shared session) and does
    not close it; `secrets` the server's ``--secrets`` book, registered with the guard it makes.
    """

    def __init__(
        self,
        options: ServerOptions,
        *,
        shared: SharedBrowser | None,
        client: Client | None = None,
        policies: Sequence[Any] = (),
        record: Path | None = None,
        record_per_session: bool = True,
        guard: Guard | None = None,
        secrets: Any = None,
    ) -> None:
        self.id = uuid.uuid4().hex[:12]
        self.options = options
        self.client = client
        self.policies = tuple(policies)
        self.record = record
        self.record_per_session = record_per_session
        self.shared = shared
        self.guard = guard
        #: the server's --secrets (a `SecretBook`), registered with the session's guard
        self.secrets = secrets
        self._own_guard = guard is None
        named = client.name if client is not None else None
        self.agent_name: str | None = guard.agent_name if guard is not None else named
        self.browser: BrowserSession | None = None
        #: once page content reached the model, only the user may change the goal (the console)
        self.goal_locked = False
        self.snapshots: dict[int, str] = {}
        self.lock = asyncio.Lock()
        #: set once the session is closed (its context and guard closed)
        self.closed = asyncio.Event()
        self.opened_at = time.time()
        if guard is not None:
            self.browser = BrowserSession(options, guard, shared)

    @property
    def goal(self) -> str | None:
        """The goal the session starts with: its client's (a token limited to a goal), else the
        server's ``--goal``."""
        if self.client is not None and self.client.goal is not None:
            return self.client.goal
        return self.options.goal

    @property
    def offers_set_goal(self) -> bool:
        """Whether this session lists the ``set_goal`` tool (not when a goal was given)."""
        return self.options.offers_set_goal and self.goal is None

    @property
    def started(self) -> bool:
        """Whether the session has its guard (made at its first tool call)."""
        return self.browser is not None

    def start(self, client_name: str | None) -> None:
        """Make the session's guard (named after its token's client, else `client_name`, the
        name the client gave itself) and its browser session; the context opens at first use."""
        if self.browser is not None:
            return
        named = self.client.name if self.client is not None else None
        self.agent_name = named or agent_label(client_name)
        if self.guard is None and self.options.guard:
            self.guard = self.make_guard()
        self.browser = BrowserSession(self.options, self.guard, self.shared)

    def make_guard(self) -> Guard:
        """This session's guard, as the server's options and the session's client say (the one
        place a session's guard is configured)."""
        guard = Guard(
            policies=list(self.policies) or None,
            goal=self.goal,
            llm=self.options.llm,
            console=self.options.console,
            record=self._record_dir(),
            agent_name=self.agent_name,
            session_id=self.id,
        )
        if self.secrets is not None:
            self.secrets.register(guard)
        return guard

    def _record_dir(self) -> Path | None:
        """Where the session is recorded: the server's ``--record`` directory itself (stdio: one
        session), or ``<agent>-<session id>`` in it (one directory per session)."""
        if self.record is None or not self.record_per_session:
            return self.record
        name = _SLUG.sub("-", self.agent_name or "session").strip("-.")[:40] or "session"
        return self.record / f"{name}-{self.id}"

    async def aclose(self) -> None:
        """Close the session's context (and its network layer) and its guard (its trace or
        recording); idempotent."""
        if self.closed.is_set():
            return
        try:
            if self.browser is not None:
                await self.browser.close()
        finally:
            try:
                if self.guard is not None and self._own_guard:
                    self.guard.close()
            finally:
                self.closed.set()

    def __repr__(self) -> str:
        return f"McpSession({self.id}, agent={self.agent_name!r})"
