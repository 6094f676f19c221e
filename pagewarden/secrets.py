"""Registered secrets: values that must not leave for a host not allowed, nor appear in clear
in logs and traces."""

from __future__ import annotations

import base64
import re
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from urllib.parse import quote, quote_plus

__all__ = [
    "API_KEY",
    "CARD_NUMBER",
    "JWT",
    "PRIVATE_KEY",
    "Secret",
    "SecretRegistry",
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


def redact_credentials(text: str) -> str:
    """`text` with API keys, private keys, JWTs and card numbers replaced by a marker."""
    if not text or len(text) < 13:
        return text
    text = _PRIVATE_KEY_BLOCK.sub("[REDACTED:private_key]", text)
    text = API_KEY.sub("[REDACTED:api_key]", text)
    text = JWT.sub("[REDACTED:jwt]", text)
    return CARD_NUMBER.sub(_card, text)


@dataclass(frozen=True, slots=True)
class Secret:
    """A value to protect; `allow_domains` are the hosts it may be sent to."""

    value: str
    allow_domains: tuple[str, ...] = ()
    label: str = "secret"

    def __repr__(self) -> str:  # never show the value
        return f"Secret(label={self.label!r}, allow_domains={self.allow_domains!r})"


def _variants(value: str) -> set[str]:
    """Encodings under which a value commonly leaves a page (URL, form, base64)."""
    out = {value, quote(value, safe=""), quote_plus(value), quote(value)}
    raw = value.encode("utf-8")
    out.add(base64.b64encode(raw).decode("ascii").rstrip("="))
    out.add(base64.urlsafe_b64encode(raw).decode("ascii").rstrip("="))
    return {v for v in out if len(v) >= MIN_SECRET_LENGTH}


class SecretRegistry:
    """A thread-safe set of secrets with a compiled redaction pattern."""

    def __init__(self, secrets: Iterable[str | Secret] = ()) -> None:
        self._lock = threading.Lock()
        self._secrets: dict[str, Secret] = {}
        self._pattern: re.Pattern[str] | None = None
        self._labels: dict[str, str] = {}
        for item in secrets:
            if isinstance(item, Secret):
                self.add(item.value, allow_domains=item.allow_domains, label=item.label)
            else:
                self.add(item)

    def add(self, value: str, *, allow_domains: Iterable[str] = (), label: str | None = None) -> Secret:
        """Register `value`; it may only be sent to `allow_domains` (default: nowhere)."""
        if not isinstance(value, str) or len(value) < MIN_SECRET_LENGTH:
            raise ValueError(f"a secret must be a string of at least {MIN_SECRET_LENGTH} characters")
        with self._lock:
            existing = self._secrets.get(value)
            domains = tuple(dict.fromkeys([*(existing.allow_domains if existing else ()), *allow_domains]))
            secret = Secret(
                value, domains, label or (existing.label if existing else f"secret-{len(self._secrets) + 1}")
            )
            self._secrets[value] = secret
            for variant in _variants(value):
                self._labels[variant] = secret.label
            alternation = "|".join(re.escape(v) for v in sorted(self._labels, key=len, reverse=True))
            self._pattern = re.compile(alternation)
            return secret

    def __iter__(self) -> Iterator[Secret]:
        with self._lock:
            return iter(list(self._secrets.values()))

    def __len__(self) -> int:
        return len(self._secrets)

    def __bool__(self) -> bool:
        return bool(self._secrets)

    def find(self, text: str) -> list[Secret]:
        """The secrets that occur in `text`, in any of the common encodings."""
        pattern = self._pattern
        if not text or pattern is None:
            return []
        found: dict[str, Secret] = {}
        by_label = {s.label: s for s in self._secrets.values()}
        for match in pattern.finditer(text):
            label = self._labels[match.group(0)]
            found.setdefault(label, by_label[label])
        return list(found.values())

    def redact(self, text: str) -> str:
        """`text` with every occurrence of a secret replaced by ``[REDACTED:<label>]``."""
        pattern = self._pattern
        if not text or pattern is None:
            return text
        return pattern.sub(lambda m: f"[REDACTED:{self._labels[m.group(0)]}]", text)
