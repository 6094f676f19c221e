"""A guard judging with a store picks up each new version while it runs, on both backends:
told at once by PostgreSQL (LISTEN/NOTIFY), by a revision poll on SQLite."""

from __future__ import annotations

import time

from pagewarden.guard import Decision, Guard
from pagewarden.policies.store import PolicyStore
from tests.policies.store.workers import policy
from tests.rules.rulekit import act


def _wait_for(condition, timeout: float = 15.0) -> float:
    started = time.monotonic()
    while not condition():
        assert time.monotonic() - started < timeout, "the guard did not pick up the new version"
        time.sleep(0.02)
    return time.monotonic() - started


def test_a_running_guard_follows_new_versions(store_target: str) -> None:
    with PolicyStore(store_target) as store, PolicyStore(store_target, actor="admin") as admin:
        store.put([policy("P1", "Do not visit /billing.", rules=[{"url_deny": "/billing"}])])
        guard = Guard(policies=store, baseline=False)
        pinned = Guard(policies=store, baseline=False, follow=False)
        events = []
        guard.subscribe(lambda e: events.append(e) if e.kind == "policies" else None)
        assert act(guard, "goto", value="https://app.test/admin").decision is Decision.ALLOW
        # an administrator, elsewhere, widens the policy: the guard needs no restart
        admin.put([policy("P1", "Do not visit /admin.", rules=[{"url_deny": "/admin"}])])
        waited = _wait_for(lambda: guard.follower.reloads >= 1)
        assert waited < (2.0 if store_target.startswith("postgresql://") else 5.0)
        assert act(guard, "goto", value="https://app.test/admin").decision is Decision.BLOCK
        assert act(guard, "goto", value="https://app.test/billing").decision is Decision.ALLOW
        assert events and events[-1].data["ids"] == ["P1"]
        assert act(pinned, "goto", value="https://app.test/admin").decision is Decision.ALLOW  # follow=False
        assert pinned.follower is None
        # a new policy, then a deletion
        admin.put([policy("P2", "Never open /root.", rules=[{"url_deny": "/root"}])])
        _wait_for(lambda: "P2" in guard.policies.ids)
        assert act(guard, "goto", value="https://app.test/root").decision is Decision.BLOCK
        admin.delete("P1")
        _wait_for(lambda: "P1" not in guard.policies.ids)
        assert act(guard, "goto", value="https://app.test/admin").decision is Decision.ALLOW
        guard.close()
        pinned.close()
        assert not guard.follower._thread.is_alive()


def test_a_version_that_does_not_load_leaves_the_guard_as_it_was(store_target: str) -> None:
    with PolicyStore(store_target) as store:
        store.put([policy("P1", "Do not visit /admin.", rules=[{"url_deny": "/admin"}])])
        guard = Guard(policies=[store, policy("LOCAL", "Never open /root.", rules=[{"url_deny": "/root"}])],
                      baseline=False)  # fmt: skip
        with store._write() as tx:  # a row that no longer validates, written behind the store's back
            change = store._new_change(tx, "edit", "broken")
            store._store_version(tx, change, "P1", '{"id": "P1"}')
        _wait_for(lambda: guard.follower.errors >= 1)
        assert guard.follower.reloads == 0
        assert act(guard, "goto", value="https://app.test/admin").decision is Decision.BLOCK  # still enforced
        assert act(guard, "goto", value="https://app.test/root").decision is Decision.BLOCK
        store.put([policy("P1", "Do not visit /secret.", rules=[{"url_deny": "/secret"}])])  # fixed
        _wait_for(lambda: guard.follower.reloads >= 1)
        assert act(guard, "goto", value="https://app.test/secret").decision is Decision.BLOCK
        # the other source's policy is kept
        assert act(guard, "goto", value="https://app.test/root").decision is Decision.BLOCK
        guard.close()
