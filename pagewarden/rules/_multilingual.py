"""Instructions aimed at an agent or at the guard, in any language the lexicon has.

The English checks (`_instructions`) are regular expressions over English phrasing. Here the
same families are found as *structures* filled from the lexicon (`rules/lexicon/*.yaml`):

* ``override``: a verb of ignoring (ignore, vergiss, 忽略) with instructions (Anweisungen, 指令)
  and a reference to earlier ones or to the reader's own (vorherigen, 之前, deine) in one
  sentence; "you are now …"; "new instructions:"; text that mimics a chat template or a system
  message (``<|im_start|>system``, ``[INST]``, ``"role": "system"``), whatever the language.
* ``address_ai``: text addressed to an AI — a note or greeting word before an AI role ("Hinweis
  für KI-Agenten", "致AI助手"), the role as the first words of a sentence followed by ":" or ","
  (a vocative), a particle after it (Japanese "AIエージェントへ"), or "if you are an AI agent". An
  agent, assistant or model counts as an AI only with an AI word beside it ("agente de IA").
* ``address_guard``: the same addressed to a judge, reviewer or safety system, or a claim that
  the action was pre-approved or approved by the user.
* ``hijack``: "to complete your task"; weaker families (credentials, exfiltration, urgency,
  "click here", obligation, a mention of an AI) with the English weights.

Each structure is checked per language (that language's words, plus the words every language
borrows, `common.yaml`), within one sentence and a short span, so a word that happens to exist
in another language does not combine with this one's. `foreign_sentence` tells whether a
sentence carrying such a structure is in another language than the rest of the text.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections import Counter, defaultdict
from collections.abc import Iterable
from functools import lru_cache
from typing import NamedTuple

from pagewarden.rules._lexicon import lexicon
from pagewarden.rules._normalise import match_key

__all__ = [
    "WEIGHTS",
    "Hit",
    "concept_hits",
    "foreign_sentence",
    "judge_phrases",
    "language_of",
    "multilingual_families",
    "trigger_positions",
]

_CJK = "\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f"
_TOKEN = re.compile(rf"[{_CJK}]+|[^\W_{_CJK}]+(?:\.[^\W\d_{_CJK}](?=\.))*")
#: Sentence ends: . ! ? before a space, after Chinese or Japanese, 。！？؟; a line end; the end of a
#: JSON string (page text arrives inside a step's JSON too).
_SENTENCE_END = re.compile(rf"[.!?](?=\s|$)|(?<=[{_CJK}])[.!?]|[\n。！？؟;；]|\"(?=\s*[,:}}\]])")
_ARABIC = re.compile(r"[\u0600-\u06ff]")
_URL = re.compile(r"https?://|www\.|@[\w-]+\.[a-z]|\.(?:test|com|net|org|io|ru|cn|de|fr|xyz|info)\b")
#: Chat templates and role markers of model APIs: a page has no reason to show them.
_FORMAT = re.compile(
    r"<\|(?:im_start|im_end|system|user|assistant|start_header_id|end_header_id|eot_id|endoftext)\|>"
    r"|\[/?INST\]|<</?SYS>>|<start_of_turn>|<end_of_turn>|</?(?:system|system_prompt|instructions)>"
    r"|[\"']role[\"']\s*:\s*[\"'](?:system|developer|assistant)[\"']"
    r"|^\s*#{2,}\s*(?:system|instructions?)\s*(?:prompt|message)?\s*:?\s*$",
    re.IGNORECASE | re.MULTILINE,
)
_VOCATIVE_END = frozenset(":,!،：，、")
_LEADING = " \t\"'«»“”„‘’-–—*•>@#(["
_SPAN = 60  # the furthest apart, in characters, the words of one structure may be


class Hit(NamedTuple):
    """One word (or sequence) of the lexicon found in a text."""

    lang: str
    concept: str
    start: int
    end: int


@lru_cache(maxsize=65536)
def _tags_of(token: str) -> frozenset[tuple[str, str]]:
    """(language, concept) of one word as written (case matters for acronyms only)."""
    lex = lexicon()
    key = match_key(token)
    tags: set[tuple[str, str]] = set()
    keys = [key]
    if _ARABIC.search(key):
        for clitics in lex.clitics.values():
            keys += [key[len(c) :] for c in clitics if key.startswith(c) and len(key) - len(c) >= 2]
    for k in keys:
        tags |= lex.words.get(k, set())
        for length in lex.stem_lengths:
            if length > len(k):
                break
            tags |= lex.stems.get(k[:length], set())
        for length in lex.suffix_lengths:
            if length + 2 <= len(k):
                tags |= lex.suffixes.get(k[-length:], set())
    plain = token.replace(".", "")
    if plain.isupper() and plain in lex.acronyms:
        tags |= lex.acronyms[plain]
    tags.update((lang, "function") for lang in lex.function_words.get(key, ()))
    return frozenset(tags)


@lru_cache(maxsize=65536)
def _phrases_from(token: str) -> tuple[tuple[tuple[tuple[str, bool], ...], tuple[str, str]], ...]:
    """The lexicon's word sequences that may start with `token`."""
    lex = lexicon()
    key = match_key(token)
    found = list(lex.phrases.get(key, ()))
    for length in lex.phrase_stem_lengths:
        if length > len(key):
            break
        found += lex.phrase_stems.get(key[:length], ())
    return tuple(found)


