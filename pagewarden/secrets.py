"""Registered secrets: values that must not leave for a host not allowed, nor appear in clear
in logs and traces."""

from __future__ import annotations

import base64
import json
import re
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from urllib.parse import quote, quote_plus

from pagewarden._regex import trie_pattern

__all__ = [
    "API_KEY",
    "CARD_NUMBER",
    "JWT",
    "PRIVATE_KEY",
    "Secret",
    "SecretRegistry",
    "credentials_in_text",
    "luhn_valid",
    "redact_credentials",
]

MIN_SECRET_LENGTH = 4

#: Credentials recognisable by their format, whether registered or not.
API_KEY = re.compile(
    r"\b(?:sk-(?:proj-|ant-)?[A-Za-z0-9_\-]{20,}|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,}"
    r"|glpat-[A-Za-z0-9_\-]{20,}|AKIA[0-9A-Z]{16}|ASIA[0-9A-Z]{16}|xox[abprs]-[A-Za-z0-9\-]{10,}"
    r"|AIza[0-9A-Za-z_\-]{35}|sk_live_[0-9A-Za-z]{24,}|rk_live_[0-9A-Za-z]{24,}|hf_[A-Za-z0-9]{30,})"
)
PRIVATE_KEY = re.compile(r"-----BEGIN (?:RSA |EC |DSA |OPENSSH |ENCRYPTED |PGP )?PRIVATE KEY(?: BLOCK)?-----")
_PRIVATE_KEY_BLOCK = re.compile(
    r"-----BEGIN (?:RSA |EC |DSA |OPENSSH |ENCRYPTED |PGP )?PRIVATE KEY(?: BLOCK)?-----"
    r"(?:[\s\S]*?-----END [A-Z ]*PRIVATE KEY(?: BLOCK)?-----|[\s\S]*)"
)
JWT = re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}")
CARD_NUMBER = re.compile(r"(?<!\d)(?:\d[ \-.]?){12,18}\d(?!\d)")


def luhn_valid(digits: str) -> bool:
    """The Luhn checksum of a card number."""
    total = 0
    for index, char in enumerate(reversed(digits)):
        n = int(char)
        if index % 2 == 1:
            n *= 2
            if n > 9:
                n -= 9
        total += n
    return total % 10 == 0


def _card(match: re.Match[str]) -> str:
    digits = re.sub(r"\D", "", match.group(0))
    return "[REDACTED:card_number]" if 13 <= len(digits) <= 19 and luhn_valid(digits) else match.group(0)


