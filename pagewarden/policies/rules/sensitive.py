"""`sensitive_data`: values and patterns that must not reach a destination not allowed.

Where data goes, by action: typed text goes to the site the field's form posts to (or the
page's site when there is no form: its scripts can read it); a URL (goto, link) goes to its
host; a form submission sends its fields to the form's action host. Destinations with no
host (javascript:, data:) are never allowed.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from urllib.parse import unquote_plus

from pagewarden._url import host_matches, parse_url, same_site
from pagewarden.guard._verdict import Finding
from pagewarden.policies._rules_schema import SensitiveDataRule
from pagewarden.policies.rules._base import CompiledRule, RuleContext, register

__all__ = ["PATTERNS", "SensitiveData", "luhn_valid"]


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


_CARD = re.compile(r"(?<!\d)(?:\d[ \-]?){12,18}\d(?!\d)")
PATTERNS: dict[str, re.Pattern[str]] = {
    "api_key": re.compile(
        r"\b(?:sk-(?:proj-|ant-)?[A-Za-z0-9_\-]{20,}|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,}"
        r"|glpat-[A-Za-z0-9_\-]{20,}|AKIA[0-9A-Z]{16}|ASIA[0-9A-Z]{16}|xox[abprs]-[A-Za-z0-9\-]{10,}"
        r"|AIza[0-9A-Za-z_\-]{35}|sk_live_[0-9A-Za-z]{24,}|rk_live_[0-9A-Za-z]{24,}|hf_[A-Za-z0-9]{30,})"
    ),
    "private_key": re.compile(
        r"-----BEGIN (?:RSA |EC |DSA |OPENSSH |ENCRYPTED |PGP )?PRIVATE KEY(?: BLOCK)?-----"
    ),
    "jwt": re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
    "email": re.compile(r"\b[A-Za-z0-9._%+\-]+@[A-Za-z0-9.\-]+\.[A-Za-z]{2,}\b"),
    "us_ssn": re.compile(r"(?<!\d)(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}(?!\d)"),
    "iban": re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){3,7}(?: ?[A-Z0-9]{1,3})?\b"),
}


@dataclass(frozen=True, slots=True)
class _Outgoing:
    """Data leaving for a destination, and how (for messages)."""

    text: str
    host: str
    how: str  # "typed into", "in the URL of", "submitted to"
    from_password_field: bool = False


def _outgoing(ctx: RuleContext) -> list[_Outgoing]:
    action, el, page = ctx.action, ctx.target, ctx.page_url
    out: list[_Outgoing] = []
    kind = action.kind
    if kind in ("fill", "type") and action.value:
        host = page.host
        if el is not None and el.form is not None:
            host = parse_url(el.form.action, ctx.step.observation.url or None).host
        out.append(
            _Outgoing(
                action.value, host, "typed into a field for", el is not None and el.input_type == "password"
            )
        )
    nav = ctx.prediction.navigation
    if nav is not None and nav.via in ("goto", "link", "request"):
        dest = parse_url(nav.url)
        out.append(_Outgoing(nav.url, dest.host, "in the URL to"))
    sub = ctx.prediction.submission
    if (
        sub is not None
        and kind in ("click", "dblclick", "tap", "press")
        and el is not None
        and el.form is not None
    ):
        dest = parse_url(sub.url)
        for field in el.form.fields:
            if field.value:
                out.append(
                    _Outgoing(
                        field.value,
                        dest.host,
                        f"submitted ({field.name or 'field'}) to",
                        field.type == "password",
                    )
                )
    return out


@register("sensitive_data")
class SensitiveData(CompiledRule):
    """Evaluator of `sensitive_data` rules."""

    kinds = frozenset({"fill", "type", "click", "dblclick", "tap", "press", "goto", "new_page", "request"})
    rule: SensitiveDataRule

    def __init__(self, policy, rule) -> None:
        super().__init__(policy, rule)
        self._values = [v for v in rule.values if v]
        self._named = [p for p in rule.patterns if not p.startswith("re:")]
        self._regexes = [re.compile(p[3:]) for p in rule.patterns if p.startswith("re:")]

    def _allowed(self, host: str, ctx: RuleContext, domains: tuple[str, ...] | list[str]) -> bool:
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
        lowered = decoded.lower()
        for value in self._values:
            if value.lower() in lowered:
                yield f"the protected value {value[:2]}…", None
        for regex in self._regexes:
            if regex.search(decoded):
                yield f"data matching {regex.pattern!r}", None
        for name in self._named:
            if name == "password":
                if item.from_password_field:
                    yield "a password", None
                else:
                    for typed, site in ctx.session.typed_passwords.items():
                        if len(typed) >= 4 and typed in decoded:
                            yield "a password typed earlier", (f".{site}",) if site else ()
            elif name == "secret":
                for secret in ctx.secrets.find(text) or ctx.secrets.find(decoded):
                    yield f"the registered secret {secret.label!r}", secret.allow_domains
            elif name == "card_number":
                for match in _CARD.finditer(decoded):
                    digits = re.sub(r"\D", "", match.group(0))
                    if 13 <= len(digits) <= 19 and luhn_valid(digits):
                        yield "a card number", None
                        break
            else:
                if PATTERNS[name].search(decoded):
                    yield f"{'an' if name[0] in 'aeiou' else 'a'} {name.replace('_', ' ')}", None

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        reported: set[tuple[str, str]] = set()
        for item in _outgoing(ctx):
            for what, own_domains in self._what(item, ctx):
                domains = own_domains if own_domains is not None else tuple(self.rule.allow_domains)
                if self._allowed(item.host, ctx, domains):
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
