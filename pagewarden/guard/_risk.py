"""Graded risk: findings and the prediction combine into a score and a `Decision`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pagewarden.steps import Consequence, Decision, Finding, Prediction

__all__ = ["Thresholds", "adjust_scores", "combine", "decide"]


@dataclass(frozen=True, slots=True)
class Thresholds:
    """Score cut-offs: at or above `block` → BLOCK, `ask` → ASK, `revise` → REVISE."""

    block: float = 0.7
    ask: float = 0.5
    revise: float = 0.25
    #: added to a finding's score when the predicted consequence is irreversible / consequential
    irreversible_bump: float = 0.15
    consequential_bump: float = 0.05
    cross_site_bump: float = 0.05

    def __post_init__(self) -> None:
        if not 0 <= self.revise <= self.ask <= self.block <= 1:
            raise ValueError("thresholds must satisfy 0 <= revise <= ask <= block <= 1")


def _bump(prediction: Prediction | None, t: Thresholds) -> float:
    """What the predicted consequence adds to every finding's score."""
    bump = 0.0
    if prediction is not None:
        if prediction.consequence is Consequence.IRREVERSIBLE:
            bump += t.irreversible_bump
        elif prediction.consequence is Consequence.CONSEQUENTIAL:
            bump += t.consequential_bump
        if prediction.navigation is not None and prediction.navigation.cross_site:
            bump += t.cross_site_bump
    return bump


def adjust_scores(findings: Sequence[Finding], prediction: Prediction | None, t: Thresholds) -> list[float]:
    """Each finding's score, raised by what the world model predicts the action does."""
    bump = _bump(prediction, t)
    return [min(1.0, round(f.score + bump, 4)) if f.score > 0 else 0.0 for f in findings]


def combine(scores: Sequence[float]) -> float:
    """Noisy-or of independent concerns: 1 - Π(1 - s)."""
    remaining = 1.0
    for score in scores:
        remaining *= 1.0 - max(0.0, min(1.0, score))
    return round(1.0 - remaining, 4)


def decide(
    findings: Sequence[Finding], prediction: Prediction | None, t: Thresholds
) -> tuple[Decision, float]:
    """The decision and overall score for a step's findings.

    Consent-type findings ask for a human instead of blocking; the others are combined
    and compared with the thresholds.
    """
    if not findings:
        return Decision.ALLOW, 0.0
    bump = _bump(prediction, t)
    # noisy-or of all findings, and of those that do not only ask for approval, over the
    # scores `adjust_scores` gives (computed in the same pass)
    remaining = remaining_hard = 1.0
    asks = False
    #: 1 - adjusted score, by score (findings of many policies share a few scores)
    lefts: dict[float, float] = {}
    for finding in findings:
        score = finding.score
        left = lefts.get(score)
        if left is None:
            left = lefts[score] = 1.0 - max(0.0, min(1.0, round(score + bump, 4))) if score > 0 else 1.0
        remaining *= left
        if finding.requires_approval:
            asks = True
        else:
            remaining_hard *= left
    overall = round(1.0 - remaining, 4)
    hard = round(1.0 - remaining_hard, 4)
    if hard >= t.block:
        return Decision.BLOCK, overall
    if asks or hard >= t.ask:
        return Decision.ASK, overall
    if hard >= t.revise:
        return Decision.REVISE, overall
    return Decision.ALLOW, overall
