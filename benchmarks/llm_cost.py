"""What the semantic tier costs on the demo's sessions: model calls per step, prompt size
against sending the whole accessibility tree, and the guard's added time excluding the model.

The demo (every scenario, benign and naive agent) runs guarded with the semantic tier
pointed at `ScriptedLLM`, which answers at once ("nothing wrong"), so what is timed is the
guard's own work: taking the aria snapshot, pruning it, building and fencing the prompt,
parsing and applying the answer, and the hops to the background loop. The traces the demo
writes (``--out``) are then read back; per consulted step a verdict records the reasons,
tokens, the pruned and the whole tree's size, and the timings.

* calls per step: model calls / guarded steps, for benign and attack sessions;
* prompt ratio: prompt tokens per call / the same prompt with the whole tree instead of the
  pruned one (prompt - pruned tree + whole tree), summed over calls, and per call;
* added latency excluding model time: ``semantic - model`` ms per consulted step.

Prompt tokens are what the server reports (ScriptedLLM: about 4 characters a token).

    .venv/bin/python benchmarks/llm_cost.py [--out-dir pagewarden-out/llm-cost] [--json llm_cost.json]
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

from rich.console import Console
from rich.table import Table

from pagewarden import __version__
from pagewarden.demo.agents import SCENARIOS
from pagewarden.demo.runner import run_demo_async
from pagewarden.testing import ScriptedLLM

DEFAULT_JSON = Path(__file__).parent / "results" / "llm_cost.json"
FINE = {
    "semantic_delta": "",
    "policy_violation": False,
    "violated_policy_ids": [],
    "goal_deviation": False,
    "guidance": "",
}


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def summarise(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Calls, tokens and latency over the trace records of a group of sessions."""
    steps = len(records)
    consulted = [r["verdict"]["llm"] for r in records if r.get("verdict", {}).get("llm")]
    timings = [r["verdict"].get("timings_ms", {}) for r in records if r.get("verdict", {}).get("llm")]
    calls = sum(c.get("calls", 0) for c in consulted)
    prompt = sum(c.get("prompt_tokens", 0) for c in consulted)
    whole = sum(
        c.get("prompt_tokens", 0) - c.get("tree_tokens", 0) + c.get("tree_whole_tokens", 0) for c in consulted
    )
    per_call = [
        c["prompt_tokens"] / (c["prompt_tokens"] - c.get("tree_tokens", 0) + c.get("tree_whole_tokens", 0))
        for c in consulted
        if c.get("prompt_tokens")
    ]
    tree = sum(c.get("tree_tokens", 0) for c in consulted)
    tree_whole = sum(c.get("tree_whole_tokens", 0) for c in consulted)
    added = [t.get("semantic", 0.0) - t.get("model", 0.0) for t in timings]
    snapshot = [t.get("snapshot", 0.0) for t in timings]
    reasons: dict[str, int] = {}
    for c in consulted:
        for reason in c.get("reasons", []):
            reasons[reason] = reasons.get(reason, 0) + 1
    return {
        "steps": steps,
        "consulted_steps": len(consulted),
        "calls": calls,
        "calls_per_step": round(calls / steps, 4) if steps else 0.0,
        "prompt_tokens_per_call": round(prompt / calls, 1) if calls else 0.0,
        "whole_tree_prompt_tokens_per_call": round(whole / calls, 1) if calls else 0.0,
        "prompt_ratio": round(prompt / whole, 4) if whole else None,
        "prompt_ratio_per_call_max": round(max(per_call), 4) if per_call else None,
        "tree_tokens_per_call": round(tree / calls, 1) if calls else 0.0,
        "whole_tree_tokens_per_call": round(tree_whole / calls, 1) if calls else 0.0,
        "tree_ratio": round(tree / tree_whole, 4) if tree_whole else None,
        "added_ms_excluding_model_p50": round(statistics.median(added), 2) if added else 0.0,
        "added_ms_excluding_model_p95": round(_percentile(added, 0.95), 2),
        "snapshot_ms_p50": round(statistics.median(snapshot), 2) if snapshot else 0.0,
        "reasons": reasons,
    }


def read_traces(directory: Path) -> dict[str, list[dict[str, Any]]]:
    """Trace records by group ("benign" / "attack") from a demo output directory."""
    groups: dict[str, list[dict[str, Any]]] = {"benign": [], "attack": []}
    for path in sorted((directory / "traces").glob("*.jsonl")):
        group = "benign" if path.stem.endswith("-benign") else "attack"
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                groups[group].append(json.loads(line))
    return groups


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out-dir", type=Path, default=Path("pagewarden-out") / "llm-cost",
                        help="where the demo writes its traces")  # fmt: skip
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON, help="JSON output path")
    parser.add_argument(
        "--traces", type=Path, help="read an existing demo output directory instead of running"
    )
    args = parser.parse_args(argv)
    console = Console()
    directory = args.traces
    demo_ok = None
    if directory is None:
        directory = args.out_dir
        with ScriptedLLM(default=FINE) as llm:
            result = asyncio.run(run_demo_async(directory, scenarios=SCENARIOS, llm=llm.config(timeout=30)))
        demo_ok = result.ok
    groups = read_traces(directory)
    results = {name: summarise(records) for name, records in groups.items()}
    table = Table(title="semantic tier cost on the demo's sessions (ScriptedLLM answering at once)")
    for column in ("sessions", "steps", "calls/step", "prompt tok/call", "whole-tree prompt", "ratio",
                   "tree / whole tree", "added ms p50 (excl. model)", "p95"):  # fmt: skip
        table.add_column(column, justify="right")
    for name, r in results.items():
        table.add_row(
            name, str(r["steps"]), f"{r['calls_per_step']:.3f}", f"{r['prompt_tokens_per_call']:.0f}",
            f"{r['whole_tree_prompt_tokens_per_call']:.0f}",
            f"{r['prompt_ratio']:.0%}" if r["prompt_ratio"] is not None else "-",
            f"{r['tree_tokens_per_call']:.0f} / {r['whole_tree_tokens_per_call']:.0f}",
            f"{r['added_ms_excluding_model_p50']:.1f}", f"{r['added_ms_excluding_model_p95']:.1f}",
        )  # fmt: skip
    console.print(table)
    document = {
        "benchmark": "llm_cost",
        "pagewarden": __version__,
        "python": sys.version.split()[0],
        "machine": platform.machine(),
        "load_average_1m": round(os.getloadavg()[0], 2),
        "demo_ok": demo_ok,
        "results": results,
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    console.print(f"wrote {args.json}", highlight=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
