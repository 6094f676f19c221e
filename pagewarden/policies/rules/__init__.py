"""The rules tier: each rule kind compiled into an evaluator; `RuleBook` runs them."""

# Importing the kind modules registers their evaluators.
from pagewarden.policies.rules import (  # noqa: F401
    budget,
    consent,
    elements,
    inputs,
    provenance,
    sensitive,
    sequence,
    urls,
)
from pagewarden.policies.rules._base import (
    RISK_BASE,
    CompiledRule,
    HistoryEntry,
    RuleContext,
    RuleMemory,
    SessionView,
    register,
    rule_class,
)
from pagewarden.policies.rules._book import RuleBook
from pagewarden.policies.rules._instructions import (
    goal_supports_text,
    goal_supports_url,
    instruction_signals,
    reasoning_cites_page,
    reasoning_follows_page,
    significant_tokens,
)
from pagewarden.policies.rules._matching import SelectorError, compile_selector
from pagewarden.policies.rules._taint import TabMemory

__all__ = [
    "RISK_BASE",
    "CompiledRule",
    "HistoryEntry",
    "RuleBook",
    "RuleContext",
    "RuleMemory",
    "SelectorError",
    "SessionView",
    "TabMemory",
    "compile_selector",
    "goal_supports_text",
    "goal_supports_url",
    "instruction_signals",
    "reasoning_cites_page",
    "reasoning_follows_page",
    "register",
    "rule_class",
    "significant_tokens",
]
