"""The MCP server of `pagewarden mcp` with the guard off (raw pages, no network layer), over
stdio: the baseline of `mcp_overhead.py`. Argument: the local port ``*.test`` maps to."""

from __future__ import annotations

import asyncio
import sys

from pagewarden.integrations.mcp import GuardedBrowserServer, ServerOptions, run_stdio

if __name__ == "__main__":
    port = int(sys.argv[1])
    options = ServerOptions(guard=False, isolated=True, headless=True, proxy=False, host_map={"*.test": port})
    asyncio.run(run_stdio(GuardedBrowserServer(options)))
