"""Many writer processes on one SQLite store lose nothing; a writer killed mid-transaction
leaves it consistent. Real processes, real SQLite files."""

from __future__ import annotations

import multiprocessing
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from pagewarden.policies.store import PolicyStore
from tests.policies.store.workers import policy, writer

ROOT = Path(__file__).resolve().parents[3]


def test_concurrent_writer_processes_lose_nothing(tmp_path: Path) -> None:
    db = str(tmp_path / "shared.db")
    with PolicyStore(db) as store:
        store.put([policy("shared")])
    writers, count = 4, 25
    start_at = time.time() + 1.0  # all start together, after spawning
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(writers) as pool:
        results = pool.starmap(writer, [(db, f"w{n}", count, "shared", start_at) for n in range(writers)])
    assert [len(r) for r in results] == [count] * writers
    with PolicyStore(db) as store:
        current = store.policies()
        assert len(current) == 1 + writers * count
        shared = store.get("shared")
        # every read-modify-write kept the others' references: no lost update
        assert sorted(r.text for r in shared.references) == sorted(
            f"w{n} #{i}" for n in range(writers) for i in range(count)
        )
        assert len(store.history("shared")) == 1 + writers * count
        changes = store.changes()
        assert len(changes) == 1 + 2 * writers * count
        assert [c.id for c in changes] == list(range(1, len(changes) + 1))
        for n in range(writers):  # each writer's own policies, each with one version
            mine = [p for p in current.ids if p.startswith(f"w{n}-")]
            assert len(mine) == count
    with sqlite3.connect(db) as raw:
        assert raw.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_writer_killed_mid_transaction_leaves_the_store_consistent(tmp_path: Path) -> None:
    db = tmp_path / "killed.db"
    marker = tmp_path / "in-transaction"
    with PolicyStore(db) as store:
        store.put([policy("shared"), policy("other")])
        before = store.export()
        revision = store.revision()
    child = subprocess.Popen(
        [sys.executable, "-m", "tests.policies.store.workers", str(db), str(marker)],
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    try:
        deadline = time.time() + 60
        while not marker.exists():
            assert child.poll() is None, "the writer died before its transaction"
            assert time.time() < deadline, "the writer never reached its transaction"
            time.sleep(0.05)
        # while it holds the write lock, readers still read the last committed state (WAL)
        with PolicyStore(db, busy_timeout=0.2) as reader:
            assert reader.export() == before
            try:
                reader.put([policy("blocked")])
                raise AssertionError("a second writer got the lock while the first held it")
            except Exception as exc:  # noqa: BLE001
                assert "locked" in str(exc)
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
    assert child.returncode == -signal.SIGKILL
    with PolicyStore(db, busy_timeout=5) as store:
        assert store.export() == before  # nothing of the half-written change
        assert store.revision() == revision and "doomed-1" not in store
        assert store.put([policy("after")]).id == revision + 1  # the lock was released
        assert [v.version for v in store.history("shared")] == [1]
    with sqlite3.connect(db) as raw:
        assert raw.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
