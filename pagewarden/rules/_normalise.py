"""Text as the instruction checks read it, whatever the page did to hide words from them.

`fold` undoes what keeps a word from being read as written: compatibility forms (NFKC:
full-width letters, ligatures, mathematical letters), characters that do not show (zero-width
and bidi controls, soft hyphens, variation selectors) and text smuggled in Unicode tag
characters (decoded: a model reads them, a person never sees them), and letters of another
script that look the same inside one word ("іgnore" with a Cyrillic і). `match_key` is one
word as the lexicon is keyed: lower case, accents removed on Latin, Greek, Cyrillic and Arabic
letters (never on kana, where the marks change the word); `fold` already dropped Arabic tatweel
and vowel marks, which would split a word in two.
`Evasion` says what `fold` had to undo: hidden characters inside words, decoded tag text,
words mixing scripts — no ordinary page needs them.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

__all__ = ["LOOKALIKES_TO_LATIN", "Evasion", "fold", "fold_with_evasion", "match_key", "script_of"]

#: Characters that do not show: zero-width, bidi controls, word joiners, BOM, soft hyphen,
#: Mongolian vowel separator, combining grapheme joiner, Hangul fillers, variation selectors.
_INVISIBLE = re.compile(
    "[\u00ad\u034f\u115f\u1160\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f"
    "\u3164\ufe00-\ufe0f\ufeff\uffa0\U000e0100-\U000e01ef]"
)
#: Hidden characters between two letters of a word (soft hyphens excepted: German hyphenation).
_SPLIT_WORD = re.compile("(?<=[^\\W\\d_])[\u034f\u180e\u200b\u200d\u2060-\u2064\ufeff]+(?=[^\\W\\d_])")
_TAGS = re.compile("[\U000e0020-\U000e007e]+")
_FLAG = "\U0001f3f4"  # a subdivision flag (England, Scotland, Wales) is spelled with tags
_MIN_TAG_TEXT = 6

# Cyrillic and Greek letters that look like Latin ones, and the reverse.
_CYR_GREEK = "аеорсухіјѕԁһӏԛԝкмтвнАВЕКМНОРСТУХІЈЅαοντρικχυΑΒΕΖΗΙΚΜΝΟΡΤΥΧ"
_LATIN_LOOK = "aeopcyxijsdhlqwkmtbhABEKMHOPCTYXIJSaovtpikxuABEZHIKMNOPTYX"
_TO_LATIN = str.maketrans(_CYR_GREEK, _LATIN_LOOK)
#: `str.translate` table: Cyrillic and Greek letters that look like Latin ones, to those (one
#: character for one, so positions in a text stay where they were).
LOOKALIKES_TO_LATIN = _TO_LATIN
_TO_CYRILLIC = str.maketrans("aeopcyxiABEKMHOPCTX", "аеорсухіАВЕКМНОРСТХ")
_WORD = re.compile(r"[^\W\d_]+")
_LATIN = re.compile(r"[a-zA-Z\u00c0-\u024f]")
_CYRILLIC = re.compile(r"[\u0400-\u04ff]")
_GREEK = re.compile(r"[\u0370-\u03ff]")
_MIXED = re.compile(r"[a-zA-Z][\u0370-\u04ff]|[\u0370-\u04ff][a-zA-Z]")


@dataclass(frozen=True, slots=True)
class Evasion:
    """What `fold` had to undo in a text (empty when nothing)."""

    split_words: int = 0  # words with hidden characters between their letters
    tag_text: str = ""  # text decoded from Unicode tag characters
    mixed_words: tuple[str, ...] = ()  # words whose letters come from two look-alike scripts

    def __bool__(self) -> bool:
        return bool(self.split_words or self.tag_text or self.mixed_words)


_NO_EVASION = Evasion()


def _decode_tags(text: str) -> tuple[str, str]:
    decoded: list[str] = []

    def repl(m: re.Match[str]) -> str:
        if m.start() > 0 and text[m.start() - 1] == _FLAG:
            return ""
        plain = "".join(chr(ord(c) - 0xE0000) for c in m.group(0))
        if len(plain.strip()) >= _MIN_TAG_TEXT:
            decoded.append(plain)
        return f" {plain} "

    out = _TAGS.sub(repl, text)
    return out.replace("\U000e007f", ""), " ".join(decoded)


def _unmix(word: str) -> str:
    """A word whose letters mix Latin with Cyrillic or Greek, in the script most of it is in."""
    latin = len(_LATIN.findall(word))
    other = len(_CYRILLIC.findall(word)) + len(_GREEK.findall(word))
    return (
        word.translate(_TO_CYRILLIC)
        if other > latin and _CYRILLIC.search(word)
        else word.translate(_TO_LATIN)
    )


@lru_cache(maxsize=2048)
def fold_with_evasion(text: str) -> tuple[str, Evasion]:
    """`text` folded (see the module), and what had to be undone."""
    if text.isascii():
        return text, _NO_EVASION
    text = unicodedata.normalize("NFKC", text)
    tag_text = ""
    if max(text) >= "\U000e0000":
        text, tag_text = _decode_tags(text)
    split = len(_SPLIT_WORD.findall(text))
    text = _INVISIBLE.sub("", text)
    if _HAS_ARABIC.search(text):  # vowel marks and tatweel would split Arabic words
        text = _ARABIC_MARKS.sub("", text)
    mixed: list[str] = []
    if _MIXED.search(text):

        def repl(m: re.Match[str]) -> str:
            word = m.group(0)
            if _LATIN.search(word) and (_CYRILLIC.search(word) or _GREEK.search(word)):
                mixed.append(word)
                return _unmix(word)
            return word

        text = _WORD.sub(repl, text)
    if not (split or tag_text or mixed):
        return text, _NO_EVASION
    return text, Evasion(split, tag_text, tuple(mixed[:8]))


def fold(text: str) -> str:
    """`text` with hidden characters removed, tag text decoded and look-alike letters unified."""
    return fold_with_evasion(text)[0]


_ARABIC_MARKS = re.compile("[\u0610-\u061a\u064b-\u065f\u0670\u06d6-\u06ed\u0640]")
_HAS_ARABIC = re.compile("[\u0600-\u06ff]")
_KEY_MAP = str.maketrans({"ı": "i", "ى": "ي", "ß": "ss", "ё": "е", "ł": "l", "đ": "d", "ø": "o", "æ": "ae"})


@lru_cache(maxsize=65536)
def match_key(word: str) -> str:
    """`word` as the lexicon is keyed: lower case, accents and Arabic marks removed (not on kana)."""
    word = word.lower().translate(_KEY_MAP)
    if word.isascii():
        return word
    decomposed = unicodedata.normalize("NFD", word)
    kept = [
        c
        for i, c in enumerate(decomposed)
        if not (unicodedata.combining(c) and i > 0 and ord(decomposed[i - 1]) < 0x0800)
    ]
    return _ARABIC_MARKS.sub("", unicodedata.normalize("NFC", "".join(kept)))


_SCRIPTS = (
    (0x0041, 0x024F, "Latin"),
    (0x0370, 0x03FF, "Greek"),
    (0x0400, 0x052F, "Cyrillic"),
    (0x0590, 0x05FF, "Hebrew"),
    (0x0600, 0x06FF, "Arabic"),
    (0x0750, 0x077F, "Arabic"),
    (0x0900, 0x097F, "Devanagari"),
    (0x0E00, 0x0E7F, "Thai"),
    (0x3040, 0x30FF, "Kana"),
    (0x3400, 0x9FFF, "Han"),
    (0xAC00, 0xD7AF, "Hangul"),
    (0xF900, 0xFAFF, "Han"),
    (0xFB50, 0xFDFF, "Arabic"),
    (0xFE70, 0xFEFF, "Arabic"),
    (0xFF66, 0xFF9F, "Kana"),
)


def script_of(char: str) -> str:
    """The script of one letter ("Latin", "Cyrillic", "Han", "Kana", …), or "" if none listed."""
    cp = ord(char)
    for lo, hi, name in _SCRIPTS:
        if lo <= cp <= hi:
            return name if name != "Latin" or char.isalpha() else ""
    return ""
