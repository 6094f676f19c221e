"""Many MCP clients on one `pagewarden mcp` server: the MCP part of `many_agents.py`.

For N = 1, 2, 4, 8 clients at once (each its own session: a browser context, a guard and a
network layer in one shared Chromium) against the same server code with the guard off (raw
pages, no network layer), side by side in one run: a server process per N and variant, started
fresh, serving streamable HTTP on 127.0.0.1 with a bearer token; the clients are the MCP SDK's
HTTP client, in this process, all at once.

Each client runs one whole session: ``--rounds`` rounds of 8 calls on a local site (``shop.test``:
a page of ``--items`` entries with a field and a button, a second page): navigate, type, click,
snapshot, navigate to the second page, go back, and two actions the policy refuses (a
navigation to ``evil.test``; a click on a link to it). Reported per N and variant: the wall time
until every client finished its session (the whole-session time; guarded/raw is the ratio: the
raw server loads the refused pages, the guarded one does not), the median time of the benign
calls (the same calls on both servers: the guard's cost per call),
the refusals' latency p50/p95 (the client's time from the request to the tool error), the
server's memory (PSS, else RSS, of the server process and every process under it: Chromium's)
idle, with one session, and with all N open (the added memory per session beyond the first),
and the guarded tool calls per second across all clients.

    .venv/bin/python benchmarks/_many_mcp.py [--clients 1 2 4 8] [--rounds 4] [--items 200]
        [--repeat 2] [--out FILE.json]

With ``--repeat R`` each N runs R pairs of servers in alternating order (raw then guarded,
guarded then raw …): a row's session time is the median of its runs (all listed, with the load
average before and after each), its percentiles are over every run's calls.

`many_agents.py --part mcp` runs this part (`measure`, `print_table`) into its JSON's ``mcp``;
run by itself the JSON goes to ``benchmarks/results/many_mcp.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import psutil
from mcp import ClientSession, types
from mcp.client.streamable_http import streamable_http_client

from pagewarden import __version__
from pagewarden.testing import LocalSite, Response

DEFAULT_OUT = Path(__file__).parent / "results" / "many_mcp.json"
TOKEN = "many-mcp-benchmark-token-" + "x" * 16
POLICY = """
version: 1
policies:
  - id: SHOP-ONLY
    category: boundary
    risk_level: high
    description: Work on the shop only.
    rules:
      - domain_allow: [shop.test]
"""
_REF = re.compile(r'- (textbox|button|link) "([^"]*)" \[ref=(\w+)\]')


def _page(items: int) -> str:
    rows = "\n".join(f"<li>Item {i}: <a href='/item/{i}'>open</a></li>" for i in range(items))
    return f"""<!doctype html><title>Shop</title><h1>Shop</h1>
