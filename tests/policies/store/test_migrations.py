"""Schema migrations recorded in a version table, on both backends: a new store, a store made
before the version table, a store newer than this pagewarden, and many processes' connections
opening a store at once."""

from __future__ import annotations

import threading

import pytest

from pagewarden.policies.store import (
    MIGRATIONS,
    Migration,
    PolicyStore,
    StoreError,
    applied_migrations,
    migrate,
    open_backend,
)
from tests.policies.store.workers import policy

EXTRA = Migration(2, "a note on each change", ("ALTER TABLE changes ADD COLUMN note TEXT",))


def _meta(store: PolicyStore) -> str:
    with store.backend.transaction(write=False) as tx:
        return tx.execute("SELECT value FROM store_meta WHERE name = ?", ("schema",))[0][0]


def test_a_new_store_records_its_migrations(store_target: str) -> None:
    with PolicyStore(store_target) as store:
        assert applied_migrations(store.backend) == [m.version for m in MIGRATIONS] == [1]
        assert _meta(store) == "1"
        assert migrate(store.backend) == []  # up to date: nothing applied twice


def test_a_store_from_before_the_version_table_is_adopted(store_target: str) -> None:
    with PolicyStore(store_target) as store:
        store.put([policy("P1")])
        with store.backend.transaction(write=True) as tx:
            tx.execute("DROP TABLE schema_migrations")  # as pagewarden wrote stores until now
    with PolicyStore(store_target) as store:
        assert applied_migrations(store.backend) == [1]
        assert store.get("P1") is not None and store.revision() == 1
        with store.backend.transaction(write=False) as tx:
            rows = tx.execute("SELECT description FROM schema_migrations")
        assert "before the version table" in rows[0][0]


def test_a_newer_store_is_refused_and_left_alone(store_target: str) -> None:
    with PolicyStore(store_target) as store:
        store.put([policy("P1")])
        with store.backend.transaction(write=True) as tx:
            tx.execute(
                "INSERT INTO schema_migrations (version, description, applied_at) VALUES (?, ?, ?)",
                (7, "from the future", "2099-01-01"),
            )
    with pytest.raises(StoreError, match="store schema 7 is newer than this pagewarden"):
        PolicyStore(store_target)
    backend = open_backend(store_target)
    try:
        assert applied_migrations(backend) == [1, 7]
    finally:
        backend.close()


def test_concurrent_openers_apply_each_migration_once(store_target: str) -> None:
    with PolicyStore(store_target) as store:
        store.put([policy("P1")])
    backends = [open_backend(store_target) for _ in range(4)]
    barrier = threading.Barrier(len(backends))
    results: list[list[int]] = []
    errors: list[BaseException] = []

    def run(backend) -> None:
        barrier.wait()
        try:
            results.append(migrate(backend, (*MIGRATIONS, EXTRA)))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(b,)) for b in backends]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not errors, errors
    assert sorted(results) == [[], [], [], [2]]  # one of them applied it, the others found it done
    backend = backends[0]
    assert applied_migrations(backend) == [1, 2]
    with backend.transaction(write=True) as tx:
        tx.execute("UPDATE changes SET note = ? WHERE id = ?", ("the new column", 1))
    for b in backends:
        b.close()
    # this pagewarden (migration 1 only) now refuses the migrated store
    with pytest.raises(StoreError, match="store schema 2 is newer"):
        PolicyStore(store_target)
