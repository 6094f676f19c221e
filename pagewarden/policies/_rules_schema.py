"""Typed rule entries of a policy (the `rules:` list), one model per rule kind.

Each entry in a policy file is a one-key mapping, for example ``{url_deny: "/profile"}``;
`parse_rule` turns it into the model for that kind and `rule_to_dict` turns it back.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, ClassVar

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    field_validator,
    model_validator,
)

from pagewarden.policies._selectors import SelectorError, compile_selector

__all__ = [
    "ACTION_KINDS",
    "NAMED_PATTERNS",
    "RULE_KINDS",
    "ActionBudgetRule",
    "ConsentRule",
    "DomainAllowRule",
    "DomainDenyRule",
    "ForbidElementRule",
    "InputAllowRule",
    "InstructionProvenanceRule",
    "InternalAddressesRule",
    "LookalikeHostsRule",
    "Rule",
    "SensitiveDataRule",
    "SequenceRule",
    "SequenceStep",
    "UrlAllowRule",
    "UrlCredentialsRule",
    "UrlDenyRule",
    "parse_rule",
    "rule_to_dict",
]

#: Action kinds a rule may name. `any` matches every kind.
ACTION_KINDS: frozenset[str] = frozenset(
    {
        "any",
        "click",
        "dblclick",
        "tap",
        "hover",
        "focus",
        "blur",
        "fill",
        "clear",
        "type",
        "press",
        "check",
        "uncheck",
        "select_option",
        "select_text",
        "set_input_files",
        "drag",
        "drop",
        "dispatch_event",
        "goto",
        "go_back",
        "go_forward",
        "reload",
        "new_page",
        "evaluate",
        "add_script_tag",
        "add_style_tag",
        "add_init_script",
        "expose_function",
        "set_content",
        "route",
        "network_config",
        "request",
        "cdp",
        "unclassified",
        "send_msg_to_user",
        "call_tool",
        "accept_dialog",
        "finish",  # the agent declares the task done (its final answer), for guard.check users
    }
)

#: Named patterns for `sensitive_data.patterns` (anything else must be `re:<regex>`).
NAMED_PATTERNS: frozenset[str] = frozenset(
    {"card_number", "api_key", "private_key", "password", "secret", "jwt", "email", "us_ssn", "iban"}
)


def _as_list(value: Any) -> Any:
    """Accept a single string where a list of strings is expected."""
    if isinstance(value, str):
        return [value]
    return value


StrList = Annotated[list[str], BeforeValidator(_as_list)]


def _check_selectors(value: list[str]) -> list[str]:
    """Selectors must compile (simple CSS or XPath, see `_selectors`)."""

    for item in value:
        try:
            compile_selector(item)
        except SelectorError as exc:
            raise ValueError(f"selector {item!r}: {exc}") from None
    return value


def _check_terms(value: list[str]) -> list[str]:
    if any(not item.strip() for item in value):
        raise ValueError("terms must not be empty strings")
    return value


def _apply_aliases(cls: type[BaseModel], data: Any) -> Any:
    """Rename accepted alternative field names (`action` → `actions` …) to the canonical one."""
    aliases: dict[str, str] = getattr(cls, "aliases", {})
    if not isinstance(data, dict) or not aliases:
        return data
    out = dict(data)
    for alias, canonical in aliases.items():
        if alias in out:
            if canonical in out:
                raise ValueError(f"give either {canonical!r} or {alias!r} (the same field), not both")
            out[canonical] = out.pop(alias)
    return out


class _Fields(BaseModel):
    """A strict policy-file model: unknown fields are errors; `aliases` are accepted spellings."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    #: accepted alternative name → canonical field name
    aliases: ClassVar[dict[str, str]] = {}

    @model_validator(mode="before")
    @classmethod
    def _canonical_names(cls, data: Any) -> Any:
        return _apply_aliases(cls, data)


