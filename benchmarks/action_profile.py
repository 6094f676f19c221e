"""Where the guard's milliseconds per action go: a click, a fill and a link click, guarded vs raw.

The overhead benchmark's 500-element settings page (`benchmarks/overhead.py`), with its 3,000
allowed policies, opened in a raw context and in a guarded one (the embedded default: no
proxy, no trace), each in a browser of its own; each action taken ``--iterations`` times on
both sides, alternating which goes first. For the guarded action it records:

* **round trips**: each call the guard's pipeline makes to Playwright (the facts reader's query,
  a screenshot, …) with its time, grouped by call; the action itself (the call that clicks,
  fills) is counted apart — it is what the raw side does;
* **DevTools pauses**: requests the navigation gate's browser-level session paused during the
  action (documents' requests and answers) and the time their handler took;
* **the guard's own Python time**: the guarded action's wall time minus its round trips,
  i.e. observation parsing, the rules tier, the world model, the decision, the trace event;
* a cProfile of the guarded actions: the functions with the most own time (pagewarden's and
  Playwright's Python side, which parses every protocol message).

    .venv/bin/python benchmarks/action_profile.py [--iterations 30] \\
        [--json benchmarks/results/action_profile.json]
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import importlib.util
import json
import os
import platform
import pstats
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Generator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from playwright.async_api import async_playwright  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

import pagewarden.interceptors._wrappers as wrappers  # noqa: E402
from pagewarden import Guard, __version__  # noqa: E402
from pagewarden._browser import chromium_launch_options  # noqa: E402
from pagewarden._calls import Begin, Call, Finish, drive_async  # noqa: E402
from pagewarden.interceptors._interception import BrowserInterception  # noqa: E402

DEFAULT_OUT = ROOT / "benchmarks" / "results" / "action_profile.json"
POLICIES = 3000


def _overhead() -> Any:
    spec = importlib.util.spec_from_file_location("bench_overhead", Path(__file__).parent / "overhead.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


class Recorder:
    """The round trips of the guarded pipeline and the DevTools pauses, per action."""

    def __init__(self) -> None:
        self.active = False
        self.calls: list[tuple[str, float]] = []
        self.pauses: list[tuple[str, float]] = []
        self._begun: dict[int, str] = {}

    def reset(self) -> None:
        self.calls, self.pauses = [], []

    def timed(self, pipeline: Generator[Any, Any, Any]) -> Generator[Any, Any, Any]:
        value: Any = None
        error: BaseException | None = None
        while True:
            try:
                call = pipeline.throw(error) if error is not None else pipeline.send(value)
            except StopIteration as stop:
                return stop.value
            name = _name(call)
            if isinstance(call, Finish):
                name = f"{self._begun.pop(id(call.running), 'a begun call')}: the wait for its answer"
            start = time.perf_counter()
            try:
                value, error = (yield call), None
            except BaseException as exc:  # noqa: BLE001 - handed back
                value, error = None, exc
            if isinstance(call, Begin) and value is not None:
                self._begun[id(value)] = name
                name = f"{name}: sent"
            if self.active:
                self.calls.append((name, time.perf_counter() - start))


def _name(call: Any) -> str:
    fn = getattr(call, "fn", None)
    if isinstance(call, (Call, Begin)) and fn is not None:
        owner = type(getattr(fn, "__self__", None)).__name__
        label = getattr(fn, "__name__", repr(fn))
        if label == "call" and owner == "NoneType":
            label, owner = "the action (raced against the gate's refusals)", "NoneType"
        if owner == "DirectReader":
            return "the facts reader's read (one evaluation in the page)"
        if label in ("send", "_send") and call.args:
            label = f"send {call.args[0]}"
        return f"{owner}.{label}" if owner != "NoneType" else label
    return type(call).__name__


def install(recorder: Recorder) -> None:
    """Time every pipeline call (the wrappers' driver) and every DevTools pause."""

    async def driven(pipeline: Any) -> Any:
        return await drive_async(recorder.timed(pipeline))

    wrappers.drive_async = driven  # SharedState picks its driver up when the guard wraps
    original = BrowserInterception._paused_async

    async def paused(self: Any, event: dict[str, Any]) -> None:
        start = time.perf_counter()
        await original(self, event)
        if recorder.active:
            stage = "answer" if event.get("responseStatusCode") is not None else "request"
            recorder.pauses.append((f"{event.get('resourceType')} {stage}", time.perf_counter() - start))

    BrowserInterception._paused_async = paused  # type: ignore[method-assign]


ACTIONS = ("click", "fill", "link")


async def measure(iterations: int, console: Console) -> dict[str, Any]:
    overhead = _overhead()
    recorder = Recorder()
    install(recorder)
    ops = overhead._ops(500)
    policies = overhead.allowed_policies(POLICIES)
    profile = cProfile.Profile()
    results: dict[str, Any] = {}
    with overhead.serve() as site:
        url = site.url(overhead.HOST, "/page/500")
        async with async_playwright() as playwright:
            options = chromium_launch_options(host_map={overhead.HOST: site.port})
            raw_browser = await playwright.chromium.launch(**options)
            guarded_browser = await playwright.chromium.launch(**options)
            raw = await (await raw_browser.new_context()).new_page()
            guard = Guard(policies, goal="Adjust the settings on app.bench.test.")
            guarded = guard.wrap(await (await guarded_browser.new_context()).new_page())
            await raw.goto(url)
            await guarded.goto(url)
            for action in ACTIONS:
                op, navigates = ops[action]
                samples: dict[str, list[float]] = {"raw": [], "guarded": []}
                calls: dict[str, list[float]] = defaultdict(list)
                pauses: dict[str, list[float]] = defaultdict(list)
                own: list[float] = []
                for i in range(iterations + 3):
                    order = [("raw", raw), ("guarded", guarded)][:: 1 if i % 2 == 0 else -1]
                    for label, page in order:
                        recorder.reset()
                        recorder.active = label == "guarded"
                        if recorder.active:
                            profile.enable()
                        start = time.perf_counter()
                        await op(page, i)
                        elapsed = time.perf_counter() - start
                        if recorder.active:
                            profile.disable()
                        recorder.active = False
                        if i >= 3:
                            samples[label].append(elapsed * 1000)
                            if label == "guarded":
                                for name, seconds in recorder.calls:
                                    calls[name].append(seconds * 1000)
                                for name, seconds in recorder.pauses:
                                    pauses[name].append(seconds * 1000)
                                own.append((elapsed - sum(s for _, s in recorder.calls)) * 1000)
                        if navigates:
                            await page.goto(url)
                n = iterations
                raw_ms = statistics.median(samples["raw"])
                guarded_ms = statistics.median(samples["guarded"])
                results[action] = {
                    "raw_median_ms": round(raw_ms, 2),
                    "guarded_median_ms": round(guarded_ms, 2),
                    "added_median_ms": round(guarded_ms - raw_ms, 2),
                    "ratio": round(guarded_ms / raw_ms, 3),
                    "round_trips_per_action": round(sum(len(v) for v in calls.values()) / n, 2),
                    "calls": {
                        name: {"per_action": round(len(v) / n, 2), "ms_per_action": round(sum(v) / n, 2)}
                        for name, v in sorted(calls.items(), key=lambda kv: -sum(kv[1]))
                    },
                    "devtools_pauses": {
                        name: {"per_action": round(len(v) / n, 2), "handler_ms": round(sum(v) / n, 2)}
                        for name, v in sorted(pauses.items())
                    },
                    "own_python_median_ms": round(statistics.median(own), 2),
                }
                console.print(f"  {action}: raw {raw_ms:.1f} ms, guarded {guarded_ms:.1f} ms")
            await raw_browser.close()
            await guarded_browser.close()
            guard.close()
    stats = pstats.Stats(profile)
    top = sorted(stats.stats.items(), key=lambda kv: -kv[1][2])[:25]  # type: ignore[attr-defined]
    total_actions = iterations * len(ACTIONS)
    results["profile_top_own_time"] = [
        {
            "function": f"{Path(file).name}:{line} {name}",
            "own_ms_per_action": round(tottime * 1000 / total_actions, 3),
            "calls_per_action": round(ncalls / total_actions, 1),
        }
        for (file, line, name), (_cc, ncalls, tottime, _cum, _callers) in top
    ]
    return results


def print_table(results: dict[str, Any], console: Console) -> None:
    table = Table(title="One guarded action, where the time goes (medians; per action)")
    columns = ("action", "raw ms", "guarded ms", "added ms", "round trips", "own Python ms", "largest calls")
    for column in columns:
        table.add_column(column, justify="right" if column != "largest calls" else "left")
    for action in ACTIONS:
        r = results[action]
        largest = ", ".join(f"{k} {v['ms_per_action']}" for k, v in list(r["calls"].items())[:4])
        table.add_row(
            action, f"{r['raw_median_ms']:.1f}", f"{r['guarded_median_ms']:.1f}",
            f"{r['added_median_ms']:.1f}", f"{r['round_trips_per_action']}",
            f"{r['own_python_median_ms']:.1f}", largest,
        )
    console.print(table)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--iterations", type=int, default=30)
    parser.add_argument("--json", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    console = Console()
    results = asyncio.run(measure(args.iterations, console))
    print_table(results, console)
    data = {
        "benchmark": "action_profile",
        "description": __doc__.split("\n\n")[0],
        "timestamp": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "environment": {
            "pagewarden": __version__, "python": platform.python_version(), "cpus": os.cpu_count(),
            "load_average_1m": round(os.getloadavg()[0], 2),
        },
        "iterations": args.iterations,
        "policies": POLICIES,
        "results": results,
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(data, indent=2) + "\n")
    console.print(f"written {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
