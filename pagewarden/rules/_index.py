"""Keys that let the rule book skip rules that cannot fire on a step.

A rule can declare, per action kind, the *keys* without which it cannot fire
(`CompiledRule.index_keys`): tokens and near-spelling buckets of its text terms, the ids its
selectors require, the hosts and text fragments of its URL patterns, fragments of its protected
values. The book then runs, for a step, only the rules of its action kind that declared no
keys and those whose keys the step has (`step_keys`). Keys are a pre-filter that must never
miss — a rule whose key is absent cannot produce a finding — so every rule still decides with
its own `check`, and decisions are exactly those of running every rule.

Key families (the first element of a key): ``tok`` (a word of a text term), ``near`` (first
letter and length of a term, for near spellings), ``id`` (an element id), ``host`` / ``hsuf``
(a destination host, or a parent domain of it), ``tri`` (three characters of a URL pattern),
``lo`` / ``fo`` / ``di`` / ``en`` (three characters of a protected value: lower-cased,
normalised, digits, base64).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from typing import TYPE_CHECKING

from pagewarden._url import _normalise_host
from pagewarden.rules._matching import element_texts, normalise

if TYPE_CHECKING:
    from pagewarden.rules._base import HistoryEntry
    from pagewarden.steps import ElementFacts

__all__ = [
    "DATA",
    "DESTINATION",
    "ELEMENT",
    "Key",
    "entry_keys",
    "host_pattern_keys",
    "selector_keys",
    "term_keys",
    "trigram_keys",
    "trigram_set",
]

Key = tuple[str, ...] | tuple[str, str, int]

#: families of keys, by what of the step they come from
ELEMENT = "element"
DESTINATION = "destination"
DATA = "data"
FAMILY = {
    "tok": ELEMENT, "near": ELEMENT, "id": ELEMENT,
    "host": DESTINATION, "hsuf": DESTINATION, "tri": DESTINATION,
    "lo": DATA, "fo": DATA, "di": DATA, "en": DATA,
}  # fmt: skip

_TOKEN = re.compile(r"[a-z0-9]+")
_FIRST_RUN = re.compile(r"^[a-z0-9]+")
_ID_SELECTOR = re.compile(r"^\s*(?:[A-Za-z][A-Za-z0-9]*)?#([A-Za-z0-9_\-]+)\s*$")


# -- what a rule needs ------------------------------------------------------------------------
def term_keys(terms: Iterable[str]) -> frozenset[Key] | None:
    """Keys of text terms (`match`): None when a term can match without any of them."""
    keys: set[Key] = set()
    for term in terms:
        folded = normalise(term)
        if not folded:
            continue  # an empty term names nothing
        first = _FIRST_RUN.match(folded)
        if first is None:
            return None  # starts with a non-word character: no word key to look for
        keys.add(("tok", first.group(0)))
        if len(folded) >= 4:
            keys.add(("near", folded[0], len(folded)))
    return frozenset(keys)


def selector_keys(selectors: Iterable[str]) -> frozenset[Key] | None:
    """Keys of selectors: only ``#id`` / ``tag#id`` selectors have one (the id)."""
    keys: set[Key] = set()
    for selector in selectors:
        match = _ID_SELECTOR.match(selector)
        if match is None:
            return None
        keys.add(("id", match.group(1)))
    return frozenset(keys)


def element_rule_keys(terms: Iterable[str], selectors: Iterable[str]) -> frozenset[Key] | None:
    """Keys of a rule that fires only on an element its terms or selectors pick."""
    by_terms = term_keys(terms)
    by_selectors = selector_keys(selectors)
    if by_terms is None or by_selectors is None:
        return None
    return by_terms | by_selectors


def host_pattern_keys(pattern: str) -> frozenset[Key] | None:
    """Keys of a domain pattern (``x.com``, ``*.x.com``, ``.x.com``); None for ``*``, IP
    addresses and anything else matched by other means."""
    text = pattern.strip().lower()
    if "://" in text:
        from pagewarden._url import parse_url

        text = parse_url(text).host
    if not text or text == "*" or text.startswith("["):
        return None
    exact = suffix = True
    if text.startswith("*."):
        text, exact = text[2:], False
    elif text.startswith("."):
        text = text[1:]
    else:
        suffix = False
    if text.count(":") == 1:
        text = text.rsplit(":", 1)[0]
    if "*" in text or ":" in text:
        return None
    host, is_ip = _normalise_host(text)
    if not host or is_ip:
        return None
    keys: set[Key] = set()
    if exact:
        keys.add(("host", host))
    if suffix:
        keys.add(("hsuf", host))
    return frozenset(keys)


#: families whose rule keys name a whole literal; the book indexes it by one of its trigrams
TRIGRAM_FAMILIES = frozenset({"tri", "lo", "fo", "di", "en"})


def trigram_keys(family: str, literal: str) -> frozenset[Key] | None:
    """The key of a text that must appear as a substring (the book picks which of its trigrams
    to index it by: the one fewest other rules use)."""
    if len(literal) < 3:
        return None
    return frozenset({(family, literal)})


def trigrams_of(literal: str) -> list[str]:
    """The three-character substrings of `literal`, each once, last first."""
    return list(dict.fromkeys(literal[i : i + 3] for i in range(len(literal) - 3, -1, -1)))


@lru_cache(maxsize=4096)
def trigram_set(text: str) -> frozenset[str]:
    """The three-character substrings of `text` (a step's text, intersected with the trigrams
    the book indexes rules by)."""
    return frozenset([text[i : i + 3] for i in range(len(text) - 2)])


def union(parts: Iterable[frozenset[Key] | None]) -> frozenset[Key] | None:
    """All keys of `parts`; None when one of them is None (then nothing can be skipped)."""
    out: set[Key] = set()
    for part in parts:
        if part is None:
            return None
        out |= part
    return frozenset(out)


# -- what a step has --------------------------------------------------------------------------
def _near_lengths(length: int) -> range:
    return range(max(4, (length * 4) // 5 - 3), (length * 5) // 4 + 4)


@lru_cache(maxsize=1024)
def _near_sizes(size: int) -> tuple[int, ...]:
    """Lengths of the terms a text of `size` characters may be a near spelling of (`_names`:
    lengths close enough, and a similarity of 0.9 needs 2·min ≥ 0.9·(sum))."""
    return tuple(
        length
        for length in _near_lengths(size)
        if abs(length - size) <= max(2, length // 5) and 2 * min(length, size) >= 0.89 * (length + size)
    )


@lru_cache(maxsize=4096)
def _text_keys(text: str) -> frozenset[Key]:
    folded = normalise(text)
    if not folded:
        return frozenset()
    keys: set[Key] = {("tok", token) for token in _TOKEN.findall(folded)}
    first = folded[0]
    keys.update(("near", first, length) for length in _near_sizes(len(folded)))
    return frozenset(keys)


def element_keys(el: ElementFacts | None) -> set[Key]:
    if el is None:
        return set()
    keys: set[Key] = set()
    texts = [*element_texts(el), el.attrs.get("name", ""), el.attrs.get("id", "")]
    for text in texts:
        if text:
            keys |= _text_keys(text)
    if el.attrs.get("id"):
        keys.add(("id", el.attrs["id"]))
    return keys


def entry_keys(entry: HistoryEntry) -> set[Key]:
    """The element keys of an action that ran: of the element it acted on, and of its label
    (what budgets and sequences match when no element facts were kept)."""
    keys = element_keys(entry.target)
    if entry.label:
        keys |= _text_keys(entry.label)
    return keys
