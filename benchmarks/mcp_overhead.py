"""Cost of `pagewarden mcp`: the added time per tool call of the guarded server against the same
server with the guard off, and against Playwright MCP itself, side by side in one run.

Every server runs as an MCP client starts it (a subprocess speaking MCP over stdio) on the same
local page (a settings page of ``--items`` list entries, a text field and a button that counts
clicks in the page; served on 127.0.0.1 as ``bench.test``):

* ``guarded``: ``pagewarden mcp`` as shipped (the embedded default guard, the network layer on);
* ``guarded-no-proxy``: ``pagewarden mcp --no-proxy`` (the browser layer alone);
* ``guard-off``: the same server code with the guard off (`ServerOptions(guard=False)`: raw
  pages, no network layer, the snapshot still fenced);
* ``playwright-mcp``: ``@playwright/mcp`` (npm, run with node) on the same Chromium, when
  ``--playwright-mcp DIR`` names a directory where it is installed (``npm install @playwright/mcp``).

Each iteration makes the same benign calls on every server (order rotating): ``browser_type``
into the field and ``browser_click`` on the button; each answer carries the page's snapshot, as
Playwright MCP's do. The time is the client's, from the request to the answer. Reported: medians,
the added milliseconds per call against ``guard-off`` and the ratio.

    .venv/bin/python benchmarks/mcp_overhead.py [--iterations 20] [--items 300]
        [--playwright-mcp DIR] [--out FILE.json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from rich.console import Console
from rich.table import Table

from pagewarden import __version__
from pagewarden._browser import CHROMIUM_ARGS, find_chromium
from pagewarden.testing import LocalSite, Response

DEFAULT_OUT = Path(__file__).parent / "results" / "mcp_overhead.json"
UNGUARDED = Path(__file__).parent / "_mcp_unguarded.py"
_REF = re.compile(r'- (textbox|button) "([^"]*)" \[ref=(\w+)\]')


def _page(items: int) -> str:
    rows = "\n".join(f"<li>Setting {i}: <a href='/s/{i}'>edit</a> {i}</li>" for i in range(items))
    return f"""<!doctype html><title>Settings</title><h1>Settings</h1>
