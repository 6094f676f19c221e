"""The policy store under concurrent writer processes: writes per second, write latency
(including busy waits for the lock), read latency while writers run, lost writes.

For 1, 4 and 8 writer processes (real processes, one SQLite file), each writes `--writes`
changes as fast as it can — alternately a new policy (`put`) and a reference appended to one
shared policy (`update`, a read-modify-write) — all starting together. Then the store is
checked: every policy and every reference there (lost writes = expected - found).

Locking variants, side by side in one run:

* ``immediate+poll`` (the store's default): ``BEGIN IMMEDIATE``, waiting for the lock by
  polling every 0.5-2 ms;
* ``immediate+busy-handler``: ``BEGIN IMMEDIATE`` waiting in SQLite's busy handler, whose
  back-off sleeps grow to 100 ms — the lock sits idle while writers sleep, so throughput falls
  and waits grow as writers are added;
* ``deferred``: ``BEGIN`` (SQLite's default, what Python's sqlite3 does implicitly): the
  transaction reads first and upgrades to a write lock later; when two do that at once one gets
  SQLITE_BUSY at once (no busy handler for a would-be deadlock) and its write fails.

    .venv/bin/python benchmarks/store.py [--writes 100] [--json benchmarks/results/store.json]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import platform
import sqlite3
import statistics
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from pagewarden import __version__  # noqa: E402
from pagewarden.policies import Policy, Reference  # noqa: E402
from pagewarden.policies.store import PolicyStore, SQLiteBackend, StoreError  # noqa: E402
from pagewarden.policies.store._backend import _SQLiteTransaction  # noqa: E402

DEFAULT_JSON = ROOT / "benchmarks" / "results" / "store.json"


class DeferredBackend(SQLiteBackend):
    """The locking bug, for comparison: write transactions begin DEFERRED."""

    @contextmanager
    def transaction(self, *, write: bool):
        connection = self._connection()
        connection.execute("BEGIN")  # deferred: the write lock is taken at the first write
        try:
            yield _SQLiteTransaction(connection)
        except BaseException:
            connection.execute("ROLLBACK")
            raise
        connection.execute("COMMIT")


def _policy(policy_id: str, text: str) -> Policy:
    return Policy(id=policy_id, category="boundary", risk_level="high", description=text)


def _writer(db: str, name: str, count: int, barrier, mode: str, out) -> None:
    if mode == "deferred":
        backend: SQLiteBackend = DeferredBackend(db, busy_timeout=30.0, lock_poll=False)
    else:
        backend = SQLiteBackend(db, busy_timeout=30.0, lock_poll=mode == "immediate+poll")
    store = PolicyStore(backend, actor=name)
    store.get("shared")  # connection open before the clock starts
    barrier.wait()
    began = time.time()
    latencies, failures, done = [], 0, {"put": 0, "ref": 0}
    for index in range(count):
        started = time.perf_counter()
        try:
            if index % 2 == 0:
                store.put([_policy(f"{name}-{index}", f"Policy {index} of {name}.")], detail=name)
                done["put"] += 1
            else:
                store.update("shared", lambda p, i=index: _with_reference(p, f"{name} #{i}"),
                             cause="reference", detail=name)  # fmt: skip
                done["ref"] += 1
        except (StoreError, sqlite3.OperationalError):
            failures += 1
        latencies.append(time.perf_counter() - started)
    finished = time.time()
    store.close()
    out.put({"latencies": latencies, "failures": failures, "done": done, "began": began,
             "finished": finished})  # fmt: skip


def _with_reference(policy: Policy, text: str) -> Policy:
    return policy.model_copy(update={"references": [*policy.references[-20:], Reference(text=text)]})


def _reader(db: str, barrier, stop, out) -> None:
    store = PolicyStore(db)
    latencies = []
    barrier.wait()
    while not stop.is_set():
        started = time.perf_counter()
        store.policies()
        latencies.append(time.perf_counter() - started)
        time.sleep(0.005)
    store.close()
    out.put(latencies)


MODES = ("immediate+poll", "immediate+busy-handler", "deferred")


def run_case(writers: int, writes: int, mode: str = "immediate+poll") -> dict[str, Any]:
    """One configuration: `writers` processes × `writes` writes, one reader process."""
    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "store.db")
        seed = [_policy("shared", "Shared policy.")]
        seed += [_policy(f"seed-{i}", f"Seed {i}.") for i in range(100)]
        with PolicyStore(db) as store:
            store.put(seed)
        ctx = multiprocessing.get_context("spawn")
        results_queue, reads_queue, stop = ctx.Queue(), ctx.Queue(), ctx.Event()
        barrier = ctx.Barrier(writers + 1)  # all writers and the reader start together
        procs = [ctx.Process(target=_writer, args=(db, f"w{n}", writes, barrier, mode, results_queue))
                 for n in range(writers)]  # fmt: skip
        reader = ctx.Process(target=_reader, args=(db, barrier, stop, reads_queue))
        for proc in [*procs, reader]:
            proc.start()
        results = [results_queue.get() for _ in procs]
        stop.set()
        read_latencies = sorted(reads_queue.get())
        for proc in [*procs, reader]:
            proc.join()
        with PolicyStore(db) as store:
            current = store.policies()
            shared_versions = len(store.history("shared"))
    wall = max(r["finished"] for r in results) - min(r["began"] for r in results)
    latencies = sorted(x for r in results for x in r["latencies"])
    puts = sum(r["done"]["put"] for r in results)
    refs = sum(r["done"]["ref"] for r in results)
    found_puts = sum(1 for p in current.ids if p.startswith("w"))
    found_refs = shared_versions - 1
    return {
        "writers": writers,
        "locking": mode,
        "attempted_writes": writers * writes,
        "committed_writes": puts + refs,
        "failed_writes": sum(r["failures"] for r in results),
        "lost_writes": (puts - found_puts) + (refs - found_refs),
        "writes_per_s": round((puts + refs) / wall, 1) if wall > 0 else None,
        "write_ms_p50": round(statistics.median(latencies) * 1000, 2),
        "write_ms_p99": round(latencies[max(0, int(len(latencies) * 0.99) - 1)] * 1000, 2),
        "write_ms_max": round(latencies[-1] * 1000, 2),
        "reads": len(read_latencies),
        "read_ms_p50": round(statistics.median(read_latencies) * 1000, 2) if read_latencies else None,
        "read_ms_p99": round(read_latencies[max(0, int(len(read_latencies) * 0.99) - 1)] * 1000, 2)
        if read_latencies else None,
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--writes", type=int, default=100, help="writes per writer process")
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON)
    args = parser.parse_args()
    cases = [run_case(n, args.writes) for n in (1, 4, 8)]
    cases += [run_case(n, args.writes, "immediate+busy-handler") for n in (4, 8)]
    cases += [run_case(4, args.writes, "deferred")]
    table = Table(title=f"policy store, {args.writes} writes per process (SQLite {sqlite3.sqlite_version})")
    columns = ("writers", "locking", "writes/s", "p50 ms", "p99 ms", "max ms", "failed", "lost",
               "read p50 ms", "read p99 ms")  # fmt: skip
    keys = ("writers", "locking", "writes_per_s", "write_ms_p50", "write_ms_p99", "write_ms_max",
            "failed_writes", "lost_writes", "read_ms_p50", "read_ms_p99")  # fmt: skip
    for column in columns:
        table.add_column(column, justify="right")
    for c in cases:
        table.add_row(*(str(c[k]) for k in keys))
    Console(width=160).print(table)
    result = {
        "benchmark": "store",
        "pagewarden": __version__,
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
        "cpus": os.cpu_count(),
        "load_average": os.getloadavg()[0],
        "writes_per_process": args.writes,
        "cases": cases,
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
