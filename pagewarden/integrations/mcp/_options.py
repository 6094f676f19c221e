"""The guarded MCP server's configuration (what `pagewarden mcp` reads from its options)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["ServerOptions"]


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
    caps: tuple[str, ...] = ()
    secrets: Path | None = None

    @property
    def offers_set_goal(self) -> bool:
        """Whether the ``set_goal`` tool is listed: only without ``--goal``, and when not turned off."""
        return self.goal is None and self.set_goal_tool and self.guard