class _RuleBase(_Fields):
    kind: ClassVar[str]
    #: a one-line summary for the field reference (`pagewarden policies schema`)
    summary: ClassVar[str] = ""


class _PatternListRule(_RuleBase):
    aliases: ClassVar[dict[str, str]] = {"pattern": "patterns"}
    patterns: StrList = Field(
        min_length=1,
        description="One pattern or a list; the rule may be written with the patterns directly "
        "(`KIND: pattern` or `KIND: [a, b]`).",
    )

    @field_validator("patterns")
    @classmethod
    def _non_empty(cls, value: list[str]) -> list[str]:
        for item in value:
            if not item.strip():
                raise ValueError("patterns must not be empty strings")
        return value


class UrlDenyRule(_PatternListRule):
    """A navigation must not match any of these URL patterns."""

    kind: ClassVar[str] = "url_deny"
    summary: ClassVar[str] = (
        "goto, links, form posts, new pages and `page.request` must not reach a URL matching a pattern "
        "(`scheme://host/path` a whole URL; anything else text found anywhere in the decoded URL)"
    )


class UrlAllowRule(_PatternListRule):
    """Only navigations matching one of these URL patterns are allowed."""

    kind: ClassVar[str] = "url_allow"
    summary: ClassVar[str] = (
        "navigations must match one of the patterns (`scheme://host/path`; a `/path` must start "
        "the path; other text is found anywhere in the URL)"
    )


class DomainAllowRule(_PatternListRule):
    """Only these hosts may be reached (`*.example.com` covers subdomains); `subresources`
    names hosts a page may load from (embeds, CDNs) without the agent or the page navigating
    a tab there."""

    kind: ClassVar[str] = "domain_allow"
    summary: ClassVar[str] = (
        "navigations may only reach these hosts (`x.com` exact, `*.x.com` subdomains, `.x.com` both, "
        "`*` any); `subresources` hosts may serve a page's scripts, images, styles, fonts, media, "
        "fetches and embedded frames, never a tab's page"
    )
    subresources: StrList = Field(
        default_factory=list,
        description="Domain patterns (as in `patterns`) a page may load from besides the allowed "
        "hosts: scripts, images, styles, fonts, media, fetch/XHR, websockets and embedded frames "
        "(a site's CDN, a video player). A tab's page may not go there: the agent's navigations, "
        "a page's own top-level navigation, a popup and a frame moving its top are still refused, "
        "and the exfiltration filter still judges what is sent there. Write the rule as a mapping "
        "(`domain_allow: {patterns: [...], subresources: [...]}`).",
    )

    @field_validator("subresources")
    @classmethod
    def _hosts(cls, value: list[str]) -> list[str]:
        if any(not item.strip() for item in value):
            raise ValueError("subresource patterns must not be empty strings")
        return value


class DomainDenyRule(_PatternListRule):
    """These hosts must not be reached."""

    kind: ClassVar[str] = "domain_deny"
    summary: ClassVar[str] = "navigations must not reach these hosts (domain patterns as in `domain_allow`)"


def _check_actions(value: list[str]) -> list[str]:
    unknown = sorted(set(value) - ACTION_KINDS)
    if unknown:
        raise ValueError(f"unknown action kind(s) {unknown}; known: {', '.join(sorted(ACTION_KINDS))}")
    return value


#: Text terms, CSS/XPath selectors and action kinds, each checked where it is declared.
Terms = Annotated[list[str], BeforeValidator(_as_list), AfterValidator(_check_terms)]
Selectors = Annotated[list[str], BeforeValidator(_as_list), AfterValidator(_check_selectors)]
Actions = Annotated[list[str], BeforeValidator(_as_list), AfterValidator(_check_actions)]

_MATCH_DOC = (
    "Text terms picking the target element by its text or accessible name (fuzzy: case, "
    "look-alike letters, invisible characters and near spellings still match)."
)
_SELECTORS_DOC = (
    "CSS (`#id`, `.class`, `tag[attr='v']`) or XPath selectors picking the target element."
)
_ACTIONS_DOC = "Action kinds (`click`, `fill`, `goto`, … or `any`); one kind or a list."
_ACTION_ALIASES: dict[str, str] = {"action": "actions", "selector": "selectors"}