def _substring_hits(run: str, start: int) -> list[Hit]:
    """Lexicon substrings of a run of Chinese or Japanese characters."""
    lex = lexicon()
    key = run.lower()
    hits: list[Hit] = []
    for j, char in enumerate(key):
        for length in lex.substring_starts.get(char, ()):
            tags = lex.substrings.get(key[j : j + length])
            if tags:
                hits += [Hit(lang, c, start + j, start + j + length) for lang, c in tags]
    return hits


@lru_cache(maxsize=1024)
def concept_hits(text: str) -> tuple[Hit, ...]:
    """Every lexicon word in `text` (already folded by `_normalise.fold`), in text order;
    function words have the concept ``function``."""
    tokens = [(m.start(), m.end(), m.group(0)) for m in _TOKEN.finditer(text)]
    hits: list[Hit] = []
    for i, (start, end, token) in enumerate(tokens):
        first = token[0]
        if ("\u3040" <= first <= "\ufaff") or ("\uff66" <= first <= "\uff9f"):
            hits += _substring_hits(token, start)
            continue
        tags = _tags_of(token)
        if tags:
            hits += [Hit(lang, c, start, end) for lang, c in tags]
        candidates = _phrases_from(token)
        for words, (lang, concept) in candidates:
            n = len(words)
            if i + n > len(tokens):
                continue
            rest = [match_key(t[2]) for t in tokens[i + 1 : i + n]]
            if all(
                (word.startswith(w) if stem else word == w)
                for word, (w, stem) in zip(rest, words[1:], strict=True)
            ):
                hits.append(Hit(lang, concept, start, tokens[i + n - 1][1]))
    hits.sort(key=lambda h: (h.start, h.end))
    return tuple(hits)


_SCRIPT_PATTERNS = tuple(
    (name, re.compile(f"[{chars}]"))
    for name, chars in (
        ("Latin", "A-Za-z\u00c0-\u024f"),
        ("Cyrillic", "\u0400-\u052f"),
        ("Greek", "\u0370-\u03ff"),
        ("Arabic", "\u0600-\u06ff\u0750-\u077f\ufb50-\ufdff\ufe70-\ufeff"),
        ("Hebrew", "\u0590-\u05ff"),
        ("Han", _CJK),
        ("Hangul", "\uac00-\ud7af"),
        ("Devanagari", "\u0900-\u097f"),
        ("Thai", "\u0e00-\u0e7f"),
    )
)


