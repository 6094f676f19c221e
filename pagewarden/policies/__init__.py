"""Policies: the model, loading and validation, rule kinds, the built-in baseline."""

from __future__ import annotations

from functools import cache
from importlib import resources

from pagewarden.policies._lint import domain_pattern_problem, lint_policies
from pagewarden.policies._loader import PolicyError, PolicySet, Problem
from pagewarden.policies._model import Category, Policy, PolicySource, Reference, RiskLevel
from pagewarden.policies._reference import FieldDoc, KindDoc, reference_markdown, rule_reference
from pagewarden.policies._rules_schema import (
    ACTION_KINDS,
    NAMED_PATTERNS,
    RULE_KINDS,
    ActionBudgetRule,
    ConsentRule,
    DomainAllowRule,
    DomainDenyRule,
    ForbidElementRule,
    InputAllowRule,
    InstructionProvenanceRule,
    InternalAddressesRule,
    LookalikeHostsRule,
    Rule,
    SensitiveDataRule,
    SequenceRule,
    SequenceStep,
    UrlAllowRule,
    UrlCredentialsRule,
    UrlDenyRule,
    parse_rule,
    rule_to_dict,
)
from pagewarden.policies._selectors import Selector, SelectorError, compile_selector, element_texts, normalise

__all__ = [
    "ACTION_KINDS",
    "NAMED_PATTERNS",
    "RULE_KINDS",
    "ActionBudgetRule",
    "Category",
    "ConsentRule",
    "DomainAllowRule",
    "DomainDenyRule",
    "FieldDoc",
    "ForbidElementRule",
    "InputAllowRule",
    "InstructionProvenanceRule",
    "InternalAddressesRule",
    "KindDoc",
    "LookalikeHostsRule",
    "Policy",
    "PolicyError",
    "PolicySet",
    "PolicySource",
    "Problem",
    "Reference",
    "RiskLevel",
    "Rule",
    "Selector",
    "SelectorError",
    "SensitiveDataRule",
    "SequenceRule",
    "SequenceStep",
    "UrlAllowRule",
    "UrlCredentialsRule",
    "UrlDenyRule",
    "baseline_policies",
    "compile_selector",
    "domain_pattern_problem",
    "element_texts",
    "lint_policies",
    "normalise",
    "parse_rule",
    "reference_markdown",
    "rule_reference",
    "rule_to_dict",
]


@cache
def baseline_policies() -> PolicySet:
    """The guard's built-in policies (prompt injection, credentials, scripts).

    Parsed once per process: a `PolicySet` is immutable, so every guard can share it.
    """
    text = resources.files("pagewarden.policies").joinpath("baseline.yaml").read_text("utf-8")
    return PolicySet.from_text(text, source="<pagewarden baseline>")
