"""`action_budget`: at most `max` actions of a kind (optionally on matching targets).

Only actions that ran count (the session history); the action that would go over the
budget is the violation, so `max: 0` forbids the action outright.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator

from pagewarden.policies import ActionBudgetRule
from pagewarden.rules._base import CompiledRule, HistoryEntry, RuleContext, RuleMemory, register
from pagewarden.rules._index import element_rule_keys
from pagewarden.rules._matching import element_picked, term_matches
from pagewarden.steps import Finding

__all__ = ["ActionBudget"]


@register("action_budget")
class ActionBudget(CompiledRule):
    """Evaluator of `action_budget` rules."""

    rule: ActionBudgetRule

    def __init__(self, policy, rule) -> None:
        super().__init__(policy, rule)
        actions = frozenset(rule.actions)
        self.kinds = None if "any" in actions else actions  # type: ignore[misc]
        self.observes = self.kinds  # type: ignore[misc]
        self._actions = actions
        self._targeted = bool(rule.match or rule.selectors)
        self._keys = element_rule_keys(rule.match, rule.selectors) if self._targeted else None

    def index_keys(self, kind: str) -> frozenset[tuple] | None:
        return self._keys

    def observe_keys(self) -> frozenset[tuple] | None:
        return self._keys  # a targeted budget counts only actions on elements it picks

    def gate(self, kind: str) -> tuple[Hashable, int] | None:
        # budgets of the same actions on any element count the same actions: they fire in
        # order of their `max` as the count reaches it
        return None if self._targeted else (("action_budget", self._actions), self.rule.max)

    def gate_count(self, ctx: RuleContext) -> int:
        return self._done(ctx)

    def observe(self, entry: HistoryEntry, state: RuleMemory, history) -> None:
        if self._counts(entry):
            state[self] = state.get(self, 0) + 1

    def _done(self, ctx: RuleContext) -> int:
        """How many counted actions ran: the running counter, or a scan of the history."""
        memory = ctx.session.memory
        if memory is not None and memory.usable(self):
            return memory.get(self, 0)
        return sum(1 for entry in ctx.session.history if self._counts(entry))

    def _kind_counts(self, kind: str) -> bool:
        if kind in ("send_msg_to_user", "finish"):
            return kind in self._actions
        return "any" in self._actions or kind in self._actions

    def _counts(self, entry: HistoryEntry) -> bool:
        if not self._kind_counts(entry.kind):
            return False
        if not self._targeted:
            return True
        if entry.target is not None:
            return element_picked(self.rule.match, self.rule.selectors, entry.target) is not None
        return bool(entry.label) and any(term_matches(t, entry.label) for t in self.rule.match)

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        if not self._kind_counts(ctx.action.kind):
            return
        picked = element_picked(self.rule.match, self.rule.selectors, ctx.target)
        if picked is None:
            return
        done = self._done(ctx)
        if done + 1 <= self.rule.max:
            return
        on = f" on {picked!r}" if picked else ""
        yield self.finding(
            f"this would be {ctx.action.kind} #{done + 1}{on}; the policy allows at most {self.rule.max}",
            guidance=(
                f"The budget for {self.rule.action}{on} is used up ({self.rule.max}). "
                "Finish with what has been done or tell the user."
            ),
            evidence={"done": done, "max": self.rule.max, "action": self.rule.action, "target": picked},
        )
