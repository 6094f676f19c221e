"""What filing violation references costs the guard's hot path: `Guard.check` with and without
`references=` a store, on steps that are blocked (each one files a reference) and allowed.

Filing happens on the reference filer's worker thread; the step only pays for building the
event and queueing it. Both guards judge the same steps in one run, interleaved; the table
shows per-check time (median, p90) and the ratio; the filer's counts show the work was done.

    .venv/bin/python benchmarks/references.py [--steps 400] [--json benchmarks/results/references.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from pagewarden import Action, Guard, Observation, Policy, __version__  # noqa: E402
from pagewarden.policies.store import PolicyStore  # noqa: E402

DEFAULT_JSON = ROOT / "benchmarks" / "results" / "references.json"
POLICIES = [
    Policy(id=f"ORG-{i}", category="boundary", risk_level=("low", "medium", "high")[i % 3],
           description=f"Do not visit /area{i}.", rules=[{"url_deny": f"/area{i}"}])
    for i in range(30)
]  # fmt: skip


def _timed(guard: Guard, url: str) -> float:
    step = guard.make_step(Action(kind="goto", method="Page.goto", value=url), Observation(url="https://app.test/"))
    started = time.perf_counter()
    guard.check(step)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=400)
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        store = PolicyStore(Path(tmp) / "p.db")
        store.put(POLICIES, cause="import")
        plain = Guard(policies=store, goal="Read the docs.")
        filing = Guard(policies=store, references=store, goal="Read the docs.")
        times: dict[str, list[float]] = {"blocked, no filing": [], "blocked, filing": [],
                                         "allowed, no filing": [], "allowed, filing": []}  # fmt: skip
        for i in range(args.steps):
            blocked = f"https://app.test/area{i % 30}/item-{i}-{'x' * (i % 17)}"
            allowed = f"https://app.test/docs/{i}"
            times["blocked, no filing"].append(_timed(plain, blocked))
            times["blocked, filing"].append(_timed(filing, blocked))
            times["allowed, no filing"].append(_timed(plain, allowed))
            times["allowed, filing"].append(_timed(filing, allowed))
        flushed = filing.references.flush(120)
        filer = filing.references
        counts = {"filed": filer.filed, "duplicates": filer.duplicates, "dropped": filer.dropped,
                  "errors": filer.errors, "flushed": flushed}  # fmt: skip
        versions = sum(len(store.history(p.id)) - 1 for p in POLICIES)
        filing.close()
        plain.close()
        store.close()

    def stats(values: list[float]) -> dict[str, float]:
        ordered = sorted(values)
        return {"median_ms": round(statistics.median(ordered) * 1000, 4),
                "p90_ms": round(ordered[int(len(ordered) * 0.9)] * 1000, 4),
                "mean_ms": round(statistics.fmean(ordered) * 1000, 4)}  # fmt: skip

    results = {name: stats(values) for name, values in times.items()}
    ratios = {
        kind: round(results[f"{kind}, filing"]["median_ms"] / results[f"{kind}, no filing"]["median_ms"], 3)
        for kind in ("blocked", "allowed")
    }
    table = Table(title=f"Guard.check with and without reference filing ({args.steps} steps each)")
    for column in ("steps", "median ms", "p90 ms", "mean ms"):
        table.add_column(column, justify="right")
    for name, row in results.items():
        table.add_row(name, str(row["median_ms"]), str(row["p90_ms"]), str(row["mean_ms"]))
    console = Console(width=120)
    console.print(table)
    console.print(f"ratio (median, filing / none): blocked {ratios['blocked']}, allowed {ratios['allowed']}; "
                  f"filer: {counts}; reference versions in the store: {versions}")  # fmt: skip
    out = {"benchmark": "references", "pagewarden": __version__, "python": platform.python_version(),
           "cpus": os.cpu_count(), "load_average": os.getloadavg()[0], "steps": args.steps,
           "results": results, "ratio_median": ratios, "filer": counts,
           "reference_versions": versions}  # fmt: skip
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(out, indent=2) + "\n")
    print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
