"""The guarded MCP server's configuration (what `pagewarden mcp` reads from its options)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["HttpOptions", "ServerOptions"]


@dataclass(frozen=True, slots=True)
class ServerOptions:
    """How the guarded browser MCP server runs.

    Browser (named as Playwright MCP names them): `headless`; `executable_path` or `channel`
    (``chrome``, ``msedge``) for another Chromium build; `user_data_dir` for a persistent
    profile (default: pagewarden's own, ``<config dir>/mcp-profile``), `isolated` for a
    profile kept in memory; `storage_state` (a Playwright storage-state file) to start an
    isolated session signed in.

    Guard: `policies` (files), `goal` (the user's goal; when given, the ``set_goal`` tool is
    not offered), `set_goal_tool` (offer ``set_goal`` when no goal was given), `llm` (an
    `LLMConfig` for the semantic tier, or None), `console` (the URL of a running
    ``pagewarden console``: its person answers ASK decisions; without one an ASK is refused),
    `record` (a directory to record the session into), `proxy` (the network layer, on by
    default), `host_map` (host pattern → local port, for sites served on 127.0.0.1).

    Sessions: each client connection gets a session of its own (a guard and a browser context;
    the sessions share one Chromium); `shared_context` makes every connection join one session
    instead (one context, one guard, one goal, one trace: Playwright MCP's
    ``--shared-browser-context``). A persistent profile is one context, so several clients use
    it only with `shared_context`.

    Files: `output_dir` (where screenshots are saved; default a ``pagewarden-mcp`` directory
    in the working directory), `upload_dirs` (the only directories ``browser_file_upload`` may
    read from; default the working directory). `evaluate` offers ``browser_evaluate`` (every
    call still goes to the guard, whose baseline asks a person for page scripts).

    Playwright MCP's: `caps` (``--caps``: extra tool sets; ``vision`` offers the coordinate
    tools), `secrets` (``--secrets``: a dotenv file of secrets the model types by name, each
    allowed only to the domains its ``# domains:`` comment names; see
    `pagewarden.integrations.mcp.load_secrets`).
    """

    headless: bool = True
    executable_path: str | None = None
    channel: str | None = None
    user_data_dir: Path | None = None
    isolated: bool = False
    storage_state: Path | None = None
    viewport: tuple[int, int] | None = (1280, 800)
    policies: tuple[Path, ...] = ()
    goal: str | None = None
    set_goal_tool: bool = True
    llm: Any = None
    console: str | None = None
    record: Path | None = None
    proxy: bool = True
    host_map: Mapping[str, int] = field(default_factory=dict)
    output_dir: Path | None = None
    upload_dirs: tuple[Path, ...] = ()
    evaluate: bool = True
    action_timeout_ms: float = 5000
    navigation_timeout_ms: float = 60000
    guard: bool = True
    shared_context: bool = False
    caps: tuple[str, ...] = ()
    secrets: Path | None = None

    @property
    def offers_set_goal(self) -> bool:
        """Whether the ``set_goal`` tool is listed: only without ``--goal``, and when not turned off."""
        return self.goal is None and self.set_goal_tool and self.guard


#: defaults of the HTTP limits (documented in docs/guides/mcp.md#limits)
DEFAULT_MAX_SESSIONS = 8
DEFAULT_MAX_SESSIONS_PER_CLIENT = 4
DEFAULT_SESSION_IDLE_TIMEOUT = 900.0
DEFAULT_MAX_REQUEST_BYTES = 1024 * 1024


@dataclass(frozen=True, slots=True)
class HttpOptions:
    """How the server serves streamable HTTP (``pagewarden mcp --port``).

    Address: `host` and `port` (the endpoint is ``/mcp``); `allowed_hosts`, the ``Host`` header
    values answered besides the bound address and `public_url`'s (DNS rebinding; ``"*"``: any).
    Beyond loopback only with TLS: `tls_cert` and `tls_key` (PEM), or `behind_proxy` when a
    reverse proxy in front terminates TLS; `public_url` (``https://mcp.example.com``) is the
    address clients use, needed behind a proxy and on a wildcard address.

    Who: `clients`, the accepted bearer tokens (`Clients`); None with `auth` refuses to serve
    (the CLI makes a token on loopback); ``auth=False`` serves anyone (loopback only).

    Limits: `max_sessions` open sessions in all, `max_sessions_per_client` per token (a tokens
    file may set its own per client), `session_idle_timeout` seconds without a request or an open
    stream after which a session is closed (its browser context too; None: never), and
    `max_request_bytes` per request body.
    """

    host: str = "127.0.0.1"
    port: int = 8931
    allowed_hosts: tuple[str, ...] = ()
    clients: Any = None
    auth: bool = True
    tls_cert: Path | None = None
    tls_key: Path | None = None
    public_url: str | None = None
    behind_proxy: bool = False
    max_sessions: int = DEFAULT_MAX_SESSIONS
    max_sessions_per_client: int = DEFAULT_MAX_SESSIONS_PER_CLIENT
    session_idle_timeout: float | None = DEFAULT_SESSION_IDLE_TIMEOUT
    max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES

    @property
    def tls(self) -> bool:
        """Whether the server itself speaks TLS."""
        return self.tls_cert is not None
