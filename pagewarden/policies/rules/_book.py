"""`RuleBook`: a policy set compiled into evaluators, indexed by the action kinds they watch."""

from __future__ import annotations

from collections.abc import Iterable

from pagewarden.guard._verdict import Finding
from pagewarden.policies._model import Policy
from pagewarden.policies.rules._base import RISK_BASE, CompiledRule, RuleContext, rule_class

__all__ = ["RuleBook"]


class RuleBook:
    """Compiled rules of a set of policies; `evaluate` runs those that watch the action."""

    def __init__(self, policies: Iterable[Policy]) -> None:
        self.rules: list[CompiledRule] = []
        self._by_kind: dict[str, list[CompiledRule]] = {}
        self._every: list[CompiledRule] = []
        for policy in policies:
            for rule in policy.rules:
                compiled = rule_class(rule.kind)(policy, rule)
                self.rules.append(compiled)
                if compiled.kinds is None:
                    self._every.append(compiled)
                else:
                    for kind in compiled.kinds:
                        self._by_kind.setdefault(kind, []).append(compiled)

    def __len__(self) -> int:
        return len(self.rules)

    def rules_for(self, action_kind: str) -> list[CompiledRule]:
        """The evaluators that look at `action_kind`, in policy order."""
        specific = self._by_kind.get(action_kind, [])
        if not specific:
            return self._every
        if not self._every:
            return specific
        return sorted([*specific, *self._every], key=self.rules.index)

    def evaluate(self, ctx: RuleContext) -> tuple[list[Finding], list[str]]:
        """All findings for the step, and errors of evaluators that failed.

        A failing evaluator does not let the action through silently: it contributes a
        finding at its policy's risk level that says the rule could not be evaluated.
        """
        findings: list[Finding] = []
        errors: list[str] = []
        for rule in self.rules_for(ctx.step.action.kind):
            try:
                findings.extend(rule.check(ctx))
            except Exception as exc:  # noqa: BLE001 - a rule bug must fail closed, not crash the agent
                message = f"rule {rule.kind} of {rule.policy.id} failed: {type(exc).__name__}: {exc}"
                errors.append(message)
                level = rule.policy.risk_level.value
                findings.append(
                    Finding(
                        policy_id=rule.policy.id,
                        rule=rule.kind,
                        message=f"could not evaluate this rule ({type(exc).__name__}); failing closed",
                        risk_level=level,
                        category=rule.policy.category.value,
                        score=RISK_BASE[level],
                    )
                )
        return findings, errors