class ConsentRule(_RuleBase):
    """Actions on matching elements need approval or a prior message to the user.

    `match` (text terms) and `selectors` pick the elements; with neither, every action of
    `actions` is covered. A message to the user sent earlier that names one of
    `message_terms` (default: the `match` terms) counts as consent; with no terms at all
    only an approver can consent.
    """

    kind: ClassVar[str] = "consent"
    summary: ClassVar[str] = (
        "actions on matching elements need approval, unless the agent already told the user "
        "(`page.message_user(...)` naming one of `message_terms`)"
    )
    aliases: ClassVar[dict[str, str]] = _ACTION_ALIASES
    match: Terms = Field(default_factory=list, description=_MATCH_DOC)
    selectors: Selectors = Field(default_factory=list, description=_SELECTORS_DOC)
    actions: Actions = Field(
        default_factory=lambda: ["click"],
        min_length=1,
        description=_ACTIONS_DOC + " With no `match` and no `selectors`, every action of these kinds "
        "needs consent.",
    )
    message_terms: Terms = Field(
        default_factory=list,
        description="A message to the user naming one of these counts as consent (default: the "
        "`match` terms; with no terms at all only an approver can consent).",
    )


class SensitiveDataRule(_RuleBase):
    """Values or patterns that must not reach a destination that is not allowed."""

    kind: ClassVar[str] = "sensitive_data"
    summary: ClassVar[str] = (
        "values or patterns must not be typed, put in a URL or submitted to a host not in "
        "`allow_domains`; the values are redacted from traces and logs"
    )
    values: StrList = Field(
        default_factory=list, description="Exact values (a token, an account number) to protect."
    )
    patterns: StrList = Field(
        default_factory=list,
        description="Named patterns (" + ", ".join(f"`{p}`" for p in sorted(NAMED_PATTERNS)) + ") "
        "or `re:<regular expression>`.",
    )
    allow_domains: StrList = Field(
        default_factory=list,
        description="Domain patterns the data may go to; `self` = the page's own site; empty = nowhere.",
    )
    #: whether the data may be shown to the user (send_msg_to_user, the final answer)
    allow_user: bool = Field(
        default=True,
        description="Whether the data may be shown to the user (a message, the final answer).",
    )

    @field_validator("values")
    @classmethod
    def _values(cls, value: list[str]) -> list[str]:
        if any(not v for v in value):
            raise ValueError("sensitive values must not be empty strings")
        return value

    @field_validator("patterns")
    @classmethod
    def _patterns(cls, value: list[str]) -> list[str]:
        for item in value:
            if item.startswith("re:"):
                try:
                    re.compile(item[3:])
                except re.error as exc:
                    raise ValueError(f"invalid regular expression {item[3:]!r}: {exc}") from exc
            elif item not in NAMED_PATTERNS:
                raise ValueError(
                    f"unknown pattern {item!r}; use one of {sorted(NAMED_PATTERNS)} "
                    "or 're:<regular expression>'"
                )
        return value

    @model_validator(mode="after")
    def _something_to_protect(self) -> SensitiveDataRule:
        if not self.values and not self.patterns:
            raise ValueError("sensitive_data needs at least one of 'values' or 'patterns'")
        return self


class InputAllowRule(_RuleBase):
    """Only these values may be filled (into fields matching `field`, or any field).

    Compared exactly after trimming and lower-casing; fill, type, select_option and
    printable key presses count as input.
    """

    kind: ClassVar[str] = "input_allow"
    summary: ClassVar[str] = (
        "only these values may be entered (fill, type, select, key presses), compared after "
        "trimming and lower-casing"
    )
    field: str | None = Field(
        default=None,
        description="Only into fields whose label, name or id matches this text (default: every field).",
    )
    values: StrList = Field(min_length=1, description="The values that may be entered.")


