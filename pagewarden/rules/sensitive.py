"""`sensitive_data`: values and patterns that must not reach a destination not allowed.

Where data goes, by action: entered text (fill, type, select_option, key presses — the
field's text so far, so a value typed in pieces is still seen) goes to the site the
field's form posts to (or the page's site when there is no form: its scripts can read it);
a URL (goto, link, new page, request) goes to its host; a form submission sends its fields
to the form's action host; a message to the user or the final answer goes to the user,
which only rules with ``allow_user: true`` (the default) permit. Destinations with no host
(javascript:, data:) are never allowed.

A URL is also read in its decoded views (`pagewarden._views`: percent-encoding, HTML
references, JavaScript escapes, base64 and hex runs, compressed data, nested). Protected
values are found case-insensitively in the raw text, its percent-decoded forms,
its normalised form (compatibility forms, invisible characters and look-alike letters
folded), as digits only for number-like values (``4111 1111 …``, ``555-0198``), and
base64-encoded.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import unquote, unquote_plus

from pagewarden._url import host_matches, parse_url, same_site
from pagewarden._views import views
from pagewarden.policies import SensitiveDataRule
from pagewarden.rules._base import CompiledRule, RuleContext, register
from pagewarden.rules._index import trigram_keys, union
from pagewarden.rules._matching import normalise
from pagewarden.rules._typed import INPUT_KINDS, typed_text
from pagewarden.rules.urls import destinations
from pagewarden.secrets import API_KEY, CARD_NUMBER, JWT, PRIVATE_KEY, luhn_valid
from pagewarden.steps import Finding

__all__ = ["PATTERNS", "SensitiveData", "luhn_valid", "outgoing"]

USER = "the user"  # the destination of messages to the user and of the final answer


_CARD = CARD_NUMBER
#: first digits of card numbers (2: Mastercard, 3: Amex/Diners/JCB, 4: Visa, 5: Mastercard/
#: Maestro, 6: Discover/UnionPay/Maestro)
_CARD_FIRST = frozenset("23456")
PATTERNS: dict[str, re.Pattern[str]] = {
    "api_key": API_KEY,
    "private_key": PRIVATE_KEY,
    "jwt": JWT,
    "email": re.compile(r"\b[A-Za-z0-9._%+\-]+@[A-Za-z0-9.\-]+\.[A-Za-z]{2,}\b"),
    "us_ssn": re.compile(r"(?<!\d)(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}(?!\d)"),
    "iban": re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){3,7}(?: ?[A-Z0-9]{1,3})?\b"),
}


@dataclass(frozen=True, slots=True)
class _Outgoing:
    """Data leaving for a destination, and how (for messages)."""

    text: str
    host: str  # a host name, USER, or "" for a destination with no host
    how: str  # "typed into a field for", "in the URL to", "submitted to", "shown to"
    from_password_field: bool = False


@dataclass(frozen=True, slots=True)
class _Forms:
    """The spellings of a text in which protected values are looked for."""

    lowered: tuple[str, ...]
    folded: str
    digits: str


_NOT_DIGIT = re.compile(r"\D")


@lru_cache(maxsize=4096)
def _forms(text: str) -> _Forms:
    variants = [text]
    if "%" in text or "+" in text:
        variants += [unquote(text), unquote_plus(text)]
    lowered = tuple(dict.fromkeys(v.lower() for v in variants))
    joined = " ".join(variants)
    return _Forms(lowered, normalise(joined), _NOT_DIGIT.sub("", joined))


@dataclass(frozen=True, slots=True)
class _Value:
    """A protected value, prepared for searching."""

    value: str
    lowered: str
    folded: str
    digits: str  # for number-like values (cards, phone numbers), else ""
    encoded: tuple[str, ...]

    @classmethod
    def of(cls, value: str) -> _Value:
        digits = re.sub(r"\D", "", value)
        numberlike = len(digits) >= 6 and len(digits) >= 0.6 * len(value.replace(" ", ""))
        raw = value.encode("utf-8")
        encoded = tuple(
            v
            for v in {
                base64.b64encode(raw).decode("ascii").rstrip("="),
                base64.urlsafe_b64encode(raw).decode("ascii").rstrip("="),
            }
            if len(v) >= 8
        )
        return cls(value, value.lower(), normalise(value), digits if numberlike else "", encoded)

    def found_in(self, text: str) -> bool:
        forms = _forms(text)
        if any(self.lowered in t for t in forms.lowered):
            return True
        if self.folded and self.folded in forms.folded:
            return True
        if self.digits and self.digits in forms.digits:
            return True
        return any(e in text for e in self.encoded)


def outgoing(ctx: RuleContext, allow_user: bool) -> list[_Outgoing]:
    """What this step sends where (computed once per step and `allow_user`)."""
    key = f"outgoing:{allow_user}"
    found = ctx.memo.get(key)
    if found is None:
        found = ctx.memo[key] = _outgoing(ctx, allow_user)
    return found  # type: ignore[return-value]


def _outgoing(ctx: RuleContext, allow_user: bool) -> list[_Outgoing]:
    action, el, page = ctx.action, ctx.target, ctx.page_url
    out: list[_Outgoing] = []
    kind = action.kind
    if kind in ("send_msg_to_user", "finish"):
        if not allow_user and action.value:
            out.append(_Outgoing(action.value, USER, "shown to"))
        return out
    if kind in INPUT_KINDS:
        typed = typed_text(ctx)
        if typed is not None and typed.field_text:
            host = page.host
            if el is not None and el.form is not None:
                host = parse_url(el.form.action, ctx.step.observation.url or None).host
            password = el is not None and el.input_type == "password"
            out.append(_Outgoing(typed.field_text, host, "typed into a field for", password))
    for dest in destinations(ctx):
        if dest.via in ("goto", "link", "new_page", "request"):
            urls = dict.fromkeys((dest.url.url, dest.raw))
            for url in list(urls):  # and what the URL decodes to (entities, escapes, base64, …)
                urls.update(dict.fromkeys(views(url)))
            out += [_Outgoing(url, dest.url.host, "in the URL to") for url in urls]
    sub = ctx.prediction.submission
    if (
        sub is not None
        and (kind in ("click", "dblclick", "tap", "press") or (el is not None and el.activation is not None))
        and el is not None
        and el.form is not None
        and (el.is_submit or kind == "press")
    ):
        dest_host = parse_url(sub.url).host
        out.append(_Outgoing(sub.url, dest_host, "in the URL to"))
        for field in el.form.fields:
            if field.value:
                out.append(
                    _Outgoing(
                        field.value,
                        dest_host,
                        f"submitted ({field.name or 'field'}) to",
                        field.type == "password",
                    )
                )
    return out


_HEXCHARS = frozenset("0123456789abcdefABCDEF")


def _in_hex_token(text: str, start: int, end: int) -> bool:
    """Whether text[start:end] (digits) is part of a longer hexadecimal run (16 or more
    characters, a letter right next to the digits): a random id or a hash, not a card."""
    before = start > 0 and text[start - 1] in _HEXCHARS and text[start - 1].isalpha()
    after = end < len(text) and text[end] in _HEXCHARS and text[end].isalpha()
    if not (before or after):
        return False
    while start > 0 and text[start - 1] in _HEXCHARS:
        start -= 1
    while end < len(text) and text[end] in _HEXCHARS:
        end += 1
    return end - start >= 16


@lru_cache(maxsize=4096)
def _has_card(text: str) -> bool:
    """Whether `text` holds a card number (13-19 digits passing the Luhn check, starting as
    the card networks' numbers do: 2-6; a millisecond timestamp, ``17…``, is none), not inside
    a hexadecimal run (a random id, a hash: ``d7440e1036364e70…``)."""
    for match in _CARD.finditer(text):
        digits = re.sub(r"\D", "", match.group(0))
        if 13 <= len(digits) <= 19 and digits[0] in _CARD_FIRST and luhn_valid(digits):
            if _in_hex_token(text, match.start(), match.end()):
                continue
            return True
    return False


@lru_cache(maxsize=8192)
def _has_pattern(name: str, text: str) -> bool:
    """Whether `text` holds data of the named pattern (shared by every rule that names it)."""
    return PATTERNS[name].search(text) is not None


def _value_keys(value: _Value) -> frozenset[tuple] | None:
    """Keys an outgoing text must have for `value` to be found in it (see `_index`)."""
    parts = [trigram_keys("lo", value.lowered)]
    if value.folded:
        parts.append(trigram_keys("fo", value.folded))
    if value.digits:
        parts.append(trigram_keys("di", value.digits))
    parts += [trigram_keys("en", e) for e in value.encoded]
    return union(parts)


@register("sensitive_data")
class SensitiveData(CompiledRule):
    """Evaluator of `sensitive_data` rules."""

    kinds = frozenset(
        {
            *INPUT_KINDS,
            "click",
            "dblclick",
            "tap",
            "check",
            "uncheck",
            "drag",
            "goto",
            "new_page",
            "request",
            "send_msg_to_user",
            "finish",
        }
    )
    rule: SensitiveDataRule

    def __init__(self, policy, rule) -> None:
        super().__init__(policy, rule)
        self._values = [_Value.of(v) for v in rule.values if v]
        self._named = [p for p in rule.patterns if not p.startswith("re:")]
        self._regexes = [re.compile(p[3:]) for p in rule.patterns if p.startswith("re:")]
        self._keys = None if rule.patterns else union(_value_keys(v) for v in self._values)

    def index_keys(self, kind: str) -> frozenset[tuple] | None:
        return self._keys

    def _allowed(self, host: str, ctx: RuleContext, domains: tuple[str, ...] | list[str]) -> bool:
        if host == USER:
            return self.rule.allow_user
        if not host:
            return False
        for pattern in domains:
            if pattern == "self":
                if same_site(host, ctx.page_url.host):
                    return True
            elif host_matches(host, pattern):
                return True
        return False

    def _what(self, item: _Outgoing, ctx: RuleContext) -> Iterator[tuple[str, tuple[str, ...] | None]]:
        """Names of the sensitive things in `item`, each with its own allow-list (None: the rule's)."""
        text = item.text
        decoded = unquote_plus(text) if "%" in text or "+" in text else text
        for value in self._values:
            if value.found_in(text):
                yield f"the protected value {value.value[:2]}…", None
        for regex in self._regexes:
            if regex.search(text) or regex.search(decoded):
                yield f"data matching {regex.pattern!r}", None
        for name in self._named:
            if name == "password":
                if item.from_password_field:
                    yield "a password", None
                else:
                    for typed, site in ctx.session.typed_passwords.items():
                        if len(typed) >= 4 and (typed in text or typed in decoded):
                            yield "a password typed earlier", (f".{site}",) if site else ()
            elif name == "secret":
                for secret in ctx.secrets.find(text) or ctx.secrets.find(decoded):
                    yield f"the registered secret {secret.label!r}", secret.allow_domains
            elif name == "card_number":
                if _has_card(text) or _has_card(decoded):
                    yield "a card number", None
            elif _has_pattern(name, text) or _has_pattern(name, decoded):
                yield f"{'an' if name[0] in 'aeiou' else 'a'} {name.replace('_', ' ')}", None

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        reported: set[tuple[str, str]] = set()
        for item in outgoing(ctx, self.rule.allow_user):
            for what, own_domains in self._what(item, ctx):
                domains = own_domains if own_domains is not None else tuple(self.rule.allow_domains)
                if item.host == USER:
                    if self.rule.allow_user:
                        continue
                elif self._allowed(item.host, ctx, domains):
                    continue
                key = (what, item.host)
                if key in reported:
                    continue
                reported.add(key)
                dest = item.host or "a destination with no host"
                yield self.finding(
                    f"{what} would be {item.how} {dest}, which may not receive it",
                    guidance="Do not send this data there. If the user's task needs it, ask the user first.",
                    evidence={"destination": item.host, "kind": what, "allowed": list(domains)},
                )

    def refused_in(self, text: str, host: str, ctx: RuleContext) -> list[tuple[str, tuple[str, ...]]]:
        """``(what, allowed domains)`` for each sensitive thing in `text` that may not be sent
        to `host` — the network layer's entry point, with the same matching and allow-lists as
        the rules tier (`ctx` needs ``secrets``, ``session.typed_passwords`` and ``page_url``,
        the site that sends it, for ``self``)."""
        out: list[tuple[str, tuple[str, ...]]] = []
        for what, own_domains in self._what(_Outgoing(text, host, "sent to"), ctx):
            domains = own_domains if own_domains is not None else tuple(self.rule.allow_domains)
            if not self._allowed(host, ctx, domains):
                out.append((what, tuple(domains)))
        return out
