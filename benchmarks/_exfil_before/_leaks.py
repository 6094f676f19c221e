"""Protected values in outgoing traffic, under the encodings a page can apply to them.

The values are the guard's, with their owners and allow-lists exactly as the rules tier
defines them (`SensitiveData`): registered secrets (rules naming ``secret``, else the network
layer's own policy), passwords typed in the session (rules naming ``password``; allowed back
to their site) and the ``values`` of ``sensitive_data`` rules. Patterns (card numbers, API
keys, ``re:``) stay with `SensitiveData.refused_in`: this module only adds what a fixed
value allows — its spellings, precomputed once per set of values:

* case-insensitively: the value, lower/upper case, URL-encoded (``quote``, ``quote_plus``,
  every byte ``%XX``), hex of its bytes (and of its lower/upper case);
* case-sensitively: base64 and base64url of the value (and of its lower/upper case) at each
  of the three byte alignments, so the value is found inside a longer encoded text.

`Literals.find` looks for all of them with two compiled alternations. `Literals.assembled`
finds a value a page split into pieces — across query parameters, form fields, cookie
values, JSON strings, websocket messages, or several requests in a short window
(`FragmentWindow`) — when pieces (decoded: percent, base64, hex) cover the whole value.
"""

from __future__ import annotations

import base64
import binascii
import re
import threading
import time
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, quote_plus

__all__ = ["FragmentWindow", "Literal", "Literals", "literals_of"]

#: the shortest protected value looked for in spellings and pieces (shorter: too common)
MIN_VALUE = 6
#: the shortest piece of a value counted (a value split into smaller pieces is not assembled)
MIN_PIECE = 3
_B64_CORE_MIN = 8
_HEX = re.compile(r"^(?:[0-9a-fA-F]{2})+$")
_B64 = re.compile(r"^[A-Za-z0-9+/_\-]+={0,2}$")


@dataclass(frozen=True, slots=True)
class Literal:
    """A protected value: what it is called (never the value), whose rule, where it may go."""

    value: str
    what: str
    policy_id: str
    allowed: tuple[str, ...]


def _b64_cores(raw: bytes) -> set[str]:
    """The base64 (and base64url) characters that encode `raw` whatever precedes and follows
    it: for each alignment (0-2 bytes before it), the characters of the complete groups."""
    out: set[str] = set()
    for shift in range(3):
        total = shift + len(raw)
        whole = total - total % 3
        if whole <= shift:
            continue
        encoded = base64.b64encode((b"\0" * shift + raw)[:whole]).decode("ascii")
        core = encoded[(0, 2, 3)[shift] :]
        if len(core) >= _B64_CORE_MIN:
            out.add(core)
            out.add(core.replace("+", "-").replace("/", "_"))
    return out


def _spellings(value: str) -> tuple[set[str], set[str]]:
    """(case-insensitive spellings, case-sensitive spellings) of `value`."""
    insensitive: set[str] = set()
    sensitive: set[str] = set()
    for form in {value, value.lower(), value.upper()}:
        raw = form.encode("utf-8")
        insensitive.update({form, quote(form, safe=""), quote_plus(form), raw.hex()})
        insensitive.add("".join(f"%{b:02x}" for b in raw))
        sensitive.update(_b64_cores(raw))
    return insensitive, sensitive


class Literals:
    """The protected values of one guard state, compiled for searching."""

    def __init__(self, literals: Iterable[Literal]) -> None:
        self.literals = [lit for lit in literals if len(lit.value) >= MIN_VALUE]
        owners_i: dict[str, list[int]] = {}
        owners_s: dict[str, list[int]] = {}
        for index, lit in enumerate(self.literals):
            insensitive, sensitive = _spellings(lit.value)
            for s in insensitive:
                owners_i.setdefault(s.lower(), []).append(index)
            for s in sensitive:
                owners_s.setdefault(s, []).append(index)
        self._owners_i, self._owners_s = owners_i, owners_s
        self._re_i = _alternation(owners_i, re.IGNORECASE)
        self._re_s = _alternation(owners_s, 0)
        self._lowered = [lit.value.lower() for lit in self.literals]

    def __bool__(self) -> bool:
        return bool(self.literals)

    def find(self, text: str) -> set[int]:
        """Indexes of the literals spelled out (in any known encoding) in `text`."""
        found: set[int] = set()
        if not text or not self.literals:
            return found
        if self._re_i is not None:
            for match in self._re_i.finditer(text):
                found.update(self._owners_i[match.group(0).lower()])
        if self._re_s is not None:
            for match in self._re_s.finditer(text):
                found.update(self._owners_s[match.group(0)])
        return found

    def relevant(self, pieces: Iterable[str]) -> list[str]:
        """The decodings of `pieces` (lower case) that are part of some protected value: the
        only ones that can help assemble one (a window keeps just these)."""
        out: list[str] = []
        for piece in pieces:
            for decoded in decodings(piece):
                lowered = decoded.lower()
                if len(lowered) >= MIN_PIECE and any(lowered in value for value in self._lowered):
                    out.append(lowered)
        return out

    def assembled(self, candidates: Iterable[str]) -> set[int]:
        """Indexes of the literals that `candidates` (from `relevant`) cover end to end."""
        found: set[int] = set()
        pieces = set(candidates)
        if not pieces:
            return found
        for index, value in enumerate(self._lowered):
            covered = bytearray(len(value))
            for piece in pieces:
                start = value.find(piece)
                while start != -1:
                    covered[start : start + len(piece)] = b"\1" * len(piece)
                    start = value.find(piece, start + 1)
            if all(covered):
                found.add(index)
        return found


