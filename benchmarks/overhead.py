"""Overhead of the guard: actions on a guarded page versus raw Playwright, side by side.

Pages served by `LocalSite` on 127.0.0.1, each opened twice in one Chromium — in a raw context
and in a context whose page `Guard(goal=…)` wraps (the embedded default: deterministic tier,
no proxy, no trace). Link and submit rows, which load a document while timed, run each side in
its own Chromium launched for the row, because the navigation gate's DevTools session pauses
every document of its browser for one round trip and must not slow the raw side:

* settings pages with 100, 500, 2,000 and 10,000 interactive elements (buttons, labelled
  text fields, links): click, fill, press on every size; link clicks (to another page) and
  submit clicks (a form post) on the 500-element page;
* the 500-element page loaded *before* `guard.wrap()` (an agent attached to a running page):
  click, fill, press;
* a form of 300 labelled fields: fill, and submitting it;
* the 500-element page with 100, 1,000 and 3,000 policies (a mix of every rule kind that
  leaves these actions allowed): click, fill, link click.

For each action the raw and the guarded timing are taken in the same iteration, alternating
which goes first, so machine noise hits both alike; the result is the ratio of medians (ratio
of means too) and the guard's added time (difference of medians). Targets: guarded/raw ≤ 1.3
for click, link click, fill and press on every page; the added time at 10,000 elements at most
twice the added time at 500. A navigation (link, submit) is followed by an untimed return to
the page.

Playwright's click waits for the element to be stable over animation frames (~16.7 ms each),
so click times are quantized; an agent thinks between steps, so each timed call is preceded by
an untimed pause drawn uniformly from [0, --pause-ms] (the same draws for raw and guarded).

    .venv/bin/python benchmarks/overhead.py [--iterations 20] [--only NAME …] [--out FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from playwright.async_api import async_playwright
from rich.console import Console
from rich.table import Table

from pagewarden import Guard, GuardError, __version__
from pagewarden._browser import chromium_launch_options
from pagewarden.testing import LocalSite, RecordedRequest, Response

HOST = "app.bench.test"
SIZES = (100, 500, 2000, 10_000)
POLICY_COUNTS = (100, 1000, 3000)
FORM_FIELDS = 300
TARGET_RATIO = 1.3
TARGETED = ("click", "link", "fill", "press")
DEFAULT_OUT = Path(__file__).parent / "results" / "overhead.json"

Op = Callable[[Any, int], Awaitable[Any]]


# -- pages -----------------------------------------------------------------------------------
def settings_page(elements: int) -> str:
    """A settings-like page with `elements` interactive elements: 40 % buttons, 30 % labelled
    text fields, 30 % links (to another page), and a small form with a submit button."""
    buttons, fields = int(elements * 0.4), int(elements * 0.3)
    links = elements - buttons - fields - 2  # the form's field and button
    rows = []
    for i in range(max(buttons, fields, links)):
        cells = [f"<td>Item {i}</td>"]
        if i < fields:
            cells.append(
                f'<td><label for="field-{i}">Setting {i}</label> '
                f'<input id="field-{i}" name="setting{i}" type="text" value=""></td>'
            )
        if i < buttons:
            cells.append(f'<td><button type="button" id="button-{i}" class="act">Toggle {i}</button></td>')
        if i < links:
            cells.append(f'<td><a id="link-{i}" href="/details?item={i}">Details {i}</a></td>')
        rows.append(f'<tr id="row-{i}">{"".join(cells)}</tr>')
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Benchmark settings</title>'
        "<style>body{font:14px system-ui;margin:16px} td{padding:2px 8px}</style>"
        '</head><body><header><nav aria-label="Main"><a href="/">Home</a></nav></header>'
        '<main><h1>Settings</h1><p>Counter: <output id="counter">0</output></p>'
        '<form id="search" action="/submitted" method="post"><label for="q">Search</label> '
        '<input id="q" name="q" value="settings"><button type="submit" id="submit">Search</button></form>'
        f"<table>{''.join(rows)}</table>"
        "</main><script>let n=0;document.addEventListener('click',e=>{if(e.target.matches('button.act'))"
        "document.getElementById('counter').textContent=String(++n)});</script></body></html>"
    )


def form_page(fields: int) -> str:
    """One form of `fields` labelled text fields and a submit button."""
    rows = "".join(
        f'<p><label for="f-{i}">Answer {i}</label> <input id="f-{i}" name="answer{i}" value="a{i}"></p>'
        for i in range(fields)
    )
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Long form</title></head><body>'
        f'<main><h1>Survey</h1><form action="/submitted" method="post">{rows}'
        '<button type="submit" id="send">Send answers</button></form></main></body></html>'
    )


SMALL_PAGE = '<!doctype html><html><head><title>Done</title></head><body><p>Done.</p></body></html>'


def serve() -> LocalSite:
    """The benchmark's site: settings pages by size, the long form, link and form destinations."""
    site = LocalSite()
    for size in SIZES:
        html = settings_page(size)
        site.route(HOST, f"/page/{size}", lambda _r, html=html: Response(html))
    form = form_page(FORM_FIELDS)
    site.route(HOST, "/form", lambda _r: Response(form))
    site.route(HOST, "/details", lambda _r: Response(SMALL_PAGE))

    def submitted(request: RecordedRequest) -> Response:
        return Response(SMALL_PAGE)

    site.route(HOST, "/submitted", submitted)
    return site


