"""Cost of supervision: a guarded click / fill with and without a console attached.

Three guarded contexts in one Chromium act on the same page, side by side in each iteration
(order rotated): ``plain`` (no console), ``attached`` (a console in this process, nobody
watching: the pipeline's gate is an attribute check) and ``watched`` (a person's stream is
open, so the page is screencast to the console while the agent acts). Each timed call is
preceded by the same random untimed pause (an agent thinks between steps), as in
overhead.py. Ratios are of medians against ``plain``.

    .venv/bin/python benchmarks/console.py [--iterations 60] [--out benchmarks/results/console.json]
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
from pathlib import Path
from typing import Any

from playwright.async_api import async_playwright
from rich.console import Console as RichConsole
from rich.table import Table

from pagewarden import Guard, __version__
from pagewarden._browser import chromium_launch_options
from pagewarden.console import Console
from pagewarden.testing import LocalSite, Response

HOST = "bench.test"
DEFAULT_OUT = Path(__file__).parent / "results" / "console.json"
PAGE = """<!doctype html><html><head><title>bench</title></head><body>
<button id="b" onclick="this.dataset.n = Number(this.dataset.n || 0) + 1">Count</button>
<label for="f">Note</label> <input id="f" type="text">
<p id="t">text that changes</p>
<script>setInterval(() => { document.getElementById('t').textContent = Date.now(); }, 200);</script>
</body></html>"""
VARIANTS = ("plain", "attached", "watched")


def _stats(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "median_ms": round(statistics.median(ordered), 3),
        "mean_ms": round(statistics.fmean(ordered), 3),
        "p95_ms": round(ordered[int(0.95 * (len(ordered) - 1))], 3),
        "n": len(ordered),
    }


async def measure(iterations: int, warmup: int, pause_ms: float = 34.0, seed: int = 7) -> dict[str, Any]:
    rng = random.Random(seed)
    site = LocalSite()
    site.route(HOST, "/", lambda _request: Response(PAGE))
    samples: dict[str, dict[str, list[float]]] = {op: {v: [] for v in VARIANTS} for op in ("click", "fill")}
    with site:
        async with Console() as console, async_playwright() as playwright:
            browser = await playwright.chromium.launch(
                **chromium_launch_options(host_map={"*.test": site.port})
            )
            pages: dict[str, Any] = {}
            guards: list[Guard] = []
            for variant in VARIANTS:
                guard = Guard(goal="Count and take a note", console=console if variant != "plain" else None)
                guards.append(guard)
                context = await browser.new_context()
                page = guard.wrap(await context.new_page())
                await page.goto(f"http://{HOST}/")
                pages[variant] = page
                if variant == "watched":
                    console.hub.open_stream(guard.session_id, "full")  # a person watches this one
            ops = {
                "click": lambda page, i: page.click("#b"),
                "fill": lambda page, i: page.fill("#f", f"note {i}"),
            }
            for i in range(warmup + iterations):
                order = list(VARIANTS)
                rng.shuffle(order)
                for op, run in ops.items():
                    for variant in order:
                        await asyncio.sleep(rng.uniform(0, pause_ms) / 1000)
                        started = time.perf_counter()
                        await run(pages[variant], i)
                        if i >= warmup:
                            samples[op][variant].append((time.perf_counter() - started) * 1000)
            frames = console.hub.record(guards[2].session_id).frame_n
            for guard in guards:
                guard.close()
            await browser.close()
    results: dict[str, Any] = {}
    for op, by_variant in samples.items():
        stats = {v: _stats(s) for v, s in by_variant.items()}
        plain = stats["plain"]["median_ms"]
        results[op] = {
            **stats,
            "ratio_attached": round(stats["attached"]["median_ms"] / plain, 3),
            "ratio_watched": round(stats["watched"]["median_ms"] / plain, 3),
        }
    return {
        "benchmark": "console",
        "pagewarden": __version__,
        "python": sys.version.split()[0],
        "machine": platform.machine(),
        "iterations": iterations,
        "pause_ms": pause_ms,
        "frames_sent_while_watched": frames,
        "results": results,
    }


def print_table(data: dict[str, Any], console: RichConsole) -> None:
    table = Table(title=f"supervision cost ({data['iterations']} iterations, medians in ms)")
    for column in ("op", "plain", "attached", "watched", "attached/plain", "watched/plain"):
        table.add_column(column, justify="right")
    for op, row in data["results"].items():
        table.add_row(
            op,
            f"{row['plain']['median_ms']:.2f}",
            f"{row['attached']['median_ms']:.2f}",
            f"{row['watched']['median_ms']:.2f}",
            f"{row['ratio_attached']:.2f}",
            f"{row['ratio_watched']:.2f}",
        )
    console.print(table)
    console.print(f"frames sent to the console while watched: {data['frames_sent_while_watched']}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--iterations", type=int, default=60)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--pause-ms", type=float, default=34.0)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    data = asyncio.run(measure(args.iterations, args.warmup, args.pause_ms))
    print_table(data, RichConsole())
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
