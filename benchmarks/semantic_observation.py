"""What a consulted step costs before the model is called, and how big its prompt is: the
targeted observation (``CascadeOptions(observation="targeted")``, the default) against the
whole-page aria snapshot (``observation="page"``, the baseline), side by side in one run.

The pages are `overhead.py`'s settings pages with 500 and 10,000 interactive elements. Each
mode gets its own guarded page with ``consult="always"`` and `ScriptedLLM` (answers at once,
"nothing wrong"); clicks on the page's buttons alternate between the two modes, so both see
the same machine load. Per consulted click the verdict's timings give the added time
excluding the model (``semantic - model`` ms: the page read, building and fencing the
prompt, parsing and applying the answer) and the page read alone (``snapshot``), and its
accounting the prompt tokens (ScriptedLLM: about 4 characters a token); for the baseline also
the prompt with the whole, unpruned tree (what sending the page would cost). Target (issue 27):
at 10,000 elements the targeted mode adds at most about 150 ms, and its prompt size does not
grow with the page.

    .venv/bin/python benchmarks/semantic_observation.py [--iterations 12] [--json PATH]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import sys
from pathlib import Path
from typing import Any

from playwright.async_api import async_playwright
from rich.console import Console
from rich.table import Table

from pagewarden import Guard, __version__
from pagewarden._browser import chromium_launch_options
from pagewarden.guard import CascadeOptions
from pagewarden.testing import ScriptedLLM

sys.path.insert(0, str(Path(__file__).parent))
from overhead import HOST, serve

DEFAULT_JSON = Path(__file__).parent / "results" / "semantic_observation.json"
SIZES = (500, 10_000)
MODES = ("targeted", "page")
TARGET_ADDED_MS = 150.0
FINE = {"semantic_delta": "", "policy_violation": False, "violated_policy_ids": [],
        "goal_deviation": False, "guidance": ""}  # fmt: skip


def _median(values: list[float]) -> float:
    return round(statistics.median(values), 2) if values else 0.0


def _p95(values: list[float]) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))], 2)


def _records(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


async def measure(iterations: int, out_dir: Path) -> dict[str, Any]:
    """Per size and mode: added ms excluding the model, page-read ms and prompt tokens."""
    out_dir.mkdir(parents=True, exist_ok=True)
    results: dict[str, Any] = {}
    with ScriptedLLM(default=FINE) as llm, serve() as site:
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(**chromium_launch_options(host_map={HOST: site.port}))
            try:
                for size in SIZES:
                    buttons = int(size * 0.4)
                    pages: dict[str, Any] = {}
                    guards: dict[str, Guard] = {}
                    traces: dict[str, Path] = {}
                    for mode in MODES:
                        traces[mode] = out_dir / f"{size}-{mode}.jsonl"
                        traces[mode].unlink(missing_ok=True)
                        context = await browser.new_context(viewport={"width": 1280, "height": 800})
                        plain = await context.new_page()
                        await plain.goto(site.url(HOST, f"/page/{size}"))
                        guards[mode] = Guard(
                            goal="Adjust the settings on app.bench.test.", llm=llm.config(timeout=30),
                            cascade=CascadeOptions(consult="always", observation=mode), trace=traces[mode],
                        )  # fmt: skip
                        pages[mode] = guards[mode].wrap(plain)
                    for i in range(iterations + 1):  # the first click of each mode warms up
                        for mode in MODES:
                            page = pages[mode]
                            page.reasoning(f"I toggle setting {i} as the user asked.")
                            await page.locator(f"#button-{(i * 7) % buttons}").click()
                    for mode in MODES:
                        guards[mode].close()
                        consulted = [r["verdict"] for r in _records(traces[mode]) if r["verdict"].get("llm")]
                        consulted = consulted[1:]  # warm-up
                        added = [v["timings_ms"]["semantic"] - v["timings_ms"]["model"] for v in consulted]
                        read = [v["timings_ms"].get("snapshot", 0.0) for v in consulted]
                        tokens = [v["llm"]["prompt_tokens"] for v in consulted]
                        # the same prompt with the whole page's tree instead of the pruned one
                        whole = [
                            v["llm"]["prompt_tokens"] - v["llm"].get("tree_tokens", 0)
                            + v["llm"].get("tree_whole_tokens", 0)
                            for v in consulted
                        ]  # fmt: skip
                        results[f"{size}/{mode}"] = {
                            "elements": size,
                            "observation": mode,
                            "consulted_steps": len(consulted),
                            "added_ms_excluding_model_p50": _median(added),
                            "added_ms_excluding_model_p95": _p95(added),
                            "page_read_ms_p50": _median(read),
                            "prompt_tokens_p50": _median([float(t) for t in tokens]),
                            "prompt_tokens_max": max(tokens) if tokens else 0,
                            "whole_tree_prompt_tokens_p50": _median([float(t) for t in whole]),
                        }
                        await pages[mode].context.close()
            finally:
                await browser.close()
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=12, help="consulted clicks per size and mode")
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON, help="JSON output path")
    parser.add_argument("--out-dir", type=Path, default=Path("pagewarden-out") / "semantic-observation",
                        help="where the guarded pages write their traces")  # fmt: skip
    args = parser.parse_args(argv)
    results = asyncio.run(measure(args.iterations, args.out_dir))
    table = Table(title="consulted step before the model: targeted observation vs whole-page snapshot")
    for column in ("elements", "observation", "added ms p50 (excl. model)", "p95", "page read ms p50",
                   "prompt tokens p50", "max", "with the whole tree"):  # fmt: skip
        table.add_column(column, justify="right")
    for r in results.values():
        table.add_row(
            str(r["elements"]), r["observation"], f"{r['added_ms_excluding_model_p50']:.1f}",
            f"{r['added_ms_excluding_model_p95']:.1f}", f"{r['page_read_ms_p50']:.1f}",
            f"{r['prompt_tokens_p50']:.0f}", str(r["prompt_tokens_max"]),
            f"{r['whole_tree_prompt_tokens_p50']:.0f}" if r["observation"] == "page" else "-",
        )  # fmt: skip
    Console().print(table)
    big = results.get(f"{SIZES[-1]}/targeted", {})
    small = results.get(f"{SIZES[0]}/targeted", {})
    document = {
        "benchmark": "semantic_observation",
        "pagewarden": __version__,
        "python": sys.version.split()[0],
        "machine": platform.machine(),
        "load_average_1m": round(os.getloadavg()[0], 2),
        "iterations": args.iterations,
        "target_added_ms_at_10000": TARGET_ADDED_MS,
        "meets_target": bool(big) and big["added_ms_excluding_model_p50"] <= TARGET_ADDED_MS,
        "targeted_prompt_growth_500_to_10000": (
            round(big["prompt_tokens_p50"] / small["prompt_tokens_p50"], 3)
            if big and small and small["prompt_tokens_p50"]
            else None
        ),
        "results": results,
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    Console().print(f"wrote {args.json}", highlight=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
