"""``--cpu-durations=N``: the N tests that used the most CPU, counted over the whole process tree
of the test process (its Chromium, Playwright driver, proxies and subprocesses included).

Wall-clock durations (``--durations``) swing with the machine's load; CPU seconds barely do,
so they compare runs made on a busy shared machine. Linux only (reads ``/proc``). Under xdist
each worker counts its own tree and the controller prints the table for all of them.

``--suite-profile=PATH`` writes every test's CPU seconds, wall-clock start and end (seconds
since the run began) and worker to a JSON file, with per-file and per-worker sums: where the
time goes and whether the run ends in a tail (one worker finishing a long file alone).
"""

from __future__ import annotations

import json
import os
import time
from collections import defaultdict
from pathlib import Path

import pytest

_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
_KEY = "pagewarden_cpu_durations"


def tree_cpu_seconds(root: int) -> float:
    """User + system CPU seconds of `root` and every live descendant, including what their
    exited children used (the kernel adds a reaped child's time to its parent)."""
    children: dict[int, list[tuple[int, int]]] = defaultdict(list)
    own = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        ticks = sum(int(x) for x in fields[11:15])  # utime stime cutime cstime
        pid = int(entry.name)
        if pid == root:
            own = ticks
        else:
            children[int(fields[1])].append((pid, ticks))
    total, stack, seen = own, [root], {root}
    while stack:
        for pid, ticks in children.get(stack.pop(), ()):
            if pid not in seen:
                seen.add(pid)
                total += ticks
                stack.append(pid)
    return total / _TICK


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.getgroup("terminal reporting").addoption(
        "--cpu-durations", type=int, default=None, metavar="N",
        help="show the N tests that used the most CPU (process tree; 0 for all)",
    )  # fmt: skip
    parser.getgroup("terminal reporting").addoption(
        "--suite-profile", default=None, metavar="PATH",
        help="write each test's CPU seconds, wall-clock start/end and worker to a JSON file",
    )  # fmt: skip


class CpuDurations:
    """Counts each test's CPU (setup, call and teardown) and prints the table at the end."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.seconds: dict[str, float] = {}
        #: nodeid -> (worker, wall-clock start, end: time.time())
        self.spans: dict[str, tuple[str, float, float]] = {}
        self.started = time.time()
        self.worker = os.environ.get("PYTEST_XDIST_WORKER", "main")

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item):  # type: ignore[no-untyped-def]
        before, start = tree_cpu_seconds(os.getpid()), time.time()
        yield
        self.seconds[item.nodeid] = tree_cpu_seconds(os.getpid()) - before
        self.spans[item.nodeid] = (self.worker, start, time.time())

    def pytest_sessionfinish(self) -> None:
        output = getattr(self.config, "workeroutput", None)
        if output is not None:
            output[_KEY] = self.seconds
            output[_KEY + "_spans"] = self.spans
        path = self.config.getoption("suite_profile")
        if output is None and path:
            self.write_profile(Path(path))

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: object, error: object) -> None:
        output = getattr(node, "workeroutput", {})
        self.seconds.update(output.get(_KEY, {}))
        self.spans.update(output.get(_KEY + "_spans", {}))

    def write_profile(self, path: Path) -> None:
        """Per test, per file (in the order the files started) and per worker."""
        tests = {
            nodeid: {"worker": worker, "start": round(start - self.started, 2),
                     "end": round(end - self.started, 2), "cpu": round(self.seconds.get(nodeid, 0.0), 2)}
            for nodeid, (worker, start, end) in self.spans.items()
        }  # fmt: skip
        files: dict[str, dict[str, object]] = {}
        for nodeid, row in tests.items():
            name = nodeid.split("::", 1)[0]
            entry = files.setdefault(name, {"worker": row["worker"], "start": row["start"], "end": row["end"],
                                            "cpu": 0.0, "tests": 0})  # fmt: skip
            entry["start"] = min(entry["start"], row["start"])  # type: ignore[type-var]
            entry["end"] = max(entry["end"], row["end"])  # type: ignore[type-var]
            entry["cpu"] = round(entry["cpu"] + row["cpu"], 2)  # type: ignore[operator]
            entry["tests"] += 1  # type: ignore[operator]
        workers: dict[str, dict[str, float]] = {}
        for row in tests.values():
            entry = workers.setdefault(row["worker"], {"busy": 0.0, "cpu": 0.0, "end": 0.0})
            entry["busy"] = round(entry["busy"] + row["end"] - row["start"], 2)
            entry["cpu"] = round(entry["cpu"] + row["cpu"], 2)
            entry["end"] = max(entry["end"], row["end"])
        profile = {
            "wall": round(time.time() - self.started, 1),
            "cpu": round(sum(self.seconds.values()), 1),
            "load_average_at_end": os.getloadavg(),
            "workers": workers,
            "files": dict(sorted(files.items(), key=lambda kv: kv[1]["start"])),  # type: ignore[arg-type,return-value]
            "tests": tests,
        }
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(profile, indent=1) + "\n")

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        count = self.config.getoption("cpu_durations")
        if count is None:
            return
        rows = sorted(self.seconds.items(), key=lambda kv: kv[1], reverse=True)
        total = sum(self.seconds.values())
        terminalreporter.write_sep("=", f"CPU seconds per test (process tree): {total:.0f} s in all")
        for nodeid, seconds in rows[: count or None]:
            terminalreporter.write_line(f"{seconds:8.2f}s {nodeid}")


def pytest_configure(config: pytest.Config) -> None:
    wanted = config.getoption("cpu_durations", None) is not None or config.getoption("suite_profile", None)
    if wanted and Path("/proc/self/stat").exists():
        config.pluginmanager.register(CpuDurations(config), "pagewarden-cpu-durations")