class _Text:
    """One text's hits and sentences, computed once (`_analysis`)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.hits = concept_hits(text)
        self.ends = [m.end() for m in _SENTENCE_END.finditer(text)]
        self.sentence_at: dict[int, int] = {}
        self.urls = [m.start() for m in _URL.finditer(text)] if "." in text or "@" in text else []
        self.functions: list[Counter[str]] = [Counter() for _ in range(len(self.ends) + 1)]
        self.function_hits = [h for h in self.hits if h.concept == "function"]
        self.function_starts = [h.start for h in self.function_hits]
        for hit in self.function_hits:
            self.functions[self.sentence(hit.start)][hit.lang] += 1

    def sentence(self, pos: int) -> int:
        index = self.sentence_at.get(pos)
        if index is None:
            index = self.sentence_at[pos] = bisect_right(self.ends, pos)
        return index

    def bounds(self, index: int) -> tuple[int, int]:
        return (self.ends[index - 1] if index > 0 else 0), (
            self.ends[index] if index < len(self.ends) else len(self.text)
        )

    def english_near(self, span: tuple[int, int]) -> bool:
        """Whether the words around `span` (its sentence, at most 60 characters either side)
        are English: the English checks judge those."""
        index = self.sentence(span[0])
        if self.functions[index].get("en", 0) < 2:
            return False
        lo, hi = self.bounds(index)
        lo, hi = max(lo, span[0] - 60), min(hi, span[1] + 60)
        found = self.function_hits[
            bisect_left(self.function_starts, lo) : bisect_left(self.function_starts, hi)
        ]
        counts = Counter(h.lang for h in found)
        if not counts:
            return False
        (lang, n), *runner = counts.most_common(2)
        return lang == "en" and n >= 2 and not (runner and runner[0][1] == n)

    def language(self, index: int | None = None) -> str:
        """The language most function words of sentence `index` (or of the text) belong to."""
        counts = sum(self.functions, Counter()) if index is None else self.functions[index]
        if not counts:
            return ""
        (lang, n), *runner = counts.most_common(2)
        return lang if n >= 2 and not (runner and runner[0][1] == n) else ""


@lru_cache(maxsize=512)
def _analysis(text: str) -> _Text:
    return _Text(text)


class _Sentence:
    """The hits of one language group in one text, with sentence boundaries."""

    def __init__(self, analysis: _Text, hits: Iterable[Hit]) -> None:
        self.analysis = analysis
        self.text = analysis.text
        self.ends = analysis.ends
        self.urls = analysis.urls
        self.by: dict[str, list[Hit]] = defaultdict(list)
        for hit in hits:
            self.by[hit.concept].append(hit)
        self.starts = {concept: [h.start for h in found] for concept, found in self.by.items()}

    def around(self, concept: str, lo: int, hi: int) -> list[Hit]:
        """The hits of `concept` that start between `lo` and `hi`."""
        if concept not in self.starts:
            return []
        found, starts = self.by[concept], self.starts[concept]
        return found[bisect_left(starts, lo) : bisect_right(starts, hi)]

    def sentence(self, pos: int) -> int:
        return self.analysis.sentence(pos)

    def start_of(self, pos: int) -> int:
        index = self.sentence(pos)
        return self.ends[index - 1] if index > 0 else 0

    def bounds_end(self, pos: int) -> int:
        index = self.sentence(pos)
        return self.ends[index] if index < len(self.ends) else len(self.text)

    def near(self, *concepts: str, span: int = _SPAN, ordered: bool = False) -> tuple[int, int] | None:
        """The (start, end) of hits of every concept in one sentence within `span` characters
        (in the order given if `ordered`), or None."""
        lists = [self.by.get(c) for c in concepts]
        if not all(lists):
            return None
        for first in lists[0]:  # type: ignore[union-attr]
            chosen, ok = [first], True
            index = self.sentence(first.start)
            for concept in concepts[1:]:
                last = chosen[-1]
                best = None
                for hit in self.around(concept, first.start - span, first.end + span):
                    if hit in chosen or self.sentence(hit.start) != index:
                        continue
                    if ordered and hit.start < last.end:
                        continue
                    lo, hi = (
                        min(first.start, *(h.start for h in chosen), hit.start),
                        max(first.end, *(h.end for h in chosen), hit.end),
                    )
                    if hi - lo <= span:
                        best = hit
                        break
                if best is None:
                    ok = False
                    break
                chosen.append(best)
            if ok:
                return min(h.start for h in chosen), max(h.end for h in chosen)
        return None

    def ai_roles(self) -> list[tuple[int, int]]:
        """Spans naming an AI: an AI word, or an agent word with an AI or automation word beside it."""
        roles = [(h.start, h.end) for h in self.by.get("ai", ())]
        for agent in self.by.get("agent", ()):
            lo, hi = agent.start - 40, agent.end + 16
            for q in (*self.around("ai", lo, hi), *self.around("automated", lo, hi)):
                gap = max(q.start - agent.end, agent.start - q.end)
                if gap <= 16 and self.sentence(q.start) == self.sentence(agent.start):
                    roles.append((min(agent.start, q.start), max(agent.end, q.end)))
        return sorted(set(roles))

    def addressed(
        self, spans: list[tuple[int, int]], *, then: tuple[str, ...] = ()
    ) -> tuple[int, int] | None:
        """The first span of `spans` that the text addresses (see the module), widened to the
        address words. A span opening its sentence with ":" or "," counts only when a word of
        one of the concepts `then` follows it in the sentence (when given): "Prüfer: melde …",
        not a heading "Review: …"."""
        for start, end in spans:
            head = self.start_of(start)
            sentence = self.sentence(start)
            for hit in self.around("address", start - 60, start):
                if hit.end <= start and start - hit.end <= 24 and self.sentence(hit.start) == sentence:
                    return hit.start, end
            for hit in self.around("to", start - 24, start):
                if (
                    hit.end <= start
                    and start - hit.end <= 10
                    and self.sentence(hit.start) == sentence
                    and not self.text[head : hit.start].strip(_LEADING)
                ):
                    return hit.start, end
            for hit in self.around("address_after", end, end + 2):
                if 0 <= hit.start - end <= 2:
                    return start, hit.end
            lead = self.text[head:start].strip(_LEADING)
            after = self.text[end : end + 3].lstrip(" ")
            # first in its sentence, or after a label ("Kommentar von jens: KI-Agent, …")
            if (not lead or lead[-1] in ":：") and after[:1] in _VOCATIVE_END:
                tail = self.bounds_end(start)
                if not then or any(self.around(c, end, tail) for c in then):
                    return start, end + 1
        return None


#: Concepts one of which every structure needs: a language without any is not looked at.
_ANCHORS = frozenset(
    {
        "override", "now_you_are", "ai", "agent", "guard", "preapproved", "approved", "complete", "new",
        "urgent", "click", "must", "directive", "send", "violation", "safe",
    }
)  # fmt: skip


def _groups(text: str) -> dict[str, list[Hit]]:
    """The hits per language, each with the borrowed words; only languages with words of their own
    that a structure can start from."""
    analysis = _analysis(text)
    hits = analysis.hits
    common = [h for h in hits if h.lang == "*" and h.concept != "function"]
    groups: dict[str, list[Hit]] = defaultdict(list)
    anchored: set[str] = set()
    for hit in hits:
        if hit.lang != "*" and hit.concept != "function":
            groups[hit.lang].append(hit)
            # English text is the English checks' (a shared word must not add to them).
            if hit.concept in _ANCHORS and not analysis.english_near((hit.start, hit.end)):
                anchored.add(hit.lang)
    return {lang: sorted([*groups[lang], *common], key=lambda h: h.start) for lang in anchored}


def _phrase(text: str, span: tuple[int, int]) -> str:
    return " ".join(text[span[0] : span[1]].split())[:80]


#: What follows a guard's name at the head of a sentence when the text speaks to it.
_TO_THE_GUARD = (
    "directive", "override", "tell", "negation", "approved", "preapproved", "safe", "this", "action",
    "violation", "must", "send", "click",
)  # fmt: skip

#: (family, weight) of the structures, in the English families' weights (`_instructions._FAMILIES`).
WEIGHTS = {
    "override": 1.0, "address_ai": 1.0, "address_guard": 1.0, "hijack": 1.0, "mention_ai": 0.5,
    "credentials": 0.6, "exfiltrate": 0.6, "urgency": 0.4, "act_on_link": 0.4, "obligation": 0.3,
}  # fmt: skip


def _structures(s: _Sentence, text: str) -> dict[str, tuple[int, int]]:
    """family -> the span of the first structure found, for one language group."""
    found: dict[str, tuple[int, int]] = {}

    def put(family: str, span: tuple[int, int] | None) -> None:
        if span is not None and family not in found:
            found[family] = span

    put("override", s.near("override", "instructions", "prior") or s.near("override", "instructions", "you"))
    if s.by.get("now_you_are"):
        hit = s.by["now_you_are"][0]
        put("override", (hit.start, hit.end))
    new = s.near("new", "instructions", span=32)
    if new is not None and text[new[1] : new[1] + 3].lstrip()[:1] in (":", "："):
        put("override", new)
    roles = s.ai_roles()
    put("address_ai", s.addressed(roles))
    for role in roles:
        if "address_ai" in found:
            break
        cond = s.near("conditional", "you", span=48, ordered=True)
        if cond is not None and s.sentence(cond[0]) == s.sentence(role[0]) and 0 <= role[0] - cond[0] <= 48:
            put("address_ai", (cond[0], role[1]))
    guards = [(h.start, h.end) for h in s.by.get("guard", ())]
    put("address_guard", s.addressed(guards, then=_TO_THE_GUARD))
    for g in guards:
        for tell in s.around("tell", g[0] - 60, g[0]):
            if tell.end <= g[0] and g[0] - tell.end <= 24 and s.sentence(tell.start) == s.sentence(g[0]):
                put("address_guard", (tell.start, g[1]))
    put("address_guard", s.near("action", "preapproved", span=40))
    put(
        "address_guard",
        s.near("action", "approved", "user", span=48) or s.near("action", "approved", "guard", span=48),
    )
    put("hijack", s.near("complete", "task", "you", span=40) or s.near("complete", "task", "must", span=90))
    if roles:
        put("mention_ai", roles[0])
    put("credentials", s.near("directive", "credential", span=40))
    for hit in s.by.get("send", ()):
        at = bisect_right(s.urls, s.start_of(hit.start))
        if at < len(s.urls) and s.sentence(s.urls[at]) == s.sentence(hit.start):
            put("exfiltrate", (hit.start, max(hit.end, s.urls[at] + 12)))
    if s.by.get("urgent"):
        hit = s.by["urgent"][0]
        put("urgency", (hit.start, hit.end))
    put("act_on_link", s.near("click", "here", span=24))
    if s.by.get("must"):
        hit = s.by["must"][0]
        put("obligation", (hit.start, hit.end))
    return found


@lru_cache(maxsize=512)
def _found(text: str) -> tuple[tuple[_Sentence, dict[str, tuple[int, int]]], ...]:
    """Per language group of `text`: its hits and the structures found in them."""
    analysis = _analysis(text)
    out = []
    for hits in _groups(text).values():
        s = _Sentence(analysis, hits)
        out.append((s, _structures(s, text)))
    return tuple(out)


def multilingual_families(text: str) -> list[tuple[str, str, tuple[int, int]]]:
    """(family, phrase, span) of each structure found in `text` (folded), at most one per
    family: the first language that has it."""
    out: dict[str, tuple[str, str, tuple[int, int]]] = {}
    for m in _FORMAT.finditer(text):
        out["override"] = ("override", _phrase(text, m.span()), m.span())
        break
    analysis = _analysis(text)
    for _, structures in _found(text):
        for family, span in structures.items():
            if family not in out and not analysis.english_near(span):
                out[family] = (family, _phrase(text, span), span)
    return list(out.values())


def judge_phrases(text: str, *, dictating: bool = True) -> list[str]:
    """Phrases of `text` (folded) that address the guard, in any lexicon language (and, with
    `dictating`, that dictate its answer: "no violation", "this action is safe")."""
    found: list[str] = []
    analysis = _analysis(text)
    for s, structures in _found(text):
        spans = [structures.get("address_guard")]
        if dictating:
            spans += [
                s.near("negation", "violation", span=32),
                s.near("this", "action", "safe", span=48),
                s.near("this", "action", "approved", span=48),
            ]
        found += [
            _phrase(text, span) for span in spans if span is not None and not analysis.english_near(span)
        ]
    return list(dict.fromkeys(found))


def language_of(text: str) -> str:
    """The lexicon language most of `text`'s function words belong to ("" when too few)."""
    return _analysis(text).language()


