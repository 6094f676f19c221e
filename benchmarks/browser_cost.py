"""What a page costs in each system Chromium build: the full browser's headless mode against
Chromium's headless shell, raw and guarded, side by side in one run.

Each round runs, for every (build, side) pair in an alternating order, one child process that
launches that build with pagewarden's flags and then, `--pages` times: a new context, a new
page, ``goto`` a local page, ``click`` a button, close the context (``guarded``: the page wrapped
by a `Guard` with the embedded default). The child's CPU is read from the kernel once it has
exited (its whole process tree, Chromium's renderers included, reaped); a launch-only child of
the same build is subtracted, so the figure is CPU seconds per page. Wall seconds per page are
timed inside the child around the loop. Reported: medians over the rounds and the ratio of the
headless shell to the full browser.

    .venv/bin/python benchmarks/browser_cost.py [--rounds 3] [--pages 20] [--out FILE.json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

DEFAULT_OUT = Path(__file__).parent / "results" / "browser_cost.json"
BUILDS = {"full": "/usr/bin/chromium", "headless-shell": "/usr/bin/chromium-headless-shell"}
PAGE = (
    "<!doctype html><html><head><title>Cost</title></head><body><h1>Cost</h1>"
    "<form action='/next'><input name='q'><button id='go' type='button' "
    "onclick=\"document.title='clicked'\">Go</button></form><a href='/'>home</a></body></html>"
)


async def _child(executable: str, side: str, pages: int) -> float:
    """Run the loop in this process; return wall seconds per page."""
    from playwright.async_api import async_playwright

    from pagewarden import Guard
    from pagewarden._browser import chromium_launch_options
    from pagewarden.testing import LocalSite, Response

    with LocalSite() as site:
        site.route("app.test", "/", lambda _r: Response(PAGE))
        options = chromium_launch_options(headless=True, host_map={"*.test": site.port})
        options["executable_path"] = executable
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(**options)
            start = time.perf_counter()
            for _ in range(pages):
                context = await browser.new_context()
                page = await context.new_page()
                if side == "guarded":
                    page = Guard(goal="Press Go.").wrap(page)
                await page.goto("http://app.test/")
                await page.click("#go")
                await context.close()
            elapsed = time.perf_counter() - start
            await browser.close()
    return elapsed / pages if pages else 0.0


def _measure(executable: str, side: str, pages: int) -> tuple[float, float]:
    """CPU seconds of a child's whole tree, and its wall seconds per page."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(
        [sys.executable, __file__, "--child", executable, side, str(pages)],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, float(out.stdout.strip().splitlines()[-1])


def _commit() -> str:
    git = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return git.stdout.strip()


def run(rounds: int, pages: int) -> dict[str, Any]:
    builds = {name: path for name, path in BUILDS.items() if Path(path).exists()}
    samples: dict[str, dict[str, list[float]]] = {}
    for round_ in range(rounds):
        pairs = [(b, s) for b in builds for s in ("raw", "guarded")]
        if round_ % 2:
            pairs.reverse()
        for build, side in pairs:
            launch_cpu, _ = _measure(builds[build], side, 0)
            cpu, wall = _measure(builds[build], side, pages)
            row = samples.setdefault(f"{build}/{side}", {"cpu_per_page": [], "wall_per_page": []})
            row["cpu_per_page"].append((cpu - launch_cpu) / pages)
            row["wall_per_page"].append(wall)
    medians = {
        key: {name: round(statistics.median(values), 4) for name, values in row.items()}
        for key, row in samples.items()
    }
    def cpu(key: str) -> float:
        return medians[key]["cpu_per_page"]

    ratios = {
        side: round(cpu(f"headless-shell/{side}") / cpu(f"full/{side}"), 3)
        for side in ("raw", "guarded")
        if f"headless-shell/{side}" in medians and f"full/{side}" in medians
    }
    return {
        "benchmark": "browser_cost",
        "builds": builds,
        "rounds": rounds,
        "pages": pages,
        "medians": medians,
        "cpu_ratio_headless_shell_to_full": ratios,
        "samples": samples,
        "machine": {"cpus": os.cpu_count(), "load": os.getloadavg(), "python": platform.python_version()},
        "commit": _commit(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--pages", type=int, default=20)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--child", nargs=3, metavar=("EXECUTABLE", "SIDE", "PAGES"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        executable, side, pages = args.child
        print(asyncio.run(_child(executable, side, int(pages))))
        return
    result = run(args.rounds, args.pages)
    for key, row in result["medians"].items():
        print(f"{key:24} {row['cpu_per_page']:.3f} CPU-s/page  {row['wall_per_page'] * 1000:.0f} ms/page")
    print("CPU ratio, headless shell / full browser:", result["cpu_ratio_headless_shell_to_full"])
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
