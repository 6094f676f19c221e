"""The store's schema and its migrations, recorded in a version table.

Each migration is a numbered list of statements in portable SQL with the backend's dialect
words filled in (``{id}``: an integer key the database assigns; ``{bigint}``). `migrate` applies
the ones a database has not had, in order, each recorded in ``schema_migrations`` in the same
write transaction (write transactions are serialised by every backend, so processes opening a
new store at once apply each migration exactly once). A store written before the version table
existed (``store_meta`` holding ``schema = 1``) is recorded as having had migration 1. A store
that has a migration this pagewarden does not know is refused, never written to.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from pagewarden.policies.store._backend import StoreBackend, StoreError

__all__ = ["MIGRATIONS", "Migration", "applied_migrations", "latest", "migrate"]


@dataclass(frozen=True, slots=True)
class Migration:
    """One step of the schema."""

    version: int
    description: str
    statements: tuple[str, ...]


MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "policies, their versions and the change log", (
        "CREATE TABLE IF NOT EXISTS store_meta (name VARCHAR(64) PRIMARY KEY, value TEXT NOT NULL)",
        """CREATE TABLE IF NOT EXISTS changes (
        id {id},
        at VARCHAR(40) NOT NULL,
        cause VARCHAR(20) NOT NULL,
        detail TEXT NOT NULL,
        actor VARCHAR(200) NOT NULL
    )""",
        """CREATE TABLE IF NOT EXISTS policy_versions (
        policy_id VARCHAR(200) NOT NULL,
        version INTEGER NOT NULL,
        change_id {bigint} NOT NULL REFERENCES changes(id),
        body TEXT,
        PRIMARY KEY (policy_id, version)
    )""",
        """CREATE TABLE IF NOT EXISTS policies (
        policy_id VARCHAR(200) PRIMARY KEY,
        version INTEGER NOT NULL,
        position INTEGER NOT NULL,
        body TEXT NOT NULL
    )""",
        "CREATE INDEX IF NOT EXISTS policy_versions_change ON policy_versions (change_id)",
    )),
)  # fmt: skip

_VERSION_TABLE = """CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY,
    description TEXT NOT NULL,
    applied_at VARCHAR(40) NOT NULL
)"""


def latest(migrations: tuple[Migration, ...] | None = None) -> int:
    """The schema version this pagewarden writes."""
    return max(m.version for m in (MIGRATIONS if migrations is None else migrations))


def applied_migrations(backend: StoreBackend) -> list[int]:
    """The migrations a store has had, in order (empty for a new database)."""
    with backend.transaction(write=False) as tx:
        if not backend.table_exists(tx, "schema_migrations"):
            return []
        return [int(v) for (v,) in tx.execute("SELECT version FROM schema_migrations ORDER BY version")]


def _refuse_newer(backend: StoreBackend, applied: list[int], newest: int) -> None:
    if applied and max(applied) > newest:
        raise StoreError(
            f"{backend.describe()}: store schema {max(applied)} is newer than this pagewarden ({newest}); "
            "upgrade pagewarden to use it"
        )


def migrate(backend: StoreBackend, migrations: tuple[Migration, ...] | None = None) -> list[int]:
    """Bring the store's schema up to date; returns the migrations applied now."""
    migrations = MIGRATIONS if migrations is None else migrations
    newest = latest(migrations)
    applied = applied_migrations(backend)  # an up-to-date store is opened without the write lock
    _refuse_newer(backend, applied, newest)
    if applied and max(applied) == newest and len(applied) == len(migrations):
        return []
    done: list[int] = []
    with backend.transaction(write=True) as tx:
        tx.execute(_VERSION_TABLE)
        have = {int(v) for (v,) in tx.execute("SELECT version FROM schema_migrations")}
        _refuse_newer(backend, sorted(have), newest)
        if not have and backend.table_exists(tx, "store_meta"):
            rows = tx.execute("SELECT value FROM store_meta WHERE name = ?", ("schema",))
            before = int(rows[0][0]) if rows else 0  # a store from before the version table
            _refuse_newer(backend, [before], newest)
            for m in migrations:
                if m.version <= before:
                    _record(tx, m, "recorded: store made before the version table")
                    have.add(m.version)
        for m in sorted(migrations, key=lambda m: m.version):
            if m.version in have:
                continue
            for statement in m.statements:
                tx.execute(statement.format(**backend.types))
            _record(tx, m, m.description)
            done.append(m.version)
        tx.execute(
            "INSERT INTO store_meta (name, value) VALUES (?, ?) "
            "ON CONFLICT (name) DO UPDATE SET value = excluded.value",
            ("schema", str(newest)),
        )
    return done


def _record(tx, migration: Migration, description: str) -> None:
    tx.execute(
        "INSERT INTO schema_migrations (version, description, applied_at) VALUES (?, ?, ?)",
        (migration.version, description[:500], datetime.now(UTC).isoformat(timespec="milliseconds")),
    )