def _scripts(text: str) -> Counter[str]:
    return Counter({name: n for name, p in _SCRIPT_PATTERNS if (n := len(p.findall(text)))})


def foreign_sentence(text: str, span: tuple[int, int]) -> bool:
    """Whether the sentence of `text` (folded) holding `span` is in another script, or clearly in
    another language, than the rest of `text` (an instruction slipped into a page in another
    language)."""
    analysis = _analysis(text)
    index = analysis.sentence(span[0])
    start, end = analysis.bounds(index)
    own, rest = _scripts(text[start:end]), _scripts(text[:start]) + _scripts(text[end:])
    if sum(rest.values()) < 20 or not own:
        return False
    own_script, rest_script = own.most_common(1)[0][0], rest.most_common(1)[0][0]
    if own_script != rest_script:
        return True
    if own_script != "Latin":
        return False
    counts = sum((c for i, c in enumerate(analysis.functions) if i != index), Counter())
    if not counts:
        return False
    (main, n), *runner = counts.most_common(2)
    if n < 4 or (runner and runner[0][1] * 2 > n):
        return False
    mine = analysis.functions[index]
    if not mine or mine.get(main, 0):
        return False
    return mine.most_common(1)[0][1] >= 2


_WORDS = re.compile(r"[^\W\d_]{2,}")
_HAS_CJK = re.compile(f"[{_CJK}]")
#: Hidden characters inside words, tag characters, letters of two look-alike scripts side by side.
_SUSPICIOUS = re.compile(
    "[\u200b\u200d\u2060-\u2064\ufeff\U000e0020-\U000e007e]|[a-z][\u0400-\u04ff]|[\u0400-\u04ff][a-z]"
    r"|<\|[a-z_]+\|>|\[/?inst\]|<</?sys>>"
)


