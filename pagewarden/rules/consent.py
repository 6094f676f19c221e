"""`consent`: actions on matching elements need approval or a prior message to the user.

The elements are picked by text (`match`, fuzzy: look-alike letters, invisible characters
and near spellings still match) or by selector; with neither, every action of the
listed kinds is covered. Consent is given by an approver, or by a message the agent sent
to the user earlier in the session that names one of `message_terms` (default: the
`match` terms) — spelled out, or nearly (one slip in a long word). A rule with no terms at
all can only be satisfied by an approver.
"""

from __future__ import annotations

from collections.abc import Iterator
from difflib import SequenceMatcher
from functools import lru_cache

from pagewarden.policies import ConsentRule
from pagewarden.rules._base import CompiledRule, RuleContext, register
from pagewarden.rules._index import element_rule_keys
from pagewarden.rules._matching import element_picked, normalise
from pagewarden.steps import Finding

__all__ = ["Consent", "message_names"]

_MIN_MESSAGE = 5
_NEAR = 0.85


@lru_cache(maxsize=16384)
def message_names(term: str, message: str) -> bool:
    """Whether a message to the user names `term` (normalised; a near spelling counts)."""
    t, m = normalise(term), normalise(message)
    if not t or len(m) < _MIN_MESSAGE:
        return False
    if t in m:
        return True
    if len(t) < 5:
        return False
    size = len(t)
    for start in range(0, max(1, len(m) - size + 1)):
        window = m[start : start + size + 1]
        if SequenceMatcher(None, t, window).ratio() >= _NEAR:
            return True
    return False


@register("consent")
class Consent(CompiledRule):
    """Evaluator of `consent` rules."""

    rule: ConsentRule

    def __init__(self, policy, rule) -> None:
        super().__init__(policy, rule)
        actions = frozenset(rule.actions)
        self.kinds = None if "any" in actions else actions  # type: ignore[misc]
        self._message_terms = tuple(rule.message_terms or rule.match)
        if self._message_terms:
            named = ", ".join(repr(t) for t in self._message_terms[:4])
            ask = f"send them a message naming {named} and wait for their answer"
        else:
            ask = "wait for their approval"
        self._guidance = f"Ask the user before this action: {ask}."  # the same at every step
        targeted = bool(rule.match or rule.selectors)
        self._keys = element_rule_keys(rule.match, rule.selectors) if targeted else None

    def index_keys(self, kind: str) -> frozenset[tuple] | None:
        return self._keys

    def _told_user(self, ctx: RuleContext) -> bool:
        return any(
            message_names(term, message)
            for message in ctx.session.user_messages
            for term in self._message_terms
        )

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        kind = ctx.action.kind
        if kind == "send_msg_to_user":
            return
        picked = element_picked(self.rule.match, self.rule.selectors, ctx.target)
        if picked is None:
            return
        if self._message_terms and self._told_user(ctx):
            return
        subject = f"{kind} on {picked!r}" if picked else kind
        yield self.finding(
            f"{subject} needs the user's consent first",
            requires_approval=True,
            guidance=self._guidance,
            evidence={"action": kind, "match": list(self.rule.match), "selectors": list(self.rule.selectors)},
        )
