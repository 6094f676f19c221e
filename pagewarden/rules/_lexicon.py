"""The words the multilingual instruction checks need, read from `rules/lexicon/*.yaml`.

One file per language (see lexicon/README.md for the format). Entries are folded with
`match_key` as they are read, so a file is written as the language is spelled. Read once per
process, into lookup tables: whole words, stems (by prefix length), word sequences, and, for
languages written without spaces, substrings.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from functools import cache
from importlib import resources

import yaml

from pagewarden.rules._normalise import match_key

__all__ = ["CONCEPTS", "Lexicon", "lexicon"]

#: The slots the structures of `_multilingual` fill (lexicon/README.md says what each is).
CONCEPTS = frozenset(
    [
        "ai",
        "automated",
        "agent",
        "guard",
        "address",
        "to",
        "address_after",
        "conditional",
        "you",
        "override",
        "prior",
        "instructions",
        "new",
        "now_you_are",
        "complete",
        "task",
        "directive",
        "credential",
        "send",
        "urgent",
        "click",
        "here",
        "must",
        "approved",
        "preapproved",
        "user",
        "safe",
        "action",
        "this",
        "violation",
        "negation",
        "tell",
    ]
)
_Tag = tuple[str, str]  # (language, concept)


@dataclass
class Lexicon:
    """Lookup tables over every language's words."""

    languages: tuple[str, ...] = ()
    words: dict[str, set[_Tag]] = field(default_factory=lambda: defaultdict(set))
    stems: dict[str, set[_Tag]] = field(default_factory=lambda: defaultdict(set))
    stem_lengths: tuple[int, ...] = ()
    suffixes: dict[str, set[_Tag]] = field(default_factory=lambda: defaultdict(set))
    suffix_lengths: tuple[int, ...] = ()
    #: first word (or its stem, in `phrase_stems`) -> [(the words as (key, is a stem), tag)]
    phrases: dict[str, list[tuple[tuple[tuple[str, bool], ...], _Tag]]] = field(
        default_factory=lambda: defaultdict(list)
    )
    phrase_stems: dict[str, list[tuple[tuple[tuple[str, bool], ...], _Tag]]] = field(
        default_factory=lambda: defaultdict(list)
    )
    phrase_stem_lengths: tuple[int, ...] = ()
    acronyms: dict[str, set[_Tag]] = field(default_factory=lambda: defaultdict(set))
    substrings: dict[str, set[_Tag]] = field(default_factory=lambda: defaultdict(set))
    substring_lengths: tuple[int, ...] = ()
    #: first character -> the lengths of the substrings starting with it, longest first
    substring_starts: dict[str, tuple[int, ...]] = field(default_factory=dict)
    clitics: dict[str, tuple[str, ...]] = field(default_factory=dict)
    function_words: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))  # key -> languages
    #: The words worth a look in a whole page (`evidence_lines`): roles, the guard, override verbs,
    #: instruction nouns, approval; (spaced words, substrings).
    triggers: tuple[frozenset[str], frozenset[str]] = (frozenset(), frozenset())


_TRIGGER_CONCEPTS = (
    "ai",
    "agent",
    "guard",
    "override",
    "preapproved",
    "now_you_are",
    "complete",
    "violation",
)


def _add(lex: Lexicon, lang: str, concept: str, entry: str, spaced: bool, triggers: tuple[set, set]) -> None:
    if concept not in CONCEPTS:
        raise ValueError(f"lexicon {lang}: unknown concept {concept!r}")
    tag = (lang, concept)
    text = str(entry).strip()
    if not spaced:
        key = match_key(text.replace(" ", ""))
        lex.substrings[key].add(tag)
        if concept in _TRIGGER_CONCEPTS:
            triggers[1].add(key)
        return
    if text.startswith("*"):  # an ending (Turkish: "*melisin", you must)
        lex.suffixes[match_key(text[1:])].add(tag)
        return
    stem = text.endswith("*")
    words = tuple((match_key(p.rstrip("*")), p.endswith("*")) for p in text.replace("-", " ").split())
    parts = [w for w, _ in words]
    if not parts or not all(parts):
        raise ValueError(f"lexicon {lang}: empty entry in {concept!r}")
    if concept in _TRIGGER_CONCEPTS and (len(parts) == 1 or concept in ("ai", "guard", "preapproved")):
        triggers[0].add(max(parts, key=len))
    if len(parts) > 1:
        (lex.phrase_stems if words[0][1] else lex.phrases)[parts[0]].append((words, tag))
    elif stem:
        lex.stems[parts[0]].add(tag)
    else:
        lex.words[parts[0]].add(tag)


@cache
def lexicon() -> Lexicon:
    """Every language file of the package, read once."""
    lex = Lexicon()
    triggers: tuple[set[str], set[str]] = (set(), set())
    languages = []
    folder = resources.files("pagewarden.rules") / "lexicon"
    for item in sorted(folder.iterdir(), key=lambda p: p.name):
        if not item.name.endswith(".yaml"):
            continue
        data = yaml.load(
            item.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        )
        lang = str(data["language"])
        spaced = bool(data.get("spaced", True))
        languages.append(lang)
        for concept, entries in (data.get("concepts") or {}).items():
            for entry in entries or ():
                _add(lex, lang, concept, entry, spaced, triggers)
        for entry in data.get("triggers") or ():  # more words worth a look in a whole page
            text = str(entry).rstrip("*")
            (triggers[0] if spaced else triggers[1]).add(max((match_key(p) for p in text.split()), key=len))
        for concept, entries in (data.get("acronyms") or {}).items():
            for entry in entries:
                lex.acronyms[str(entry).replace(".", "")].add((lang, concept))
                triggers[0].add(match_key(str(entry).replace(".", "")))
        if data.get("clitics"):
            lex.clitics[lang] = tuple(sorted((match_key(c) for c in data["clitics"]), key=len, reverse=True))
        for word in data.get("function_words") or ():
            key = match_key(str(word))
            if spaced:
                lex.function_words[key].add(lang)
            else:
                lex.substrings[key].add((lang, "function"))
    lex.languages = tuple(languages)
    lex.stem_lengths = tuple(sorted({len(s) for s in lex.stems}))
    lex.suffix_lengths = tuple(sorted({len(s) for s in lex.suffixes}))
    lex.suffixes = dict(lex.suffixes)
    lex.substring_lengths = tuple(sorted({len(s) for s in lex.substrings}, reverse=True))
    starts: dict[str, set[int]] = defaultdict(set)
    for key in lex.substrings:
        starts[key[0]].add(len(key))
    lex.substring_starts = {c: tuple(sorted(n, reverse=True)) for c, n in starts.items()}
    lex.words, lex.stems, lex.phrases = dict(lex.words), dict(lex.stems), dict(lex.phrases)
    lex.phrase_stems = dict(lex.phrase_stems)
    lex.phrase_stem_lengths = tuple(sorted({len(s) for s in lex.phrase_stems}))
    lex.substrings, lex.acronyms = dict(lex.substrings), dict(lex.acronyms)
    lex.function_words = dict(lex.function_words)
    lex.triggers = (frozenset(triggers[0]), frozenset(triggers[1]))
    return lex
