"""`decide` combines the findings' adjusted scores (`adjust_scores`) into one decision."""

from __future__ import annotations

import random

import pytest

from pagewarden.guard import Thresholds
from pagewarden.guard._risk import adjust_scores, combine, decide
from pagewarden.steps import Consequence, Decision, Finding, Navigation, Prediction


def _reference(
    findings: list[Finding], prediction: Prediction | None, t: Thresholds
) -> tuple[Decision, float]:
    """The decision spelled out from `adjust_scores` and `combine`."""
    if not findings:
        return Decision.ALLOW, 0.0
    scores = adjust_scores(findings, prediction, t)
    overall = combine(scores)
    hard = combine([s for s, f in zip(scores, findings, strict=True) if not f.requires_approval])
    if hard >= t.block:
        return Decision.BLOCK, overall
    if any(f.requires_approval for f in findings) or hard >= t.ask:
        return Decision.ASK, overall
    if hard >= t.revise:
        return Decision.REVISE, overall
    return Decision.ALLOW, overall


@pytest.mark.parametrize("seed", range(4))
def test_decide_is_the_noisy_or_of_the_adjusted_scores(seed: int) -> None:
    rng = random.Random(seed)
    scores = [0.0, -0.2, 0.05, 0.1, 0.3, 0.5999, 0.6, 0.9, 0.95, 1.0, 1.3, float("nan")]
    for _ in range(400):
        findings = [
            Finding(f"P{i}", "r", "m", score=rng.choice(scores), requires_approval=rng.random() < 0.2)
            for i in range(rng.randrange(0, 6))
        ]
        navigation = Navigation("http://x.test/", "link", cross_site=rng.random() < 0.5)
        prediction = rng.choice(
            [None, Prediction(), Prediction(navigation=navigation, consequence=rng.choice(list(Consequence)))]
        )
        bumps = rng.choice([(0.15, 0.05, 0.05), (0.0, 0.0, 0.0), (-0.5, -0.2, 0.1)])
        t = Thresholds(irreversible_bump=bumps[0], consequential_bump=bumps[1], cross_site_bump=bumps[2])
        assert decide(findings, prediction, t) == _reference(findings, prediction, t), (findings, prediction)
