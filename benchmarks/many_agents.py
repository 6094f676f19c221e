"""Many agents on one machine: N agents on one browser, guarded vs unguarded, side by side.

The many-agents guide's set-up (docs/guides/many-agents.md): one Chromium, and per agent its own
browser context and its own `Guard` (the embedded default: deterministic tier, no proxy, no
trace), each agent allowed its own site (``domain_allow``), all agents acting at once under the
async API. Each agent runs the same whole session of 16 actions — goto, fill, a same-site link,
back, hover, a same-site redirect, and three actions the guard refuses (a same-site link whose
redirect leaves for a refused host, ``goto`` of that URL, a redirect to the *next* agent's site)
— and the unguarded twin runs the very same actions on raw pages (where the refused ones land).
For each N the two sides alternate (raw first, then guarded first, …), each in a browser
launched for the run, so machine noise hits both alike; the result is the median over the
rounds of the whole-session wall time (all agents), guarded / raw.

Per N it reports: the session time of both sides and their ratio; the refusal latency (from the
refused action's start until the agent holds `ActionBlocked`: its own action's, or its next
call's) p50 and p95 over every refusal of the guarded rounds, beside the raw twin's time for
the same actions (which land on the refused pages: what such an action takes at that N and load);
refusals delivered as the guard's exception vs expected (never a Playwright timeout or a bare
``net::`` error) and benign actions run vs expected; decisions per second (the guards' judged
steps, all agents, per second of guarded session); and memory added per guard — the
proportional set size (PSS) of the browser's processes and Playwright's driver, and the Python
heap (tracemalloc), at the end of one more session per side with every context still open,
guarded minus raw, divided by N (and, over all N, the slope of that added memory against N: the
cost of one more guard, without the first guard's one-time costs).

Targets (issue 33): guarded/raw ≤ 1.3 at every N, refusal p95 ≤ 1 s at N = 8, < 30 MB per guard.

``--part mcp`` (or ``all``) adds the rows of N MCP clients on one ``pagewarden mcp`` server
(`benchmarks/_many_mcp.py`: ``run(clients, rounds) -> rows``, ``table(rows)``), in the same JSON
(``mcp``); a part not run keeps the rows of the file's previous run.

    .venv/bin/python benchmarks/many_agents.py [--agents 1 2 4 8 16] [--rounds 3] \\
        [--part agents|mcp|all] [--clients 1 2 4 8] [--mcp-rounds 4] \\
        [--json benchmarks/results/many_agents.json]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import importlib.util
import json
import os
import platform
import statistics
import sys
import time
import tracemalloc
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import psutil  # noqa: E402
from playwright.async_api import async_playwright  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from pagewarden import ActionBlocked, Guard, GuardError, PolicySet, __version__  # noqa: E402
from pagewarden._browser import chromium_launch_options  # noqa: E402
from pagewarden.testing import LocalSite, RecordedRequest, Response  # noqa: E402

AGENTS = (1, 2, 4, 8, 16)
TARGET_RATIO = 1.3
TARGET_REFUSAL_P95_S = 1.0
TARGET_REFUSAL_AT = 8
TARGET_MB_PER_GUARD = 30.0
ACTION_TIMEOUT_MS = 60_000
DEFAULT_OUT = ROOT / "benchmarks" / "results" / "many_agents.json"
MCP_MODULE = Path(__file__).parent / "_many_mcp.py"


def host_of(i: int) -> str:
    return f"agent{i}.bench.test"


def policies(host: str) -> PolicySet:
    return PolicySet.from_dict({"version": 1, "policies": [{
        "id": f"ONLY-{host}", "category": "boundary", "risk_level": "high",
        "description": f"Stay on {host}.", "rules": [{"domain_allow": [host]}],
    }]})  # fmt: skip


def hop_url(host: str, to: str) -> str:
    return f"http://{host}/hop?to={quote(to, safe='')}"


def serve(count: int) -> LocalSite:
    """One local server for every agent's site and the refused host."""

    def home(request: RecordedRequest) -> Response:
        off = quote(f"http://evil.test/landing?c={request.host}", safe="")
        rows = "".join(f"<tr><td>Item {n}</td><td><button>Edit {n}</button></td></tr>" for n in range(40))
        return Response(
            f'<!doctype html><title>{request.host}</title><h1>Work</h1><input id="q" aria-label="Query">'
            f'<a id="off" href="/hop?to={off}">Off-site</a> <a id="on" href="/landing">On-site</a>'
            f"<table>{rows}</table>"
        )

    def hop(request: RecordedRequest) -> Response:
        return Response("", status=302, headers={"Location": request.query["to"][0]})

    def landing(request: RecordedRequest) -> Response:
        return Response(f"<!doctype html><title>landed</title><p>{request.host} landed</p>")

    site = LocalSite()
    for i in range(count):
        site.route(host_of(i), "/", home)
        site.route(host_of(i), "/hop", hop)
        site.route(host_of(i), "/landing", landing)
    site.route("evil.test", "/landing", landing)
    return site