# -- what is measured ------------------------------------------------------------------------
@dataclass
class Scenario:
    """One row: a page, an action, how the guarded page was made, how many policies."""

    name: str
    path: str
    action: str
    op: Op
    elements: int
    policies: int = 0
    before_wrap: bool = False
    navigates: bool = False
    rows: dict[str, Any] = field(default_factory=dict)


def _ops(size: int) -> dict[str, tuple[Op, bool]]:
    buttons, fields = int(size * 0.4), int(size * 0.3)
    links = size - buttons - fields - 2
    return {
        "click": (lambda page, i: page.locator(f"#button-{(i * 7) % buttons}").click(), False),
        "fill": (lambda page, i: page.locator(f"#field-{(i * 7) % fields}").fill(f"value {i}"), False),
        "press": (lambda page, i: page.locator(f"#field-{(i * 7) % fields}").press("a"), False),
        "link": (lambda page, i: page.locator(f"#link-{(i * 7) % links}").click(), True),
        "submit": (lambda page, i: page.locator("#submit").click(), True),
    }


def scenarios(only: tuple[str, ...] = ()) -> list[Scenario]:
    """Every row of the benchmark (or those whose name starts with one of `only`)."""
    out: list[Scenario] = []
    for size in SIZES:
        ops = _ops(size)
        for action in ("click", "fill", "press", *(("link", "submit") if size == 500 else ())):
            op, navigates = ops[action]
            out.append(Scenario(f"{size}/{action}", f"/page/{size}", action, op, size, navigates=navigates))
    ops = _ops(500)
    for action in ("click", "fill", "press"):
        op, _ = ops[action]
        out.append(Scenario(f"before-wrap/{action}", "/page/500", action, op, 500, before_wrap=True))
    out.append(
        Scenario(
            "form300/fill", "/form", "fill",
            lambda page, i: page.locator(f"#f-{(i * 7) % FORM_FIELDS}").fill(f"answer {i}"), FORM_FIELDS + 1,
        )
    )  # fmt: skip
    out.append(
        Scenario(
            "form300/submit", "/form", "submit", lambda page, i: page.locator("#send").click(),
            FORM_FIELDS + 1, navigates=True,
        )
    )  # fmt: skip
    for count in POLICY_COUNTS:
        for action in ("click", "fill", "link"):
            op, navigates = ops[action]
            out.append(
                Scenario(f"policies-{count}/{action}", "/page/500", action, op, 500, policies=count,
                         navigates=navigates)
            )
    if only:
        out = [s for s in out if s.name.startswith(only)]
    return out


def allowed_policies(count: int) -> list[Any]:
    """`count` policies of the rules benchmark's mix that leave the benchmark's actions allowed
    (the mix's input allow-lists would refuse every fill, so they are left out)."""
    if not count:
        return []
    sys.path.insert(0, str(Path(__file__).parent))
    from rules import synthetic_policies

    mix = synthetic_policies(int(count * 1.2) + 10)
    mix = [p for p in mix if all(r.kind != "input_allow" for r in p.rules)]
    return mix[:count]


