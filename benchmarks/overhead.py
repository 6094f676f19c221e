"""Overhead of the guard: click / fill / goto on a guarded page versus raw Playwright.

A page with ~500 interactive elements (buttons, labelled text fields, links) is served by
`LocalSite` on 127.0.0.1. One Chromium runs two contexts with the same page: one raw, one
wrapped by ``Guard(goal=…)`` — the embedded default, deterministic tier only, no proxy, no
trace. For each action the raw and the guarded timing are taken side by side in the same
iteration (alternating which goes first), so machine noise hits both alike; the result is
the ratio of medians (the ratio of means is reported too). Target: guarded/raw <= 1.3 for
click and fill.

Playwright's click waits for the element to be stable over animation frames (~16.7 ms each),
so click times are quantized. Back to back, raw clicks lock onto the frame clock (each starts
at the same phase) and a few milliseconds added before a guarded click cost a whole frame or
nothing. An agent does not act back to back — it thinks between steps — so by default each
timed call is preceded by an untimed pause drawn uniformly from [0, --pause-ms] (the same
seeded draws for raw and guarded), which puts both at a random frame phase. `--pause-ms 0`
measures back to back.

    .venv/bin/python benchmarks/overhead.py [--iterations 60] [--out benchmarks/results/overhead.json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import random
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from playwright.async_api import Page, async_playwright
from rich.console import Console
from rich.table import Table

from pagewarden import Guard, __version__
from pagewarden._browser import chromium_launch_options
from pagewarden.testing import LocalSite, Response

HOST = "bench.test"
BUTTONS, FIELDS, LINKS = 200, 150, 150
TARGET_RATIO = {"click": 1.3, "fill": 1.3}
DEFAULT_OUT = Path(__file__).parent / "results" / "overhead.json"


def bench_page() -> str:
    """A settings-like page with BUTTONS buttons, FIELDS labelled text fields and LINKS links."""
    rows = []
    for i in range(max(BUTTONS, FIELDS, LINKS)):
        cells = [f"<td>Item {i}</td>"]
        if i < FIELDS:
            cells.append(
                f'<td><label for="field-{i}">Setting {i}</label> '
                f'<input id="field-{i}" name="setting{i}" type="text" value=""></td>'
            )
        if i < BUTTONS:
            cells.append(f'<td><button type="button" id="button-{i}" class="act">Toggle {i}</button></td>')
        if i < LINKS:
            cells.append(f'<td><a id="link-{i}" href="#row-{i}">Details {i}</a></td>')
        rows.append(f'<tr id="row-{i}">{"".join(cells)}</tr>')
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Benchmark settings</title>'
        "<style>body{font:14px system-ui;margin:16px} td{padding:2px 8px}</style>"
        '</head><body><header><nav aria-label="Main"><a href="/">Home</a></nav></header>'
        '<main><h1>Settings</h1><p>Counter: <output id="counter">0</output></p>'
        f"<table>{''.join(rows)}</table>"
        "</main><script>let n=0;document.addEventListener('click',e=>{if(e.target.matches('button.act'))"
        "document.getElementById('counter').textContent=String(++n)});</script></body></html>"
    )


def _stats(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {
        "median_ms": round(statistics.median(ordered), 3),
        "p95_ms": round(p95, 3),
        "mean_ms": round(statistics.fmean(ordered), 3),
        "min_ms": round(ordered[0], 3),
        "n": len(ordered),
    }


Op = Callable[[Any, int], Awaitable[Any]]


async def _timed(op: Op, page: Any, i: int, pause_s: float) -> float:
    if pause_s:
        await asyncio.sleep(pause_s)
    started = time.perf_counter()
    await op(page, i)
    return (time.perf_counter() - started) * 1000


def _compare(name: str, raw: list[float], guarded: list[float]) -> dict[str, Any]:
    raw_stats, guarded_stats = _stats(raw), _stats(guarded)
    ratio = round(guarded_stats["median_ms"] / raw_stats["median_ms"], 3)
    target = TARGET_RATIO.get(name)
    return {
        "raw": raw_stats,
        "guarded": guarded_stats,
        "ratio_median": ratio,
        "ratio_p95": round(guarded_stats["p95_ms"] / raw_stats["p95_ms"], 3),
        "ratio_mean": round(guarded_stats["mean_ms"] / raw_stats["mean_ms"], 3),
        "overhead_median_ms": round(guarded_stats["median_ms"] - raw_stats["median_ms"], 3),
        "target_ratio": target,
        "meets_target": None if target is None else ratio <= target,
    }


def _ops(url: str) -> dict[str, Op]:
    return {
        "click": lambda page, i: page.locator(f"#button-{i % BUTTONS}").click(),
        "fill": lambda page, i: page.locator(f"#field-{i % FIELDS}").fill(f"value {i}"),
        "goto": lambda page, i: page.goto(f"{url}?visit={i}"),
        # a read-only call passes straight through the stand-ins: no check, no round trip added
        "read": lambda page, i: page.locator(f"#button-{i % BUTTONS}").inner_text(),
    }


async def measure(iterations: int, warmup: int, pause_ms: float = 34.0, seed: int = 7) -> dict[str, Any]:
    """Run the side-by-side measurement and return the results as plain data."""
    site = LocalSite()
    html = bench_page()
    site.route(HOST, "/", lambda _request: Response(html))
    url = site.url(HOST, "/")
    results: dict[str, Any] = {}
    with site:
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(**chromium_launch_options(host_map={HOST: site.port}))
            raw_context = await browser.new_context()
            guarded_context = await browser.new_context()
            raw: Page = await raw_context.new_page()
            guard = Guard(goal="Adjust the settings on bench.test.")
            guarded = guard.wrap(await guarded_context.new_page())
            await raw.goto(url)
            await guarded.goto(url)
            count = await raw.locator("button, input, a[href], select, textarea").count()
            for name, op in _ops(url).items():
                samples: dict[str, list[float]] = {"raw": [], "guarded": []}
                rng = random.Random(f"{seed}-{name}")
                for i in range(warmup + iterations):
                    order = (("raw", raw), ("guarded", guarded))
                    if i % 2:
                        order = order[::-1]
                    pause_s = rng.uniform(0, pause_ms) / 1000
                    for label, page in order:
                        elapsed = await _timed(op, page, i, pause_s)
                        if i >= warmup:
                            samples[label].append(elapsed)
                results[name] = _compare(name, samples["raw"], samples["guarded"])
            version = browser.version
            await browser.close()
    return {
        "benchmark": "overhead",
        "description": "median time of click / fill / goto, guarded (deterministic tier, no proxy, no trace) "
        "vs raw Playwright, measured side by side in one run",
        "timestamp": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "environment": {
            "pagewarden": __version__,
            "python": platform.python_version(),
            "platform": platform.platform(),
            "chromium": version,
        },
        "page": {"interactive_elements": count, "buttons": BUTTONS, "text_fields": FIELDS, "links": LINKS},
        "iterations": iterations,
        "warmup": warmup,
        "pause_ms": pause_ms,
        "results": results,
    }


def print_table(data: dict[str, Any], console: Console) -> None:
    """Print raw vs guarded medians, p95 and the ratios."""
    table = Table(
        title=f"pagewarden overhead — {data['page']['interactive_elements']} interactive elements, "
        f"{data['iterations']} iterations, pause 0-{data['pause_ms']:g} ms"
    )
    columns = (
        "action",
        "raw median",
        "guarded median",
        "ratio",
        "raw p95",
        "guarded p95",
        "ratio of means",
        "target",
    )
    for column in columns:
        table.add_column(column, justify="right" if column != "action" else "left")
    for name, row in data["results"].items():
        target = row["target_ratio"]
        verdict = "-" if target is None else f"<= {target} {'ok' if row['meets_target'] else 'MISSED'}"
        table.add_row(
            name,
            f"{row['raw']['median_ms']:.1f} ms",
            f"{row['guarded']['median_ms']:.1f} ms",
            f"{row['ratio_median']:.2f}",
            f"{row['raw']['p95_ms']:.1f} ms",
            f"{row['guarded']['p95_ms']:.1f} ms",
            f"{row['ratio_mean']:.2f}",
            verdict,
        )
    console.print(table)


def main(argv: list[str] | None = None) -> int:
    """Measure, print and write the JSON; exit 1 if a target ratio was missed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=60, help="measured iterations per action")
    parser.add_argument("--warmup", type=int, default=5, help="unrecorded iterations first")
    parser.add_argument(
        "--pause-ms", type=float, default=34.0, help="untimed random pause before each call, 0 = back to back"
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where to write the JSON")
    args = parser.parse_args(argv)
    data = asyncio.run(measure(args.iterations, args.warmup, args.pause_ms))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    console = Console()
    print_table(data, console)
    console.print(f"written to {args.out}", highlight=False)
    return 0 if all(r["meets_target"] is not False for r in data["results"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