# -- one agent's session -------------------------------------------------------------------------
@dataclass
class Tally:
    """What the agents of one run were told, and when."""

    refusal_s: list[float] = field(default_factory=list)
    #: the raw twin's time for the same actions (which land on the refused pages): the baseline
    raw_same_s: list[float] = field(default_factory=list)
    refusals_expected: int = 0
    benign_run: int = 0
    benign_expected: int = 0
    wrong: list[str] = field(default_factory=list)  # a timeout, a bare net:: error, another's refusal


Step = tuple[str, Callable[[Any], Awaitable[Any]], bool]  # (name, action, refused when guarded)


def session(i: int, count: int) -> list[Step]:
    """The 16 actions of agent `i` of `count` (3 refused when guarded)."""
    host = host_of(i)
    home = f"http://{host}/"
    off = hop_url(host, f"http://evil.test/landing?c={host}")
    neighbour = host_of((i + 1) % count) if count > 1 else "evil.test"
    return [
        ("goto", lambda p: p.goto(home), False),
        ("fill", lambda p: p.fill("#q", "quarterly report"), False),
        ("link", lambda p: _link(p, "#on", f"http://{host}/landing"), False),
        ("back", lambda p: p.go_back(), False),
        ("hover", lambda p: p.hover("text=Edit 3"), False),
        ("fill", lambda p: p.fill("#q", "annual report"), False),
        ("refused-link", lambda p: p.click("#off"), True),
        ("goto", lambda p: p.goto(home), False),
        ("refused-goto", lambda p: p.goto(off), True),
        ("redirect", lambda p: p.goto(hop_url(host, f"http://{host}/landing?c=same")), False),
        ("goto", lambda p: p.goto(home), False),
        ("click", lambda p: p.click("text=Edit 7"), False),
        ("refused-neighbour", lambda p: p.goto(hop_url(host, f"http://{neighbour}/landing?c={host}")), True),
        ("goto", lambda p: p.goto(home), False),
        ("fill", lambda p: p.fill("#q", "done"), False),
        ("press", lambda p: p.press("#q", "Tab"), False),
    ]


async def _link(page: Any, selector: str, url: str) -> None:
    await page.click(selector)
    await page.wait_for_url(url)


async def run_agent(page: Any, i: int, count: int, guarded: bool, tally: Tally) -> None:
    host = host_of(i)
    for name, action, refused in session(i, count):
        if refused and guarded:
            tally.refusals_expected += 1
            start = time.perf_counter()
            try:
                try:
                    await action(page)
                    await page.hover("h1")  # the refusal came after the action: its next call
                    tally.wrong.append(f"{host} {name}: not refused")
                except ActionBlocked as blocked:
                    tally.refusal_s.append(time.perf_counter() - start)
                    policy = blocked.verdict.findings[0].policy_id if blocked.verdict.findings else ""
                    if policy != f"ONLY-{host}":
                        tally.wrong.append(f"{host} {name}: told {policy}")
            except Exception as exc:  # noqa: BLE001 - counted: a timeout, a bare net:: error
                tally.wrong.append(f"{host} {name}: {type(exc).__name__}: {str(exc)[:80]}")
            continue
        tally.benign_expected += not refused
        start = time.perf_counter()
        try:
            await action(page)
            tally.benign_run += not refused
            if refused:
                tally.raw_same_s.append(time.perf_counter() - start)
        except GuardError as exc:
            tally.wrong.append(f"{host} {name}: refused {type(exc).__name__}")
        except Exception as exc:  # noqa: BLE001 - counted
            if not refused:  # (a raw page landing on the refused host may fail a later wait)
                tally.wrong.append(f"{host} {name}: {type(exc).__name__}: {str(exc)[:80]}")


# -- one run: N agents on a new browser -------------------------------------------------------------
def tree_pss_mb() -> float:
    """PSS of this process's children (Playwright's driver, the browser's processes), MB."""
    total = 0
    for child in psutil.Process().children(recursive=True):
        try:
            total += child.memory_full_info().pss
        except (psutil.Error, AttributeError):
            continue
    return total / 2**20