@lru_cache(maxsize=65536)
def _is_trigger(word: str) -> bool:
    lex = lexicon()
    spaced, substrings = lex.triggers
    if _HAS_CJK.search(word) and any(t in word for t in substrings):
        return True
    key = match_key(word)
    if key in spaced:
        return True
    keys = [key]
    if _ARABIC.search(key):
        keys += [key[len(c) :] for clitics in lex.clitics.values() for c in clitics if key.startswith(c)]
    return any(k[:n] in spaced for k in keys for n in range(3, min(len(k), 24) + 1))


def trigger_positions(text: str) -> list[int]:
    """Where in `text` (lower case, as a page's whole snapshot) a word stands that the
    multilingual checks start from (an AI role, the guard, an override verb, instructions,
    approval), or hidden characters or mixed scripts do: the places worth a closer look.
    Cost: one pass for the distinct words, then one for those that are triggers."""
    found = [w for w in set(_WORDS.findall(text)) if _is_trigger(w)]
    positions = [m.start() for m in _SUSPICIOUS.finditer(text)]
    if found:
        words = "|".join(re.escape(w) for w in sorted(found, key=len, reverse=True))
        pattern = re.compile(rf"(?<![^\W\d_])(?:{words})(?![^\W\d_])")
        positions += [m.start() for m in pattern.finditer(text)]
    return positions
