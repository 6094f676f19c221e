"""What the semantic tier costs: model calls per step, prompt size against sending the whole
accessibility tree, and the guard's added time excluding the model.

Two sets of sessions run guarded with the semantic tier pointed at `ScriptedLLM`, which
answers at once ("nothing wrong"), so what is timed is the guard's own work: taking the aria
snapshot, pruning it, building and fencing the prompt, parsing and applying the answer, and
the hops to the background loop.

* ``demo``: the demo (every scenario, benign and naive agent). Its pages are small
  (≈1,000-token trees), so there the prompt's fixed part dominates the comparison.
* ``large``: made-up pages of the size agents meet (`_large_site`: an issue list of 80
  issues, an issue with 70 comments, a settings form of 120 fields, a forum thread of 80
  posts; 240–780 interactive elements, 10k–26k-token trees), three benign sessions and one
  agent that follows a planted injection (`_large_sessions`).

The traces are then read back; per consulted step a verdict records the reasons, tokens,
the pruned and the whole tree's size, and the timings.

* calls per step: model calls / guarded steps, for benign and attack sessions;
* prompt ratio: prompt tokens per call / the same prompt with the whole tree instead of the
  pruned one (prompt - pruned tree + whole tree), summed over calls, and per call (only with
  ``CascadeOptions(observation="page")``: the default targeted observation sends no tree, so
  the ratio is 1; `semantic_observation.py` compares the two);
* added latency excluding model time: ``semantic - model`` ms per consulted step.

Prompt tokens are what the server reports (ScriptedLLM: about 4 characters a token, message
text only); the answer's JSON schema travels as ``response_format`` where the server does
structured output, and its size is reported separately (``schema_tokens``).

    .venv/bin/python benchmarks/llm_cost.py [--sets demo,large] [--out-dir pagewarden-out/llm-cost]
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
from pagewarden.judge._answers import Assessment
from pagewarden.llm import json_schema_of
from pagewarden.testing import ScriptedLLM

sys.path.insert(0, str(Path(__file__).parent))
from _large_sessions import run_large_sessions

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
        "prompt_without_tree_tokens_per_call": round((prompt - tree) / calls, 1) if calls else 0.0,
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
                        help="where the sessions write their traces")  # fmt: skip
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON, help="JSON output path")
    parser.add_argument("--sets", default="demo,large", help="session sets to run: demo, large or both")
    parser.add_argument(
        "--traces", type=Path, help="read an existing output directory (demo/, large/) instead of running"
    )
    args = parser.parse_args(argv)
    console = Console()
    sets = [s.strip() for s in args.sets.split(",") if s.strip()]
    unknown = sorted(set(sets) - {"demo", "large"})
    if unknown:
        parser.error(f"unknown session set(s): {', '.join(unknown)}")
    directory = args.traces or args.out_dir
    runs: dict[str, Any] = {}
    if args.traces is None:
        with ScriptedLLM(default=FINE) as llm:
            if "demo" in sets:
                result = asyncio.run(
                    run_demo_async(directory / "demo", scenarios=SCENARIOS, llm=llm.config(timeout=30))
                )
                runs["demo_ok"] = result.ok
            if "large" in sets:
                config = llm.config(timeout=30)
                runs["large_steps"] = asyncio.run(run_large_sessions(directory / "large", config))
    results: dict[str, Any] = {}
    for name in sets:
        for group, records in read_traces(directory / name).items():
            results[f"{name}-{group}"] = summarise(records)
    table = Table(title="semantic tier cost (ScriptedLLM answering at once)")
    for column in ("sessions", "steps", "calls/step", "prompt tok/call", "whole-tree prompt", "ratio",
                   "max", "tree / whole tree", "added ms p50 (excl. model)", "p95"):  # fmt: skip
        table.add_column(column, justify="right")
    for name, r in results.items():
        ratio, worst = r["prompt_ratio"], r["prompt_ratio_per_call_max"]
        table.add_row(
            name, str(r["steps"]), f"{r['calls_per_step']:.3f}", f"{r['prompt_tokens_per_call']:.0f}",
            f"{r['whole_tree_prompt_tokens_per_call']:.0f}",
            f"{ratio:.0%}" if ratio is not None else "-", f"{worst:.0%}" if worst is not None else "-",
            f"{r['tree_tokens_per_call']:.0f} / {r['whole_tree_tokens_per_call']:.0f}",
            f"{r['added_ms_excluding_model_p50']:.1f}", f"{r['added_ms_excluding_model_p95']:.1f}",
        )  # fmt: skip
    console.print(table)
    schema = json.dumps(json_schema_of(Assessment), separators=(",", ":"))
    document = {
        "benchmark": "llm_cost",
        "pagewarden": __version__,
        "python": sys.version.split()[0],
        "machine": platform.machine(),
        "load_average_1m": round(os.getloadavg()[0], 2),
        "schema_tokens": (len(schema) + 3) // 4,
        **runs,
        "results": results,
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    console.print(f"wrote {args.json}", highlight=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