async def run(
    playwright: Any, site: LocalSite, count: int, guarded: bool, *, memory: bool = False
) -> dict[str, Any]:
    """One whole session of `count` agents, guarded or raw, on a browser launched for it."""
    browser = await playwright.chromium.launch(**chromium_launch_options(host_map={"*.test": site.port}))
    tally = Tally()
    steps = [0]
    guards: list[Guard] = []
    try:
        gc.collect()
        base_pss = tree_pss_mb() if memory else 0.0
        if memory:
            tracemalloc.start()
        pages = []
        for i in range(count):
            context = await browser.new_context()
            page = await context.new_page()
            page.set_default_timeout(ACTION_TIMEOUT_MS)
            if guarded:
                guard = Guard(policies(host_of(i)), goal=f"Work on {host_of(i)}.")
                guard.subscribe(lambda event: steps.__setitem__(0, steps[0] + (event.kind == "step")))
                guards.append(guard)
                page = guard.wrap(page)
            pages.append(page)
        start = time.perf_counter()
        await asyncio.gather(*(run_agent(p, i, count, guarded, tally) for i, p in enumerate(pages)))
        wall = time.perf_counter() - start
        out: dict[str, Any] = {"wall_s": wall, "tally": tally, "decisions": steps[0]}
        if memory:
            current, _peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
            out["python_mb"] = current / 2**20
            out["browser_mb"] = tree_pss_mb() - base_pss
        return out
    finally:
        await browser.close()
        for guard in guards:
            guard.close()


def _quantile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


async def measure_agents(counts: tuple[int, ...], rounds: int, console: Console) -> list[dict[str, Any]]:
    rows = []
    with serve(max(counts)) as site:
        async with async_playwright() as playwright:
            for count in counts:
                raw_s: list[float] = []
                guarded_s: list[float] = []
                refusals: list[float] = []
                raw_same: list[float] = []
                decisions = 0
                told = expected = benign = benign_expected = 0
                wrong: list[str] = []
                for r in range(rounds):
                    order = (False, True) if r % 2 == 0 else (True, False)
                    for guarded in order:
                        result = await run(playwright, site, count, guarded)
                        tally: Tally = result["tally"]
                        (guarded_s if guarded else raw_s).append(result["wall_s"])
                        if guarded:
                            refusals += tally.refusal_s
                            told += len(tally.refusal_s)
                            expected += tally.refusals_expected
                            benign += tally.benign_run
                            benign_expected += tally.benign_expected
                            decisions += result["decisions"]
                            wrong += tally.wrong
                        else:
                            raw_same += tally.raw_same_s
                raw_mem = await run(playwright, site, count, False, memory=True)
                guarded_mem = await run(playwright, site, count, True, memory=True)
                browser_mb = (guarded_mem["browser_mb"] - raw_mem["browser_mb"]) / count
                python_mb = (guarded_mem["python_mb"] - raw_mem["python_mb"]) / count
                row = {
                    "agents": count,
                    "rounds": rounds,
                    "raw_session_s": round(statistics.median(raw_s), 3),
                    "guarded_session_s": round(statistics.median(guarded_s), 3),
                    "ratio": round(statistics.median(guarded_s) / statistics.median(raw_s), 3),
                    "raw_sessions_s": [round(x, 3) for x in raw_s],
                    "guarded_sessions_s": [round(x, 3) for x in guarded_s],
                    "refusal_p50_s": _round(_quantile(refusals, 0.5)),
                    "refusal_p95_s": _round(_quantile(refusals, 0.95)),
                    "raw_same_actions_p50_s": _round(_quantile(raw_same, 0.5)),
                    "raw_same_actions_p95_s": _round(_quantile(raw_same, 0.95)),
                    "refusals_told": told,
                    "refusals_expected": expected,
                    "benign_run": benign,
                    "benign_expected": benign_expected,
                    "wrong": wrong[:20],
                    "decisions_per_s": round(decisions / sum(guarded_s), 1) if guarded_s else None,
                    "mb_per_guard": round(browser_mb + python_mb, 2),
                    "browser_mb_per_guard": round(browser_mb, 2),
                    "python_mb_per_guard": round(python_mb, 2),
                    "load_average_1m": round(os.getloadavg()[0], 2),
                }
                row["meets_targets"] = _meets(row)
                rows.append(row)
                console.print(
                    f"  {count:>2} agents: ratio {row['ratio']}, refusal p95 {row['refusal_p95_s']} s, "
                    f"{row['mb_per_guard']} MB/guard, told {told}/{expected}, "
                    f"benign {benign}/{benign_expected}"
                )
    return rows


