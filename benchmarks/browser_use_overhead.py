"""Cost of the browser-use integration: browser-use's own `Tools` against `GuardedTools`, on
one browser, side by side in one run.

One browser-use `BrowserSession` (pagewarden's Chromium, no proxy) on the local order desk
(`tests/integrations/_gym.py`, 127.0.0.1). Each iteration captures the page state once (as the
agent does before each step; not timed) and then runs the same benign actions through both
tool sets, order alternating: ``input`` into the note field and ``click`` a button that stays
on the page. Timed: `Tools.act` (browser-use's action, its event bus and CDP) and
`GuardedTools.act` (the guard's judgement, the embedded default with the task's policies,
then the same action). Reported: medians, the guard's added milliseconds per action and the
ratio, and the judgement alone (`GuardedTools`' check before the action, timed on its own).
``--proxy`` puts the browser behind the network layer (both tool sets then go through
it).

    .venv/bin/python benchmarks/browser_use_overhead.py [--iterations 30] [--proxy] [--out FILE.json]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("ANONYMIZED_TELEMETRY", "false")

from browser_use import BrowserSession, Tools
from rich.console import Console
from rich.table import Table

from pagewarden import Guard, PolicySet, __version__
from pagewarden.integrations.browser_use import GuardedTools, browser_profile, network_layer

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.integrations._gym import POLICIES, desk_site

DEFAULT_OUT = Path(__file__).parent / "results" / "browser_use_overhead.json"


def _index(selector_map: dict[int, Any], element_id: str) -> int:
    for index, node in selector_map.items():
        if (node.attributes or {}).get("id") == element_id:
            return index
    raise RuntimeError(f"#{element_id} is not in browser-use's element list")


async def run(iterations: int, proxy: bool) -> dict[str, Any]:
    with desk_site() as site, contextlib.ExitStack() as stack, tempfile.TemporaryDirectory() as tmp:
        guard = Guard(policies=PolicySet.from_dict(POLICIES), goal="Send an order with the note 'hello'.")
        network = stack.enter_context(network_layer(guard, host_map={"*.test": site.port})) if proxy else None
        fast = {"minimum_wait_page_load_time": 0.1, "wait_for_network_idle_page_load_time": 0.1}
        # browser-use's default downloads folder is a new /tmp/browser-use-downloads-* it never removes
        profile = browser_profile(network=network, host_map={"*.test": site.port}, downloads_path=tmp, **fast)
        session = BrowserSession(browser_profile=profile)
        await session.start()
        tools = {"raw": Tools(), "guarded": GuardedTools(guard)}
        model = tools["raw"].registry.create_action_model()
        samples: dict[str, dict[str, list[float]]] = {
            a: {n: [] for n in (*tools, "judge")} for a in ("input", "click")
        }
        try:
            await tools["raw"].act(model(navigate={"url": site.url("shop.test", "/")}), session)
            for i in range(iterations + 3):
                await session.get_browser_state_summary()
                selector_map = await session.get_selector_map()
                actions = {
                    "input": model(input={"index": _index(selector_map, "note"), "text": f"note {i}"}),
                    "click": model(click={"index": _index(selector_map, "more")}),
                }
                order = list(tools) if i % 2 == 0 else list(reversed(tools))
                for name, action in actions.items():
                    for which in order:
                        start = time.perf_counter()
                        result = await tools[which].act(action, session)
                        elapsed = (time.perf_counter() - start) * 1000
                        if result.error:
                            raise RuntimeError(f"{which} {name} failed: {result.error}")
                        if i >= 3:  # warm-up
                            samples[name][which].append(elapsed)
                    # the judgement alone (what GuardedTools adds before the same action)
                    params = action.model_dump(exclude_unset=True)[name]
                    start = time.perf_counter()
                    await tools["guarded"]._judge(name, params, session)
                    if i >= 3:
                        samples[name]["judge"].append((time.perf_counter() - start) * 1000)
        finally:
            await session.kill()
    rows = {}
    for name, per in samples.items():
        raw, guarded = statistics.median(per["raw"]), statistics.median(per["guarded"])
        judge = statistics.median(per["judge"])
        rows[name] = {"raw_ms": round(raw, 1), "guarded_ms": round(guarded, 1),
                      "added_ms": round(guarded - raw, 1), "ratio": round(guarded / raw, 2),
                      "judge_ms": round(judge, 1)}  # fmt: skip
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=30)
    parser.add_argument("--proxy", action="store_true", help="the browser behind the network layer")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args()
    load = os.getloadavg()[0]
    rows = asyncio.run(run(args.iterations, args.proxy))
    table = Table(
        title=f"browser-use: GuardedTools vs Tools, median ms per action ({args.iterations} iterations)"
    )
    for column in ("action", "raw", "guarded", "added", "ratio", "judgement alone"):
        table.add_column(column)
    for name, r in rows.items():
        table.add_row(
            name, *map(str, (r["raw_ms"], r["guarded_ms"], r["added_ms"], r["ratio"], r["judge_ms"]))
        )
    Console().print(table)
    git = ["git", "rev-parse", "--short", "HEAD"]
    commit = subprocess.run(git, capture_output=True, text=True).stdout.strip()
    result = {
        "benchmark": "browser_use_overhead",
        "command": " ".join(["benchmarks/browser_use_overhead.py", *sys.argv[1:]]),
        "pagewarden": __version__, "commit": commit, "python": platform.python_version(),
        "load_average_1m": round(load, 2), "iterations": args.iterations, "proxy": args.proxy, "rows": rows,
    }  # fmt: skip
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
