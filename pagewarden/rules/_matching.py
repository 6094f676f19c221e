"""Matching policy terms and selectors against what the guard knows about an element.

* `normalise` folds text the way an attacker would try to dodge a term: Unicode
  compatibility forms, invisible characters (zero-width, soft hyphen, bidi controls),
  combining marks, common Cyrillic/Greek look-alikes of Latin letters, case and spacing.
* `term_matches` says whether a policy term names a text: a substring on word boundaries,
  or a near spelling (same first letter, about the same length, similarity 0.9).
* `selectors_match` matches a policy's selectors (compiled by
  `pagewarden.policies._selectors`, part of the policy language) against `ElementFacts`.
"""

from __future__ import annotations

import re
from collections import Counter
from difflib import SequenceMatcher
from functools import lru_cache

from pagewarden.policies import Selector, SelectorError, compile_selector, element_texts, normalise
from pagewarden.steps import ElementFacts

__all__ = [
    "Selector",
    "SelectorError",
    "compile_selector",
    "element_picked",
    "element_texts",
    "normalise",
    "selectors_match",
    "term_matches",
    "terms_match",
]

@lru_cache(maxsize=16384)
def _term_regex(term: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![a-z0-9]){re.escape(term)}(?![a-z0-9])")


def _names(t: str, s: str, threshold: float) -> bool:
    """`term_matches` on normalised texts."""
    if not t or not s:
        return False
    if _term_regex(t).search(s):
        return True
    # a near spelling of a text of about the term's length ("Delet", "Deleet" for "Delete"),
    # starting like it (a prefix makes another word: "Undelete")
    if len(t) < 4 or s[0] != t[0] or abs(len(t) - len(s)) > max(2, len(t) // 5):
        return False
    shared = sum((Counter(t) & Counter(s)).values())  # an upper bound of the matching characters
    if 2 * shared < threshold * (len(t) + len(s)):
        return False
    return SequenceMatcher(None, t, s).ratio() >= threshold


@lru_cache(maxsize=16384)
def term_matches(term: str, text: str, threshold: float = 0.9) -> bool:
    """Whether `term` names `text`: substring on word boundaries, or a near spelling."""
    return _names(normalise(term), normalise(text), threshold)


@lru_cache(maxsize=2048)
def _normalised(texts: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(normalise(t) for t in texts)


def terms_match(terms: tuple[str, ...] | list[str], el: ElementFacts | None) -> str | None:
    """The first term that names the element, or None."""
    if el is None:
        return None
    texts = _normalised(element_texts(el))
    for term in terms:
        folded = normalise(term)
        for text in texts:
            if _names(folded, text, 0.9):
                return term
    return None


# -- selectors -------------------------------------------------------------------------------
def selectors_match(selectors: tuple[str, ...] | list[str], el: ElementFacts | None) -> str | None:
    """The first selector that matches the element, or None."""
    if el is None:
        return None
    for selector in selectors:
        if compile_selector(selector).matches(el):
            return selector
    return None


def element_picked(
    terms: tuple[str, ...] | list[str], selectors: tuple[str, ...] | list[str], el: ElementFacts | None
) -> str | None:
    """The term or selector that picks the element (terms first), or None.

    With neither terms nor selectors every element (and no element) is picked: "".
    """
    if not terms and not selectors:
        return ""
    if el is None:
        return None
    if terms:
        term = terms_match(terms, el)
        if term is not None:
            return term
    if selectors:
        return selectors_match(selectors, el)
    return None
