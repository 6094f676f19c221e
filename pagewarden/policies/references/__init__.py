"""Violation references (HarmonyGuard's Algorithm 1): the guard's confirmed violations, filed
under the policies they violated, shown to the semantic tier as examples."""

from __future__ import annotations

from typing import Any

from pagewarden.policies.references._filer import ReferenceFiler, confirmed_violation, reference_text
from pagewarden.policies.references._queue import DEFAULT_SIZES, DEFAULT_THRESHOLD, ReferenceQueue, similarity

__all__ = [
    "DEFAULT_SIZES",
    "DEFAULT_THRESHOLD",
    "ReferenceFiler",
    "ReferenceQueue",
    "attach_references",
    "confirmed_violation",
    "reference_text",
    "similarity",
]


def attach_references(guard: Any, references: Any) -> ReferenceFiler:
    """Subscribe a `ReferenceFiler` to `guard` for `Guard(references=…)`: a `PolicyStore`, a
    path of one, or a ready `ReferenceFiler`."""
    from pagewarden.policies.store import PolicyStore

    if isinstance(references, ReferenceFiler):
        filer = references
        filer.guard = filer.guard or guard
    else:
        owned = not isinstance(references, PolicyStore)
        store = PolicyStore(references) if owned else references
        filer = ReferenceFiler(store, guard=guard)
        filer.owns_store = owned
    filer._refresh(force=True)
    guard.subscribe(filer)
    return filer
