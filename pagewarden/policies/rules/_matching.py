"""Fuzzy matching of policy terms against what an element says."""

from __future__ import annotations

import re
import unicodedata
from difflib import SequenceMatcher
from functools import lru_cache

from pagewarden.observe._facts import ElementFacts

__all__ = ["element_texts", "normalise", "term_matches", "terms_match"]

_SPACE = re.compile(r"\s+")
_INVISIBLE = re.compile(r"[\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff\u00ad]")


@lru_cache(maxsize=8192)
def normalise(text: str) -> str:
    """NFKC, lower-case, invisible characters removed, whitespace collapsed."""
    text = _INVISIBLE.sub("", unicodedata.normalize("NFKC", text))
    return _SPACE.sub(" ", text).strip().lower()


def element_texts(el: ElementFacts) -> tuple[str, ...]:
    """The texts by which a person or a policy would name the element."""
    texts = [el.name, el.text[:300], el.aria_text, el.attrs.get("value", ""), el.attrs.get("title", "")]
    if el.attrs.get("placeholder"):
        texts.append(el.attrs["placeholder"])
    return tuple(t for t in texts if t)


@lru_cache(maxsize=16384)
def term_matches(term: str, text: str, threshold: float = 0.85) -> bool:
    """Whether `term` names `text`: substring on word boundaries, or a near spelling."""
    t, s = normalise(term), normalise(text)
    if not t or not s:
        return False
    if re.search(rf"(?<![a-z0-9]){re.escape(t)}(?![a-z0-9])", s):
        return True
    if len(s) <= len(t) * 2 and len(t) >= 4:
        return SequenceMatcher(None, t, s).ratio() >= threshold
    return False


def terms_match(terms: tuple[str, ...] | list[str], el: ElementFacts | None) -> str | None:
    """The first term that names the element, or None."""
    if el is None:
        return None
    texts = element_texts(el)
    for term in terms:
        for text in texts:
            if term_matches(term, text):
                return term
    return None
