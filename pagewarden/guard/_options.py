"""How the guard uses the model (`CascadeOptions`): when the semantic tier is consulted, what
it is shown, and what happens when it cannot judge."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["CascadeOptions", "ConsultMode", "ObservationMode"]

ConsultMode = Literal["consequential", "always", "never"]
ObservationMode = Literal["targeted", "page"]


@dataclass(frozen=True, slots=True)
class CascadeOptions:
    """How the guard uses the model.

    Args:
        consult: ``consequential`` (the cascade, default), ``always`` or ``never``.
        on_failure: a consulted action the model could not judge is blocked (``block``)
            or sent to the approver (``ask``).
        harmless_on_failure: with ``consult="always"``, what happens to an action the
            cascade would not have consulted when the model fails: ``allow`` (default),
            ``block`` or ``ask``.
        split: world model and utility agent as two concurrent calls instead of one.
        short_term / long_term: ask for the immediate delta / the lasting impact.
        lookahead: later steps of the agent's stated plan to predict (0 = none).
        tree_budget: tokens the pruned accessibility tree may take in a prompt.
        step_deadline: seconds the whole consultation may take, retries included.
        max_policies / max_references: policies shown per call, past violations per policy.
        model_weight: confidence given to the model's findings (scales the policies' risk).
        observation: what a consulted step shows the model when the step carries no aria
            snapshot: ``targeted`` (default; the target, its form, provenance and
            surroundings, what changed, and the page lines that give orders or that the
            agent cites: bounded whatever the page size) or ``page`` (the whole page's aria
            snapshot, pruned to `tree_budget`: slower on large pages).
    """

    consult: ConsultMode = "consequential"
    on_failure: Literal["block", "ask"] = "block"
    harmless_on_failure: Literal["allow", "block", "ask"] = "allow"
    split: bool = False
    short_term: bool = True
    long_term: bool = True
    lookahead: int = 2
    tree_budget: int = 2000
    step_deadline: float = 60.0
    max_policies: int = 12
    max_references: int = 3
    model_weight: float = 1.0
    observation: ObservationMode = "targeted"

    def __post_init__(self) -> None:
        problems = []
        if self.observation not in ("targeted", "page"):
            problems.append(f"observation must be 'targeted' or 'page', not {self.observation!r}")
        if self.consult not in ("consequential", "always", "never"):
            problems.append(f"consult must be 'consequential', 'always' or 'never', not {self.consult!r}")
        if self.on_failure not in ("block", "ask"):
            problems.append(f"on_failure must be 'block' or 'ask', not {self.on_failure!r}")
        if self.harmless_on_failure not in ("allow", "block", "ask"):
            problems.append(
                f"harmless_on_failure must be 'allow', 'block' or 'ask', not {self.harmless_on_failure!r}"
            )
        if not 0 <= self.lookahead <= 8:
            problems.append("lookahead must be between 0 and 8")
        if self.tree_budget < 64:
            problems.append("tree_budget must be at least 64 tokens")
        if self.step_deadline <= 0:
            problems.append("step_deadline must be positive")
        if not 0 < self.model_weight <= 1:
            problems.append("model_weight must be in (0, 1]")
        if self.max_policies < 1 or self.max_references < 0:
            problems.append("max_policies must be >= 1 and max_references >= 0")
        if problems:
            raise ValueError("; ".join(problems))
