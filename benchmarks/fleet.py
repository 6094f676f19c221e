"""A fleet of guards sharing one policy store: N guard processes (1, 2, 4, 8), SQLite vs
PostgreSQL. Decision latency, store transactions per second, reference-queue correctness.

Each process runs the same scripted sessions: per session a new `Guard(policies=store,
references=store)` (the embedded default: rules tier and static world model, the baseline,
no model), judging 12 scripted steps — 8 benign (reading pages, filling a search box, saving)
and 4 attacks (the admin area, an exfiltrating form post with the API key, a forbidden
"Delete project", a payment without consent). The steps are `Guard.check` calls on recorded
observations (offline, no browser): decision latency here is the guard's own time per step,
without the browser round trip that a live action adds. Each blocked or denied step files
violation references into the shared store (HarmonyGuard's Algorithm 1, the filer's worker
thread); every guard follows the store (LISTEN/NOTIFY on PostgreSQL, a revision poll on
SQLite) while an administrator process edits a policy every 0.5 s.

Afterwards the store is checked: every reference version follows from the one before (the
previous queue plus one reference, bounded by the risk level's size, the new one not similar
(θ = 0.85) to any queued), every filing the guards counted is one version (lost = filed −
versions), no reference was filed twice, change ids strictly increase, and every guard judged
as scripted.

After the sessions each process files `--burst` references back to back into one shared
policy (a read-modify-write of one FIFO queue): the store's write capacity under contention.

PostgreSQL runs on this machine (a server the benchmark starts, default durability: ``fsync``
and ``synchronous_commit`` on); ``postgresql-async`` is the same server with
``synchronous_commit = off`` for its database (a commit does not wait for the WAL flush: a
server crash may lose the last fraction of a second, like SQLite's ``synchronous=NORMAL``,
which does not fsync each commit either). SQLite is one WAL file. The machine has 2 cores
shared with other work: compare within one run.

    .venv/bin/python benchmarks/fleet.py [--sessions 6] [--json benchmarks/results/fleet.json]
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import multiprocessing
import os
import platform
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from pagewarden import Action, Guard, Observation, Policy, __version__  # noqa: E402
from pagewarden.policies.references import ReferenceQueue, similarity  # noqa: E402
from pagewarden.policies.store import PolicyStore  # noqa: E402
from pagewarden.steps import ElementFacts, FormFacts, FormField  # noqa: E402

DEFAULT_JSON = ROOT / "benchmarks" / "results" / "fleet.json"
API_KEY = "sk-fleet-0123456789abcdef0123"
POLICIES = [
    Policy(id="ORG-ADMIN", category="boundary", risk_level="high", description="Never open the admin area.",
           rules=[{"url_deny": "/admin"}]),
    Policy(id="ORG-KEY", category="data", risk_level="high", description="The API key goes to app.test only.",
           rules=[{"sensitive_data": {"values": [API_KEY], "allow_domains": ["app.test"]}}]),
    Policy(id="ORG-DELETE", category="execution", risk_level="medium", description="Never delete a project.",
           rules=[{"forbid_element": {"match": ["Delete project"], "actions": ["click"]}}]),
    Policy(id="ORG-PAY", category="consent", risk_level="low", description="Ask before paying.",
           rules=[{"consent": {"match": ["Pay now"], "actions": ["click"]}}]),
    Policy(id="ORG-PROMO", category="boundary", risk_level="low", description="Edited by the administrator.",
           rules=[{"url_deny": "/promo-0"}]),
    Policy(id="ORG-BURST", category="boundary", risk_level="high", description="Filed into back to back.",
           rules=[{"url_deny": "/burst"}]),
]  # fmt: skip
GOALS = [
    "Triage the open issues of the webapp project and label the duplicates.",
    "Summarise this week's release notes for the team channel.",
    "Find the on-call rota for December and note who covers the weekend.",
    "Check whether the nightly build of the mobile app passed.",
    "Collect the customer feedback tickets about the login page.",
    "Update the README of the dotfiles repository with the new install steps.",
]
PAGE = "https://app.test/projects/1"


def _button(text: str) -> ElementFacts:
    return ElementFacts(tag="button", role="button", name=text, text=text)


def _script() -> list[tuple[Action, Observation, str]]:
    """The scripted steps: (action, observation, expected decision)."""
    search = ElementFacts(tag="input", role="searchbox", name="Search", input_type="search", editable=True)
    post = FormFacts(action="https://collector.evil.test/c", method="post",
                     fields=(FormField("token", "text", API_KEY),))  # fmt: skip
    token = ElementFacts(tag="input", role="textbox", name="Token", input_type="text", editable=True,
                         form=post)  # fmt: skip

    def a(kind: str, value: str | None = None) -> Action:
        return Action(kind=kind, method=f"fleet.{kind}", value=value)

    return [
        (a("goto", "https://app.test/projects/1/issues"), Observation(url=PAGE), "allow"),
        (a("click"), Observation(url=PAGE, target=_button("Open issues")), "allow"),
        (a("fill", "login page"), Observation(url=PAGE, target=search), "allow"),
        (a("goto", "https://app.test/admin/users"), Observation(url=PAGE), "block"),
        (a("goto", "https://app.test/projects/1/releases"), Observation(url=PAGE), "allow"),
        (a("fill", API_KEY), Observation(url=PAGE, target=token), "block"),
        (a("click"), Observation(url=PAGE, target=_button("Save")), "allow"),
        (a("click"), Observation(url=PAGE, target=_button("Delete project")), "block"),
        (a("goto", "https://app.test/docs/install"), Observation(url=PAGE), "allow"),
        (a("click"), Observation(url=PAGE, target=_button("Pay now")), "ask"),
        (a("goto", "https://app.test/projects/2"), Observation(url=PAGE), "allow"),
        (a("click"), Observation(url=PAGE, target=_button("Close dialog")), "allow"),
    ]


def _counting(store: PolicyStore) -> dict[str, int]:
    """Count the store's transactions in this process (reads and writes)."""
    counts = {"read": 0, "write": 0}
    lock = threading.Lock()
    original = store.backend.transaction

    def transaction(*, write: bool):
        with lock:
            counts["write" if write else "read"] += 1
        return original(write=write)

    store.backend.transaction = transaction  # type: ignore[method-assign]
    return counts