<label>Note <input id="note" name="note"></label>
<button id="more" onclick="document.getElementById('count').textContent = ++window.n">Count</button>
<span id="count">0</span><script>window.n = 0</script>
<a href="/second">Second page</a> <a href="http://evil.test/collect">Partner offer</a>
<ul>{rows}</ul>"""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# -- the server (a process of its own) ------------------------------------------------------------
def serve(variant: str, port: int, site_port: int, policy: Path, max_sessions: int) -> None:
    """Run the server of one variant (``guarded`` | ``raw``) until killed."""
    from pagewarden.integrations.mcp import (
        Clients,
        GuardedBrowserServer,
        HttpOptions,
        ServerOptions,
        run_http,
    )

    guarded = variant == "guarded"
    options = ServerOptions(
        headless=True, isolated=True, host_map={"*.test": site_port}, guard=guarded, proxy=guarded,
        policies=(policy,) if guarded else (), output_dir=policy.parent / "out",
        action_timeout_ms=30000,  # a loaded 2-core machine: a snapshot may take seconds
    )  # fmt: skip
    http = HttpOptions(
        port=port, clients=Clients.from_token(TOKEN), max_sessions=max_sessions,
        max_sessions_per_client=max_sessions,
    )  # fmt: skip
    server = GuardedBrowserServer(options)
    asyncio.run(run_http(server, http, ready=lambda url: print(f"listening {url}", flush=True)))


class Server:
    """A server process of one variant, its endpoint, and its memory."""

    def __init__(self, variant: str, site_port: int, policy: Path, max_sessions: int) -> None:
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        command = [sys.executable, __file__, "--serve", variant, str(self.port), str(site_port), str(policy),
                   str(max_sessions)]  # fmt: skip
        # a per-user directory of its own (the network layer's CA …): nothing read from, or left
        # in, the user's
        home = policy.parent / f"home-{variant}-{self.port}"
        env = {**os.environ, "PAGEWARDEN_CONFIG_DIR": str(home)}
        self.process = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if "listening" not in line:
            self.process.kill()
            raise RuntimeError(f"the {variant} server did not start")

    def memory_mb(self) -> float:
        """PSS (else RSS) of the server process and its descendants (Chromium), in MB."""
        total = 0
        root = psutil.Process(self.process.pid)
        for process in [root, *root.children(recursive=True)]:
            try:
                info = process.memory_full_info()
                total += getattr(info, "pss", 0) or info.rss
            except (psutil.NoSuchProcess, psutil.AccessDenied):
                continue
        return total / 1e6

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(30)


# -- the clients ----------------------------------------------------------------------------------
def _text(result: Any) -> str:
    return "\n".join(part.text for part in result.content if getattr(part, "type", "") == "text")


class _Refs(dict):
    """The refs of a snapshot by ``role:name``; a missing one says what the page was."""

    def __init__(self, text: str) -> None:
        super().__init__((f"{role}:{name}", ref) for role, name, ref in _REF.findall(text))
        self.text = text

    def __missing__(self, key: str) -> str:
        raise RuntimeError(f"no {key} in the answer:\n{self.text[:1500]}")


def _refs(text: str) -> dict[str, str]:
    return _Refs(text)


class Client:
    """One client's whole session: its calls' times and its refusals' times."""

    def __init__(self, index: int) -> None:
        self.index = index
        self.calls = 0
        self.refusals: list[float] = []
        #: the times of the benign calls (the same calls on both servers)
        self.benign: list[float] = []
        self.unexpected: list[str] = []

    async def call(
        self, session: ClientSession, tool: str, arguments: dict[str, Any], *, refused: bool = False,
        guarded: bool = True,
    ) -> str:  # fmt: skip
        start = time.perf_counter()
        result = await session.call_tool(tool, arguments)
        elapsed = time.perf_counter() - start
        self.calls += 1
        if refused and guarded:
            if not result.isError:
                self.unexpected.append(f"{tool} was not refused")
            self.refusals.append(elapsed)
        elif result.isError:
            self.unexpected.append(f"{tool}: {_text(result)[:200]}")
        elif not refused:
            self.benign.append(elapsed)
        return _text(result)

    async def refs(self, session: ClientSession, answer: str, *wanted: str) -> dict[str, str]:
        """The refs of `answer`; when the answer holds no snapshot with `wanted` (the page was
        still settling), a new snapshot, as a model would ask for one (up to three)."""
        refs = _refs(answer)
        for _ in range(3):
            if all(key in refs for key in wanted):
                break
            refs = _refs(await self.call(session, "browser_snapshot", {}))
        return refs

    async def session(self, url: str, site_port: int, rounds: int, guarded: bool) -> None:
        headers = {"Authorization": f"Bearer {TOKEN}"}
        info = types.Implementation(name=f"bench-client-{self.index}", version="1")
        async with (
            httpx.AsyncClient(headers=headers, timeout=httpx.Timeout(120, read=600)) as http,
            streamable_http_client(url, http_client=http) as streams,
            ClientSession(streams[0], streams[1], client_info=info) as session,
        ):
            await session.initialize()
            home = "http://shop.test/"
            for i in range(rounds):
                page = await self.call(session, "browser_navigate", {"url": home, "intent": "Open the shop."})
                refs = await self.refs(session, page, "textbox:Note", "button:Count")
                await self.call(session, "browser_type", {"element": "Note", "ref": refs["textbox:Note"],
                                                          "text": f"note {self.index}-{i}"})  # fmt: skip
                await self.call(session, "browser_click", {"element": "Count", "ref": refs["button:Count"]})
                refs = await self.refs(
                    session, await self.call(session, "browser_snapshot", {}), "link:Second page"
                )
                await self.call(session, "browser_click", {"element": "Second page",
                                                           "ref": refs["link:Second page"]})  # fmt: skip
                await self.call(session, "browser_navigate_back", {})
                await self.call(session, "browser_navigate", {"url": "http://evil.test/collect"},
                                refused=True, guarded=guarded)  # fmt: skip
                # raw: back from evil.test; guarded: the page never left (the same number of calls)
                await self.call(session, "browser_navigate_back" if not guarded else "browser_snapshot", {})
                refs = await self.refs(
                    session, await self.call(session, "browser_snapshot", {}), "link:Partner offer"
                )
                await self.call(session, "browser_click", {"element": "Partner offer",
                                                           "ref": refs["link:Partner offer"]},
                                refused=True, guarded=guarded)  # fmt: skip


