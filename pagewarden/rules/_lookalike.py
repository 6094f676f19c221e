"""Look-alike hosts: a host that imitates one the user named, or that no honest site would use.

`deception` compares a destination host with the hosts the goal and the allow-list name (the
"real" hosts) and says how it imitates one of them:

* **look-alike letters** — the two registrable domains read the same once letters that look
  alike are unified (UTS #39 confusables: Cyrillic ``а`` for Latin ``a``, Greek ``ο`` for ``o``,
  ``0`` for ``o``, ``1`` and ``i`` for ``l``, ``rn`` for ``m``, ``vv`` for ``w``; accents dropped);
  punycode is read decoded, so ``xn--pypal-4ve.com`` is ``pаypal.com``;
* **one letter away** — an extra or a missing letter, two swapped letters, or a letter replaced
  by its neighbour on the keyboard, in the name of a registrable domain of four letters or more,
  under the same suffix (``nws.test``, ``newss.test``, ``nwes.test``, ``nrws.test``);
* **another top-level domain** — the same name under another suffix (``news.com`` for
  ``news.test``);
* **the real host in front** — the real host's labels put before another site
  (``news.test.evil.com``), written with hyphens (``news-test.com``), or the real name with a
  word that phishing adds (``news-login.test``).

A host is never deceptive towards a host on its own site (a subdomain, the same registrable
domain) nor when it is named itself. Some hosts are deceptive with no real host to compare:
a label that mixes scripts a registry would not mix (Latin with Cyrillic or Greek; Latin with
Han, kana and Hangul is ordinary Japanese, Chinese or Korean), and a label written wholly in
Cyrillic or Greek letters that all look like Latin ones under a generic top-level domain.
Ordinary internationalised names (``münchen.de``, ``日本語.jp``) are neither.
"""

from __future__ import annotations

import contextlib
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

import idna as _idna

from pagewarden._url import parse_url, registrable_domain

__all__ = ["Deception", "deception", "goal_hosts", "skeleton", "standalone_deception"]

#: multi-letter look-alikes in ASCII (after single letters are unified)
_SEQUENCES = (("rn", "m"), ("vv", "w"), ("cl", "d"))
_ASCII_FOLD = str.maketrans({"0": "o", "1": "l", "i": "l", "|": "l"})
#: words phishing hosts add to a real name (``paypal-login.com``)
#: (not words real companies put next to their own name in their own domains: "online" as in
#: microsoftonline.com, "update" as in windowsupdate.com, "pay", "web", "help", "service")
_PHISH_WORDS = frozenset({
    "login", "signin", "sign-in", "secure", "security", "account", "accounts", "verify",
    "verification", "support", "billing", "payment", "wallet", "auth", "password", "recovery",
    "official", "portal", "confirm",
})  # fmt: skip
#: file extensions a goal names ("report.pdf"), which are no hosts the user named
_FILE_SUFFIXES = frozenset({
    "pdf", "txt", "json", "csv", "html", "htm", "xml", "zip", "png", "jpg", "jpeg", "gif", "svg",
    "doc", "docx", "xls", "xlsx", "ppt", "pptx", "yaml", "yml", "js", "ts", "py", "md", "tar", "gz",
    "exe", "mp3", "mp4", "log", "ini", "cfg", "sh", "rs", "go", "java", "rb", "php", "css",
})  # fmt: skip
#: scripts a single label may combine (Chromium's "highly restrictive" profile)
_ALLOWED_MIXES = (
    frozenset({"LATIN", "HAN", "HIRAGANA", "KATAKANA"}),
    frozenset({"LATIN", "HAN", "BOPOMOFO"}),
    frozenset({"LATIN", "HAN", "HANGUL"}),
)
_IGNORED_SCRIPTS = frozenset({"COMMON", "INHERITED"})
#: hosts named in a goal: ``name.tld`` with optional scheme, in any script
_HOST_IN_TEXT = re.compile(
    r"(?:https?://)?(?:[^\W_](?:[\w-]{0,61}[^\W_])?\.)+[^\W\d_]{2,63}(?![\w-])", re.IGNORECASE
)
_CONFUSABLE_SCRIPTS = frozenset({"CYRILLIC", "GREEK", "ARMENIAN", "CHEROKEE"})


