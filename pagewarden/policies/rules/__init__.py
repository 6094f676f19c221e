"""The rules tier: each rule kind compiled into an evaluator; `RuleBook` runs them."""

# Importing the kind modules registers their evaluators.
from pagewarden.policies.rules import consent, provenance, sensitive  # noqa: F401
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
