"""Cost of the BrowserGym integration: a guarded BrowserGym environment against the same
environment unguarded, side by side in one run.

Two `BrowserEnv`s of the same local task (an order desk on 127.0.0.1, `tests/integrations/_gym.py`)
run at once: ``raw`` (BrowserGym as shipped, launched with the same Chromium and flags) and
``guarded`` (`GuardedBrowserEnv`, the embedded default with the task's policies; with
``--proxy`` also the network layer). Each iteration runs the same benign actions in both
(order alternating): ``fill`` the note field, ``click`` a button that stays on the page. Two
times per action: the action itself (BrowserGym's ``action_exec_start``→``action_exec_stop``,
where the guard works) and the whole ``env.step`` (with BrowserGym's fixed 0.5 s wait and the
observation). Reported: medians, the guard's added milliseconds per action (guarded − raw) and
the ratio.

    .venv/bin/python benchmarks/gym_overhead.py [--iterations 20] [--proxy] [--out FILE.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from browsergym.core.action.highlevel import HighLevelActionSet
from browsergym.core.env import BrowserEnv
from rich.console import Console
from rich.table import Table

from pagewarden import PolicySet, __version__
from pagewarden._browser import chromium_launch_options
from pagewarden.integrations.browsergym import GuardedBrowserEnv
from pagewarden.integrations.browsergym._env import _launching

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.integrations._gym import POLICIES, DeskTask, bid, desk_site

DEFAULT_OUT = Path(__file__).parent / "results" / "gym_overhead.json"


def _timed(env: Any, action: str) -> tuple[float, float, str]:
    start = time.perf_counter()
    obs, _, _, _, info = env.step(action)
    total = (time.perf_counter() - start) * 1000
    return (info["action_exec_stop"] - info["action_exec_start"]) * 1000, total, obs["last_action_error"]


def run(iterations: int, proxy: bool) -> dict[str, Any]:
    with desk_site() as site:
        url = site.url("shop.test", "/")
        host_map = {"*.test": site.port}
        mapping = HighLevelActionSet(retry_with_force=True).to_python_code  # the same in both
        raw = BrowserEnv(task_entrypoint=DeskTask, task_kwargs={"url": url}, action_mapping=mapping)
        guarded = GuardedBrowserEnv(
            BrowserEnv(task_entrypoint=DeskTask, task_kwargs={"url": url}, action_mapping=mapping),
            policies=PolicySet.from_dict(POLICIES), host_map=host_map, proxy=proxy,
        )
        try:
            with _launching(chromium_launch_options(host_map=host_map)):
                raw.reset()
            guarded.reset()
            envs = {"raw": raw, "guarded": guarded}
            actions = {
                "fill": lambda env, i: f"fill('{bid(env, '#note')}', 'note {i}')",
                "click": lambda env, i: f"click('{bid(env, '#more')}')",
            }
            samples: dict[str, dict[str, dict[str, list[float]]]] = {
                a: {name: {"action": [], "step": []} for name in envs} for a in actions
            }
            errors: dict[str, list[str]] = {name: [] for name in envs}
            for i in range(iterations + 2):
                order = list(envs) if i % 2 == 0 else list(reversed(envs))
                for action, make in actions.items():
                    for name in order:
                        env = envs[name]
                        action_ms, step_ms, error = _timed(env, make(env, i))
                        if error:  # BrowserGym's 500 ms action timeout on a loaded machine
                            errors[name].append(f"{action}: {error.splitlines()[0]}")
                            if error.startswith(("ActionBlocked", "ApprovalRequired", "RevisionRequired")):
                                raise RuntimeError(f"the guard stopped a benign action: {error}")
                            continue
                        if i >= 2:  # warm-up
                            samples[action][name]["action"].append(action_ms)
                            samples[action][name]["step"].append(step_ms)
        finally:
            raw.close()
            guarded.close()
    rows = {}
    for action, per_env in samples.items():
        row: dict[str, Any] = {}
        for phase in ("action", "step"):
            r = statistics.median(per_env["raw"][phase])
            g = statistics.median(per_env["guarded"][phase])
            row[phase] = {"raw_ms": round(r, 1), "guarded_ms": round(g, 1),
                          "added_ms": round(g - r, 1), "ratio": round(g / r, 2)}  # fmt: skip
        rows[action] = row
    return {"rows": rows, "errors": errors}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--proxy", action="store_true", help="the guarded env also uses the network layer")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args()
    load = os.getloadavg()[0]
    measured = run(args.iterations, args.proxy)
    rows = measured["rows"]
    table = Table(title=f"BrowserGym: guarded vs raw, median ms per action ({args.iterations} iterations)")
    for column in ("action", "phase", "raw", "guarded", "added", "ratio"):
        table.add_column(column)
    for action, row in rows.items():
        for phase, r in row.items():
            cells = (r["raw_ms"], r["guarded_ms"], r["added_ms"], r["ratio"])
            table.add_row(action, phase, *map(str, cells))
    Console().print(table)
    git = ["git", "rev-parse", "--short", "HEAD"]
    commit = subprocess.run(git, capture_output=True, text=True).stdout.strip()
    result = {
        "benchmark": "browsergym", "command": " ".join(["benchmarks/gym_overhead.py", *sys.argv[1:]]),
        "pagewarden": __version__, "commit": commit, "python": platform.python_version(),
        "load_average_1m": round(load, 2), "iterations": args.iterations, "proxy": args.proxy, "rows": rows,
        "failed_actions": measured["errors"],
    }  # fmt: skip
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
