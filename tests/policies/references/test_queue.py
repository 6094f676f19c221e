"""HarmonyGuard's Algorithm 1, exactly: FIFO bounds per risk level and the Gestalt filter."""

from __future__ import annotations

from difflib import SequenceMatcher

import pytest

from pagewarden.policies import Policy
from pagewarden.policies.references import DEFAULT_SIZES, ReferenceQueue, similarity


def _policy(risk: str) -> Policy:
    return Policy(id="P1", category="boundary", risk_level=risk, description="Do not visit /admin.")


@pytest.mark.parametrize("risk, size", [("low", 5), ("medium", 7), ("high", 10)])
def test_fifo_bounded_by_risk_level(risk: str, size: int) -> None:
    rules = ReferenceQueue()
    policy = _policy(risk)
    texts = [f"violation {i}: " + "xyzw"[i % 4] * (i + 5) + str(i * 7919) for i in range(size + 3)]
    for text in texts:
        policy = rules.add(policy, text) or policy
    assert [r.text for r in policy.references] == texts[-size:]  # the oldest went first
    assert DEFAULT_SIZES[risk] == size


def test_similarity_threshold_is_inclusive_at_0_85() -> None:
    rules = ReferenceQueue()
    base = "clicked Delete on repository acme/webapp settings page"
    policy = rules.add(_policy("high"), base)
    # find an edit with ratio exactly >= 0.85 and one just below
    near = base.replace("acme/webapp", "acme/webapi")
    far = "typed the API token into a form on evil.test/collect"
    assert similarity(near, base) >= 0.85 and rules.add(policy, near) is None
    assert similarity(far, base) < 0.85 and rules.add(policy, far) is not None
    # exactly at θ: dropped (>= θ)
    a, b = "abcdefghijklmnopqrst", "abcdefghijklmnopqXYZ"
    ratio = SequenceMatcher(None, a, b).ratio()
    at = ReferenceQueue(threshold=ratio)
    assert at.add(at.add(_policy("low"), a), b) is None
    above = ReferenceQueue(threshold=ratio + 0.001)
    assert above.add(above.add(_policy("low"), a), b) is not None


def test_configurable_sizes_case_insensitive_and_validated() -> None:
    rules = ReferenceQueue(sizes={"LOW": 1, "Medium": 2, "high": 3}, threshold=0.9)
    policy = _policy("medium")
    for text in ("first completely different", "second 1234567890", "third zzzzzzzzzzzzz"):
        policy = rules.add(policy, text) or policy
    assert [r.text for r in policy.references] == ["second 1234567890", "third zzzzzzzzzzzzz"]
    with pytest.raises(ValueError, match="missing"):
        ReferenceQueue(sizes={"low": 1, "medium": 2})
    with pytest.raises(ValueError, match=">= 1"):
        ReferenceQueue(sizes={"low": 0, "medium": 2, "high": 3})
    with pytest.raises(ValueError, match="threshold"):
        ReferenceQueue(threshold=0)
    assert rules.add(policy, "   ") is None
