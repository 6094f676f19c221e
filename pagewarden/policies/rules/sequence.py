"""`sequence`: steps that must happen in order (optionally with nothing in between).

Preventive in two places:

* the last step may only run once the earlier steps have run in order (and, when
  `contiguous`, directly before it) — unless the whole sequence has already happened;
* the task may not be finished (a `finish` action) before the whole sequence has happened.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from pagewarden.guard._verdict import Finding
from pagewarden.observe._facts import ElementFacts
from pagewarden.policies._rules_schema import SequenceRule, SequenceStep
from pagewarden.policies.rules._base import CompiledRule, RuleContext, register
from pagewarden.policies.rules._matching import element_picked, term_matches

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
        self._text = " → ".join(_describe(s) for s in rule.steps)

    def _done(self, ctx: RuleContext) -> list[Done]:
        return [(e.kind, e.target, e.label) for e in ctx.session.history]

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        steps = self.rule.steps
        kind = ctx.action.kind
        done = self._done(ctx)
        contiguous = self.rule.contiguous
        if kind == "finish":
            if not sequence_present(steps, done, contiguous=contiguous):
                yield self.finding(
                    f"the task would end before the required sequence happened ({self._text})",
                    guidance=f"Before finishing, do these steps in order: {self._text}.",
                    evidence={"sequence": self._text},
                )
            return
        if len(steps) < 2:
            return
        target = ctx.target
        label = target.label if target is not None else ""
        if not _step_matches(steps[-1], kind, target, label):
            return
        if sequence_present(steps, done, contiguous=contiguous):
            return  # already done once in order; repeating the last step is not out of order
        if contiguous:
            ready = len(done) >= len(steps) - 1 and sequence_present(
                steps[:-1], done[-(len(steps) - 1) :], contiguous=True
            )
        else:
            ready = sequence_present(steps[:-1], done, contiguous=False)
        if not ready:
            how = "directly before it" if contiguous else "first"
            yield self.finding(
                f"{_describe(steps[-1])} needs {' → '.join(_describe(s) for s in steps[:-1])} {how}",
                guidance=f"Follow the required order: {self._text}.",
                evidence={"sequence": self._text, "contiguous": contiguous},
            )