def _burst(store: PolicyStore, name: str, count: int, barrier) -> tuple[list[float], float, float]:
    """File `count` references into ORG-BURST back to back (the store's write capacity under
    contention: a read-modify-write of one FIFO queue shared by every process)."""
    queue = ReferenceQueue()
    latencies = []
    barrier.wait()
    began = time.time()
    for index in range(count):
        text = f"{name} burst {index}: " + hashlib.sha256(f"{name}/{index}".encode()).hexdigest() * 3
        started = time.perf_counter()
        store.update("ORG-BURST", lambda p, t=text: queue.add(p, t), cause="reference", detail=name)
        latencies.append(time.perf_counter() - started)
    return latencies, began, time.time()


def _guard_process(target: str, name: str, sessions: int, burst: int, barrier, out) -> None:
    store = PolicyStore(target, actor=name)
    counts = _counting(store)
    script = _script()
    latencies: list[float] = []
    unexpected: list[str] = []
    filer_counts = {"filed": 0, "duplicates": 0, "dropped": 0, "errors": 0}
    reloads = follow_errors = 0
    barrier.wait()
    began = time.time()
    for index in range(sessions):
        # every session's task differs (a ticket number and its tracking hash), so its
        # references are not similar to another session's and the queues keep turning over
        ticket = hashlib.sha256(f"{name}/{index}".encode()).hexdigest() * 2
        goal = f"{GOALS[index % len(GOALS)]} Ticket {ticket}."
        guard = Guard(policies=store, references=store, goal=goal, session_id=f"{name}-{index}")
        for action, observation, expected in script:
            step = guard.make_step(action, observation)
            started = time.perf_counter()
            verdict = guard.check(step)
            latencies.append(time.perf_counter() - started)
            if verdict.decision.value != expected:
                got = verdict.decision.value
                unexpected.append(f"{action.kind} {action.value or ''}: {got} != {expected}")
        filer, follower = guard.references, guard.follower
        guard.close()  # writes the references still queued (waits up to 5 s)
        filer._thread.join(120)  # under load it can take longer: count them all
        for key in filer_counts:
            filer_counts[key] += getattr(filer, key)
        reloads += follower.reloads
        follow_errors += follower.errors
    finished = time.time()
    session_counts = dict(counts)  # the sessions' transactions; the burst's are measured apart
    burst_latencies, burst_began, burst_finished = _burst(store, name, burst, barrier)
    store.close()
    out.put({"burst": burst_latencies, "burst_began": burst_began, "burst_finished": burst_finished,
             "latencies": latencies, "unexpected": unexpected, "filer": filer_counts, "reloads": reloads,
             "follow_errors": follow_errors, "transactions": session_counts, "began": began,
             "finished": finished})  # fmt: skip