<label>Note <input id="note" name="note"></label>
<button id="more" onclick="document.getElementById('count').textContent = ++window.n">Count</button>
<span id="count">0</span><script>window.n = 0</script><ul>{rows}</ul>"""


def _servers(port: int, playwright_mcp: Path | None, tmp: Path) -> dict[str, StdioServerParameters]:
    env = dict(os.environ)
    pw = [sys.executable, "-m", "pagewarden", "mcp", "--headless", "--isolated", "--map", f"*.test={port}"]
    servers = {
        "guarded": StdioServerParameters(command=pw[0], args=pw[1:], env=env),
        "guarded-no-proxy": StdioServerParameters(command=pw[0], args=[*pw[1:], "--no-proxy"], env=env),
        "guard-off": StdioServerParameters(command=sys.executable, args=[str(UNGUARDED), str(port)], env=env),
    }
    if playwright_mcp is not None:
        config = tmp / "playwright-mcp.json"
        args = [*CHROMIUM_ARGS, f"--host-resolver-rules=MAP *.test 127.0.0.1:{port}"]
        launch = {"headless": True, "args": args, "executablePath": find_chromium()}
        config.write_text(json.dumps({"browser": {"isolated": True, "launchOptions": launch}}))
        cli = playwright_mcp / "node_modules" / "@playwright" / "mcp" / "cli.js"
        args = [str(cli), "--config", str(config), "--output-dir", str(tmp / "pw-out")]
        servers["playwright-mcp"] = StdioServerParameters(command="node", args=args, env=env)
    return servers


def _text(result: Any) -> str:
    return "\n".join(part.text for part in result.content if getattr(part, "type", "") == "text")


def _refs(text: str) -> dict[str, str]:
    return {f"{role}:{name}": ref for role, name, ref in _REF.findall(text)}


async def run(iterations: int, items: int, playwright_mcp: Path | None) -> dict[str, Any]:
    with LocalSite() as site, tempfile.TemporaryDirectory() as tmp:
        site.route("bench.test", "/", lambda r: Response(_page(items)))
        url = site.url("bench.test", "/")
        params = _servers(site.port, playwright_mcp, Path(tmp))
        async with AsyncExitStack() as stack:
            clients: dict[str, ClientSession] = {}
            refs: dict[str, dict[str, str]] = {}
            errlog = stack.enter_context(open(Path(tmp) / "servers.log", "w"))  # noqa: SIM115
            for name, server in params.items():
                read, write = await stack.enter_async_context(stdio_client(server, errlog=errlog))
                client = await stack.enter_async_context(ClientSession(read, write))
                await client.initialize()
                opened = await client.call_tool("browser_navigate", {"url": url})
                if opened.isError:
                    raise RuntimeError(f"{name}: {_text(opened)[:300]}")
                refs[name] = _refs(_text(await client.call_tool("browser_snapshot", {})))
                clients[name] = client
            # Playwright MCP's own argument name is `target` since 0.0.7x (pagewarden takes both)
            key = {n: "target" if n == "playwright-mcp" else "ref" for n in clients}
            calls = {
                "type": lambda n, i: ("browser_type", {"element": "Note", key[n]: refs[n]["textbox:Note"],
                                                       "text": f"note {i}"}),
                "click": lambda n, i: ("browser_click", {"element": "Count",
                                                         key[n]: refs[n]["button:Count"]}),
            }  # fmt: skip
            samples: dict[str, dict[str, list[float]]] = {c: {n: [] for n in clients} for c in calls}
            names = list(clients)
            for i in range(iterations + 2):
                order = names[i % len(names) :] + names[: i % len(names)]
                for call, make in calls.items():
                    for name in order:
                        tool, arguments = make(name, i)
                        start = time.perf_counter()
                        result = await clients[name].call_tool(tool, arguments)
                        elapsed = (time.perf_counter() - start) * 1000
                        if result.isError:
                            raise RuntimeError(f"{name} {tool}: {_text(result)[:300]}")
                        if i >= 2:  # warm-up
                            samples[call][name].append(elapsed)
    rows: dict[str, Any] = {}
    for call, per_server in samples.items():
        base = statistics.median(per_server["guard-off"])
        rows[call] = {
            name: {"median_ms": round(statistics.median(values), 1),
                   "added_ms_vs_guard_off": round(statistics.median(values) - base, 1),
                   "ratio_vs_guard_off": round(statistics.median(values) / base, 2)}
            for name, values in per_server.items()
        }  # fmt: skip
    return rows


def _playwright_mcp_version(directory: Path | None) -> str | None:
    if directory is None:
        return None
    package = directory / "node_modules" / "@playwright" / "mcp" / "package.json"
    return json.loads(package.read_text())["version"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--items", type=int, default=300, help="list entries on the page")
    parser.add_argument("--playwright-mcp", type=Path, help="a directory where @playwright/mcp is installed")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args()
    load = os.getloadavg()[0]
    rows = asyncio.run(run(args.iterations, args.items, args.playwright_mcp))
    table = Table(title=f"pagewarden mcp: median ms per tool call over stdio ({args.iterations} iterations)")
    for column in ("call", "server", "median", "added vs guard-off", "ratio"):
        table.add_column(column)
    for call, per_server in rows.items():
        for name, r in per_server.items():
            cells = (r["median_ms"], r["added_ms_vs_guard_off"], r["ratio_vs_guard_off"])
            table.add_row(call, name, *map(str, cells))
    Console().print(table)
    git = ["git", "rev-parse", "--short", "HEAD"]
    commit = subprocess.run(git, capture_output=True, text=True).stdout.strip()
    result = {
        "benchmark": "mcp", "command": " ".join(["benchmarks/mcp_overhead.py", *sys.argv[1:]]),
        "pagewarden": __version__, "commit": commit, "python": platform.python_version(),
        "playwright_mcp": _playwright_mcp_version(args.playwright_mcp),
        "load_average_1m": round(load, 2), "iterations": args.iterations, "items": args.items, "rows": rows,
    }  # fmt: skip
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
