"""Many writer processes on one store lose nothing; guards filing references and editing
policies at once lose, duplicate and tear nothing; a writer killed mid-transaction leaves the
store consistent. Real processes, on a real SQLite file and a real PostgreSQL database."""

from __future__ import annotations

import multiprocessing
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from pagewarden.policies import Policy
from pagewarden.policies.references import ReferenceQueue
from pagewarden.policies.store import PolicyStore
from tests.policies.store.workers import guard_like_worker, policy, writer

ROOT = Path(__file__).resolve().parents[3]


def test_concurrent_writer_processes_lose_nothing(store_target: str) -> None:
    db = store_target
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
    if not db.startswith("postgresql://"):
        with sqlite3.connect(db) as raw:
            assert raw.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
            assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_guards_filing_references_and_editing_at_once(store_target: str) -> None:
    """Algorithm 1's FIFO queue updated by several guard processes while their policies are
    edited: every reference is filed exactly once, every version is a whole policy that
    follows from the one before, and versions and change ids strictly increase."""
    with PolicyStore(store_target) as store:
        store.put([policy("shared"), policy("edited", "Edited by:")], cause="import")
    workers, references, edits = 4, 15, 10
    start_at = time.time() + 1.5
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(workers) as pool:
        results = pool.starmap(
            guard_like_worker, [(store_target, f"g{n}", references, edits, start_at) for n in range(workers)]
        )
    for result in results:  # all filed, none dropped or refused as similar
        assert result["counts"] == {"filed": references, "duplicates": 0, "errors": 0, "dropped": 0}
    queue = ReferenceQueue()
    with PolicyStore(store_target) as store:
        history = store.history("shared")
        assert [v.version for v in history] == list(range(1, 2 + workers * references))
        assert [v.change.cause for v in history[1:]] == ["reference"] * (workers * references)
        added: list[str] = []
        previous: Policy = history[0].policy
        for version in history[1:]:  # each version: the one before plus one reference, bounded
            current = version.policy
            assert current is not None
            unreferenced = {"references": []}
            assert current.model_copy(update=unreferenced) == previous.model_copy(update=unreferenced)
            texts = [r.text for r in current.references]
            new = texts[-1]
            expected = [*(r.text for r in previous.references), new][-queue.size_for(current) :]
            assert texts == expected
            added.append(new)
            previous = current
        filed_goals = sorted(g for r in results for g in r["goals"])
        assert sorted(t.split(" | ")[0].removeprefix("Task: ") for t in added) == filed_goals
        # every reference once: none lost, none twice
        assert len(store.get("shared").references) == queue.size_for(store.get("shared")) == 10
        edited = store.get("edited").description
        tokens = [t for r in results for t in r["tokens"]]
        assert all(edited.count(t) == 1 for t in tokens)  # no lost or doubled edit
        assert len(edited) == len("Edited by:") + sum(map(len, tokens))
        assert [v.version for v in store.history("edited")] == list(range(1, 2 + workers * edits))
        changes = store.changes()
        assert [c.id for c in changes] == list(range(1, len(changes) + 1))
        assert len(changes) == 1 + workers * (references + edits)
        assert [c.at for c in changes] == sorted(c.at for c in changes)  # committed in id order


def test_writer_killed_mid_transaction_leaves_the_store_consistent(tmp_path: Path, store_target: str) -> None:
    db = store_target
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
        after = store.put([policy("after")]).id  # the lock was released
        # SQLite reuses the rolled-back change's id; PostgreSQL's sequence leaves a gap
        assert after == revision + 1 if not db.startswith("postgresql://") else after > revision
        assert [v.version for v in store.history("shared")] == [1]
    if not db.startswith("postgresql://"):
        with sqlite3.connect(db) as raw:
            assert raw.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
