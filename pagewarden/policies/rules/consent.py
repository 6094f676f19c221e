"""`consent`: actions on matching elements need approval or a prior message to the user."""

from __future__ import annotations

from collections.abc import Iterator

from pagewarden.guard._verdict import Finding
from pagewarden.policies._rules_schema import ConsentRule
from pagewarden.policies.rules._base import CompiledRule, RuleContext, register
from pagewarden.policies.rules._matching import normalise, terms_match

__all__ = ["Consent"]


@register("consent")
class Consent(CompiledRule):
    """Evaluator of `consent` rules."""

    rule: ConsentRule

    def __init__(self, policy, rule) -> None:
        super().__init__(policy, rule)
        actions = frozenset(rule.actions)
        self.kinds = None if "any" in actions else actions  # type: ignore[misc]

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        if ctx.action.kind == "send_msg_to_user":
            return
        if self.rule.match:
            term = terms_match(self.rule.match, ctx.target)
            if term is None:
                return
            wanted = normalise(term)
            if any(wanted in normalise(m) for m in ctx.session.user_messages):
                return
            subject = f"{ctx.action.kind} on {term!r}"
        else:
            subject = f"{ctx.action.kind}"
        yield self.finding(
            f"{subject} needs the user's consent first",
            requires_approval=True,
            guidance=(
                f"Ask the user before this action: send them a message naming {subject!s} "
                "and wait for their answer."
            ),
            evidence={"action": ctx.action.kind, "match": list(self.rule.match)},
        )
