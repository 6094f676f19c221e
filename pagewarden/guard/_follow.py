"""`StoreFollower`: keeps a guard on the current version of the policy stores it judges with.

A thread of its own waits for a change — told at once by a PostgreSQL store (LISTEN/NOTIFY),
found by a cheap revision poll on SQLite (``SELECT MAX(id)`` every `poll` seconds) — and then
has the guard re-read its policies (`Guard.reload_policies`). The agent's step never waits for
the database. A store that cannot be read, or a version that does not load, leaves the guard
enforcing the version it has (logged, counted in `errors`), never without policies.
"""

from __future__ import annotations

import threading
from typing import Any

from pagewarden.trace import get_logger

__all__ = ["StoreFollower"]

#: how long a follower of a notifying store (PostgreSQL) waits before it reads the revision anyway
NOTIFIED_POLL_S = 5.0


class StoreFollower:
    """Follows `stores` (`PolicyStore`s) for `guard`; `close()` stops it.

    Args:
        guard: the guard whose policies are kept current.
        stores: the stores among its policy sources.
        poll: seconds between revision reads for stores that do not notify (SQLite).
    """

    def __init__(self, guard: Any, stores: list[Any], *, poll: float = 0.5) -> None:
        self.guard = guard
        self.stores = stores
        self.poll = poll
        self.log = get_logger(component="policies")
        self.reloads = 0  # versions picked up
        self.errors = 0  # failed reads or reloads (the guard kept its policies)
        self._stop = threading.Event()
        self._checking = threading.Lock()
        self.revisions = self._revisions()
        self._thread = threading.Thread(target=self._run, name="pagewarden-policies", daemon=True)
        self._thread.start()

    def _revisions(self) -> tuple[int, ...]:
        return tuple(store.revision() for store in self.stores)

    def _run(self) -> None:
        backend = self.stores[0].backend
        timeout = NOTIFIED_POLL_S if getattr(backend, "notifies", False) else self.poll
        try:
            while not self._stop.is_set():
                backend.wait_for_change(timeout, self._stop)
                if self._stop.is_set():
                    return
                self.check()
        finally:
            backend.end_wait()

    def check(self) -> bool:
        """Reload the guard's policies if a store changed; True when it did (also called by
        the guard's reference filer after it wrote, so its references show at once)."""
        with self._checking:
            return self._check()

    def _check(self) -> bool:
        from pagewarden.policies import PolicyError
        from pagewarden.policies.store import StoreError

        try:
            revisions = self._revisions()
            if revisions == self.revisions:
                return False
            self.guard.reload_policies()
        except (StoreError, PolicyError) as exc:
            self.errors += 1
            self.log.warning("policies_not_reloaded", error=str(exc)[:300],
                             kept="the version the guard had")  # fmt: skip
            return False
        except Exception as exc:  # noqa: BLE001 - the thread must survive anything
            self.errors += 1
            self.log.warning("policies_not_reloaded", error=f"{type(exc).__name__}: {exc}"[:300])
            return False
        self.revisions = revisions
        self.reloads += 1
        self.log.info("policies_reloaded", revisions=list(revisions), policies=len(self.guard.policies))
        return True

    def close(self, timeout: float = 5.0) -> None:
        """Stop following."""
        self._stop.set()
        if self._thread is not threading.current_thread():
            self._thread.join(timeout)
