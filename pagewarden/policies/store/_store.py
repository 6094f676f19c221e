"""`PolicyStore`: policies and their violation references, with a version per change.

Tables (portable SQL):

* ``changes``: one row per change of the store — when, what made it (``cause``: extract,
  edit, reference, import, delete), a detail (documents, session, file) and who (``actor``).
* ``policy_versions``: every version of every policy (``body``: the policy as JSON, as written
  in a policy file; NULL when the change deleted it), numbered per policy.
* ``policies``: the current version of each policy that exists (kept in the same transaction).

Every write is one short serialised transaction; a change that alters nothing writes nothing.
"""

from __future__ import annotations

import difflib
import getpass
import json
import sqlite3
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from pagewarden.policies._loader import PolicySet
from pagewarden.policies._model import Policy
from pagewarden.policies.store._backend import SQLiteBackend, StoreBackend, StoreError, Transaction
from pagewarden.policies.store._postgres import PostgresBackend, is_postgres_url
from pagewarden.policies.store._schema import latest, migrate

__all__ = ["CAUSES", "Change", "PolicyStore", "PolicyVersion", "open_backend"]

#: what may make a change
CAUSES = ("extract", "edit", "reference", "import", "delete")
SCHEMA_VERSION = latest()


def open_backend(target: str | Path | StoreBackend, *, busy_timeout: float = 30.0) -> StoreBackend:
    """The backend for a store address: a `StoreBackend` as is, a ``postgresql://`` URL, or
    the path of a SQLite file."""
    if isinstance(target, StoreBackend):
        return target
    if is_postgres_url(target):
        return PostgresBackend(str(target), busy_timeout=busy_timeout)
    return SQLiteBackend(target, busy_timeout=busy_timeout)


@dataclass(frozen=True, slots=True)
class Change:
    """One change of the store."""

    id: int
    at: str
    cause: str
    detail: str
    actor: str
    policy_ids: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "at": self.at, "cause": self.cause, "detail": self.detail,
                "actor": self.actor, "policies": list(self.policy_ids)}  # fmt: skip


@dataclass(frozen=True, slots=True)
class PolicyVersion:
    """One version of one policy (``policy`` is None for a deletion)."""

    policy_id: str
    version: int
    change: Change
    policy: Policy | None


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def _default_actor() -> str:
    try:
        return getpass.getuser()
    except Exception:  # noqa: BLE001 - no user name in some containers
        return "unknown"


