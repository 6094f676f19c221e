"""Policies: the model, loading and validation, rule kinds, the built-in baseline."""

from __future__ import annotations

from functools import cache
from importlib import resources

from pagewarden.policies._egress import (
    AGENT_ACTIONS,
    NETWORK_POLICY,
    REFUSALS_KEPT,
    EgressRules,
    Refusal,
    RefusalSink,
    refusals_verdict,
    reported_to_agent,
)
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
    Rule,
    SensitiveDataRule,
    SequenceRule,
    SequenceStep,
    UrlAllowRule,
    UrlDenyRule,
    parse_rule,
    rule_to_dict,
)

__all__ = [
    "ACTION_KINDS",
    "AGENT_ACTIONS",
    "NAMED_PATTERNS",
    "NETWORK_POLICY",
    "REFUSALS_KEPT",
    "RULE_KINDS",
    "ActionBudgetRule",
    "Category",
    "ConsentRule",
    "DomainAllowRule",
    "DomainDenyRule",
    "EgressRules",
    "FieldDoc",
    "ForbidElementRule",
    "InputAllowRule",
    "InstructionProvenanceRule",
    "KindDoc",
    "Policy",
    "PolicyError",
    "PolicySet",
    "PolicySource",
    "Problem",
    "Reference",
    "Refusal",
    "RefusalSink",
    "RiskLevel",
    "Rule",
    "SensitiveDataRule",
    "SequenceRule",
    "SequenceStep",
    "UrlAllowRule",
    "UrlDenyRule",
    "baseline_policies",
    "domain_pattern_problem",
    "lint_policies",
    "parse_rule",
    "reference_markdown",
    "refusals_verdict",
    "reported_to_agent",
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
