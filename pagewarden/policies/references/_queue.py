"""HarmonyGuard's Algorithm 1: a bounded, de-duplicated FIFO of violation references per policy.

For a new reference r of policy p: if its Gestalt similarity (difflib's `SequenceMatcher`
ratio) to any reference already queued for p is at least θ (default 0.85), r is dropped;
otherwise r is appended and, when the queue holds more than the size for p's risk level
(defaults: low 5, medium 7, high 10), the oldest references are dropped.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from difflib import SequenceMatcher

from pagewarden.policies._model import Policy, Reference

__all__ = ["DEFAULT_SIZES", "DEFAULT_THRESHOLD", "ReferenceQueue", "similarity"]

DEFAULT_SIZES: dict[str, int] = {"low": 5, "medium": 7, "high": 10}
DEFAULT_THRESHOLD = 0.85


def similarity(a: str, b: str) -> float:
    """Gestalt pattern matching ratio (Ratcliff/Obershelp, difflib) of two texts."""
    return SequenceMatcher(None, a, b).ratio()


@dataclass(frozen=True)
class ReferenceQueue:
    """The reference queue rules: sizes per risk level (keys case-insensitive) and θ."""

    sizes: Mapping[str, int] = field(default_factory=lambda: dict(DEFAULT_SIZES))
    threshold: float = DEFAULT_THRESHOLD

    def __post_init__(self) -> None:
        sizes = {str(k).strip().lower(): v for k, v in self.sizes.items()}
        missing = sorted(set(DEFAULT_SIZES) - set(sizes))
        if missing:
            raise ValueError(f"reference queue sizes missing for risk level(s) {missing}")
        if any(not isinstance(v, int) or isinstance(v, bool) or v < 1 for v in sizes.values()):
            raise ValueError(f"reference queue sizes must be integers >= 1, got {sizes}")
        if not 0.0 < self.threshold <= 1.0:
            raise ValueError(f"the similarity threshold must be in (0, 1], got {self.threshold}")
        object.__setattr__(self, "sizes", sizes)

    def size_for(self, policy: Policy) -> int:
        """The queue size for a policy (by its risk level)."""
        return self.sizes[str(policy.risk_level.value).lower()]

    def duplicate(self, policy: Policy, text: str) -> Reference | None:
        """The queued reference that `text` is too similar to, if any.

        The ratio is exactly difflib's; its cheap upper bounds (`real_quick_ratio`, then
        `quick_ratio`) rule out most pairs before the full computation. Between comparisons the
        thread yields (``time.sleep(0)``), so filing on a worker thread never holds the GIL
        against the agent's thread for long."""
        for reference in policy.references:
            if reference.text == text:
                return reference
            matcher = SequenceMatcher(None, text, reference.text)
            if (
                matcher.real_quick_ratio() >= self.threshold
                and matcher.quick_ratio() >= self.threshold
                and matcher.ratio() >= self.threshold
            ):
                return reference
            time.sleep(0)
        return None

    def add(self, policy: Policy, text: str, *, added: str | None = None) -> Policy | None:
        """`policy` with the reference `text` filed (the queue bounded), or None when a
        similar reference is already queued (or `text` is empty)."""
        text = text.strip()
        if not text or self.duplicate(policy, text) is not None:
            return None
        stamp = added or datetime.now(UTC).isoformat(timespec="seconds")
        references = [*policy.references, Reference(text=text, added=stamp)]
        references = references[-self.size_for(policy) :]
        return policy.model_copy(update={"references": references})
