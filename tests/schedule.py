"""The order files go to xdist workers: the longest first.

``--dist loadfile`` hands a worker a whole file at a time, in the order the files were
collected (xdist's own reordering, on by default, sorts them by their number of tests, which
says little about time: a file of four whole-process tests outlasts one of two hundred rule
checks). A long file handed out last is a tail: one worker runs it alone while the others have
finished. So on a worker the collected files are put in the order of their measured seconds,
longest first (``tests/file_durations.json``: each file's wall-clock seconds in a profiled whole
run; a file not in it counts its tests at the table's median per test), and xdist's reordering
is turned off. Every worker sorts the same collection the same way, as xdist requires.
A serial run keeps the collection order.

Remake the table from a profile of a whole run (``--suite-profile``):
``.venv/bin/python -m tests.schedule benchmarks/results/suite_profile.json``.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
from pathlib import Path

import pytest

TABLE = Path(__file__).with_name("file_durations.json")


def _table() -> dict[str, dict[str, float]]:
    try:
        return json.loads(TABLE.read_text())["files"]
    except (OSError, ValueError, KeyError):
        return {}


def longest_first(items: list[pytest.Item], table: dict[str, dict[str, float]]) -> list[pytest.Item]:
    """`items` grouped by file (each file's tests in their own order), files by their measured
    seconds, longest first; ties and unmeasured files keep the collection order."""
    per_test = statistics.median([row["seconds"] / max(row["tests"], 1) for row in table.values()] or [1.0])
    files: dict[str, list[pytest.Item]] = {}
    for item in items:
        files.setdefault(item.nodeid.split("::", 1)[0], []).append(item)

    def seconds(name: str) -> float:
        row = table.get(name)
        return row["seconds"] if row else per_test * len(files[name])

    order = sorted(files, key=lambda name: -seconds(name))  # stable: ties keep collection order
    return [item for name in order for item in files[name]]


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    if getattr(config.option, "dist", "no") in ("loadfile", "loadscope"):
        config.option.loadscopereorder = False  # the order below is the schedule


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if os.environ.get("PYTEST_XDIST_WORKER") and not config.getoption("reverse_order", False):
        items[:] = longest_first(items, _table())


def main(profile: Path) -> None:
    """Write `TABLE` from a `--suite-profile` JSON: each file's wall-clock seconds (the sum of its
    tests' and their fixtures') and its number of tests. With Chromium's headless shell the suite
    is bound by waiting (a page's timers, settles, round trips: about 600 CPU-s of tests in
    520 s of wall on 4 workers and 2 cores), no longer by the CPU, so a file's wall clock is what
    a worker spends on it; profile on a quiet machine."""
    rows: dict[str, dict[str, float]] = {}
    for nodeid, test in json.loads(profile.read_text())["tests"].items():
        row = rows.setdefault(nodeid.split("::", 1)[0], {"seconds": 0.0, "tests": 0})
        row["seconds"] = round(row["seconds"] + test["end"] - test["start"], 2)
        row["tests"] += 1
    rows = dict(sorted(rows.items(), key=lambda kv: -kv[1]["seconds"]))
    TABLE.write_text(json.dumps({"source": str(profile), "seconds": "wall", "files": rows}, indent=1) + "\n")
    print(f"{TABLE}: {len(rows)} files, {sum(r['seconds'] for r in rows.values()):.0f} s")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
