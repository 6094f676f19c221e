"""The structured answers the model gives: world model, utility agent, or both in one.

The two decision bits (`policy_violation`, `goal_deviation`) and the violated ids are
required, so an empty or partial answer fails validation (and the guard fails closed)
instead of reading as "nothing wrong". There is no risk field: the guard computes the risk
from the named policies' risk levels.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

__all__ = ["Assessment", "ElementChanges", "PlannedStep", "UtilityAnswer", "WorldModelAnswer"]

_TEXT = 1200
#: Long answers are cut, not rejected (a verbose model is not a failed one).
Text = Annotated[str, AfterValidator(lambda s: s[:_TEXT])]
Ids = Annotated[list[str], AfterValidator(lambda ids: [i.strip()[:80] for i in ids[:20] if i.strip()])]
Names = Annotated[list[str], AfterValidator(lambda names: [n[:200] for n in names[:20]])]


class _Answer(BaseModel):
    model_config = ConfigDict(extra="ignore", str_strip_whitespace=True)


class ElementChanges(_Answer):
    """Elements the action makes appear or disappear."""

    new: Names = Field(default_factory=list)
    removed: Names = Field(default_factory=list)


class PlannedStep(_Answer):
    """One later step of the agent's stated plan, and the policies it would violate."""

    action: Text = ""
    violated_policy_ids: Ids = Field(default_factory=list)


class WorldModelAnswer(_Answer):
    """SafePred's predicted state delta."""

    semantic_delta: Text = ""
    element_changes: ElementChanges = Field(default_factory=ElementChanges)
    long_term_impact: Text = ""
    future_steps: Annotated[list[PlannedStep], AfterValidator(lambda steps: steps[:8])] = Field(
        default_factory=list
    )
    violated_policy_ids: Ids
    risk_explanation: Text = ""
    optimization_guidance: Text = ""


class UtilityAnswer(_Answer):
    """HarmonyGuard's two bits, with explanations and guidance for the agent."""

    policy_violation: bool
    violated_policy_ids: Ids = Field(default_factory=list)
    policy_explanation: Text = ""
    goal_deviation: bool
    goal_explanation: Text = ""
    guidance: Text = ""


class Assessment(_Answer):
    """World model and utility agent in one answer (the default: one call per step)."""

    semantic_delta: Text = ""
    element_changes: ElementChanges = Field(default_factory=ElementChanges)
    long_term_impact: Text = ""
    future_steps: Annotated[list[PlannedStep], AfterValidator(lambda steps: steps[:8])] = Field(
        default_factory=list
    )
    policy_violation: bool
    violated_policy_ids: Ids = Field(default_factory=list)
    risk_explanation: Text = ""
    goal_deviation: bool
    goal_explanation: Text = ""
    guidance: Text = ""

    @classmethod
    def merge(cls, world: WorldModelAnswer, utility: UtilityAnswer) -> Assessment:
        """The two answers of split mode as one (violations named by either count)."""
        ids = list(dict.fromkeys([*utility.violated_policy_ids, *world.violated_policy_ids]))
        explanation = "; ".join(x for x in (utility.policy_explanation, world.risk_explanation) if x)
        guidance = " ".join(x for x in (utility.guidance, world.optimization_guidance) if x)
        return cls(
            semantic_delta=world.semantic_delta,
            element_changes=world.element_changes,
            long_term_impact=world.long_term_impact,
            future_steps=world.future_steps,
            policy_violation=utility.policy_violation or bool(world.violated_policy_ids),
            violated_policy_ids=ids,
            risk_explanation=explanation[:_TEXT],
            goal_deviation=utility.goal_deviation,
            goal_explanation=utility.goal_explanation,
            guidance=guidance[:_TEXT],
        )
