"""The LLM world model: SafePred's predicted delta, on top of the static prediction.

The static prediction (destination, form target and data, consequence, cross-site) is
given to the model as established fact; the model adds what only reading the page can:
the semantic change, the elements that appear or go, the long-term impact, and the policies
the action — or the next steps of the agent's stated plan — would violate. The risk of a
plan is computed here from the named policies' risk levels, weighted 1, 1/2, 1/4 … by how
far ahead the step is, and normalised; the model never gives a number.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from pagewarden.llm import PromptTemplate
from pagewarden.steps import Prediction

__all__ = ["plan_risk", "prediction_fields", "refine_prediction", "render_prediction_prompt"]

RISK_BASE: dict[str, float] = {"low": 0.3, "medium": 0.6, "high": 0.9}


def prediction_fields(*, short_term: bool = True, long_term: bool = True, lookahead: int = 2) -> list[str]:
    """The world model's answer fields, as described to the model: what each means, not its
    JSON shape (the schema goes with the request, or after the prompt where the server has no
    structured output)."""
    fields = []
    if short_term:
        fields.append(
            "- semantic_delta: what the action changes on the page (1-2 sentences); "
            "element_changes: names of elements that appear (new) or disappear (removed)"
        )
    if long_term:
        fields.append(
            "- long_term_impact: lasting effects beyond the page (data that leaves, state that "
            'changes, anything irreversible), or ""'
        )
    if lookahead > 0:
        fields.append(
            f"- future_steps: the next steps (at most {lookahead}) the agent's reasoning says it will "
            "take after this one, each with the ids it would violate; [] if it states no plan"
        )
    return fields


def render_prediction_prompt(
    sections: Mapping[str, str], *, short_term: bool = True, long_term: bool = True, lookahead: int = 2
) -> list[dict[str, str]]:
    """The world model's own prompt (split mode)."""
    fields = [
        *prediction_fields(short_term=short_term, long_term=long_term, lookahead=lookahead),
        "- violated_policy_ids: ids this action violates ([] if none); risk_explanation: the evidence",
        '- optimization_guidance: what the agent should do instead, if anything is violated, else ""',
    ]
    template = PromptTemplate.load("pagewarden.worldmodel", "prompts/predict.txt")
    return template.render(**sections, fields="\n".join(fields))


def plan_risk(steps: Sequence[Sequence[str]], risk_of: Mapping[str, str]) -> tuple[float, int, str | None]:
    """Multi-step risk of a plan: `steps[0]` is the current action's violated ids, then the
    predicted next steps'. Each step's risk is the highest risk level among its known ids;
    weights 1, 1/2, 1/4 …; normalised by the weights of all predicted steps.

    Returns (risk, index of the riskiest later step or 0, its worst policy id or None).
    """
    if not steps:
        return 0.0, 0, None
    total = weighted = 0.0
    worst: tuple[float, int, str | None] = (0.0, 0, None)
    for index, ids in enumerate(steps):
        weight = 0.5**index
        known = [(RISK_BASE[risk_of[i]], i) for i in ids if i in risk_of]
        risk, policy = max(known) if known else (0.0, None)
        total += weight
        weighted += weight * risk
        if index > 0 and risk * weight > worst[0]:
            worst = (risk * weight, index, policy)
    return round(weighted / total, 4), worst[1], worst[2]


def refine_prediction(
    static: Prediction | None,
    *,
    semantic_delta: str = "",
    element_changes: Mapping[str, list[str]] | None = None,
    long_term_impact: str = "",
    violated_policy_ids: Sequence[str] = (),
    risk_explanation: str = "",
    optimization_guidance: str = "",
) -> Prediction:
    """The static prediction with the model's delta added (static facts are kept)."""
    base = static or Prediction()
    changes = {k: list(v) for k, v in (element_changes or {}).items() if v}
    impact = "; ".join(x for x in (base.long_term_impact, long_term_impact) if x)
    return replace(
        base,
        semantic_delta=semantic_delta or base.semantic_delta,
        element_changes=changes or base.element_changes,
        long_term_impact=impact,
        violated_policy_ids=tuple(dict.fromkeys([*base.violated_policy_ids, *violated_policy_ids])),
        risk_explanation="; ".join(x for x in (base.risk_explanation, risk_explanation) if x),
        optimization_guidance=optimization_guidance or base.optimization_guidance,
        source="static+llm",
    )