class ActionBudgetRule(_RuleBase):
    """At most `max` actions of these kinds (optionally on a target matching `match` or
    `selectors`) per session; the action that would exceed it is the violation."""

    kind: ClassVar[str] = "action_budget"
    summary: ClassVar[str] = (
        "at most `max` actions of these kinds (on matching targets) per session; the one that "
        "would exceed it is the violation"
    )
    aliases: ClassVar[dict[str, str]] = _ACTION_ALIASES
    actions: Actions = Field(
        min_length=1, description=_ACTIONS_DOC + " Actions of all the listed kinds count together."
    )
    match: Terms = Field(default_factory=list, description=_MATCH_DOC + " Only these count.")
    selectors: Selectors = Field(default_factory=list, description=_SELECTORS_DOC + " Only these count.")
    max: int = Field(ge=0, description="How many may run per session (0 forbids the action).")

    @property
    def action(self) -> str:
        """The counted kinds as one readable string (`click`, `click/tap`)."""
        return "/".join(self.actions)


class ForbidElementRule(_RuleBase):
    """An action kind on elements whose text matches (`match`) or that a selector picks
    (`selectors`) is forbidden; with `check_value`, so is typing or selecting text that
    contains one of the `match` terms."""

    kind: ClassVar[str] = "forbid_element"
    summary: ClassVar[str] = "these action kinds on matching elements are forbidden"
    aliases: ClassVar[dict[str, str]] = _ACTION_ALIASES
    match: Terms = Field(default_factory=list, description=_MATCH_DOC)
    selectors: Selectors = Field(default_factory=list, description=_SELECTORS_DOC)
    actions: Actions = Field(default_factory=lambda: ["click"], min_length=1, description=_ACTIONS_DOC)
    check_value: bool = Field(
        default=False,
        description="Also forbid typing or selecting text that contains one of the `match` terms, "
        "in any field.",
    )

    @model_validator(mode="after")
    def _something_to_match(self) -> ForbidElementRule:
        if not self.match and not self.selectors:
            raise ValueError("forbid_element needs 'match' terms or 'selectors'")
        if self.check_value and not self.match:
            raise ValueError("check_value needs 'match' terms to look for in the typed text")
        return self


class SequenceStep(_Fields):
    """One step of a required sequence: an action kind on an element picked by text or selector."""

    aliases: ClassVar[dict[str, str]] = _ACTION_ALIASES
    actions: Actions = Field(min_length=1, description=_ACTIONS_DOC + " The step is any of them.")
    match: Terms = Field(default_factory=list, description=_MATCH_DOC)
    selectors: Selectors = Field(default_factory=list, description=_SELECTORS_DOC)

    @property
    def action(self) -> str:
        """The step's kinds as one readable string."""
        return "/".join(self.actions)


class SequenceRule(_RuleBase):
    """Steps that must happen in this order (`contiguous`: with nothing in between).

    Preventive in two places: the last step may only run when the earlier ones have run
    in order, and the task may not be finished (a `finish` action) before the whole
    sequence has happened.
    """

    kind: ClassVar[str] = "sequence"
    summary: ClassVar[str] = (
        "steps in order: the last step waits for the others, and a `finish` action waits for the "
        "whole sequence"
    )
    steps: list[SequenceStep] = Field(
        min_length=1, description="The steps in order, each `{actions, match, selectors}`."
    )
    contiguous: bool = Field(
        default=False, description="The steps must follow each other with nothing in between."
    )