def _stats(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {
        "median_ms": round(statistics.median(ordered), 3),
        "p95_ms": round(p95, 3),
        "mean_ms": round(statistics.fmean(ordered), 3),
        "n": len(ordered),
    }


def _compare(scenario: Scenario, raw: list[float], guarded: list[float], errors: list[str]) -> dict[str, Any]:
    raw_stats, guarded_stats = _stats(raw), _stats(guarded)
    ratio = round(guarded_stats["median_ms"] / raw_stats["median_ms"], 3)
    targeted = scenario.action in TARGETED
    return {
        "scenario": scenario.name,
        "action": scenario.action,
        "elements": scenario.elements,
        "policies": scenario.policies,
        "before_wrap": scenario.before_wrap,
        "raw": raw_stats,
        "guarded": guarded_stats,
        "ratio_median": ratio,
        "ratio_mean": round(guarded_stats["mean_ms"] / raw_stats["mean_ms"], 3),
        "added_median_ms": round(guarded_stats["median_ms"] - raw_stats["median_ms"], 3),
        "target_ratio": TARGET_RATIO if targeted else None,
        "meets_target": (ratio <= TARGET_RATIO) if targeted else None,
        "guard_errors": errors[:3],
    }


async def _timed(op: Op, page: Any, i: int, pause_s: float) -> float:
    if pause_s:
        await asyncio.sleep(pause_s)
    started = time.perf_counter()
    await op(page, i)
    return (time.perf_counter() - started) * 1000


async def _run(browsers: tuple[Any, Any], site: LocalSite, scenario: Scenario, iterations: int, warmup: int,
               pause_ms: float, seed: int) -> dict[str, Any]:  # fmt: skip
    url = site.url(HOST, scenario.path)
    raw_context = await browsers[0].new_context()
    guarded_context = await browsers[1].new_context()
    try:
        raw = await raw_context.new_page()
        guard = Guard(allowed_policies(scenario.policies), goal="Adjust the settings on app.bench.test.")
        plain = await guarded_context.new_page()
        if scenario.before_wrap:
            await plain.goto(url)
            guarded = guard.wrap(plain)
        else:
            guarded = guard.wrap(plain)
            await guarded.goto(url)
        await raw.goto(url)
        samples: dict[str, list[float]] = {"raw": [], "guarded": []}
        errors: list[str] = []
        rng = random.Random(f"{seed}-{scenario.name}")
        for i in range(warmup + iterations):
            order = (("raw", raw), ("guarded", guarded))
            if i % 2:
                order = order[::-1]
            pause_s = rng.uniform(0, pause_ms) / 1000
            for label, page in order:
                try:
                    elapsed = await _timed(scenario.op, page, i, pause_s)
                except GuardError as exc:  # the guard stopped a benchmark action: report it
                    errors.append(f"{type(exc).__name__}: {str(exc)[:200]}")
                    if scenario.navigates:
                        await page.goto(url)
                    continue
                if scenario.navigates:
                    await page.goto(url)
                if i >= warmup:
                    samples[label].append(elapsed)
        return _compare(scenario, samples["raw"], samples["guarded"] or [float("nan")], errors)
    finally:
        await raw_context.close()
        await guarded_context.close()


async def measure(iterations: int, warmup: int, pause_ms: float = 34.0, seed: int = 7,
                  only: tuple[str, ...] = (), console: Console | None = None) -> dict[str, Any]:  # fmt: skip
    """Run every scenario side by side and return the results as plain data."""
    site = serve()
    rows = []
    failed: list[dict[str, str]] = []
    with site:
        async with async_playwright() as playwright:
            options = chromium_launch_options(host_map={HOST: site.port})
            shared = await playwright.chromium.launch(**options)
            version = shared.version
            for scenario in scenarios(only):
                # Rows that load a document while timed (link, submit) run each side in its own
                # browser, launched afresh: the navigation gate's DevTools session pauses every
                # document of its browser, which must not slow the raw side. The other rows share
                # one browser, so both sides see the same browser state (a fresh browser's raw
                # click median alone moves by two animation frames from one launch to the next).
                own = scenario.navigates
                launch = playwright.chromium.launch
                browsers = (await launch(**options), await launch(**options)) if own else (shared, shared)
                try:
                    row = await _run(browsers, site, scenario, iterations, warmup, pause_ms, seed)
                except Exception as exc:  # noqa: BLE001 - one broken row must not lose the others
                    if console is not None:
                        console.print(f"{scenario.name}: failed: {type(exc).__name__}", highlight=False)
                    error = f"{type(exc).__name__}: {str(exc)[:300]}"
                    failed.append({"scenario": scenario.name, "error": error})
                    continue
                finally:
                    for browser in browsers if own else ():
                        await browser.close()
                rows.append(row)
                if console is not None:
                    console.print(
                        f"{row['scenario']}: raw {row['raw']['median_ms']:.1f} ms, guarded "
                        f"{row['guarded']['median_ms']:.1f} ms, ratio {row['ratio_median']:.2f}",
                        highlight=False,
                    )
            await shared.close()
    return {
        "benchmark": "overhead",
        "description": "median time of actions, guarded (deterministic tier, no proxy, no trace) vs raw "
        "Playwright, measured side by side in one run (interleaved; link and submit rows: each side "
        "in its own browser)",
        "timestamp": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "environment": {
            "pagewarden": __version__,
            "python": platform.python_version(),
            "platform": platform.platform(),
            "chromium": version,
            "load_average_1m": round(os.getloadavg()[0], 2),
            "cpus": os.cpu_count(),
        },
        "iterations": iterations,
        "warmup": warmup,
        "pause_ms": pause_ms,
        "results": rows,
        "failed": failed,
        "scaling": scaling(rows),
    }


def scaling(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The guard's added time at 10,000 elements against its added time at 500 (target ≤ 2×)."""
    by_name = {r["scenario"]: r for r in rows}
    out = {}
    for action in ("click", "fill", "press"):
        small, large = by_name.get(f"500/{action}"), by_name.get(f"10000/{action}")
        if small is None or large is None:
            continue
        base = max(small["added_median_ms"], 0.5)  # below half a millisecond the ratio is noise
        out[action] = {
            "added_500_ms": small["added_median_ms"],
            "added_10000_ms": large["added_median_ms"],
            "factor": round(large["added_median_ms"] / base, 2),
            "meets_target": large["added_median_ms"] <= 2 * base,
        }
    return out


def print_table(data: dict[str, Any], console: Console) -> None:
    """Print raw vs guarded medians, the ratios and the added time."""
    table = Table(
        title=f"pagewarden overhead — {data['iterations']} iterations, pause 0-{data['pause_ms']:g} ms, "
        f"load average {data['environment']['load_average_1m']}"
    )
    for column in ("scenario", "raw median", "guarded median", "ratio", "ratio of means", "added", "target"):
        table.add_column(column, justify="left" if column == "scenario" else "right")
    for row in data["results"]:
        target = row["target_ratio"]
        verdict = "-" if target is None else f"≤ {target} {'ok' if row['meets_target'] else 'MISSED'}"
        if row["guard_errors"]:
            verdict = "guard stopped it"
        table.add_row(
            row["scenario"],
            f"{row['raw']['median_ms']:.1f} ms",
            f"{row['guarded']['median_ms']:.1f} ms",
            f"{row['ratio_median']:.2f}",
            f"{row['ratio_mean']:.2f}",
            f"{row['added_median_ms']:+.1f} ms",
            verdict,
        )
    console.print(table)
    for action, s in data["scaling"].items():
        console.print(
            f"{action}: added {s['added_500_ms']:.1f} ms at 500 elements, "
            f"{s['added_10000_ms']:.1f} ms at 10,000 "
            f"(×{s['factor']:.2f}; target ≤ 2 {'ok' if s['meets_target'] else 'MISSED'})",
            highlight=False,
        )


def main(argv: list[str] | None = None) -> int:
    """Measure, print and write the JSON; exit 1 if a target was missed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=20, help="measured iterations per row")
    parser.add_argument("--warmup", type=int, default=3, help="unrecorded iterations first")
    parser.add_argument(
        "--pause-ms", type=float, default=34.0, help="untimed random pause before each call, 0 = back to back"
    )
    parser.add_argument("--only", nargs="*", default=(), help="rows whose name starts with these (e.g. 500/)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where to write the JSON")
    args = parser.parse_args(argv)
    console = Console(width=max(Console().width, 120))
    run = measure(args.iterations, args.warmup, args.pause_ms, only=tuple(args.only), console=console)
    data = asyncio.run(run)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    print_table(data, console)
    console.print(f"written to {args.out}", highlight=False)
    missed = any(r["meets_target"] is False or r["guard_errors"] for r in data["results"])
    missed = missed or any(not s["meets_target"] for s in data["scaling"].values()) or bool(data["failed"])
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
