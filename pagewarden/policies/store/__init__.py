"""The policy store: versioned policies and violation references in SQLite (WAL, the embedded
default) or PostgreSQL (a fleet), safe for several guarded sessions and processes at once;
schema migrations recorded in a version table; a `StoreBackend` interface for others."""

from __future__ import annotations

from pagewarden.policies.store._backend import SQLiteBackend, StoreBackend, StoreError, Transaction
from pagewarden.policies.store._postgres import PostgresBackend, is_postgres_url, redact_url
from pagewarden.policies.store._schema import MIGRATIONS, Migration, applied_migrations, migrate
from pagewarden.policies.store._store import CAUSES, Change, PolicyStore, PolicyVersion, open_backend

__all__ = [
    "CAUSES",
    "MIGRATIONS",
    "Change",
    "Migration",
    "PolicyStore",
    "PolicyVersion",
    "PostgresBackend",
    "SQLiteBackend",
    "StoreBackend",
    "StoreError",
    "Transaction",
    "applied_migrations",
    "is_postgres_url",
    "migrate",
    "open_backend",
    "redact_url",
]