def _alternation(owners: dict[str, list[int]], flags: int) -> re.Pattern[str] | None:
    if not owners:
        return None
    return re.compile("|".join(re.escape(s) for s in sorted(owners, key=len, reverse=True)), flags)


_SEPARATORS = re.compile(r"[:=|;,&\s]+")


def decodings(piece: str) -> Iterator[str]:
    """`piece`, its parts between separators (``a:…``, ``k=…``), and what each decodes to as
    hex or base64 (printable text only)."""
    parts = [piece]
    if _SEPARATORS.search(piece):
        parts += [p for p in _SEPARATORS.split(piece) if len(p) >= MIN_PIECE]
    for part in parts:
        yield part
        stripped = part.strip()
        if len(stripped) >= 4 and _HEX.match(stripped):
            text = _printable(binascii.unhexlify(stripped))
            if text:
                yield text
        if len(stripped) >= 4 and _B64.match(stripped):
            run = stripped.rstrip("=")
            padded = run + "=" * (-len(run) % 4)
            for altchars in (None, b"-_"):
                try:
                    raw = base64.b64decode(padded, altchars=altchars, validate=altchars is None)
                except (binascii.Error, ValueError):
                    continue
                text = _printable(raw)
                if text:
                    yield text
                    break


def _printable(raw: bytes) -> str:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return ""
    return text if text and all(ch.isprintable() for ch in text) else ""


def literals_of(guard: Any, sensitive_rules: list[tuple[Any, Any]]) -> list[Literal]:
    """The protected values of `guard` with their owners, as the rules tier defines them;
    `sensitive_rules` are the ``(policy, rule)`` pairs of its ``sensitive_data`` rules."""
    from pagewarden.proxy._egress import NETWORK_POLICY

    out: list[Literal] = []
    secret_owners = [p.id for p, r in sensitive_rules if "secret" in r.patterns] or [NETWORK_POLICY]
    password_owners = [p.id for p, r in sensitive_rules if "password" in r.patterns]
    for secret in guard.secrets:
        if guard.secrets.enforced(secret.value):
            what = f"the registered secret {secret.label!r}"
            out += [Literal(secret.value, what, pid, tuple(secret.allow_domains)) for pid in secret_owners]
    typed = dict(getattr(guard.session, "typed_passwords", {}) or {})
    for value, site in typed.items():
        allowed = (f".{site}",) if site else ()
        out += [Literal(value, "a password typed earlier", pid, allowed) for pid in password_owners]
    for policy, rule in sensitive_rules:
        for value in rule.values:
            if value:
                what = f"the protected value {value[:2]}…"
                out.append(Literal(value, what, policy.id, tuple(rule.allow_domains)))
    return out


class FragmentWindow:
    """The pieces of data recently sent to each host by each session (a value split across
    several requests in a short window is assembled from them): only those `Literals.relevant`
    keeps, so ordinary traffic leaves it empty. Thread-safe, bounded."""

    def __init__(self, seconds: float = 15.0, per_host: int = 256) -> None:
        self.seconds = seconds
        self.per_host = per_host
        self._lock = threading.Lock()
        self._pieces: dict[tuple[str, str], deque[tuple[float, str]]] = {}

    def recent(self, key: tuple[str, str]) -> list[str]:
        """The pieces `key` (session, host) sent within the window."""
        cutoff = time.monotonic() - self.seconds
        with self._lock:
            window = self._pieces.get(key)
            if not window:
                return []
            while window and window[0][0] < cutoff:
                window.popleft()
            return [piece for _, piece in window]

    def add(self, key: tuple[str, str], pieces: Iterable[str]) -> None:
        """Remember `pieces` as sent to `key` (session, host) now (a refused request's pieces
        never left: they are not added)."""
        now = time.monotonic()
        with self._lock:
            window = self._pieces.get(key)
            if window is None:
                if len(self._pieces) > 1024:  # forget hosts not heard from lately
                    cutoff = now - self.seconds
                    for stale in [k for k, w in self._pieces.items() if not w or w[-1][0] < cutoff]:
                        del self._pieces[stale]
                window = self._pieces[key] = deque(maxlen=self.per_host)
            for piece in pieces:
                window.append((now, piece))
