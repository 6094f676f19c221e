"""`sequence`: steps that must happen in order (optionally with nothing in between).

Preventive in two places:

* the last step may only run once the earlier steps have run in order (and, when
  `contiguous`, directly before it) — unless the whole sequence has already happened;
* the task may not be finished (a `finish` action) before the whole sequence has happened.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from pagewarden.policies import SequenceRule, SequenceStep
from pagewarden.rules._base import CompiledRule, HistoryEntry, RuleContext, RuleMemory, register
from pagewarden.rules._index import element_rule_keys, union
from pagewarden.rules._matching import element_picked, term_matches
from pagewarden.steps import ElementFacts, Finding

__all__ = ["RequiredSequence", "sequence_present"]

Done = tuple[str, ElementFacts | None, str]  # kind, target facts, label


def _step_matches(spec: SequenceStep, kind: str, target: ElementFacts | None, label: str) -> bool:
    if kind not in spec.actions and "any" not in spec.actions:
        return False
    selectors = spec.selectors
    if target is None and spec.match and not selectors:
        return bool(label) and any(term_matches(t, label) for t in spec.match)
    return element_picked(spec.match, selectors, target) is not None


def sequence_present(steps: Sequence[SequenceStep], done: Sequence[Done], *, contiguous: bool) -> bool:
    """Whether `steps` occur in `done` in order (as a block when `contiguous`)."""
    if not steps:
        return True
    if contiguous:
        n = len(steps)
        return any(
            all(_step_matches(steps[j], *done[i + j]) for j in range(n)) for i in range(len(done) - n + 1)
        )
    index = 0
    for item in done:
        if _step_matches(steps[index], *item):
            index += 1
            if index == len(steps):
                return True
    return False


def _tail(history: Sequence[HistoryEntry], n: int) -> list[HistoryEntry]:
    """The last `n` entries of `history` (a deque or a sequence), oldest first."""
    if n <= 0:
        return []
    out = []
    for entry in reversed(history):
        out.append(entry)
        if len(out) == n:
            break
    out.reverse()
    return out


def _describe(spec: SequenceStep) -> str:
    what = spec.match[0] if spec.match else (spec.selectors[0] if spec.selectors else "")
    return f"{spec.action} {what!r}" if what else spec.action


@register("sequence")
class RequiredSequence(CompiledRule):
    """Evaluator of `sequence` rules."""

    rule: SequenceRule

    def __init__(self, policy, rule) -> None:
        super().__init__(policy, rule)
        last = frozenset(rule.steps[-1].actions)
        self.kinds = None if "any" in last else last | {"finish"}  # type: ignore[misc]
        if rule.contiguous:
            # a block is complete when its last step runs after the others
            self.observes = None if "any" in last else last  # type: ignore[misc]
        else:
            every = frozenset(k for s in rule.steps for k in s.actions)
            self.observes = None if "any" in every else every  # type: ignore[misc]
        self._text = " → ".join(_describe(s) for s in rule.steps)
        # what a finding says is the same at every step: built once
        self._finish_message = f"the task would end before the required sequence happened ({self._text})"
        self._finish_guidance = f"Before finishing, do these steps in order: {self._text}."
        how = "directly before it" if rule.contiguous else "first"
        before = " → ".join(_describe(s) for s in rule.steps[:-1])
        self._order_message = f"{_describe(rule.steps[-1])} needs {before} {how}"
        self._order_guidance = f"Follow the required order: {self._text}."
        last_step = rule.steps[-1]
        if len(rule.steps) < 2:
            self._keys: frozenset[tuple] | None = frozenset()  # fires only on finish
        elif last_step.match or last_step.selectors:
            self._keys = element_rule_keys(last_step.match, last_step.selectors)
        else:
            self._keys = None

    def index_keys(self, kind: str) -> frozenset[tuple] | None:
        # away from `finish`, the rule fires only on an element its last step picks
        return None if kind == "finish" else self._keys

    def observe_keys(self) -> frozenset[tuple] | None:
        # a contiguous block completes only on its last step; an ordered sequence moves on
        # only on one of its steps
        steps = self.rule.steps if not self.rule.contiguous else self.rule.steps[-1:]
        if any(not (s.match or s.selectors) for s in steps):
            return None
        return union(element_rule_keys(s.match, s.selectors) for s in steps)

    # Running state: for an ordered sequence, how many steps are done (greedy, as
    # `sequence_present` scans); for a contiguous one, whether the whole block happened.
    def observe(self, entry: HistoryEntry, state: RuleMemory, history: Sequence[HistoryEntry]) -> None:
        steps = self.rule.steps
        item = (entry.kind, entry.target, entry.label)
        if not self.rule.contiguous:
            progress = state.get(self, 0)
            if progress < len(steps) and _step_matches(steps[progress], *item):
                state[self] = progress + 1
            return
        if state.get(self) or len(history) < len(steps):
            return
        tail = [(e.kind, e.target, e.label) for e in _tail(history, len(steps))]
        if all(_step_matches(spec, *done) for spec, done in zip(steps, tail, strict=True)):
            state[self] = True

    def _memory(self, ctx: RuleContext) -> RuleMemory | None:
        memory = ctx.session.memory
        return memory if memory is not None and memory.usable(self) else None

    def _present(self, ctx: RuleContext, done: list[Done] | None) -> bool:
        """Whether the whole sequence already happened in the session."""
        memory = self._memory(ctx)
        if memory is None:
            return sequence_present(self.rule.steps, done or [], contiguous=self.rule.contiguous)
        if self.rule.contiguous:
            return bool(memory.get(self))
        return memory.get(self, 0) >= len(self.rule.steps)

    def _ready(self, ctx: RuleContext, done: list[Done] | None) -> bool:
        """Whether the steps before the last one happened (directly before, when contiguous)."""
        steps = self.rule.steps
        memory = self._memory(ctx)
        if self.rule.contiguous:
            history = ctx.session.history
            if len(history) < len(steps) - 1:
                return False
            tail = [(e.kind, e.target, e.label) for e in _tail(history, len(steps) - 1)]
            return sequence_present(steps[:-1], tail, contiguous=True)
        if memory is None:
            return sequence_present(steps[:-1], done or [], contiguous=False)
        return memory.get(self, 0) >= len(steps) - 1

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        steps = self.rule.steps
        kind = ctx.action.kind
        contiguous = self.rule.contiguous
        done = None
        if self._memory(ctx) is None:
            done = [(e.kind, e.target, e.label) for e in ctx.session.history]
        if kind == "finish":
            if not self._present(ctx, done):
                yield self.finding(
                    self._finish_message, guidance=self._finish_guidance, evidence={"sequence": self._text}
                )
            return
        if len(steps) < 2:
            return
        target = ctx.target
        label = target.label if target is not None else ""
        if not _step_matches(steps[-1], kind, target, label):
            return
        if self._present(ctx, done):
            return  # already done once in order; repeating the last step is not out of order
        if not self._ready(ctx, done):
            yield self.finding(
                self._order_message,
                guidance=self._order_guidance,
                evidence={"sequence": self._text, "contiguous": contiguous},
            )
