"""The policy store: versioned policies and violation references in SQLite (WAL), safe for
several guarded sessions and processes at once; a `StoreBackend` interface for others."""

from __future__ import annotations

from pagewarden.policies.store._backend import SQLiteBackend, StoreBackend, StoreError, Transaction
from pagewarden.policies.store._store import CAUSES, Change, PolicyStore, PolicyVersion

__all__ = [
    "CAUSES",
    "Change",
    "PolicyStore",
    "PolicyVersion",
    "SQLiteBackend",
    "StoreBackend",
    "StoreError",
    "Transaction",
]
