"""``--cpu-durations=N``: the N tests that used the most CPU, counted over the whole process tree
of the test process (its Chromium, Playwright driver, proxies and subprocesses included).

Wall-clock durations (``--durations``) swing with the machine's load; CPU seconds barely do,
so they compare runs made on a busy shared machine. Linux only (reads ``/proc``). Under xdist
each worker counts its own tree and the controller prints the table for all of them.
"""

from __future__ import annotations

import os
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


class CpuDurations:
    """Counts each test's CPU (setup, call and teardown) and prints the table at the end."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.seconds: dict[str, float] = {}

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item):  # type: ignore[no-untyped-def]
        before = tree_cpu_seconds(os.getpid())
        yield
        self.seconds[item.nodeid] = tree_cpu_seconds(os.getpid()) - before

    def pytest_sessionfinish(self) -> None:
        output = getattr(self.config, "workeroutput", None)
        if output is not None:
            output[_KEY] = self.seconds

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: object, error: object) -> None:
        self.seconds.update(getattr(node, "workeroutput", {}).get(_KEY, {}))

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        count = self.config.getoption("cpu_durations")
        rows = sorted(self.seconds.items(), key=lambda kv: kv[1], reverse=True)
        total = sum(self.seconds.values())
        terminalreporter.write_sep("=", f"CPU seconds per test (process tree): {total:.0f} s in all")
        for nodeid, seconds in rows[: count or None]:
            terminalreporter.write_line(f"{seconds:8.2f}s {nodeid}")


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("cpu_durations", None) is not None and Path("/proc/self/stat").exists():
        config.pluginmanager.register(CpuDurations(config), "pagewarden-cpu-durations")