@dataclass(frozen=True, slots=True)
class Deception:
    """How a host imitates `real` (empty when it imitates no host in particular)."""

    real: str
    why: str


def _data() -> dict[str, list[dict[str, str]]]:
    from confusable_homoglyphs import confusables  # 900 kB of tables: loaded on first use

    return confusables.confusables_data


@lru_cache(maxsize=8192)
def _prototype(char: str) -> str:
    """The ASCII letter or digit `char` looks like (itself when none)."""
    if char.isascii():
        return char
    seen = {char}
    frontier = [char]
    data = _data()
    for _depth in range(3):
        found: list[str] = []
        for item in frontier:
            for entry in data.get(item, ()):
                glyph = entry.get("c", "")
                if len(glyph) == 1 and glyph.isascii() and glyph.isalnum():
                    return glyph.lower()
                if glyph and glyph not in seen and len(glyph) == 1:
                    seen.add(glyph)
                    found.append(glyph)
        frontier = found
        if not frontier:
            break
    return char


@lru_cache(maxsize=4096)
def skeleton(text: str) -> str:
    """`text` with look-alike letters unified (lower case, accents dropped, confusables mapped
    to the ASCII letter they imitate)."""
    decomposed = unicodedata.normalize("NFKD", text.lower())
    plain = "".join(c for c in decomposed if not unicodedata.combining(c))
    out = "".join(_prototype(c) for c in plain).lower().translate(_ASCII_FOLD)
    for seq, rep in _SEQUENCES:
        out = out.replace(seq, rep)
    return out


@lru_cache(maxsize=4096)
def _unicode(host: str) -> str:
    """A host's labels as they read (punycode decoded where it decodes)."""
    labels = []
    for label in host.split("."):
        text = label
        if label.startswith("xn--"):
            with contextlib.suppress(_idna.IDNAError, UnicodeError, ValueError):
                text = _idna.decode(label)
        labels.append(text)
    return ".".join(labels)


def _split(host: str) -> tuple[str, str]:
    """(name, suffix) of a host's registrable domain: ``news``, ``test`` for ``a.news.test``."""
    site = registrable_domain(host)
    name, _, suffix = site.partition(".")
    return name, suffix


_ROWS = ("1234567890-", "qwertyuiop", "asdfghjkl", "zxcvbnm")


def _neighbours() -> dict[str, frozenset[str]]:
    """Letters next to each other on a QWERTY keyboard (a slip of the finger)."""
    near: dict[str, set[str]] = {}
    for r, row in enumerate(_ROWS):
        for c, char in enumerate(row):
            around = {row[c - 1] if c else "", row[c + 1] if c + 1 < len(row) else ""}
            for other in (r - 1, r + 1):
                if 0 <= other < len(_ROWS):
                    line = _ROWS[other]
                    around |= {line[i] for i in (c - 1, c, c + 1) if 0 <= i < len(line)}
            near[char] = around - {""}
    return {k: frozenset(v) for k, v in near.items()}


_NEAR = _neighbours()


