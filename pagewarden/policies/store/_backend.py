"""Storage backends of the policy store: the interface, and SQLite.

The store's SQL is portable (standard types, ``?`` placeholders that a backend may rewrite,
no SQLite-only functions); the schema's few dialect words are filled in per backend
(`_schema.py`), and `PostgresBackend` (`_postgres.py`) is the fleet's backend. A backend hands
out short transactions; it never keeps one open between calls.
"""

from __future__ import annotations

import os
import random
import sqlite3
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

__all__ = ["SQLiteBackend", "StoreBackend", "StoreError", "Transaction"]

#: the schema's dialect words for SQLite (see `_schema.py`)
SQLITE_TYPES = {"id": "INTEGER PRIMARY KEY AUTOINCREMENT", "bigint": "INTEGER"}


class StoreError(Exception):
    """The policy store could not do what was asked (locked too long, corrupt, bad input)."""


class Transaction(ABC):
    """One open transaction: run statements, read rows."""

    @abstractmethod
    def execute(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Run one statement; returns its rows (empty for writes)."""

    @abstractmethod
    def insert(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Run an INSERT into a table with an integer key; returns the new row's key."""


class StoreBackend(ABC):
    """Where a `PolicyStore` keeps its tables. Implementations: `SQLiteBackend` (one file,
    many processes on one machine) and `PostgresBackend` (one database, a fleet)."""

    name: str = "backend"
    #: the database errors of the driver, turned into `StoreError` by the store
    errors: tuple[type[BaseException], ...] = (sqlite3.DatabaseError,)
    #: the schema's dialect words: ``id`` (an integer key the database assigns), ``bigint``
    types: dict[str, str] = SQLITE_TYPES
    #: whether `wait_for_change` is told of changes (else it only waits and callers poll)
    notifies: bool = False

    @abstractmethod
    def transaction(self, *, write: bool) -> Any:
        """A context manager yielding a `Transaction`: committed when the block ends, rolled
        back when it raises. Write transactions are serialised (no lost update between a read
        and a write inside one); read transactions see one consistent snapshot."""

    @abstractmethod
    def close(self) -> None:
        """Release connections."""

    def describe(self) -> str:
        """Where the data lives, for messages (never a password)."""
        return self.name

    def scrub(self, text: str) -> str:
        """`text` (a driver's error message) without credentials."""
        return text

    @abstractmethod
    def table_exists(self, tx: Transaction, table: str) -> bool:
        """Whether `table` exists (read inside `tx`)."""

    def wait_for_change(self, timeout: float, stop: threading.Event) -> bool:
        """Wait up to `timeout` seconds for a change another connection committed, or for
        `stop`. True when told of a change (or when one may have been missed); False when the
        time ran out (the caller reads the revision either way: backends without notifications
        are polled)."""
        stop.wait(timeout)
        return False

    def end_wait(self) -> None:  # noqa: B027 - optional: most backends hold nothing
        """Release what `wait_for_change` holds for the calling thread."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.describe()})"


def _is_busy(exc: sqlite3.OperationalError) -> bool:
    text = str(exc).lower()
    return "locked" in text or "busy" in text


class _SQLiteTransaction(Transaction):
    def __init__(self, connection: sqlite3.Connection) -> None:
        self.connection = connection

    def execute(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return self.connection.execute(sql, tuple(params)).fetchall()

    def insert(self, sql: str, params: Sequence[Any] = ()) -> int:
        cursor = self.connection.execute(sql, tuple(params))
        return int(cursor.lastrowid or 0)


class SQLiteBackend(StoreBackend):
    """SQLite in WAL mode, safe for many threads and processes on one machine.

    * WAL: readers never block the writer, the writer never blocks readers.
    * Writes start with ``BEGIN IMMEDIATE``: the write lock is taken before anything is read, so
      two writers never both read, then deadlock on upgrading (a deferred transaction that
      upgrades gets SQLITE_BUSY at once, without the busy handler — the cause of stalls of
      whole busy timeouts). Transactions are short: no I/O other than the database inside.
    * ``busy_timeout`` (default 30 s) is how long a writer waits for the lock. The wait polls
      every 0.5-4 ms (jittered) rather than through SQLite's busy handler, whose back-off
      sleeps grow to 100 ms: under contention that handler leaves the lock idle while writers
      sleep, and throughput falls as writers are added (see benchmarks/store.py).
      ``lock_poll=False`` uses SQLite's busy handler instead.
    * One connection per thread and process (a forked child opens its own), in autocommit
      mode so that no transaction is left open between calls.
    * ``synchronous=NORMAL``: a committed write survives the writer being killed (not a power
      cut before the next checkpoint; ``synchronous="FULL"`` for that).
    """

    name = "sqlite"

    def __init__(
        self,
        path: str | Path,
        *,
        busy_timeout: float = 30.0,
        synchronous: str = "NORMAL",
        lock_poll: bool = True,
    ) -> None:
        if synchronous.upper() not in ("OFF", "NORMAL", "FULL", "EXTRA"):
            raise ValueError(f"synchronous must be OFF, NORMAL, FULL or EXTRA, not {synchronous!r}")
        self.path = Path(path)
        self.busy_timeout = busy_timeout
        self.synchronous = synchronous.upper()
        self.lock_poll = lock_poll
        self._local = threading.local()
        self._all: list[tuple[int, sqlite3.Connection]] = []
        self._lock = threading.Lock()

    def describe(self) -> str:
        return str(self.path)

    def table_exists(self, tx: Transaction, table: str) -> bool:
        return bool(tx.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)))

    def _connection(self) -> sqlite3.Connection:
        pid = os.getpid()
        connection = getattr(self._local, "connection", None)
        if connection is not None and self._local.pid == pid:
            return connection
        if self.path.parent and not self.path.parent.exists():
            raise StoreError(f"{self.path}: directory {self.path.parent} does not exist")
        try:
            connection = sqlite3.connect(
                self.path, timeout=self.busy_timeout, isolation_level=None, check_same_thread=False
            )
            connection.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout * 1000)}")
            mode = connection.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            if self.lock_poll:
                connection.execute("PRAGMA busy_timeout = 0")  # we wait in `_begin`
            if str(mode).lower() != "wal":
                raise StoreError(f"{self.path}: cannot switch to WAL mode (got {mode!r})")
            connection.execute(f"PRAGMA synchronous = {self.synchronous}")
            connection.execute("PRAGMA foreign_keys = ON")
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{self.path}: not a usable SQLite database ({exc})") from None
        self._local.connection, self._local.pid = connection, pid
        with self._lock:
            self._all.append((pid, connection))
        return connection

    def _begin(self, connection: sqlite3.Connection, write: bool) -> None:
        """Start a transaction: the write lock (writes) or a read snapshot (reads), waiting up
        to `busy_timeout` for it."""
        deadline = time.monotonic() + self.busy_timeout
        delay = 0.0005
        while True:
            try:
                if write:
                    connection.execute("BEGIN IMMEDIATE")
                else:
                    connection.execute("BEGIN")
                    connection.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()  # the snapshot
                return
            except sqlite3.OperationalError as exc:
                if connection.in_transaction:
                    connection.execute("ROLLBACK")
                if not _is_busy(exc) or time.monotonic() >= deadline:
                    raise StoreError(
                        f"{self.path}: {exc} (waited {self.busy_timeout:g} s for the lock)"
                    ) from None
            time.sleep(random.uniform(delay, 2 * delay))
            delay = min(delay * 2, 0.002)

    @contextmanager
    def transaction(self, *, write: bool) -> Iterator[Transaction]:
        connection = self._connection()
        self._begin(connection, write)
        try:
            yield _SQLiteTransaction(connection)
        except BaseException:
            connection.execute("ROLLBACK")
            raise
        try:
            connection.execute("COMMIT")
        except sqlite3.OperationalError as exc:
            connection.execute("ROLLBACK")
            raise StoreError(f"{self.path}: commit failed: {exc}") from None

    def close(self) -> None:
        with self._lock:
            connections, self._all = self._all, []
        pid = os.getpid()
        for owner, connection in connections:
            if owner == pid:  # a connection inherited over fork belongs to the parent
                connection.close()
        self._local = threading.local()