#: The user name and password of a URL (``scheme://user:pass@host``), as written anywhere in a text.
URL_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*:(?:/|\\|%2f|%5c){2})([^\s/\\?#@\"'<>]+)@")


def redact_credentials(text: str) -> str:
    """`text` with API keys, private keys, JWTs, card numbers and URLs' user names and passwords
    replaced by a marker."""
    if not text:
        return text
    if "@" in text:
        text = URL_USERINFO.sub(r"\1[REDACTED:userinfo]@", text)
    if len(text) < 13:
        return text
    text = _PRIVATE_KEY_BLOCK.sub("[REDACTED:private_key]", text)
    text = API_KEY.sub("[REDACTED:api_key]", text)
    text = JWT.sub("[REDACTED:jwt]", text)
    return CARD_NUMBER.sub(_card, text)


# "password: X", "API key is X", "pin 1234": a credential named in prose (a goal, a note).
_NAMED_CREDENTIAL = re.compile(
    r"(?i)\b(?P<name>pass(?:word|phrase|wd|code)|pwd|pin|api[ _-]?key|access[ _-]?(?:key|token)|"
    r"(?:auth(?:entication)?|bearer|session) token|token|secret(?: key)?|otp|one[ -]time code)"
    r"(?P<sep>\s*[:=]\s*|\s+(?:is|was|being)\s*:?\s*|\s+)"
    r"(?:\"(?P<dq>[^\"]{4,200})\"|'(?P<sq>[^']{4,200})'|“(?P<cq>[^”]{4,200})”|(?P<bare>\S{4,200}))"
)
_TRAILING = ".,;:"
#: Words that follow "password is" in prose about a password rather than in one.
_PROSE = frozenset({
    "required", "incorrect", "wrong", "expired", "invalid", "changed", "stored", "saved", "missing",
    "empty", "needed", "also", "still", "your", "their", "correct", "weak", "strong", "valid", "reset",
    "shown", "hidden", "visible", "encrypted", "protected", "unknown",
})  # fmt: skip
_CLOSERS = {")": "(", "]": "[", "}": "{"}


def _bare_value(text: str) -> str:
    """A credential written without quotes, without the sentence's punctuation around it."""
    while text:
        last = text[-1]
        if last in _TRAILING or last in "\"'”’" or (last in _CLOSERS and _CLOSERS[last] not in text):
            text = text[:-1]
        else:
            break
    return text


def _looks_secret(value: str) -> bool:
    """A word after "password" with no separator is a credential only if it looks like one
    (a digit or a symbol in it): "password hunter2!" is, "password reset" is not."""
    return any(ch.isdigit() for ch in value) or any(not ch.isalnum() for ch in value)


def credentials_in_text(text: str) -> list[tuple[str, str]]:
    """Credentials written in `text`, as ``(kind, value)`` pairs.

    Kinds: ``password`` and the other names of a credential followed by its value
    ("password: X", "API key is X", "PIN 4711"), ``api_key``, ``jwt``, ``private_key`` and
    ``card_number`` recognised by their format.
    """
    if not text:
        return []
    found: dict[str, str] = {}
    for match in _NAMED_CREDENTIAL.finditer(text):
        quoted = match.group("dq") or match.group("sq") or match.group("cq")
        value = quoted if quoted is not None else _bare_value(match.group("bare"))
        explicit = quoted is not None or match.group("sep").strip() != ""
        if len(value) < MIN_SECRET_LENGTH or not (explicit or _looks_secret(value)):
            continue
        if quoted is None and value.lower() in _PROSE:
            continue
        name = match.group("name").lower()
        kind = "password" if name.startswith(("pass", "pwd")) else re.sub(r"[\s-]+", "_", name)
        found.setdefault(value, kind)
    for pattern, kind in ((API_KEY, "api_key"), (JWT, "jwt"), (_PRIVATE_KEY_BLOCK, "private_key")):
        for match in pattern.finditer(text):
            found.setdefault(match.group(0), kind)
    for match in CARD_NUMBER.finditer(text):
        digits = re.sub(r"\D", "", match.group(0))
        if 13 <= len(digits) <= 19 and luhn_valid(digits):
            found.setdefault(match.group(0), "card_number")
    return [(kind, value) for value, kind in found.items()]


@dataclass(frozen=True, slots=True)
class Secret:
    """A value to protect: redacted from traces, logs and the guard's exceptions, and never
    sent (typed, in a URL, in a submitted form) to a host outside `allow_domains`.

    `allow_domains` holds domain patterns (``bank.test``, ``*.bank.test``, ``.bank.test`` for
    both, ``self`` for the site of the page it is used on); empty means nowhere.
    """

    value: str
    allow_domains: tuple[str, ...] = ()
    label: str = "secret"

    def __repr__(self) -> str:  # never show the value
        return f"Secret(label={self.label!r}, allow_domains={self.allow_domains!r})"


def _variants(value: str) -> set[str]:
    """Encodings under which a value commonly leaves a page (URL, form, base64, JSON)."""
    out = {value, quote(value, safe=""), quote_plus(value), quote(value)}
    raw = value.encode("utf-8")
    out.add(base64.b64encode(raw).decode("ascii").rstrip("="))
    out.add(base64.urlsafe_b64encode(raw).decode("ascii").rstrip("="))
    # inside a JSON string (quotes, backslashes, and non-ASCII characters escaped or not)
    out.update({json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1]})
    return {v for v in out if len(v) >= MIN_SECRET_LENGTH}


def _variants_pattern(variants: list[str]) -> re.Pattern[str]:
    """The pattern of `variants` (longest match first); a plain alternation if the factored
    one is too deeply nested to build."""
    if not variants:
        return re.compile(r"(?!)")  # matches nothing
    try:
        return re.compile(trie_pattern(variants))
    except (RecursionError, re.error):
        variants = sorted(variants, key=len, reverse=True)
        return re.compile("|".join(re.escape(v) for v in variants))


class SecretRegistry:
    """A thread-safe set of secrets with a compiled redaction pattern.

    A secret is *enforced* (the rules tier keeps it from hosts it is not allowed to reach)
    unless it was added with ``enforce=False``: then it is only redacted (a credential found
    in the goal, a value a policy protects with its own rule).
    """

    def __init__(self, secrets: Iterable[str | Secret] = ()) -> None:
        self._lock = threading.Lock()
        self._secrets: dict[str, Secret] = {}
        self._enforced: set[str] = set()
        self._pattern: re.Pattern[str] | None = None
        self._find_pattern: re.Pattern[str] | None = None
        self._owners: dict[str, str] = {}  # variant -> the value it encodes
        for item in secrets:
            if isinstance(item, Secret):
                self.add(item.value, allow_domains=item.allow_domains, label=item.label)
            else:
                self.add(item)

    def add(
        self,
        value: str,
        *,
        allow_domains: Iterable[str] = (),
        label: str | None = None,
        enforce: bool = True,
    ) -> Secret:
        """Register `value`; it may only be sent to `allow_domains` (default: nowhere).

        Adding a value again widens its `allow_domains`; with ``enforce=False`` it is only
        redacted (unless it was, or is later, added enforced).
        """
        if not isinstance(value, str) or len(value) < MIN_SECRET_LENGTH:
            raise ValueError(f"a secret must be a string of at least {MIN_SECRET_LENGTH} characters")
        with self._lock:
            existing = self._secrets.get(value)
            domains = tuple(dict.fromkeys([*(existing.allow_domains if existing else ()), *allow_domains]))
            secret = Secret(
                value, domains, label or (existing.label if existing else f"secret-{len(self._secrets) + 1}")
            )
            self._secrets[value] = secret
            if enforce and value not in self._enforced:
                self._enforced.add(value)
                self._find_pattern = None
            if existing is None:
                for variant in _variants(value):
                    self._owners.setdefault(variant, value)
                self._pattern = None  # compiled at its next use: adding N values stays linear
            return secret

    def _compiled(self, enforced: bool = False) -> re.Pattern[str] | None:
        """The pattern of every value's variants (longest first), or of the enforced values'
        only (what `find` looks for: values only redacted, such as the many a large policy set
        protects with its own rules, do not slow it), compiled once per change to the set."""
        pattern = self._find_pattern if enforced else self._pattern
        if pattern is None and self._owners:
            with self._lock:
                pattern = self._find_pattern if enforced else self._pattern
                if pattern is None:
                    owners = self._owners.items()
                    variants = [v for v, owner in owners if not enforced or owner in self._enforced]
                    pattern = _variants_pattern(variants)
                    if enforced:
                        self._find_pattern = pattern
                    else:
                        self._pattern = pattern
        return pattern

    def __iter__(self) -> Iterator[Secret]:
        with self._lock:
            return iter(list(self._secrets.values()))

    def __len__(self) -> int:
        return len(self._secrets)

    def __bool__(self) -> bool:
        return bool(self._secrets)

    def __contains__(self, value: object) -> bool:
        return value in self._secrets

    def enforced(self, value: str) -> bool:
        """Whether `value` is registered and enforced (not only redacted)."""
        return value in self._enforced

    def find(self, text: str) -> list[Secret]:
        """The enforced secrets that occur in `text`, in any of the common encodings."""
        if not text or not self._enforced:
            return []
        pattern = self._compiled(enforced=True)
        if pattern is None:
            return []
        found: dict[str, Secret] = {}
        for match in pattern.finditer(text):
            value = self._owners[match.group(0)]
            if value in self._enforced:
                found.setdefault(value, self._secrets[value])
        return list(found.values())

    def redact(self, text: str) -> str:
        """`text` with every occurrence of a secret replaced by ``[REDACTED:<label>]``."""
        if not text:
            return text
        pattern = self._compiled()
        if pattern is None:
            return text
        return pattern.sub(lambda m: f"[REDACTED:{self._secrets[self._owners[m.group(0)]].label}]", text)