async def _level(
    variant: str, n: int, site: LocalSite, policy: Path, rounds: int
) -> tuple[dict[str, Any], list[float], list[float]]:
    """One server of `variant`, `n` clients at once: its row, the benign calls' and the
    refusals' times (s)."""
    load_before = os.getloadavg()[0]
    # room for sessions still closing (a session counts until its context is closed)
    server = await asyncio.to_thread(Server, variant, site.port, policy, 2 * n + 2)
    try:
        idle = server.memory_mb()
        guarded = variant == "guarded"
        first = Client(0)
        await first.session(server.url, site.port, 1, guarded)  # launches the browser; closes its session
        clients = [Client(i) for i in range(n)]
        memory_all: list[float] = []
        start = time.perf_counter()
        await asyncio.gather(*(c.session(server.url, site.port, rounds, guarded) for c in clients))
        wall = time.perf_counter() - start
        load_after = os.getloadavg()[0]
        # the memory of N sessions open at once: N clients, each one call, held open together
        async with _held_open(server.url, n) as held:
            await asyncio.gather(
                *(s.call_tool("browser_navigate", {"url": "http://shop.test/"}) for s in held)
            )
            memory_all.append(server.memory_mb())
        async with _held_open(server.url, 1) as held:
            await held[0].call_tool("browser_navigate", {"url": "http://shop.test/"})
            memory_one = server.memory_mb()
    finally:
        server.stop()
    calls = sum(c.calls for c in clients)
    benign = [t for c in clients for t in c.benign]
    refusals = sorted(t for c in clients for t in c.refusals)
    unexpected = [u for c in clients for u in c.unexpected]
    row = {
        "clients": n,
        "variant": variant,
        "session_s": round(wall, 2),
        "calls": calls,
        "calls_per_s": round(calls / wall, 2),
        "memory_idle_mb": round(idle, 1),
        "memory_one_session_mb": round(memory_one, 1),
        "memory_all_sessions_mb": round(memory_all[0], 1),
        "memory_per_added_session_mb": round((memory_all[0] - memory_one) / (n - 1), 1) if n > 1 else None,
        "load_average_1m": [round(load_before, 1), round(load_after, 1)],
        "unexpected": unexpected[:5],
    }
    return row, benign, refusals


def _merged(runs: list[tuple[dict[str, Any], list[float], list[float]]]) -> dict[str, Any]:
    """One row of a variant at one N from its repeated runs: the median run's session time, the
    benign calls' median and the refusals' percentiles over every run, the memory of the last."""
    rows = [r for r, _, _ in runs]
    benign = [t for _, b, _ in runs for t in b]
    refusals = sorted(t for _, _, f in runs for t in f)
    session = statistics.median(r["session_s"] for r in rows)
    return {
        **rows[-1],
        "session_s": round(session, 2),
        "session_s_runs": [r["session_s"] for r in rows],
        "calls_per_s": round(rows[-1]["calls"] / session, 2),
        "benign_call_p50_ms": round(statistics.median(benign) * 1000, 1) if benign else None,
        "refusals": len(refusals),
        "refusal_p50_ms": round(statistics.median(refusals) * 1000, 1) if refusals else None,
        "refusal_p95_ms": round(_percentile(refusals, 95) * 1000, 1) if refusals else None,
        "load_average_1m": [r["load_average_1m"] for r in rows],
        "unexpected": [u for r in rows for u in r["unexpected"]][:5],
    }


@asynccontextmanager
async def _held_open(url: str, n: int) -> AsyncIterator[list[ClientSession]]:
    """`n` client sessions open at once (for the memory of N open sessions)."""
    async with AsyncExitStack() as stack:
        sessions = []
        for i in range(n):
            headers = {"Authorization": f"Bearer {TOKEN}"}
            timeout = httpx.Timeout(120, read=600)
            http = await stack.enter_async_context(httpx.AsyncClient(headers=headers, timeout=timeout))
            read, write, _ = await stack.enter_async_context(streamable_http_client(url, http_client=http))
            info = types.Implementation(name=f"held-{i}", version="1")
            session = await stack.enter_async_context(ClientSession(read, write, client_info=info))
            await session.initialize()
            sessions.append(session)
        yield sessions


def _percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(p / 100 * len(ordered) + 0.5) - 1))
    return ordered[index]


