"""The rules index's step side: the keys and texts a step has, by family (its element, its
destinations, the data it sends), computed once per step. Kept apart from `_index` (the keys
rules are filed under) because it reads destinations and outgoing data through the URL and
sensitive-data rules, which file themselves with `_index`."""

from __future__ import annotations

from pagewarden._url import _normalise_host
from pagewarden.rules._base import RuleContext
from pagewarden.rules._index import DATA, DESTINATION, ELEMENT, Key, element_keys
from pagewarden.rules.sensitive import _forms, outgoing
from pagewarden.rules.urls import _views, destinations

__all__ = ["step_keys", "step_texts"]


def _host_keys(host: str) -> set[Key]:
    host = _normalise_host(host)[0] if host and not host.startswith("[") else host
    if not host:
        return set()
    keys: set[Key] = {("host", host)}
    labels = host.split(".")
    for i in range(1, len(labels)):
        keys.add(("hsuf", ".".join(labels[i:])))
    return keys


def _destination_keys(ctx: RuleContext) -> set[Key]:
    keys: set[Key] = set()
    for dest in destinations(ctx):
        keys |= _host_keys(dest.url.host)
    return keys


def _destination_texts(ctx: RuleContext) -> dict[str, tuple[str, ...]]:
    views = [view for dest in destinations(ctx) for view in _views(dest, raw=True)]
    return {"tri": tuple(dict.fromkeys(views))} if views else {}


def _data_texts(ctx: RuleContext) -> dict[str, tuple[str, ...]]:
    texts: dict[str, dict[str, None]] = {"lo": {}, "fo": {}, "di": {}, "en": {}}
    for item in outgoing(ctx, allow_user=False):
        forms = _forms(item.text)
        for lowered in forms.lowered:
            texts["lo"][lowered] = None
        texts["fo"][forms.folded] = None
        texts["di"][forms.digits] = None
        texts["en"][item.text] = None
    return {family: tuple(found) for family, found in texts.items() if found}


def step_keys(ctx: RuleContext, family: str) -> set[Key]:
    """The keys a step has in `family` other than trigrams (computed once per step): words,
    near-spelling buckets and ids of its element; hosts and parent domains of its
    destinations. Trigram keys are looked up in the texts `step_texts` gives."""
    memo_key = f"index:{family}"
    found = ctx.memo.get(memo_key)
    if found is None:
        if family == ELEMENT:
            found = element_keys(ctx.target)
        elif family == DESTINATION:
            found = _destination_keys(ctx)
        else:
            found = set()
        ctx.memo[memo_key] = found
    return found  # type: ignore[return-value]


def step_texts(ctx: RuleContext, family: str) -> dict[str, tuple[str, ...]]:
    """The texts a step has in `family`, by trigram key family (computed once per step): the
    spellings of its destinations (``tri``); the lower-cased, normalised, digit-only and raw
    forms of the data it sends (``lo``, ``fo``, ``di``, ``en``). A rule's trigram key
    ``(f, t)`` is one the step has when `t` occurs in one of its texts of family `f` (the
    book scans each text once instead of building the set of its trigrams)."""
    memo_key = f"texts:{family}"
    found = ctx.memo.get(memo_key)
    if found is None:
        if family == DESTINATION:
            found = _destination_texts(ctx)
        elif family == DATA:
            found = _data_texts(ctx)
        else:
            found = {}
        ctx.memo[memo_key] = found
    return found  # type: ignore[return-value]
