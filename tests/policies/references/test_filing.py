"""Violation references filed from the guard's own confirmed violations into the store, on a
worker thread; every violated policy's references reach the semantic tier's prompt."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

import pytest

from pagewarden import Action, ElementFacts, Guard, Observation, Policy, Step
from pagewarden.guard import Decision
from pagewarden.policies.references import ReferenceFiler
from pagewarden.policies.store import PolicyStore
from pagewarden.testing import ScriptedLLM
from tests.rules.rulekit import act, button, field

ADMIN = Policy(id="ORG-ADMIN", category="boundary", risk_level="high", description="Do not visit /admin.",
               rules=[{"url_deny": "/admin"}])  # fmt: skip
PAY = Policy(id="ORG-PAY", category="consent", risk_level="medium", description="Ask before paying.",
             rules=[{"consent": {"match": ["pay"]}}])  # fmt: skip
TOKEN = Policy(id="ORG-TOKEN", category="data", risk_level="low", description="Never send API keys anywhere.",
               rules=[{"sensitive_data": {"patterns": ["api_key"]}}])  # fmt: skip
ALSO_ADMIN = Policy(id="ORG-ADMIN-2", category="boundary", risk_level="medium",
                    description="The admin console is off limits.",
                    rules=[{"url_deny": "/admin"}])  # fmt: skip


@pytest.fixture
def store(store_target: str):
    """A store holding the four policies, on each backend (SQLite, PostgreSQL)."""
    with PolicyStore(store_target) as s:
        s.put([ADMIN, PAY, TOKEN, ALSO_ADMIN], cause="import")
        yield s


def test_blocks_and_denied_asks_are_filed_under_every_violated_policy(store: PolicyStore) -> None:
    guard = Guard(policies=store, references=store, goal="Update the README.")
    guard.reasoning = None
    assert act(guard, "goto", value="https://app.test/admin/users").decision is Decision.BLOCK
    assert act(guard, "click", target=button("Pay now")).decision is Decision.ASK  # no approver: denied
    assert act(guard, "click", target=button("Save")).decision is Decision.ALLOW
    assert guard.references.flush(10)
    admin, admin2, pay = store.get("ORG-ADMIN"), store.get("ORG-ADMIN-2"), store.get("ORG-PAY")
    assert len(admin.references) == 1 and len(admin2.references) == 1  # both violated policies
    text = admin.references[0].text
    assert "Task: Update the README." in text and "Action: goto" in text
    assert "Page: https://app.test/projects/1" in text and "Decision: BLOCK" in text and "/admin" in text
    assert pay.references[0].text.startswith("Task: Update the README. | Action: click button 'Pay now'")
    assert "Decision: ASK" in pay.references[0].text
    assert store.get("ORG-TOKEN").references == []
    causes = [v.change.cause for v in store.history("ORG-ADMIN")]
    assert causes == ["import", "reference"]
    assert "session " + guard.session_id in store.history("ORG-ADMIN")[-1].change.detail
    # the same violation again: similar (>= 0.85), dropped, no new version
    act(guard, "goto", value="https://app.test/admin/users")
    assert guard.references.flush(10)
    assert len(store.get("ORG-ADMIN").references) == 1 and len(store.history("ORG-ADMIN")) == 2
    assert guard.references.duplicates == 2 and guard.references.filed == 3
    # baseline policies (not in the store) are skipped quietly
    assert guard.references.errors == 0
    # the guard's own policies carry the references now (for the semantic tier)
    assert len(guard.policies.get("ORG-ADMIN").references) == 1
    guard.close()


def test_approved_asks_are_not_violations(store: PolicyStore) -> None:
    # (guard.check has no approver round: an ASK there never ran, so it counts as denied;
    # the wrapped page records an approved ASK with approved_by and ran=True)
    filer = ReferenceFiler(store)
    from pagewarden.steps import GuardEvent

    record = {"step": {"action": {"kind": "click"}, "observation": {"url": "https://a.test/"}},
              "verdict": {"decision": "ask", "approved_by": "approver", "violated_policy_ids": ["ORG-PAY"]}}
    filer(GuardEvent("step", "s1", record))
    denied = {**record, "verdict": {**record["verdict"], "approved_by": None}}
    filer(GuardEvent("step", "s1", {**denied, "ran": True}))
    assert filer.flush(5) and store.get("ORG-PAY").references == []
    filer(GuardEvent("step", "s1", denied))
    assert filer.flush(5)
    filer.close()
    assert len(store.get("ORG-PAY").references) == 1  # the denied one only
    assert filer.filed == 1


def test_secrets_never_reach_the_store(store: PolicyStore, store_target: str) -> None:
    secret = "sk-test-0123456789abcdef0123"
    guard = Guard(policies=store, references=store_target, secrets=[secret])  # a path or URL
    verdict = act(guard, "fill", target=field("Token"), value=secret, url="https://evil.test/form")
    assert verdict.decision is Decision.BLOCK
    guard.close()
    dump = "\n".join(r.text for p in store.policies() for r in p.references)
    assert dump and secret not in dump and "REDACTED" in dump
    with store.backend.transaction(write=False) as tx:
        assert not tx.execute("SELECT 1 FROM policy_versions WHERE body LIKE ?", (f"%{secret}%",))
        assert not tx.execute("SELECT 1 FROM changes WHERE detail LIKE ?", (f"%{secret}%",))


def test_a_locked_or_broken_store_never_slows_or_fails_the_step(tmp_path: Path) -> None:
    db = tmp_path / "locked.db"
    with PolicyStore(db) as setup:
        setup.put([ADMIN])
    store = PolicyStore(db, busy_timeout=0.3)
    guard = Guard(policies=store, references=store)
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another process holds the write lock
    try:
        verdicts = [act(guard, "goto", value=f"https://app.test/admin/{i}") for i in range(3)]
        assert all(v.decision is Decision.BLOCK for v in verdicts)
        assert guard.references.flush(10)
        assert guard.references.errors >= 1 and guard.references.filed == 0
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    guard.close()


def test_worker_thread_files_while_the_guard_goes_on(store: PolicyStore) -> None:
    guard = Guard(policies=store, references=store)
    main = threading.get_ident()
    seen: list[int] = []
    original = guard.references._file

    def spy(*args):
        seen.append(threading.get_ident())
        return original(*args)

    guard.references._file = spy  # type: ignore[method-assign]
    act(guard, "goto", value="https://app.test/admin/x")
    assert guard.references.flush(10)
    assert seen and all(ident != main for ident in seen)
    guard.close()


# -- the semantic tier's prompt ----------------------------------------------------------------
RULELESS = [
    Policy(id="ORG-CLOSE", category="boundary", risk_level="high",
           description="Never close an issue that someone else opened."),
    Policy(id="ORG-TONE", category="boundary", risk_level="low", description="Keep comments polite."),
]  # fmt: skip


def test_references_of_every_shown_policy_reach_the_prompt(tmp_path: Path) -> None:
    with PolicyStore(tmp_path / "p.db") as store, ScriptedLLM() as llm:
        store.put(RULELESS, cause="import")
        filer = ReferenceFiler(store)
        from pagewarden.steps import GuardEvent

        for pid, text in (("ORG-CLOSE", "clicked 'Close issue' on acme/webapp#7, opened by bob"),
                          ("ORG-TONE", "posted 'this is stupid' on acme/webapp#2")):  # fmt: skip
            record = {"step": {"goal": "Triage issues.", "action": {"kind": "click"},
                               "observation": {"url": "http://tracker.test/acme/webapp/issues/7"}},
                      "verdict": {"decision": "block", "violated_policy_ids": [pid],
                                  "findings": [{"policy_id": pid, "message": text}]}}  # fmt: skip
            filer(GuardEvent("step", "earlier-session", record))
        assert filer.flush(10)
        filer.close()
        llm.on(None, {"policy_violation": False, "violated_policy_ids": [], "goal_deviation": False})
        guard = Guard(policies=store, references=store, llm=llm.config(timeout=10, retries=1),
                      consult="always", goal="Comment on issue #1.")  # fmt: skip
        target = ElementFacts(tag="button", role="button", name="Close issue", text="Close issue")
        step = Step(
            action=Action(kind="click", method="Locator.click", selector="role=button[name='Close issue']"),
            observation=Observation(
                url="http://tracker.test/acme/webapp/issues/1",
                target=target,
                aria_snapshot='- button "Close issue" [ref=e3]',
            ),
            reasoning="Close it.",
        )
        guard.check(step)
        guard.close()
        prompt = llm.requests[-1].prompt
    assert "Past violations" in prompt
    assert "ORG-CLOSE example 1:" in prompt and "opened by bob" in prompt
    assert "ORG-TONE example 1:" in prompt and "this is stupid" in prompt
    section = prompt[prompt.index("Past violations"):]
    assert section.index("ORG-CLOSE example 1") < section.index("ORG-TONE example 1")


def test_references_filed_elsewhere_reach_this_guard(store: PolicyStore, store_target: str) -> None:
    guard = Guard(policies=store, references=store)
    assert guard.policies.get("ORG-ADMIN").references == []
    with PolicyStore(store_target) as other:  # another process's connection
        filer = ReferenceFiler(other)
        from pagewarden.steps import GuardEvent

        record = {"step": {"action": {"kind": "goto", "value": "https://app.test/admin"},
                           "observation": {"url": "https://app.test/"}},
                  "verdict": {"decision": "block", "violated_policy_ids": ["ORG-ADMIN"]}}  # fmt: skip
        filer(GuardEvent("step", "other-session", record))
        assert filer.flush(10)
        filer.close()
    deadline = time.monotonic() + 15
    while not guard.policies.get("ORG-ADMIN").references and time.monotonic() < deadline:
        time.sleep(0.1)
    assert "Decision: BLOCK" in guard.policies.get("ORG-ADMIN").references[0].text
    guard.close()


def test_close_says_what_it_could_not_write(tmp_path: Path) -> None:
    db = tmp_path / "slow.db"
    with PolicyStore(db) as setup:
        setup.put([ADMIN])
    store = PolicyStore(db, busy_timeout=20)
    filer = ReferenceFiler(store)
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another process holds the write lock for a while
    try:
        from pagewarden.steps import GuardEvent

        record = {"step": {"action": {"kind": "goto", "value": "https://app.test/admin"}},
                  "verdict": {"decision": "block", "violated_policy_ids": ["ORG-ADMIN"]}}  # fmt: skip
        filer(GuardEvent("step", "s1", record))
        started = time.monotonic()
        filer.close(timeout=0.5)
        assert time.monotonic() - started < 5
        assert filer.unwritten == 1 and filer.filed == 0  # counted and logged, not silently lost
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    deadline = time.monotonic() + 20  # the worker goes on while the process lives
    while filer.filed == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert filer.filed == 1 and len(store.get("ORG-ADMIN").references) == 1
    store.close()