def _body(policy: Policy) -> str:
    return json.dumps(policy.to_dict(), ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def _policy(body: str, where: str) -> Policy:
    try:
        return Policy.model_validate(json.loads(body))
    except ValueError as exc:  # pydantic's ValidationError and JSON errors are ValueErrors
        raise StoreError(f"{where}: a stored policy does not load: {exc}") from None


class PolicyStore:
    """Versioned policies in SQLite, PostgreSQL or another `StoreBackend`, safe for many
    processes.

    `PolicyStore("policies.db")` is a SQLite file; `PolicyStore("postgresql://user:pass@host:5432/db")`
    a PostgreSQL database shared by a fleet. `Guard(policies=store)` judges with the current
    version and follows later ones. Every change is a version of each policy it touches,
    recorded with its cause; `history`, `version`, `diff` and `changes` read them back;
    `export` / `import_policies` round-trip losslessly. The schema is migrated on open.
    """

    def __init__(self, path: str | Path | StoreBackend, *, actor: str | None = None,
                 busy_timeout: float = 30.0) -> None:  # fmt: skip
        self.backend: StoreBackend = open_backend(path, busy_timeout=busy_timeout)
        self.actor = actor or _default_actor()
        self._ensure_schema()

    # -- set-up ---------------------------------------------------------------------------
    def _ensure_schema(self) -> None:
        with self._guarded():
            migrate(self.backend)

    def _guarded(self) -> Any:
        """Turn the driver's database errors into `StoreError` (credentials scrubbed)."""
        return _Errors(self.backend)

    def _write(self) -> Any:
        return _Guarded(self.backend, True)

    def _read(self) -> Any:
        return _Guarded(self.backend, False)

    # -- reading --------------------------------------------------------------------------
    def policies(self) -> PolicySet:
        """The current version of every policy, in the order they were first stored."""
        with self._read() as tx:
            rows = tx.execute("SELECT body FROM policies ORDER BY position, policy_id")
        where = self.backend.describe()
        return PolicySet([_policy(body, where) for (body,) in rows], source=f"store:{where}")

    def get(self, policy_id: str) -> Policy | None:
        """The current version of one policy, or None."""
        with self._read() as tx:
            rows = tx.execute("SELECT body FROM policies WHERE policy_id = ?", (policy_id,))
        return _policy(rows[0][0], self.backend.describe()) if rows else None

    def revision(self) -> int:
        """The id of the latest change (0 for an empty store): cheap, for caches."""
        with self._read() as tx:
            rows = tx.execute("SELECT MAX(id) FROM changes")
        return int(rows[0][0] or 0)

    def __len__(self) -> int:
        with self._read() as tx:
            return int(tx.execute("SELECT COUNT(*) FROM policies")[0][0])

    def __contains__(self, policy_id: object) -> bool:
        return isinstance(policy_id, str) and self.get(policy_id) is not None

    def history(self, policy_id: str) -> list[PolicyVersion]:
        """Every version of a policy, oldest first (deletions included)."""
        with self._read() as tx:
            rows = tx.execute(
                "SELECT v.version, v.body, c.id, c.at, c.cause, c.detail, c.actor FROM policy_versions v "
                "JOIN changes c ON c.id = v.change_id WHERE v.policy_id = ? ORDER BY v.version",
                (policy_id,),
            )
        where = self.backend.describe()
        out = []
        for version, body, cid, at, cause, detail, actor in rows:
            change = Change(cid, at, cause, detail, actor, (policy_id,))
            out.append(PolicyVersion(policy_id, version, change, _policy(body, where) if body else None))
        return out

    def version(self, policy_id: str, version: int) -> Policy | None:
        """One version of a policy (None if it does not exist or was a deletion)."""
        with self._read() as tx:
            rows = tx.execute(
                "SELECT body FROM policy_versions WHERE policy_id = ? AND version = ?", (policy_id, version)
            )
        if not rows or rows[0][0] is None:
            return None
        return _policy(rows[0][0], self.backend.describe())

    def diff(self, policy_id: str, old: int | None = None, new: int | None = None) -> str:
        """A unified diff (YAML) between two versions of a policy: by default the one before
        the latest and the latest."""
        history = self.history(policy_id)
        if not history:
            raise StoreError(f"no policy {policy_id!r} in {self.backend.describe()}")
        numbers = [v.version for v in history]
        new = numbers[-1] if new is None else new
        old = (numbers[-2] if len(numbers) > 1 else 0) if old is None else old
        by_number = {v.version: v for v in history}
        for n in (old, new):
            if n != 0 and n not in by_number:
                raise StoreError(f"policy {policy_id!r} has no version {n} (versions: {numbers})")

        def text(n: int) -> list[str]:
            policy = by_number[n].policy if n else None
            if policy is None:
                return []
            dumped = yaml.safe_dump(policy.to_dict(), sort_keys=False, allow_unicode=True)
            return dumped.splitlines(keepends=True)

        names = (f"{policy_id} v{old}", f"{policy_id} v{new}")
        return "".join(difflib.unified_diff(text(old), text(new), *names))

    def changes(self, *, since: int = 0, limit: int | None = None) -> list[Change]:
        """The store's changes after change id `since`, oldest first (`limit`: the latest N)."""
        with self._read() as tx:
            rows = tx.execute(
                "SELECT c.id, c.at, c.cause, c.detail, c.actor, v.policy_id FROM changes c "
                "LEFT JOIN policy_versions v ON v.change_id = c.id WHERE c.id > ? ORDER BY c.id, v.policy_id",
                (since,),
            )
        out: dict[int, Change] = {}
        ids: dict[int, list[str]] = {}
        for cid, at, cause, detail, actor, policy_id in rows:
            out.setdefault(cid, Change(cid, at, cause, detail, actor))
            if policy_id is not None:
                ids.setdefault(cid, []).append(policy_id)
        changes = [
            Change(c.id, c.at, c.cause, c.detail, c.actor, tuple(ids.get(c.id, ()))) for c in out.values()
        ]
        return changes[-limit:] if limit else changes

    # -- writing --------------------------------------------------------------------------
    def _new_change(self, tx: Transaction, cause: str, detail: str) -> int:
        return self._change(tx, cause, detail)[0]

    def _change(self, tx: Transaction, cause: str, detail: str) -> tuple[int, str]:
        """Record a change; returns its id and time."""
        if cause not in CAUSES:
            raise ValueError(f"cause must be one of {CAUSES}, not {cause!r}")
        at = _now()
        change_id = tx.insert(
            "INSERT INTO changes (at, cause, detail, actor) VALUES (?, ?, ?, ?)",
            (at, cause, detail[:2000], self.actor[:200]),
        )
        return change_id, at

    @staticmethod
    def _store_version(tx: Transaction, change_id: int, policy_id: str, body: str | None) -> int:
        current = tx.execute("SELECT version, position FROM policies WHERE policy_id = ?", (policy_id,))
        if current:  # the current version is the latest (both are written in one transaction)
            version = int(current[0][0]) + 1
        else:  # new, or deleted before: numbering goes on from its history
            rows = tx.execute("SELECT MAX(version) FROM policy_versions WHERE policy_id = ?", (policy_id,))
            version = int(rows[0][0] or 0) + 1
        tx.execute(
            "INSERT INTO policy_versions (policy_id, version, change_id, body) VALUES (?, ?, ?, ?)",
            (policy_id, version, change_id, body),
        )
        if body is None:
            tx.execute("DELETE FROM policies WHERE policy_id = ?", (policy_id,))
        elif current:
            tx.execute(
                "UPDATE policies SET version = ?, body = ? WHERE policy_id = ?", (version, body, policy_id)
            )
        else:
            position = int(tx.execute("SELECT COALESCE(MAX(position), 0) FROM policies")[0][0]) + 1
            tx.execute(
                "INSERT INTO policies (policy_id, version, position, body) VALUES (?, ?, ?, ?)",
                (policy_id, version, position, body),
            )
        return version

    def put(
        self, policies: Iterable[Policy] | PolicySet, *, cause: str = "edit", detail: str = ""
    ) -> Change | None:
        """Add or replace policies (by id) as one change; policies equal to their current
        version are not written. Returns the change, or None when nothing changed."""
        items = list(policies)
        if len({p.id for p in items}) != len(items):
            raise StoreError("the same policy id twice in one change")
        bodies = [(p.id, _body(p)) for p in items]
        with self._write() as tx:
            change_id, at = 0, ""
            written = []
            for policy_id, body in bodies:
                rows = tx.execute("SELECT body FROM policies WHERE policy_id = ?", (policy_id,))
                if rows and rows[0][0] == body:
                    continue
                if not change_id:
                    change_id, at = self._change(tx, cause, detail)
                self._store_version(tx, change_id, policy_id, body)
                written.append(policy_id)
            if not change_id:
                return None
        return Change(change_id, at, cause, detail, self.actor, tuple(written))

    def update(
        self,
        policy_id: str,
        edit: Callable[[Policy], Policy | None],
        *,
        cause: str = "edit",
        detail: str = "",
    ) -> Change | None:
        """Read-modify-write one policy atomically: `edit(current)` returns the new policy (same
        id) or None for no change. Concurrent updates never lose each other's changes."""
        with self._write() as tx:
            rows = tx.execute("SELECT body FROM policies WHERE policy_id = ?", (policy_id,))
            if not rows:
                raise StoreError(f"no policy {policy_id!r} in {self.backend.describe()}")
            current = _policy(rows[0][0], self.backend.describe())
            new = edit(current)
            if new is None:
                return None
            if new.id != policy_id:
                raise StoreError(f"an update may not change the policy id ({policy_id!r} → {new.id!r})")
            body = _body(new)
            if body == rows[0][0]:
                return None
            change_id, at = self._change(tx, cause, detail)
            self._store_version(tx, change_id, policy_id, body)
        return Change(change_id, at, cause, detail, self.actor, (policy_id,))

    def delete(self, policy_ids: str | Iterable[str], *, detail: str = "") -> Change | None:
        """Delete policies (their history stays); unknown ids are an error."""
        ids = [policy_ids] if isinstance(policy_ids, str) else list(policy_ids)
        with self._write() as tx:
            missing = [i for i in ids if not tx.execute("SELECT 1 FROM policies WHERE policy_id = ?", (i,))]
            if missing:
                raise StoreError(f"no policy {', '.join(map(repr, missing))} in {self.backend.describe()}")
            if not ids:
                return None
            change_id, at = self._change(tx, "delete", detail)
            for policy_id in ids:
                self._store_version(tx, change_id, policy_id, None)
        return Change(change_id, at, "delete", detail, self.actor, tuple(ids))

    # -- files ----------------------------------------------------------------------------
    def export(self, path: str | Path | None = None) -> dict[str, Any]:
        """The current policies in the policy-file format (references and provenance included);
        written to `path` (YAML, or JSON for ``.json``) when given."""
        policy_set = self.policies()
        if path is not None:
            policy_set.dump(path)
        return policy_set.to_dict()

    def import_policies(self, source: str | Path | PolicySet, *, cause: str = "import") -> Change | None:
        """Store the policies of a policy file (or set): new ids added, changed ones versioned."""
        policy_set = source if isinstance(source, PolicySet) else PolicySet.load(source)
        detail = str(source) if not isinstance(source, PolicySet) else (source.source or "")
        return self.put(policy_set, cause=cause, detail=detail)

    def close(self) -> None:
        """Release the database connections."""
        self.backend.close()

    def __enter__(self) -> PolicyStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"PolicyStore({self.backend.describe()})"


class _Errors:
    """A block whose database errors become `StoreError`."""

    def __init__(self, backend: StoreBackend) -> None:
        self._backend = backend

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: Any, exc: BaseException | None, tb: Any) -> bool:
        errors = (sqlite3.DatabaseError, *self._backend.errors)
        if exc is not None and isinstance(exc, errors):
            message = self._backend.scrub(str(exc))
            raise StoreError(f"{self._backend.describe()}: {message}") from None
        return False


class _Guarded:
    """A backend transaction whose database errors become `StoreError`."""

    def __init__(self, backend: StoreBackend, write: bool) -> None:
        self._context = backend.transaction(write=write)
        self._backend = backend

    def __enter__(self) -> Transaction:
        with _Errors(self._backend):
            return self._context.__enter__()

    def __exit__(self, kind: Any, exc: BaseException | None, tb: Any) -> bool | None:
        with _Errors(self._backend):
            suppressed = self._context.__exit__(kind, exc, tb)
            if exc is not None and not suppressed:
                raise exc  # rolled back; a database error leaves as a `StoreError`
            return suppressed
