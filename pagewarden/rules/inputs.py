"""`input_allow`: only the listed values may be entered (into matching fields, or any field).

Values are compared exactly after trimming, Unicode NFC and lower-casing — no folding of
look-alike or invisible characters: an allow-list admits exactly its values. Clearing a
field (an empty value) is always allowed. Navigation keys and shortcuts are not input; a
value entered key by key is allowed while it is still the beginning of an allowed value.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache

from pagewarden.policies import InputAllowRule
from pagewarden.rules._base import CompiledRule, RuleContext, register
from pagewarden.rules._index import term_keys
from pagewarden.rules._matching import element_texts, term_matches
from pagewarden.rules._typed import INPUT_KINDS, typed_text
from pagewarden.steps import Finding

__all__ = ["InputAllow", "canonical_input"]


@lru_cache(maxsize=4096)
def canonical_input(value: str) -> str:
    """The form in which entered and allowed values are compared."""
    return unicodedata.normalize("NFC", value).strip().lower()


_UNSET = object()


@dataclass(slots=True)
class _Entered:
    """Text a step enters into a field, as input allow-lists compare it."""

    text: str  # `canonical_input` of the field's text
    field_text: str  # the field's text after the step
    keywise: bool  # entered key by key: may still be growing
    message: str | None = None  # what a finding says about it (built by the first rule that fires)


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
        #: where a step's `_Entered` is kept: the same for every rule with this `field`
        self._memo_key = "input_allow:entered\u0000" + (rule.field or "")

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

    def _entered(self, ctx: RuleContext) -> _Entered | None:
        """What this step enters into a field this rule looks at (None: nothing to check);
        the same for every rule with this `field`, so worked out once per step."""
        entered = ctx.memo.get(self._memo_key, _UNSET)
        if entered is _UNSET:
            typed = typed_text(ctx)
            entered = None
            if typed is not None and self._applies(ctx):
                text = canonical_input(typed.field_text)
                if text:
                    entered = _Entered(text, typed.field_text, typed.keywise)
            ctx.memo[self._memo_key] = entered
        return entered  # type: ignore[return-value]

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        entered = self._entered(ctx)
        if entered is None or entered.text in self._allowed:
            return
        if entered.keywise and any(v.startswith(entered.text) for v in self._allowed):
            return
        message = entered.message
        if message is None:
            typed = entered.field_text
            shown = typed if len(typed) <= 60 else typed[:57] + "..."
            where = f" into {self.rule.field!r}" if self.rule.field else ""
            message = f"enters {shown!r}{where}, which is not one of the values the user gave"
            entered.message = message
        yield self.finding(
            message,
            guidance=self._guidance,
            evidence={"value": entered.field_text[:200], "allowed": list(self.rule.values)},
        )
