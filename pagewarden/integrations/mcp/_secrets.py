"""Secrets the model types by name and never reads: ``pagewarden mcp --secrets FILE``.

The file is a dotenv file, read as Playwright MCP reads its ``--secrets`` file (the npm
``dotenv`` package's rules: ``NAME=value``, optional ``export``, single, double or back quotes,
``\\n`` in double quotes, ``#`` comments), so the same file works with both servers. What
pagewarden adds is read from a comment after the value, which dotenv ignores::

    GITHUB_PASSWORD="correct horse battery staple"   # domains: github.com
    GITHUB_TOKEN=ghp_…                                # domains: github.com, .githubusercontent.com

``domains:`` names where the secret may be typed or sent (``x.com`` that host, ``*.x.com`` its
subdomains, ``.x.com`` both); a secret with no ``domains:`` may be typed nowhere.

A model that types a secret's *name* (the whole text of ``browser_type`` or of a
``browser_fill_form`` field) types its value (`SecretBook.lookup`). Each value is registered
with the session's guard (`SecretBook.register`: ``guard.add_secret(value,
allow_domains=…)``), so typing it, or a page sending it, anywhere else is refused, and it is
redacted from traces and events. Every text the model reads is passed through
`SecretBook.mask`: each value — also in other letter case, spread out with spaces or
punctuation, reversed, in full-width or other compatibility characters or look-alike letters of
another script, URL-, JSON-, HTML- or
base64-encoded — is replaced by ``<secret>NAME</secret>``.
"""

from __future__ import annotations

import base64
import html
import json
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any
from urllib.parse import quote, quote_plus

from pagewarden._url import host_of_pattern
from pagewarden.rules import LOOKALIKES_TO_LATIN
from pagewarden.secrets import MIN_SECRET_LENGTH

__all__ = ["NamedSecret", "SecretBook", "SecretsFileError", "load_secrets", "parse_dotenv"]

# The npm dotenv package's line rule (lib/main.js `LINE`), with the trailing comment captured.
_LINE = re.compile(
    r"^\s*(?:export\s+)?(?P<key>[A-Za-z0-9_.-]+)(?:\s*=\s*?|:\s+?)"
    r"(?P<value>\s*'(?:\\'|[^'])*'|\s*\"(?:\\\"|[^\"])*\"|\s*`(?:\\`|[^`])*`|[^#\r\n]+)?"
    r"\s*(?P<comment>#.*)?$",
    re.MULTILINE,
)
_QUOTED = re.compile(r"^(['\"`])([\s\S]*)\1$")
_DOMAINS = re.compile(r"^#\s*domains\s*:\s*(?P<list>.*)$", re.IGNORECASE)
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]*$")
#: The largest secrets file read (a dotenv file of secrets is small; a larger one is a mistake).
MAX_FILE_BYTES = 1 << 20


class SecretsFileError(ValueError):
    """The secrets file cannot be used (unreadable, a value too short, a bad domain); the
    message names the file and the line, never a value."""


@dataclass(frozen=True, slots=True)
class NamedSecret:
    """One secret of the file: the name the model types, the value, where it may go."""

    name: str
    value: str
    domains: tuple[str, ...] = ()

    def __repr__(self) -> str:  # never show the value
        return f"NamedSecret(name={self.name!r}, domains={self.domains!r})"


