"""`ReferenceFiler`: files the guard's confirmed violations as references in the store.

It is a sink on the guard's event bus (`guard.subscribe(filer)`): for each judged ``step``
event whose decision is BLOCK, or ASK without an approval (the approver denied, or there was
none), it queues one reference per violated policy that the store holds — the task, the
agent's reasoning, the action, the page and the explanation, all as the trace has them
(redacted). A worker thread writes them (`PolicyStore.update`, cause ``reference``, so every
filing is a version), so the agent's step never waits for the database and never fails
because of it. The worker also keeps the guard's policies' references current (what the
semantic tier shows as past violations), including references other processes filed.
"""

from __future__ import annotations

import contextlib
import queue
import threading
import time
from typing import Any

from pagewarden.policies._loader import PolicySet
from pagewarden.policies.references._queue import ReferenceQueue
from pagewarden.policies.store import PolicyStore, StoreError
from pagewarden.steps import GuardEvent
from pagewarden.trace import get_logger

__all__ = ["ReferenceFiler", "reference_text"]

_PART_CHARS = 300
_REFRESH_S = 2.0


def _clip(text: Any, limit: int = _PART_CHARS) -> str:
    text = " ".join(str(text or "").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _action_text(action: dict[str, Any], target: dict[str, Any] | None) -> str:
    parts = [str(action.get("kind") or "action")]
    if target:
        name = target.get("name") or target.get("text") or target.get("label") or ""
        role = target.get("role") or target.get("tag") or ""
        if name or role:
            parts.append(f"{role} {name!r}".strip())
        if target.get("href"):
            parts.append(f"→ {target['href']}")
    elif action.get("selector"):
        parts.append(str(action["selector"]))
    if action.get("value"):
        parts.append(f"value {action['value']!r}")
    return " ".join(parts)


def reference_text(record: dict[str, Any], policy_id: str) -> str:
    """The reference for one violated policy from a trace record (``step`` event data)."""
    step = record.get("step") or {}
    verdict = record.get("verdict") or {}
    observation = step.get("observation") or {}
    findings = verdict.get("findings") or []
    messages = [f.get("message", "") for f in findings if f.get("policy_id") == policy_id]
    why = "; ".join(dict.fromkeys(m for m in messages if m)) or verdict.get("explanation") or ""
    parts = [
        f"Task: {_clip(step.get('goal'))}" if step.get("goal") else "",
        f"Reasoning: {_clip(step.get('reasoning'))}" if step.get("reasoning") else "",
        f"Action: {_clip(_action_text(step.get('action') or {}, observation.get('target')))}",
        f"Page: {_clip(observation.get('url'), 200)}" if observation.get("url") else "",
        f"Decision: {verdict.get('decision', '?').upper()} — {_clip(why)}",
    ]
    return " | ".join(p for p in parts if p)


def confirmed_violation(record: dict[str, Any]) -> list[str]:
    """The policies a judged step confirmed as violated (BLOCK, or an ASK not approved)."""
    verdict = record.get("verdict") or {}
    decision = verdict.get("decision")
    if decision == "ask" and (verdict.get("approved_by") or record.get("ran")):
        return []
    if decision not in ("block", "ask"):
        return []
    ids = verdict.get("violated_policy_ids")
    if ids is None:
        ids = list(dict.fromkeys(f.get("policy_id") for f in verdict.get("findings") or []))
    return [i for i in ids if isinstance(i, str)]


class ReferenceFiler:
    """Sink for `guard.subscribe`: files confirmed violations into a `PolicyStore`.

    Args:
        store: the store the references go to (only policies it holds get references).
        rules: the queue sizes and similarity threshold (HarmonyGuard's Algorithm 1).
        guard: the guard whose policies' references are kept current (optional).
        max_pending: references waiting for the worker; beyond it new ones are dropped and
            counted (`dropped`), never blocking the agent.
    """

    def __init__(
        self,
        store: PolicyStore,
        rules: ReferenceQueue | None = None,
        *,
        guard: Any = None,
        max_pending: int = 1000,
    ) -> None:
        self.store = store
        self.rules = rules or ReferenceQueue()
        self.guard = guard
        self.log = get_logger(component="references")
        self.filed = 0  # references written
        self.duplicates = 0  # dropped by the similarity filter
        self.dropped = 0  # dropped because the worker fell behind
        self.errors = 0
        self.unwritten = 0  # still queued when `close` stopped waiting
        self.owns_store = False  # close the store with the filer (it was opened for it)
        self._pending: queue.Queue[tuple[list[str], dict[str, Any], str] | None] = queue.Queue(
            maxsize=max_pending
        )
        self._stored_ids: frozenset[str] = frozenset()
        self._known: dict[str, Any] = {}  # policy id → its last known version (worker's cache)
        self._revision = -1
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="pagewarden-references", daemon=True)
        self._refresh()
        self._thread.start()

    # -- the sink (the guard's thread: cheap, never blocks) ----------------------------------
    def __call__(self, event: GuardEvent) -> None:
        if event.kind != "step" or self._closed:
            return
        # built-in or file-only policies have nothing to be filed under
        ids = [i for i in confirmed_violation(event.data) if i in self._stored_ids]
        if not ids:
            return
        try:  # the text is built on the worker: the step only pays for this
            self._pending.put_nowait((ids, event.data, event.session))
        except queue.Full:
            self.dropped += len(ids)

    # -- the worker ---------------------------------------------------------------------------
    def _run(self) -> None:
        last_check = time.monotonic()
        while True:
            try:
                item = self._pending.get(timeout=0.5)
            except queue.Empty:
                if self._closed:
                    return
                if time.monotonic() - last_check >= _REFRESH_S:
                    last_check = time.monotonic()
                    self._refresh()
                continue
            if item is None:
                self._pending.task_done()
                return
            try:
                ids, record, session = item
                for policy_id in ids:
                    self._file(policy_id, reference_text(record, policy_id), session)
                    time.sleep(0)  # let the agent's thread have the GIL between filings
                if self._pending.empty():
                    self._refresh()
            finally:
                self._pending.task_done()

    def _file(self, policy_id: str, text: str, session: str) -> None:
        known = self._known.get(policy_id)
        if known is not None and self.rules.duplicate(known, text.strip()) is not None:
            self.duplicates += 1  # no write transaction for what the queue would drop anyway
            return
        outcome: dict[str, Any] = {}

        def edit(policy):
            updated = self.rules.add(policy, text)
            outcome["duplicate"] = updated is None
            outcome["policy"] = updated or policy
            return updated

        try:
            change = self.store.update(policy_id, edit, cause="reference", detail=f"session {session}")
        except StoreError as exc:
            self.errors += 1
            self.log.warning("reference_not_filed", policy=policy_id, error=str(exc)[:200])
            return
        except Exception as exc:  # noqa: BLE001 - the worker must survive anything
            self.errors += 1
            error = f"{type(exc).__name__}: {exc}"[:200]
            self.log.warning("reference_not_filed", policy=policy_id, error=error)
            return
        if "policy" in outcome:
            self._known[policy_id] = outcome["policy"]
        if change is None and outcome.get("duplicate"):
            self.duplicates += 1
        elif change is not None:
            self.filed += 1

    def _refresh(self, force: bool = False) -> None:
        """Re-read the store when it changed: which ids it holds, and (with a guard) the
        references of the guard's policies."""
        try:
            revision = self.store.revision()
            if revision == self._revision and not force:
                return
            current = self.store.policies()
        except StoreError as exc:
            self.log.warning("references_refresh_failed", error=str(exc)[:200])
            return
        self._revision = revision
        self._stored_ids = frozenset(current.ids)
        self._known = {p.id: p for p in current}
        follower = getattr(self.guard, "follower", None)
        if follower is not None:  # a guard that follows the store takes whole new versions
            follower.check()
        elif self.guard is not None:
            policies: PolicySet = self.guard.policies
            changed = False
            updated = []
            for policy in policies:
                stored = current.get(policy.id)
                if stored is not None and stored.references != policy.references:
                    policy = policy.model_copy(update={"references": stored.references})
                    changed = True
                updated.append(policy)
            if changed:
                self.guard.policies = PolicySet(updated, version=policies.version, source=policies.source)

    # -- control --------------------------------------------------------------------------------
    def flush(self, timeout: float = 10.0) -> bool:
        """Wait until every queued reference is written (True) or `timeout` passes (False)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._pending.unfinished_tasks == 0:
                return True
            time.sleep(0.005)
        return self._pending.unfinished_tasks == 0

    def close(self, timeout: float = 30.0) -> None:
        """Write what is queued (waiting up to `timeout`), then stop the worker. References
        still queued when the time runs out are counted in `unwritten` and logged
        (``references_not_written``); the worker goes on writing them while the process lives."""
        if self._closed:
            return
        self._closed = True
        with contextlib.suppress(queue.Full):
            self._pending.put(None, timeout=timeout)
        self._thread.join(timeout)
        if self._thread.is_alive():
            self.unwritten = max(0, self._pending.unfinished_tasks - 1)  # less the stop marker
            self.log.warning(
                "references_not_written", pending=self.unwritten, waited_s=timeout,
                advice="the store is slow or locked; the worker writes them if the process goes on",
            )  # fmt: skip
        elif self.owns_store:
            self.store.close()
