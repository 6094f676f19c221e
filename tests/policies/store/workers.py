"""Writer processes for the store's concurrency tests and benchmark (importable for spawn)."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from pagewarden.policies import Policy, Reference
from pagewarden.policies.store import PolicyStore


def policy(policy_id: str, text: str = "Do not visit /admin.", **extra) -> Policy:
    """A small valid policy."""
    return Policy(id=policy_id, category="boundary", risk_level="high", description=text, **extra)


def writer(db: str, name: str, count: int, shared: str | None, start_at: float = 0.0) -> list[float]:
    """Write `count` changes: a new policy of its own, then (when `shared`) one reference
    appended to the shared policy by read-modify-write. Returns the latency of each write (s)."""
    store = PolicyStore(db, actor=name)
    while time.time() < start_at:
        time.sleep(0.001)
    latencies = []
    for index in range(count):
        started = time.perf_counter()
        store.put([policy(f"{name}-{index}", f"Policy {index} written by {name}.")], detail=name)
        if shared:
            store.update(
                shared,
                lambda p, i=index: p.model_copy(
                    update={"references": [*p.references, Reference(text=f"{name} #{i}")]}
                ),
                cause="reference",
                detail=name,
            )
        latencies.append(time.perf_counter() - started)
    store.close()
    return latencies


def killed_mid_transaction(db: str, marker: str) -> None:
    """Open a write transaction, write part of a change, tell the parent, and wait to be killed."""
    store = PolicyStore(db, actor="doomed")
    with store.backend.transaction(write=True) as tx:
        change = store._new_change(tx, "edit", "never committed")
        store._store_version(tx, change, "doomed-1", '{"id": "doomed-1"}')
        store._store_version(tx, change, "shared", None)  # half of a change: a deletion
        Path(marker).write_text(str(os.getpid()))
        time.sleep(600)


if __name__ == "__main__":  # python -m tests.policies.store.workers DB MARKER
    killed_mid_transaction(sys.argv[1], sys.argv[2])


def _record(goal: str, policy_id: str) -> dict:
    return {"step": {"goal": goal, "action": {"kind": "goto", "value": "https://app.test/admin"},
                     "observation": {"url": "https://app.test/"}},
            "verdict": {"decision": "block", "violated_policy_ids": [policy_id]}}  # fmt: skip


def guard_like_worker(target: str, name: str, references: int, edits: int, start_at: float) -> dict:
    """What one guard process does to a shared store: its reference filer files `references`
    confirmed violations of policy ``shared`` (Algorithm 1's queue, on the filer's thread) while
    its own thread edits policy ``edited`` `edits` times (a read-modify-write appending a token
    to the description). Returns the goals filed and the tokens written."""
    import hashlib

    from pagewarden.policies.references import ReferenceFiler
    from pagewarden.steps import GuardEvent

    store = PolicyStore(target, actor=name)
    filer = ReferenceFiler(store)
    while time.time() < start_at:
        time.sleep(0.001)
    goals = [hashlib.sha256(f"{name}/{i}".encode()).hexdigest() * 3 for i in range(references)]
    for goal in goals:
        filer(GuardEvent("step", name, _record(goal, "shared")))
    tokens = []
    for index in range(edits):
        token = f"[{name}:{index}]"
        store.update("edited", lambda p, t=token: p.model_copy(update={"description": p.description + t}),
                     detail=name)  # fmt: skip
        tokens.append(token)
    assert filer.flush(120)
    counts = {"filed": filer.filed, "duplicates": filer.duplicates, "errors": filer.errors,
              "dropped": filer.dropped}  # fmt: skip
    filer.close()
    store.close()
    return {"goals": goals, "tokens": tokens, "counts": counts}
