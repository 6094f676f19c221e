"""`Decision`, `Finding` and `Verdict`: what the guard concluded about a step."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from pagewarden._serde import from_data, to_data
from pagewarden.steps._prediction import Prediction

__all__ = ["Decision", "Finding", "Verdict"]


class Decision(StrEnum):
    """What happens to the action."""

    ALLOW = "allow"  # it runs
    BLOCK = "block"  # ActionBlocked
    ASK = "ask"  # ApprovalRequired unless an approver approves
    REVISE = "revise"  # RevisionRequired, with guidance; nothing ran


@dataclass(frozen=True, slots=True)
class Finding:
    """One concern raised by one rule of one policy (or by a tier itself)."""

    policy_id: str
    rule: str  # rule kind, or the tier ("tier:llm") for tier-level findings
    message: str
    risk_level: str = "medium"
    category: str = ""
    score: float = 0.0  # this finding's risk in [0, 1]
    requires_approval: bool = False  # consent-type: ASK rather than BLOCK unless score says so
    guidance: str = ""
    evidence: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Verdict:
    """The guard's conclusion for one step."""

    decision: Decision
    score: float = 0.0
    findings: tuple[Finding, ...] = ()
    explanation: str = ""
    guidance: str = ""
    prediction: Prediction | None = None
    timings_ms: dict[str, float] = field(default_factory=dict)
    tier_errors: tuple[str, ...] = ()
    mode: str = "enforce"
    enforced: bool = True  # False in monitor mode: the decision was logged, not applied
    approved_by: str | None = None
    step_index: int = 0
    #: the tiers that judged this step: "rules", "worldmodel", and "llm" when the model was consulted
    tiers: tuple[str, ...] = ()
    #: the model consultation's accounting: why it was consulted, calls, tokens, latency, cost,
    #: pruned / whole tree tokens, and the error when it could not judge
    llm: dict[str, Any] = field(default_factory=dict)

    @property
    def violated_policy_ids(self) -> list[str]:
        """Ids of the policies with findings, most severe first, without repeats."""
        seen: dict[str, None] = {}
        for finding in sorted(self.findings, key=lambda f: -f.score):
            seen.setdefault(finding.policy_id, None)
        return list(seen)

    @property
    def allowed(self) -> bool:
        """Whether the action may run (ALLOW, an approved ASK, or monitor mode)."""
        return self.decision is Decision.ALLOW or not self.enforced or self.approved_by is not None

    def to_dict(self) -> dict[str, Any]:
        """JSON form (as recorded in traces)."""
        data = to_data(self)
        data["decision"] = self.decision.value
        data["violated_policy_ids"] = self.violated_policy_ids
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Verdict:
        """Rebuild from `to_dict` output."""
        data = {k: v for k, v in data.items() if k != "violated_policy_ids"}
        return from_data(cls, data, "verdict")
