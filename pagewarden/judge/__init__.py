"""pagewarden.judge."""
from pagewarden.judge._answers import Assessment, UtilityAnswer, WorldModelAnswer
from pagewarden.judge._context import StepContext, build_context, select_policies
from pagewarden.judge._evidence import evidence_lines
from pagewarden.judge._observation import PAGE_TEXT_CHARS, PAGE_TEXT_TIMEOUT_MS, as_text_lines
from pagewarden.judge._steering import addresses_judge, fenced_data, relayed_instructions
from pagewarden.judge._tree import PrunedTree, prune_for_prompt
from pagewarden.judge._utility import render_assessment_prompt, render_utility_prompt

__all__ = [
    "PAGE_TEXT_CHARS",
    "PAGE_TEXT_TIMEOUT_MS",
    "Assessment",
    "PrunedTree",
    "StepContext",
    "UtilityAnswer",
    "WorldModelAnswer",
    "addresses_judge",
    "as_text_lines",
    "build_context",
    "evidence_lines",
    "fenced_data",
    "prune_for_prompt",
    "relayed_instructions",
    "render_assessment_prompt",
    "render_utility_prompt",
    "select_policies",
]