def parse_dotenv(text: str) -> list[tuple[str, str, str, int]]:
    """``(name, value, comment, line)`` for each entry of a dotenv text, by the npm dotenv
    package's rules (a later entry of the same name replaces an earlier one)."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    entries: dict[str, tuple[str, str, str, int]] = {}
    for match in _LINE.finditer(text):
        value = (match.group("value") or "").strip()
        quote_mark = value[:1]
        value = _QUOTED.sub(r"\2", value)
        if quote_mark == '"':
            value = value.replace("\\n", "\n").replace("\\r", "\r")
        line = text.count("\n", 0, match.start("key")) + 1
        key = match.group("key")
        entries[key] = (key, value, (match.group("comment") or "").strip(), line)
    return list(entries.values())


def _domains(comment: str, where: str) -> tuple[str, ...]:
    match = _DOMAINS.match(comment)
    if match is None:
        return ()
    domains = []
    for item in re.split(r"[,\s]+", match.group("list").strip()):
        if not item:
            continue
        parsed = host_of_pattern(item)
        if "/" in item or parsed is None or not parsed[1] or (parsed[0] == "*" and not parsed[1]):
            raise SecretsFileError(
                f"{where}: {item!r} is not a domain pattern (write a host: example.com, *.example.com "
                "for its subdomains, .example.com for both)"
            )
        domains.append(item.lower())
    return tuple(dict.fromkeys(domains))


def load_secrets(path: str | Path) -> list[NamedSecret]:
    """The secrets of the dotenv file at `path` (see the module docstring); an entry with an
    empty value is skipped (Playwright MCP ignores it too). Raises `SecretsFileError`."""
    path = Path(path)
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            raise SecretsFileError(f"{path}: too large for a secrets file (over {MAX_FILE_BYTES} bytes)")
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise SecretsFileError(f"{path}: not UTF-8 text") from None
    except OSError as exc:
        raise SecretsFileError(f"{path}: cannot be read ({exc.strerror or type(exc).__name__})") from None
    secrets = []
    for name, value, comment, line in parse_dotenv(text):
        where = f"{path}, line {line} ({name})"
        if not value:
            continue
        if len(value) < MIN_SECRET_LENGTH:
            raise SecretsFileError(
                f"{where}: a secret must have at least {MIN_SECRET_LENGTH} characters to be protected"
            )
        if not _NAME.match(name):
            raise SecretsFileError(f"{where}: a secret's name starts with a letter or an underscore")
        secrets.append(NamedSecret(name, value, _domains(comment, where)))
    return secrets


# -- masking -----------------------------------------------------------------------------------
#: What a page may put between the characters of a value it echoes (spaces, punctuation, joiners).
_GAP = r"[\s\W_]{0,3}"
_MASK = re.compile(r"(<secret>[A-Za-z0-9_.-]*</secret>)")
_INVISIBLE = re.compile(
    r"[\u00ad\u034f\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufe00-\ufe0f\ufeff]"
)


def _spread(value: str) -> str:
    """The pattern of `value` with up to three gap characters (spaces, punctuation) between any
    two of its own. A gap never takes the character that follows it, so the pattern cannot
    backtrack."""
    chars = [ch for ch in value if not ch.isspace()]
    out = []
    for i, ch in enumerate(chars):
        if i:
            out.append(_GAP if ch.isalnum() else f"(?:(?!{re.escape(ch)})[\\s\\W_]){{0,3}}")
        out.append(re.escape(ch))
    return "".join(out)


def _encodings(value: str) -> set[str]:
    raw = value.encode("utf-8")
    out = {
        quote(value, safe=""), quote_plus(value), html.escape(value),
        json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1],
        base64.b64encode(raw).decode("ascii"), base64.b64encode(raw).decode("ascii").rstrip("="),
        base64.urlsafe_b64encode(raw).decode("ascii").rstrip("="),
    }  # fmt: skip
    return {v for v in out if v != value and len(v) >= MIN_SECRET_LENGTH}


@lru_cache(maxsize=4096)
def _fold_char(ch: str) -> str:
    """One character in its compatibility form (NFKC), or "" for one that does not show."""
    return "" if _INVISIBLE.match(ch) else unicodedata.normalize("NFKC", ch)


def _folded(text: str) -> tuple[str, list[int]]:
    """`text` with each character in its compatibility form (NFKC) and invisible characters
    dropped, and for each character of the result the index of the one it came from."""
    out: list[str] = []
    origin: list[int] = []
    for index, ch in enumerate(text):
        folded = ch if ch.isascii() else _fold_char(ch)
        if folded:
            out.append(folded)
            origin.extend([index] * len(folded))
    return "".join(out), origin


class SecretBook:
    """The secrets of one server: typed by name, registered with each session's guard, masked
    in everything the model reads."""

    def __init__(self, secrets: Iterable[NamedSecret] = ()) -> None:
        self.secrets: tuple[NamedSecret, ...] = tuple(secrets)
        self._by_name = {s.name: s for s in self.secrets}
        parts: list[str] = []
        self._owner: dict[str, str] = {}  # group name -> secret name
        for i, secret in enumerate(self.secrets):
            forms = [_spread(secret.value), _spread(secret.value[::-1])]
            forms += [re.escape(e) for e in sorted(_encodings(secret.value), key=len, reverse=True)]
            group = f"s{i}"
            self._owner[group] = secret.name
            parts.append(f"(?P<{group}>{'|'.join(forms)})")
        self._pattern = re.compile("|".join(parts), re.IGNORECASE) if parts else None

    def __bool__(self) -> bool:
        return bool(self.secrets)

    def __len__(self) -> int:
        return len(self.secrets)

    @classmethod
    def from_file(cls, path: str | Path | None) -> SecretBook:
        """The book of the secrets file at `path` (None: an empty book)."""
        return cls(load_secrets(path) if path is not None else ())

    def get(self, name: str) -> NamedSecret | None:
        """The secret named `name`, or None."""
        return self._by_name.get(name)

    def lookup(self, text: str) -> str:
        """The value of the secret named `text` when `text` is a secret's name (what the model
        types to type a secret), else `text` itself."""
        secret = self._by_name.get(text.strip()) if text else None
        return secret.value if secret is not None else text

    def register(self, guard: Any) -> None:
        """Register every secret with `guard` (a `Guard`): allowed only to its domains."""
        if guard is None:
            return
        for secret in self.secrets:
            guard.add_secret(secret.value, allow_domains=secret.domains, label=secret.name)

    def _sub(self, match: re.Match[str]) -> str:
        group = match.lastgroup or ""
        return f"<secret>{self._owner.get(group, 'secret')}</secret>"

    def mask(self, text: str) -> str:
        """`text` with each secret's value (in the forms the module docstring lists) replaced by
        ``<secret>NAME</secret>``."""
        if self._pattern is None or not text:
            return text
        text = self._pattern.sub(self._sub, text)
        if text.isascii():
            return text
        # look-alike letters of other scripts, compatibility forms and invisible characters:
        # matched in the folded line, replaced in the original (the masks in place are left alone)
        parts = _MASK.split(text)
        for i in range(0, len(parts), 2):
            part = parts[i]
            if part.isascii():
                continue
            if unicodedata.is_normalized("NFKC", part) and not _INVISIBLE.search(part):
                parts[i] = self._mask_at(part, part.translate(LOOKALIKES_TO_LATIN), None)
            else:
                parts[i] = "\n".join(self._mask_folded(line) for line in part.split("\n"))
        return "".join(parts)

    def _mask_at(self, text: str, folded: str, origin: list[int] | None) -> str:
        """`text` with the secrets found in `folded` (its folded form; `origin`: the index in
        `text` of each character of `folded`, None when they are one for one) masked."""
        if folded == text:
            return text
        assert self._pattern is not None
        spans = [
            (m.start(), m.end(), m) if origin is None else (origin[m.start()], origin[m.end() - 1] + 1, m)
            for m in self._pattern.finditer(folded)
        ]
        for start, end, match in reversed(spans):
            text = text[:start] + self._sub(match) + text[end:]
        return text

    def _mask_folded(self, line: str) -> str:
        latin = line.translate(LOOKALIKES_TO_LATIN)  # one character for one: positions hold
        if line.isascii() or (unicodedata.is_normalized("NFKC", line) and not _INVISIBLE.search(line)):
            return self._mask_at(line, latin, None)
        folded, origin = _folded(latin)
        return self._mask_at(line, folded, origin)

    def matcher(self, registry: Any = None) -> _Matcher:
        """What the screenshot masking compares the page's fields and text with: the guard's
        `SecretRegistry` (`registry`, or None) and this book's values in every form it masks."""
        return _Matcher(registry, self)

    def mask_lines(self, lines: Sequence[str]) -> list[str]:
        """`mask` on each of `lines`."""
        return [self.mask(line) for line in lines]


class _Matcher:
    """A registry and a book as one ``redact`` (the interface `pagewarden.observe.mask_boxes` uses)."""

    def __init__(self, registry: Any, book: SecretBook) -> None:
        self.registry = registry
        self.book = book

    def __bool__(self) -> bool:
        return bool(self.registry) or bool(self.book)

    def redact(self, text: str) -> str:
        """`text` with the registry's secrets redacted and the book's values masked."""
        if self.registry is not None:
            text = self.registry.redact(text)
        return self.book.mask(text)
