"""`input_allow`: only the listed values may be entered (into matching fields, or any field).

Values are compared exactly after trimming, Unicode NFC and lower-casing — no folding of
look-alike or invisible characters: an allow-list admits exactly its values. Clearing a
field (an empty value) is always allowed. Navigation keys and shortcuts are not input; a
value entered key by key is allowed while it is still the beginning of an allowed value.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator
from functools import lru_cache

from pagewarden.guard._verdict import Finding
from pagewarden.policies._rules_schema import InputAllowRule
from pagewarden.policies.rules._base import CompiledRule, RuleContext, register
from pagewarden.policies.rules._index import term_keys
from pagewarden.policies.rules._matching import element_texts, term_matches
from pagewarden.policies.rules._typed import INPUT_KINDS, typed_text

__all__ = ["InputAllow", "canonical_input"]


@lru_cache(maxsize=4096)
def canonical_input(value: str) -> str:
    """The form in which entered and allowed values are compared."""
    return unicodedata.normalize("NFC", value).strip().lower()


@register("input_allow")
class InputAllow(CompiledRule):
    """Evaluator of `input_allow` rules."""

    kinds = INPUT_KINDS
    rule: InputAllowRule

    def __init__(self, policy, rule) -> None:
        super().__init__(policy, rule)
        self._allowed = {canonical_input(v) for v in rule.values}
        self._keys = term_keys([rule.field]) if rule.field else None
        self._guidance = "Only enter these values: " + ", ".join(repr(v) for v in rule.values) + "."
        #: where a step's message is kept: it is the same for every rule with this `field`
        self._memo_key = "input_allow:message\u0000" + (rule.field or "")

    def index_keys(self, kind: str) -> frozenset[tuple] | None:
        return self._keys  # with a `field`, only fields it names

    def _applies(self, ctx: RuleContext) -> bool:
        field = self.rule.field
        if not field:
            return True
        el = ctx.target
        if el is None:
            return False
        names = [*element_texts(el), el.attrs.get("name", ""), el.attrs.get("id", "")]
        return any(term_matches(field, n) for n in names if n)

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        typed = typed_text(ctx)
        if typed is None or not self._applies(ctx):
            return
        text = canonical_input(typed.field_text)
        if not text or text in self._allowed:
            return
        if typed.keywise and any(v.startswith(text) for v in self._allowed):
            return
        message = ctx.memo.get(self._memo_key)
        if message is None:
            shown = typed.field_text if len(typed.field_text) <= 60 else typed.field_text[:57] + "..."
            where = f" into {self.rule.field!r}" if self.rule.field else ""
            message = f"enters {shown!r}{where}, which is not one of the values the user gave"
            ctx.memo[self._memo_key] = message
        yield self.finding(
            message,  # type: ignore[arg-type]
            guidance=self._guidance,
            evidence={"value": typed.field_text[:200], "allowed": list(self.rule.values)},
        )
