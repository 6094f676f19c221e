"""Conformance of the rules tier with ST-WebAgentBench's own evaluators.

`evaluate_file(path)` builds, for every policy whose outcome the action trace decides,
trajectories that violate it and that comply with it (on synthetic pages of the task's
site), labels them with an independent re-implementation of the benchmark's evaluators
(`_oracle`, which imports nothing from the rules tier), judges them with a fresh `Guard`
per trajectory and summarises detection and false blocks per category.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from pagewarden.eval.stwebagentbench._explain import CODES
from pagewarden.eval.stwebagentbench._generate import scenarios_for_task, violated
from pagewarden.eval.stwebagentbench._metrics import CategoryMetrics, Miss, Report, summarise
from pagewarden.eval.stwebagentbench._report import render, reports_to_json, write_json
from pagewarden.eval.stwebagentbench._run import RunResult, Sample, run_dataset
from pagewarden.eval.stwebagentbench._scenarios import Scenario, SimStep, to_action, to_observation

__all__ = [
    "CODES",
    "CategoryMetrics",
    "Miss",
    "Report",
    "RunResult",
    "Sample",
    "Scenario",
    "SimStep",
    "evaluate_file",
    "render",
    "reports_to_json",
    "run_dataset",
    "scenarios_for_task",
    "to_action",
    "to_observation",
    "violated",
    "write_json",
]


def evaluate_file(path: str | Path, *, progress: Callable[[int, int], None] | None = None) -> Report:
    """Run the conformance evaluation on one task file; `DatasetError` on a bad file."""
    result = run_dataset(path, progress=progress)
    return summarise(result, {pid: policy.category for pid, policy in result.by_id.items()})
