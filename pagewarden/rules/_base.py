"""The rules tier's contract: a compiled rule looks at a `RuleContext`, returns findings.

A rule kind is a `CompiledRule` subclass registered with `@register("kind")`. It is built
once per (policy, rule) when a `RuleBook` is compiled, declares the action kinds it looks at
(`kinds`, None for all) so the book can skip it cheaply, and implements `check`.
Everything here is sans-I/O: no Playwright, no network.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

from pagewarden._url import ParsedURL, parse_url
from pagewarden.secrets import SecretRegistry
from pagewarden.steps import Finding

if TYPE_CHECKING:
    from pagewarden.policies import Policy, Rule
    from pagewarden.rules._taint import TabView
    from pagewarden.steps import Action, ElementFacts, Prediction, Step

__all__ = [
    "RISK_BASE",
    "CompiledRule",
    "HistoryEntry",
    "RuleContext",
    "RuleMemory",
    "SessionView",
    "register",
    "rule_class",
]

#: Base score of a finding by the policy's risk level (scaled by the rule's confidence).
RISK_BASE: dict[str, float] = {"low": 0.3, "medium": 0.6, "high": 0.9}


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    """An action that ran earlier in the session (for budgets and sequences)."""

    kind: str
    label: str = ""
    selector: str | None = None
    url: str | None = None
    value: str | None = None
    #: facts about the element it acted on (for rules that pick elements by selector)
    target: ElementFacts | None = None


class RuleMemory(dict):
    """Running state the rules keep over a session (budget counters, sequence progress), by
    compiled rule; filled by `RuleBook.observe` as actions run. A `SessionView` without one
    makes those rules scan the history instead (same decisions, slower)."""

    def __init__(self) -> None:
        super().__init__()
        self.broken: set[int] = set()

    def usable(self, rule: CompiledRule) -> bool:
        """Whether `rule`'s running state can be trusted (its `observe` never failed)."""
        return id(rule) not in self.broken


@dataclass(slots=True)
class SessionView:
    """What earlier steps of the session left behind, as the rules see it."""

    history: Sequence[HistoryEntry] = ()
    user_messages: Sequence[str] = ()
    #: values typed into password fields, by the site they were typed on
    typed_passwords: dict[str, str] = field(default_factory=dict)
    #: the acting tab: taint from untrusted content in force, whether it is on the task's own path
    tab: TabView | None = None
    #: the rules' running state over the whole session (None: rules scan `history`)
    memory: RuleMemory | None = None
    #: the private address blocks this session has opened (see `pagewarden.rules._addresses`)
    internal: frozenset[str] = frozenset()


@dataclass(slots=True)
class RuleContext:
    """One step, its static prediction and the session, prepared once for all rules."""

    step: Step
    prediction: Prediction
    session: SessionView = field(default_factory=SessionView)
    secrets: SecretRegistry = field(default_factory=SecretRegistry)
    _page_url: ParsedURL | None = None
    #: values several rules derive from the same step (destinations, …), computed once
    memo: dict[str, object] = field(default_factory=dict)

    @property
    def action(self) -> Action:
        """The action being judged."""
        return self.step.action

    @property
    def target(self) -> ElementFacts | None:
        """Facts about the target element, when the action has one."""
        return self.step.observation.target

    @property
    def page_url(self) -> ParsedURL:
        """The current page's URL, parsed once."""
        if self._page_url is None:
            self._page_url = parse_url(self.step.observation.url or "about:blank")
        return self._page_url

    @property
    def goal(self) -> str:
        """The user's goal ("" when none was given)."""
        return self.step.goal or ""