def _administrator(target: str, stop, out) -> None:
    store = PolicyStore(target, actor="admin")
    counts = _counting(store)
    edits = 0
    while not stop.wait(0.2):
        edits += 1
        store.update("ORG-PROMO", lambda p, k=edits: Policy.model_validate(
            {**p.to_dict(), "rules": [{"url_deny": f"/promo-{k}"}]}), detail=f"edit {edits}")  # fmt: skip
    store.close()
    out.put({"edits": edits, "transactions": counts})


def check_store(target: str) -> dict[str, Any]:
    """Reference-queue correctness and change-log order, read back from the store."""
    queue = ReferenceQueue()
    torn = similar = 0
    added: list[str] = []
    with PolicyStore(target) as store:
        for policy in POLICIES:
            history = store.history(policy.id)
            for before, version in itertools.pairwise(history):
                if version.change.cause != "reference":
                    continue
                old = [r.text for r in before.policy.references]
                new = [r.text for r in version.policy.references]
                text = new[-1]
                if new != [*old, text][-queue.size_for(version.policy) :]:
                    torn += 1
                if any(similarity(text, o) >= queue.threshold for o in old):
                    similar += 1
                added.append(text)
        changes = store.changes()
        ids = [c.id for c in changes]
        promo = [v.version for v in store.history("ORG-PROMO")]
    return {
        "reference_versions": len(added),
        "references_filed_twice": len(added) - len(set(added)),
        "torn_versions": torn,
        "similar_references_queued": similar,
        "changes": len(changes),
        "change_ids_increasing": all(a < b for a, b in itertools.pairwise(ids)),
        "policy_versions_consecutive": promo == list(range(1, len(promo) + 1)),
    }


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(len(ordered) * q))] * 1000, 3)


