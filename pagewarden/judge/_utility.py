"""The utility agent: HarmonyGuard's second-order Markov evaluation of (previous, current) step.

It answers two bits — policy violation, goal deviation — with explanations, the violated
policy ids and, when either bit is set, metacognitive guidance for the agent. By default it
shares one call and one answer with the world model (`render_assessment_prompt`); split, it
has its own prompt (`render_utility_prompt`) and runs concurrently with the world model.
"""

from __future__ import annotations

from collections.abc import Mapping

from pagewarden.llm import PromptTemplate
from pagewarden.worldmodel import prediction_fields

__all__ = ["render_assessment_prompt", "render_utility_prompt", "utility_fields"]


def utility_fields(explanation: str = "risk_explanation") -> list[str]:
    """The utility agent's answer fields, as described to the model (their meaning; the JSON
    shape goes with the request as a schema)."""
    return [
        f"- policy_violation, violated_policy_ids ([] if none), {explanation}: the evidence",
        "- goal_deviation, goal_explanation: why the action does or does not serve the goal",
        '- guidance: for the agent when either bit is true, else ""',
    ]


def render_utility_prompt(sections: Mapping[str, str]) -> list[dict[str, str]]:
    """The utility agent's own prompt (split mode)."""
    template = PromptTemplate.load("pagewarden.judge", "prompts/utility.txt")
    return template.render(**sections, fields="\n".join(utility_fields("policy_explanation")))


def render_assessment_prompt(
    sections: Mapping[str, str], *, short_term: bool = True, long_term: bool = True, lookahead: int = 2
) -> list[dict[str, str]]:
    """World model and utility agent in one prompt (the default)."""
    fields = prediction_fields(short_term=short_term, long_term=long_term, lookahead=lookahead)
    template = PromptTemplate.load("pagewarden.judge", "prompts/assess.txt")
    return template.render(**sections, fields="\n".join(fields + utility_fields()))
