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
    SessionView,
    register,
    rule_class,
)
from pagewarden.policies.rules._book import RuleBook

__all__ = [
    "RISK_BASE",
    "CompiledRule",
    "HistoryEntry",
    "RuleBook",
    "RuleContext",
    "SessionView",
    "register",
    "rule_class",
]