async def run(clients: list[int], rounds: int = 4, items: int = 200, repeat: int = 1) -> list[dict[str, Any]]:
    """The MCP rows: for each N, the raw server and the guarded one side by side, `repeat`
    times in alternating order (raw first, then guarded first …: the machine's load drifts)."""
    rows: list[dict[str, Any]] = []
    with LocalSite() as site, tempfile.TemporaryDirectory() as tmp:
        site.route("shop.test", "/", lambda r: Response(_page(items)))
        site.route("shop.test", "/second", lambda r: Response("<title>Second</title><h1>Second page</h1>"))
        site.route("evil.test", "/collect", lambda r: Response("<title>Evil</title>collected"))
        policy = Path(tmp) / "shop.yaml"
        policy.write_text(POLICY)
        for n in clients:
            runs: dict[str, list[Any]] = {"raw": [], "guarded": []}
            for rep in range(repeat):
                for variant in ("raw", "guarded") if rep % 2 == 0 else ("guarded", "raw"):
                    run_ = await _level(variant, n, site, policy, rounds)
                    runs[variant].append(run_)
                    print(json.dumps(run_[0]), flush=True)
            rows += [_merged(runs["raw"]), _merged(runs["guarded"])]
    for n in clients:
        raw, guarded = (
            next(r for r in rows if r["clients"] == n and r["variant"] == v) for v in ("raw", "guarded")
        )
        guarded["session_ratio_vs_raw"] = round(guarded["session_s"] / raw["session_s"], 2)
        if raw["benign_call_p50_ms"] and guarded["benign_call_p50_ms"]:
            guarded["benign_call_ratio_vs_raw"] = round(
                guarded["benign_call_p50_ms"] / raw["benign_call_p50_ms"], 2
            )
    return rows


def table(rows: list[dict[str, Any]]) -> Any:
    """The rows as a rich table."""
    from rich.table import Table

    out = Table(title="Many MCP clients on one pagewarden mcp server (streamable HTTP)")
    columns = ("clients", "variant", "session s", "guarded/raw", "benign call p50 ms", "guarded/raw",
               "calls/s",
               "refusal p50 ms", "refusal p95 ms", "MB per added session", "MB all open")  # fmt: skip
    for column in columns:
        out.add_column(column)
    for r in rows:
        out.add_row(
            str(r["clients"]), r["variant"], str(r["session_s"]), str(r.get("session_ratio_vs_raw", "")),
            str(r["benign_call_p50_ms"]), str(r.get("benign_call_ratio_vs_raw", "")),
            str(r["calls_per_s"]), str(r["refusal_p50_ms"] or "-"), str(r["refusal_p95_ms"] or "-"),
            str(r["memory_per_added_session_mb"] or "-"), str(r["memory_all_sessions_mb"]),
        )  # fmt: skip
    return out


#: the numbers of clients of the MCP rows (issue 33: 1, 2, 4 and 8)
CLIENTS = (1, 2, 4, 8)
ROUNDS = 4
ITEMS = 200


def measure(args: Any) -> dict[str, Any]:
    """The MCP part for `many_agents.py --part mcp` (its ``--agents`` up to 8 are the numbers of
    clients; its ``--rounds`` means something else there and is not used)."""
    clients = [n for n in getattr(args, "agents", CLIENTS) if n <= max(CLIENTS)] or list(CLIENTS)
    load = os.getloadavg()[0]
    rows = asyncio.run(run(clients, ROUNDS, ITEMS))
    return {
        "command": "benchmarks/_many_mcp.py", "rounds": ROUNDS, "items": ITEMS,
        "load_average_1m_before": round(load, 2), "load_average_1m_after": round(os.getloadavg()[0], 2),
        "rows": rows,
    }  # fmt: skip


def print_table(data: dict[str, Any], console: Any) -> None:
    """The MCP rows of `measure` as a table on `console` (a rich Console)."""
    console.print(table(data["rows"]))


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--serve":
        variant, port, site_port, policy, max_sessions = sys.argv[2:7]
        serve(variant, int(port), int(site_port), Path(policy), int(max_sessions))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, nargs="+", default=list(CLIENTS))
    parser.add_argument("--rounds", type=int, default=ROUNDS, help="rounds of 8 calls per client session")
    parser.add_argument("--items", type=int, default=ITEMS, help="list entries on the page")
    parser.add_argument(
        "--repeat", type=int, default=1, help="runs of each variant per N (alternating order)"
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args()
    load = os.getloadavg()[0]
    rows = asyncio.run(run(args.clients, args.rounds, args.items, args.repeat))
    from rich.console import Console

    Console().print(table(rows))
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    result = {
        "benchmark": "many_mcp", "command": " ".join(["benchmarks/_many_mcp.py", *sys.argv[1:]]),
        "pagewarden": __version__, "commit": commit, "python": platform.python_version(),
        "cpus": os.cpu_count(), "load_average_1m_before": round(load, 2),
        "load_average_1m_after": round(os.getloadavg()[0], 2), "rounds": args.rounds, "items": args.items,
        "repeat": args.repeat, "rows": rows,
    }  # fmt: skip
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