class CompiledRule:
    """Base class of rule evaluators: one policy, one rule entry.

    Books compiled from equal policies share their compiled rules (see `pagewarden.rules._book`):
    a rule keeps no state of its own beyond what `__init__` and `bind` derive from the policies;
    running state over a session goes to the session's `RuleMemory` (`observe`)."""

    kind: ClassVar[str]
    #: Action kinds this rule looks at; None means every kind.
    kinds: ClassVar[frozenset[str] | None] = None
    #: Position in the `RuleBook` that compiled it (policy order).
    book_order: int = 0

    def __init__(self, policy: Policy, rule: Rule) -> None:
        self.policy = policy
        self.rule = rule
        self._level = policy.risk_level.value
        self._category = policy.category.value
        #: `policy.id`, and the score of a finding at full confidence (computed once: a step
        #: may raise one finding per policy)
        self._policy_id = policy.id
        self._full_score = round(min(1.0, RISK_BASE[self._level]), 4)

    def check(self, ctx: RuleContext) -> Iterable[Finding]:
        """Findings for this step (empty when the rule has nothing to say)."""
        raise NotImplementedError

    def bind(self, book: Sequence[CompiledRule]) -> None:
        """Called once the whole book is compiled, with all its rules (policy order): a rule whose
        configuration other policies extend (allowances read across the set) reads them here."""

    def index_keys(self, kind: str) -> frozenset[tuple] | None:
        """Keys (see `_index`) without one of which this rule cannot fire on an action of
        `kind`; None (the default) when it may fire on any step of its kinds."""
        return None

    def gate(self, kind: str) -> tuple[Hashable, int] | None:
        """``(count, limit)`` when this rule can fire on an action of `kind` only once a count
        has reached `limit` (a budget of N actions); rules naming the same count share it: the
        book reads it once per step (`gate_count`) and runs only the rules whose limit it
        reached. None (the default): no such gate."""
        return None

    def gate_count(self, ctx: RuleContext) -> int:
        """The current value of the count `gate` names."""
        raise NotImplementedError

    def observe_keys(self) -> frozenset[tuple] | None:
        """Element keys (see `_index`) without one of which an action that ran cannot change
        this rule's running state (`observe`); None (the default): every observed action can."""
        return None

    def group_key(self) -> tuple | None:
        """Rules with equal group keys decide alike on every step: the same kind and
        configuration, no running state, policies of the same risk level and category (a rule
        looks at its policy only to sign its findings). The book runs one of them and gives its
        findings to the others' policies. None: never grouped (rules with running state)."""
        if self.observes != frozenset():
            return None
        return (self.kind, type(self.rule).__name__, self.rule.model_dump_json(), self._level, self._category)

    #: Action kinds of earlier actions this rule keeps a running state of (`observe`); None
    #: for every kind, empty for none.
    observes: frozenset[str] | None = frozenset()

    def observe(self, entry: HistoryEntry, state: RuleMemory, history: Sequence[HistoryEntry]) -> None:
        """Update this rule's running state with an action that ran (`entry`, already the last
        of `history`)."""

    def finding(
        self,
        message: str,
        *,
        confidence: float = 1.0,
        guidance: str = "",
        requires_approval: bool = False,
        evidence: dict[str, object] | None = None,
    ) -> Finding:
        """A finding for this rule's policy, scored from its risk level and `confidence`."""
        level = self._level
        return Finding(
            self._policy_id,
            self.kind,
            message,
            level,
            self._category,
            self._full_score if confidence == 1.0 else round(min(1.0, RISK_BASE[level] * confidence), 4),
            requires_approval,
            guidance,
            dict(evidence) if evidence else {},
        )


_REGISTRY: dict[str, type[CompiledRule]] = {}


def register(kind: str):
    """Class decorator: make `cls` the evaluator of rule kind `kind`."""

    def decorate(cls: type[CompiledRule]) -> type[CompiledRule]:
        cls.kind = kind
        _REGISTRY[kind] = cls
        return cls

    return decorate


def rule_class(kind: str) -> type[CompiledRule]:
    """The evaluator class registered for `kind`."""
    try:
        return _REGISTRY[kind]
    except KeyError:
        raise LookupError(f"no evaluator is registered for rule kind {kind!r}") from None
