"""The MCP server's own error for a tool call that cannot run as asked."""

from __future__ import annotations

__all__ = ["ToolFailure"]


class ToolFailure(Exception):
    """A tool call that cannot run as asked (bad ref, no dialog, a path not allowed …)."""