class InstructionProvenanceRule(_RuleBase):
    """Flag actions whose target, URL or text came only from untrusted page content."""

    kind: ClassVar[str] = "instruction_provenance"
    summary: ClassVar[str] = (
        "actions whose target, URL or typed text came from untrusted page content and not from the goal"
    )
    #: Extra CSS selectors of user-generated regions, added to the built-in ones.
    ugc_selectors: StrList = Field(
        default_factory=list,
        description="Extra CSS selectors of user-written regions (comments, posts), added to the "
        "built-in ones.",
    )
    #: Treat any off-site navigation from user content as suspect, even without instructions.
    strict_offsite: bool = Field(
        default=False,
        description="Treat every off-site link in user content as suspect, even without instruction wording.",
    )


def _check_address_entries(value: list[str]) -> list[str]:
    """Each entry: an IP address, a CIDR range or a host name (pattern)."""
    import ipaddress

    for item in value:
        text = item.strip()
        if not text:
            raise ValueError("entries must not be empty strings")
        bare = text[1:-1] if text.startswith("[") and text.endswith("]") else text
        try:
            ipaddress.ip_network(bare, strict=False)
            continue
        except ValueError:
            pass
        if "/" in text or any(c.isspace() for c in text):
            raise ValueError(f"{item!r} is neither an address, a CIDR range (10.0.0.0/8) nor a host name")
    return value


AddressEntries = Annotated[list[str], BeforeValidator(_as_list), AfterValidator(_check_address_entries)]
HostPatterns = Annotated[list[str], BeforeValidator(_as_list), AfterValidator(_check_terms)]


class InternalAddressesRule(_RuleBase):
    """Cloud metadata and link-local addresses are refused; private ranges are a boundary."""

    kind: ClassVar[str] = "internal_addresses"
    summary: ClassVar[str] = (
        "cloud metadata and link-local addresses are refused however a request starts; a public page "
        "leading into a private range (loopback, RFC 1918, 100.64.0.0/10, fc00::/7) needs approval, "
        "and a page's own requests there are refused, unless the session started there or `allow` "
        "names it"
    )
    allow: AddressEntries = Field(
        default_factory=list,
        description="Addresses, CIDR ranges (`10.0.0.0/8`, `fd00::/8`) and host names (`*.corp.example`) "
        "that agents and pages may reach. A metadata address is allowed only when named itself "
        "(`169.254.169.254`, `metadata.google.internal`) or by a range inside link-local space. "
        "Allowances are read from every policy of the set (they also allow what the baseline refuses).",
    )


class UrlCredentialsRule(_RuleBase):
    """A URL must not carry a user name or password (``user:pass@host``)."""

    kind: ClassVar[str] = "url_credentials"
    summary: ClassVar[str] = (
        "goto, links, new pages and `page.request` must not use a URL with a user name or password in it "
        "(`user:pass@host`, also the `trusted.test@evil.test` trick), except to `allow` hosts"
    )
    allow: HostPatterns = Field(
        default_factory=list,
        description="Domain patterns (as in `domain_allow`) a URL may carry credentials for. "
        "Allowances are read from every policy of the set.",
    )


class LookalikeHostsRule(_RuleBase):
    """A host that imitates one the goal or an allow-list names is deceptive."""

    kind: ClassVar[str] = "lookalike_hosts"
    summary: ClassVar[str] = (
        "goto, links, new pages and `page.request` must not reach a host that imitates one the goal or an "
        "allow-list names (look-alike letters, punycode, one letter away, another top-level domain, the "
        "real host in front of another site), nor a host whose name mixes scripts"
    )
    protect: HostPatterns = Field(
        default_factory=list,
        description="Hosts to protect besides those the goal and the `domain_allow` / `url_allow` "
        "rules name.",
    )
    allow: HostPatterns = Field(
        default_factory=list,
        description="Domain patterns that are never judged look-alikes (a sister site of yours). "
        "Allowances are read from every policy of the set.",
    )


Rule = (
    UrlDenyRule
    | UrlAllowRule
    | DomainAllowRule
    | DomainDenyRule
    | ConsentRule
    | SensitiveDataRule
    | InputAllowRule
    | ActionBudgetRule
    | ForbidElementRule
    | SequenceRule
    | InstructionProvenanceRule
    | InternalAddressesRule
    | UrlCredentialsRule
    | LookalikeHostsRule
)