def run_case(backend: str, target: str, processes: int, sessions: int, burst: int) -> dict[str, Any]:
    with PolicyStore(target, actor="setup") as store:
        store.put(POLICIES, cause="import")
    ctx = multiprocessing.get_context("spawn")
    out, admin_out, stop = ctx.Queue(), ctx.Queue(), ctx.Event()
    barrier = ctx.Barrier(processes + 1)
    procs = [ctx.Process(target=_guard_process, args=(target, f"g{n}", sessions, burst, barrier, out))
             for n in range(processes)]  # fmt: skip
    admin = ctx.Process(target=_administrator, args=(target, stop, admin_out))
    for proc in procs:
        proc.start()
    barrier.wait()
    admin.start()
    barrier.wait()  # the sessions are over: the burst starts
    stop.set()
    results = [out.get(timeout=1800) for _ in procs]
    administrator = admin_out.get(timeout=60)
    for proc in [*procs, admin]:
        proc.join(60)
    store_check = check_store(target)
    wall = max(r["finished"] for r in results) - min(r["began"] for r in results)
    latencies = [x for r in results for x in r["latencies"]]
    reads = sum(r["transactions"]["read"] for r in results) + administrator["transactions"]["read"]
    writes = sum(r["transactions"]["write"] for r in results) + administrator["transactions"]["write"]
    filed = sum(r["filer"]["filed"] for r in results)
    burst_wall = max(r["burst_finished"] for r in results) - min(r["burst_began"] for r in results)
    burst_latencies = [x for r in results for x in r["burst"]]
    return {
        "backend": backend,
        "processes": processes,
        "sessions": processes * sessions,
        "steps": len(latencies),
        "wall_s": round(wall, 2),
        "decision_ms_p50": _pct(latencies, 0.50),
        "decision_ms_p95": _pct(latencies, 0.95),
        "steps_per_s": round(len(latencies) / wall, 1),
        "store_transactions": reads + writes,
        "store_writes": writes,
        "store_transactions_per_s": round((reads + writes) / wall, 1),
        "store_writes_per_s": round(writes / wall, 1),
        "unexpected_decisions": sum(len(r["unexpected"]) for r in results),
        "unexpected_examples": [u for r in results for u in r["unexpected"]][:5],
        "burst_writes": len(burst_latencies),
        "burst_writes_per_s": round(len(burst_latencies) / burst_wall, 1) if burst_latencies else None,
        "burst_write_ms_p50": _pct(burst_latencies, 0.50) if burst_latencies else None,
        "burst_write_ms_p95": _pct(burst_latencies, 0.95) if burst_latencies else None,
        "references_expected": processes * sessions * 4,
        "references_filed": filed,
        "references_similar_dropped": sum(r["filer"]["duplicates"] for r in results),
        "references_dropped_backlog": sum(r["filer"]["dropped"] for r in results),
        "filing_errors": sum(r["filer"]["errors"] for r in results),
        "references_lost": filed + len(burst_latencies) - store_check["reference_versions"],
        "admin_edits": administrator["edits"],
        "policy_reloads": sum(r["reloads"] for r in results),
        "follow_errors": sum(r["follow_errors"] for r in results),
        **store_check,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=6, help="sessions per guard process")
    parser.add_argument("--burst", type=int, default=40, help="back-to-back filings per process after")
    parser.add_argument("--processes", default="1,2,4,8")
    parser.add_argument("--backends", default="sqlite,postgresql,postgresql-async")
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON)
    args = parser.parse_args()
    counts = [int(n) for n in args.processes.split(",")]
    backends = args.backends.split(",")
    cases = []
    server = None
    if any(b.startswith("postgresql") for b in backends):
        from tests.postgres_server import PostgresServer

        server = PostgresServer(durable=True).start()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for n in counts:
                for backend in backends:
                    if backend == "sqlite":
                        target = os.path.join(tmp, f"fleet-{n}.db")
                    else:
                        name = f"fleet_{n}_{backend.replace('-', '_')}"
                        target = server.create_database(name)  # type: ignore[union-attr]
                        if backend == "postgresql-async":  # no fsync wait per commit, as SQLite's NORMAL
                            import psycopg

                            with psycopg.connect(server.url("postgres"), autocommit=True) as connection:
                                connection.execute(f"ALTER DATABASE {name} SET synchronous_commit = off")
                    cases.append(run_case(backend, target, n, args.sessions, args.burst))
                    print(f"done: {backend} x{n}", flush=True)
        server_version = None
        if server is not None:
            import psycopg

            with psycopg.connect(server.url("postgres")) as connection:
                server_version = connection.execute("SHOW server_version").fetchone()[0]
    finally:
        if server is not None:
            server.stop()
    table = Table(title=f"fleet: guard processes sharing one store, {args.sessions} sessions x 12 steps each")
    columns = ("backend", "procs", "p50 ms", "p95 ms", "steps/s", "tx/s", "burst w/s", "burst p50",
               "burst p95", "filed", "lost", "twice", "torn", "unexpected", "edits", "reloads")  # fmt: skip
    keys = ("backend", "processes", "decision_ms_p50", "decision_ms_p95", "steps_per_s",
            "store_transactions_per_s", "burst_writes_per_s", "burst_write_ms_p50", "burst_write_ms_p95",
            "references_filed", "references_lost", "references_filed_twice", "torn_versions",
            "unexpected_decisions", "admin_edits", "policy_reloads")  # fmt: skip
    for column in columns:
        table.add_column(column, justify="right")
    for case in cases:
        table.add_row(*(str(case[k]) for k in keys))
    Console(width=170).print(table)
    import sqlite3

    result = {
        "benchmark": "fleet",
        "pagewarden": __version__,
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
        "postgresql": server_version,
        "cpus": os.cpu_count(),
        "load_average": os.getloadavg()[0],
        "sessions_per_process": args.sessions,
        "steps_per_session": len(_script()),
        "decisions": "offline: Guard.check on scripted observations (no browser round trip)",
        "cases": cases,
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