def _one_edit(a: str, b: str) -> bool:
    """Whether `a` and `b` differ by one inserted or deleted letter, two swapped neighbours, or
    one letter replaced by its neighbour on the keyboard (and are not equal). A replacement by
    any letter is not enough: honest sites differ so (``wikipedia`` and ``wikimedia``)."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        if len(diff) == 1:
            return b[diff[0]] in _NEAR.get(a[diff[0]], ())
        if len(diff) != 2 or diff[1] != diff[0] + 1:
            return False
        return a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]]
    short, long_ = (a, b) if len(a) < len(b) else (b, a)
    return any(long_[:i] + long_[i + 1 :] == short for i in range(len(long_)))


def _scripts(label: str) -> set[str]:
    from confusable_homoglyphs import categories

    out = set()
    for char in label:
        if char.isascii() and not char.isalpha():
            continue
        try:
            out.add(categories.alias(char))
        except Exception:  # noqa: BLE001 - a code point the tables do not know
            out.add("UNKNOWN")
    return out - _IGNORED_SCRIPTS


@lru_cache(maxsize=4096)
def standalone_deception(host: str) -> str | None:
    """Why `host` deceives whatever the user named (mixed scripts, a wholly look-alike name
    under a generic top-level domain), or None."""
    text = _unicode(host)
    if text.isascii():
        return None
    labels = text.split(".")
    tld = labels[-1] if labels else ""
    for label in labels:
        if label.isascii():
            continue
        scripts = _scripts(label)
        if len(scripts) > 1 and not any(scripts <= allowed for allowed in _ALLOWED_MIXES):
            names = ", ".join(sorted(s.title() for s in scripts))
            return f"its name {label!r} mixes scripts ({names}), as look-alike hosts do"
        looks = skeleton(label)
        if (
            scripts
            and scripts <= _CONFUSABLE_SCRIPTS
            and looks.isascii()
            and looks.replace("-", "").isalnum()
            and tld.isascii()
            and (len(tld) > 2 or tld in ("io", "co", "ai", "me", "ly", "tv", "cc"))
        ):
            written = "/".join(s.title() for s in sorted(scripts))
            return f"its name {label!r} is written in {written} letters that read as Latin {looks!r}"
    return None


@lru_cache(maxsize=4096)
def _deception(host: str, references: tuple[str, ...]) -> Deception | None:
    if not host or parse_url(f"http://{host}/").is_ip:
        return None
    site = registrable_domain(host)
    for ref in references:
        if host == ref or host.endswith("." + ref) or registrable_domain(ref) == site:
            return None
    name, suffix = _split(host)
    looks_site = skeleton(_unicode(site))
    for ref in references:
        ref_site = registrable_domain(ref)
        ref_name, ref_suffix = _split(ref)
        if not ref_name or parse_url(f"http://{ref}/").is_ip:
            continue
        if looks_site == skeleton(_unicode(ref_site)):
            return Deception(ref, f"it reads like {ref} (look-alike letters)")
        same_name = name == ref_name or skeleton(_unicode(name)) == skeleton(_unicode(ref_name))
        if same_name and suffix != ref_suffix and len(ref_name) >= 3:
            why = f"it is {ref_name} under another top-level domain (.{suffix}, not .{ref_suffix})"
            return Deception(ref, why)
        if (
            suffix == ref_suffix
            and len(ref_name) >= 4
            and _one_edit(skeleton(_unicode(name)), skeleton(_unicode(ref_name)))
        ):
            return Deception(ref, f"its name is one letter away from {ref_site}")
        labels = host.split(".")
        ref_labels = ref_site.split(".")
        inner = labels[: -len(site.split("."))]
        if len(ref_labels) > 1 and any(
            inner[i : i + len(ref_labels)] == ref_labels for i in range(len(inner))
        ):
            return Deception(ref, f"it puts {ref_site} in front of another site ({site})")
        hyphened = ref_site.replace(".", "-")
        combined = {f"{ref_name}-{w}" for w in _PHISH_WORDS} | {f"{w}-{ref_name}" for w in _PHISH_WORDS}
        combined |= {f"{ref_name}{w}" for w in _PHISH_WORDS} | {f"{w}{ref_name}" for w in _PHISH_WORDS}
        if len(ref_name) >= 4 and (name == hyphened or name in combined):
            return Deception(ref, f"it is {ref_site}'s name inside another site's ({site})")
    return None


def deception(host: str, references: Iterable[str]) -> Deception | None:
    """How `host` (normalised, as `parse_url` gives it) imitates one of `references` (hosts
    the user named), or None. See the module docstring."""
    refs = tuple(sorted({r for r in references if r}))
    return _deception(host.lower().rstrip("."), refs) if refs else None


@lru_cache(maxsize=512)
def goal_hosts(goal: str) -> tuple[str, ...]:
    """The hosts a goal names (``news.test``, ``https://docs.example.org/x`` …), normalised."""
    out: list[str] = []
    for match in _HOST_IN_TEXT.finditer(goal or ""):
        text = match.group(0)
        host = parse_url(text if "://" in text else f"http://{text}/").host
        if "://" not in text and host.rsplit(".", 1)[-1] in _FILE_SUFFIXES:
            continue  # a file name
        if host and "." in host and host not in out:
            out.append(host)
    return tuple(out)