def memory_slope(rows: list[dict[str, Any]]) -> float | None:
    """MB added per guard as the least-squares slope of the memory the guards add (guarded minus
    raw, all N of them) against N: one-time costs (the first guard's imports and caches, a
    renderer process more or less at the end of a session) fall into the intercept."""
    points = [(r["agents"], r["mb_per_guard"] * r["agents"]) for r in rows]
    if len(points) < 2:
        return None
    mean_n = statistics.fmean(n for n, _ in points)
    mean_mb = statistics.fmean(mb for _, mb in points)
    spread = sum((n - mean_n) ** 2 for n, _ in points)
    return round(sum((n - mean_n) * (mb - mean_mb) for n, mb in points) / spread, 2) if spread else None


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


def _meets(row: dict[str, Any]) -> bool:
    ok = row["ratio"] <= TARGET_RATIO and row["refusals_told"] == row["refusals_expected"]
    ok = ok and row["benign_run"] == row["benign_expected"]
    if row["agents"] == TARGET_REFUSAL_AT:
        ok = ok and row["refusal_p95_s"] is not None and row["refusal_p95_s"] <= TARGET_REFUSAL_P95_S
    return ok


def print_agents(rows: list[dict[str, Any]], console: Console) -> None:
    table = Table(title="N agents on one browser: whole session, guarded vs raw (median of rounds)")
    for column in ("agents", "raw s", "guarded s", "ratio", "refusal p50 s", "refusal p95 s",
                   "raw same p50/p95 s",
                   "refusals told", "benign run", "decisions/s", "MB/guard", "load"):  # fmt: skip
        table.add_column(column, justify="right")
    for r in rows:
        table.add_row(
            str(r["agents"]), f"{r['raw_session_s']:.2f}", f"{r['guarded_session_s']:.2f}",
            f"{r['ratio']:.2f}", f"{r['refusal_p50_s']}", f"{r['refusal_p95_s']}",
            f"{r.get('raw_same_actions_p50_s')}/{r.get('raw_same_actions_p95_s')}",
            f"{r['refusals_told']}/{r['refusals_expected']}", f"{r['benign_run']}/{r['benign_expected']}",
            f"{r['decisions_per_s']}", f"{r['mb_per_guard']:.1f}", f"{r['load_average_1m']:.1f}",
        )
    console.print(table)


# -- the MCP part (benchmarks/_many_mcp.py) ---------------------------------------------------------
def mcp_part() -> Any:
    """The MCP clients' module (`benchmarks/_many_mcp.py`), or None when it is not there."""
    if not MCP_MODULE.exists():
        return None
    spec = importlib.util.spec_from_file_location("bench_many_mcp", MCP_MODULE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def environment() -> dict[str, Any]:
    return {
        "pagewarden": __version__,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "load_average_1m": round(os.getloadavg()[0], 2),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agents", type=int, nargs="+", default=list(AGENTS), help="numbers of agents")
    parser.add_argument("--rounds", type=int, default=3, help="rounds per side and N (alternating)")
    parser.add_argument("--part", choices=("agents", "mcp", "all"), default="agents")
    parser.add_argument("--clients", type=int, nargs="+", default=[1, 2, 4, 8], help="numbers of MCP clients")
    parser.add_argument("--mcp-rounds", type=int, default=4, help="rounds of 8 calls per MCP client session")
    parser.add_argument("--json", type=Path, default=DEFAULT_OUT, help="where the JSON result goes")
    args = parser.parse_args(argv)
    console = Console()
    previous: dict[str, Any] = {}
    if args.json.exists():
        try:
            previous = json.loads(args.json.read_text())
        except ValueError:
            previous = {}
    data: dict[str, Any] = {
        "benchmark": "many_agents",
        "description": __doc__.split("\n\n")[0],
        "timestamp": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "environment": environment(),
        "targets": {
            "ratio": TARGET_RATIO,
            "refusal_p95_s_at_8": TARGET_REFUSAL_P95_S,
            "mb_per_guard": TARGET_MB_PER_GUARD,
        },
        "agents": previous.get("agents", []),
        "mcp": previous.get("mcp"),
    }
    ok = True
    if args.part in ("agents", "all"):
        rows = asyncio.run(measure_agents(tuple(args.agents), args.rounds, console))
        data["agents"] = rows
        slope = data["mb_per_guard_slope"] = memory_slope(rows)
        print_agents(rows, console)
        console.print(f"memory added per guard, slope over N: {slope} MB")
        ok = ok and all(r["meets_targets"] for r in rows) and (slope is None or slope < TARGET_MB_PER_GUARD)
    if args.part in ("mcp", "all"):
        module = mcp_part()
        if module is None:
            console.print(f"[yellow]no MCP part ({MCP_MODULE.name} is missing): skipped[/]")
        else:
            data["mcp"] = asyncio.run(module.run(args.clients, args.mcp_rounds))
            console.print(module.table(data["mcp"]))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(data, indent=2) + "\n")
    console.print(f"written {args.json}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