_RULE_MODELS: dict[str, type[_RuleBase]] = {
    m.kind: m
    for m in (
        UrlDenyRule,
        UrlAllowRule,
        DomainAllowRule,
        DomainDenyRule,
        ConsentRule,
        SensitiveDataRule,
        InputAllowRule,
        ActionBudgetRule,
        ForbidElementRule,
        SequenceRule,
        InstructionProvenanceRule,
        InternalAddressesRule,
        UrlCredentialsRule,
        LookalikeHostsRule,
    )
}
RULE_KINDS: tuple[str, ...] = tuple(_RULE_MODELS)

# Rule kinds whose value is a bare pattern or list of patterns.
_PATTERN_KINDS = {"url_deny", "url_allow", "domain_allow", "domain_deny"}


def model_for(kind: str) -> type[BaseModel] | None:
    """The model of rule kind `kind` (None for an unknown kind)."""
    return _RULE_MODELS.get(kind)


def known_fields(model: type[BaseModel], loc: tuple[str | int, ...] = ()) -> list[str]:
    """The fields a policy-file mapping at `loc` (inside `model`) may have, aliases in brackets.

    `loc` walks into nested models (``("steps", 0)`` of a `sequence` rule, ``("source",)`` of a
    policy); list indices are skipped.
    """
    current: Any = model
    for part in loc:
        if isinstance(part, int):
            continue
        info = current.model_fields.get(part) if isinstance(current, type) else None
        if info is None:
            return []
        current = _nested_model(info.annotation)
        if current is None:
            return []
    aliases = getattr(current, "aliases", {})
    by_canonical: dict[str, list[str]] = {}
    for alias, canonical in aliases.items():
        by_canonical.setdefault(canonical, []).append(alias)
    out = []
    for name in current.model_fields:
        extra = by_canonical.get(name)
        out.append(f"{name} (or {', '.join(extra)})" if extra else name)
    return out


def _nested_model(annotation: Any) -> type[BaseModel] | None:
    """The pydantic model inside an annotation (`X`, `list[X]`, `X | None`), if any."""
    from typing import get_args

    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in get_args(annotation):
        found = _nested_model(arg)
        if found is not None:
            return found
    return None


class RuleSyntaxError(ValueError):
    """A rules entry is not a one-key mapping of a known kind; `path` locates the fault."""

    def __init__(self, message: str, path: tuple[str | int, ...] = ()) -> None:
        super().__init__(message)
        self.path = path


def parse_rule(entry: Any) -> Rule:
    """Build the typed rule for one entry of a policy's `rules` list."""
    if not isinstance(entry, dict) or len(entry) != 1:
        raise RuleSyntaxError(
            "each rule must be a mapping with exactly one key, the rule kind "
            f"(one of: {', '.join(RULE_KINDS)})"
        )
    ((kind, body),) = entry.items()
    model = _RULE_MODELS.get(kind)
    if model is None:
        raise RuleSyntaxError(
            f"unknown rule kind {kind!r}; known kinds: {', '.join(RULE_KINDS)}", (str(kind),)
        )
    if kind in _PATTERN_KINDS and not isinstance(body, dict):
        body = {"patterns": body}
    if body is None:
        body = {}
    if not isinstance(body, dict):
        raise RuleSyntaxError(f"rule {kind!r} takes a mapping of options", (kind,))
    return model.model_validate(body)  # type: ignore[return-value]


def rule_to_dict(rule: Rule) -> dict[str, Any]:
    """The one-key mapping form of a rule, as written in policy files."""
    body = rule.model_dump(mode="json", exclude_defaults=True)
    if rule.kind in _PATTERN_KINDS and set(body) == {"patterns"}:
        patterns = body["patterns"]
        return {rule.kind: patterns[0] if len(patterns) == 1 else patterns}
    return {rule.kind: body}
