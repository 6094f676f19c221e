"""`RuleBook`: a policy set compiled into evaluators, indexed so that a step runs only the
rules that can apply to it.

For each action kind the book keeps, in policy order, the rules that watch that kind and
declared no keys (they run on every such step), and an index from key to the rules that
declared it (see `_index`): a step runs the unkeyed rules of its kind plus the keyed rules
whose keys it has, merged back into policy order. Lookup is linear in the number of rules
that can apply, not in the number of policies; a rule of kind "any" is one more entry per
kind, not a sort of the whole book. Budget and sequence rules keep running state over the
session (`observe`), so they do not scan the history; an action that ran updates only the
rules whose element keys it has (`CompiledRule.observe_keys`).

Rules that decide alike on every step (`CompiledRule.group_key`: the same stateless rule in
several policies of the same risk level and category — a domain allow-list repeated in every
task's policies) are run once: the others' policies get copies of its findings, in policy
order, exactly as if each had run.

Compiling is the costly part of making a guard (a `Guard` per session, per agent, per
scenario of an evaluation). A book holds no running state (that is the session's
`RuleMemory`), so books compiled from equal policies share one compilation: the compiled
rules, the per-kind plans and the indexes (`_SHARED`, keyed by the policies' content and rule
types; an LRU bounded in policy sets and in compiled rules). Compiled rules must therefore
keep no state of their own beyond what `__init__` and `bind` derive from the policies.
"""

from __future__ import annotations

import threading
from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from operator import attrgetter, itemgetter

from pagewarden.policies import ACTION_KINDS, Policy
from pagewarden.rules._base import (
    RISK_BASE,
    CompiledRule,
    HistoryEntry,
    RuleContext,
    RuleMemory,
    rule_class,
)
from pagewarden.rules._index import (
    ELEMENT,
    FAMILY,
    TRIGRAM_FAMILIES,
    entry_keys,
    trigram_set,
    trigrams_of,
)
from pagewarden.rules._step_index import step_keys, step_texts
from pagewarden.steps import Finding

__all__ = ["RuleBook"]

_ORDER = attrgetter("book_order")  # a compiled rule's position in its book (policy order)
_FIRST = itemgetter(0)


@dataclass(slots=True)
class _Plan:
    """The rules of one action kind: those that always run, and the keyed ones by family."""

    always: list[CompiledRule] = field(default_factory=list)
    keyed: dict[str, dict[tuple, list[CompiledRule]]] = field(default_factory=dict)
    #: rules keyed by a literal, by family of what of the step the literal must appear in,
    #: then by trigram key family (``tri``, ``lo``, …), then by the trigram chosen for it
    grams: dict[str, dict[str, dict[str, list[CompiledRule]]]] = field(default_factory=dict)
    #: the same trigrams as sets (a step's trigrams are intersected with them)
    gram_sets: dict[str, dict[str, frozenset[str]]] = field(default_factory=dict)
    #: rules that can fire only once a count they share reached their limit (`CompiledRule.gate`):
    #: per count, the rule that reads it, the limits in ascending order and their rules
    gated: list[tuple[CompiledRule, list[int], list[CompiledRule]]] = field(default_factory=list)


def _signed(finding: Finding, policy_id: str) -> Finding:
    """`finding` as another policy's (same rule, risk level and category)."""
    f = finding
    return Finding(
        policy_id, f.rule, f.message, f.risk_level, f.category, f.score, f.requires_approval, f.guidance,
        dict(f.evidence),
    )  # fmt: skip


def _content_key(policies: Sequence[Policy]) -> tuple:
    """What a compilation depends on: every policy's content, and each rule's kind and model
    (two rule kinds may serialise alike: ``url_deny`` and ``url_allow`` of the same patterns)."""
    return tuple(
        (policy.model_dump_json(), tuple((rule.kind, type(rule).__qualname__) for rule in policy.rules))
        for policy in policies
    )


class _SharedBooks:
    """Compiled books by `_content_key`, the most recently used kept: at most `limit` policy
    sets and `max_rules` compiled rules in all (~3.5 KB each: 3,000 policies take ~10 MB), so a
    process that goes through many versions of a large set keeps only the recent ones.
    Thread-safe."""

    def __init__(self, limit: int, max_rules: int = 20_000) -> None:
        self.limit = limit
        self.max_rules = max_rules
        self._books: OrderedDict[tuple, RuleBook] = OrderedDict()
        self._rules = 0
        self._lock = threading.Lock()

    def get(self, key: tuple) -> RuleBook | None:
        with self._lock:
            book = self._books.get(key)
            if book is not None:
                self._books.move_to_end(key)
            return book

    def put(self, key: tuple, book: RuleBook) -> None:
        with self._lock:
            old = self._books.pop(key, None)
            if old is not None:
                self._rules -= len(old) + 1
            self._books[key] = book
            self._rules += len(book) + 1
            while len(self._books) > 1 and (len(self._books) > self.limit or self._rules > self.max_rules):
                _, evicted = self._books.popitem(last=False)
                self._rules -= len(evicted) + 1

    def clear(self) -> None:
        """Forget every compilation (the next book of each policy set compiles anew)."""
        with self._lock:
            self._books.clear()
            self._rules = 0


#: compilations shared by books of equal policies (see the module's docstring)
_SHARED = _SharedBooks(limit=64)


class RuleBook:
    """Compiled rules of a set of policies; `evaluate` runs those that can apply to the step.

    Books of equal policies share their compilation (`_SHARED`): making one is cheap after
    the first. A book keeps no running state; each session's is its own `RuleMemory`."""

    def __init__(self, policies: Iterable[Policy]) -> None:
        policies = list(policies)
        key = _content_key(policies)
        shared = _SHARED.get(key)
        if shared is not None:
            vars(self).update(vars(shared))  # the same compiled rules, plans and indexes
            return
        self._compile(policies)
        _SHARED.put(key, self)

    def _compile(self, policies: list[Policy]) -> None:
        self.rules: list[CompiledRule] = []
        self._by_kind: dict[str, list[CompiledRule]] = {}
        self._every: list[CompiledRule] = []
        #: the same without the rules another one of their group runs for (what the index plans)
        self._lead_by_kind: dict[str, list[CompiledRule]] = {}
        self._lead_every: list[CompiledRule] = []
        #: rules whose findings a group's first rule gives them, by the first rule's position
        self._followers: dict[int, list[CompiledRule]] = {}
        self._position: dict[int, int] = {}
        self._observers_by_kind: dict[str, list[CompiledRule]] = {}
        self._observers_every: list[CompiledRule] = []
        leaders: dict[tuple, CompiledRule] = {}
        for policy in policies:
            for rule in policy.rules:
                compiled = rule_class(rule.kind)(policy, rule)
                self._position[id(compiled)] = compiled.book_order = len(self.rules)
                self.rules.append(compiled)
                group = compiled.group_key()
                leader = leaders.setdefault(group, compiled) if group is not None else compiled
                if leader is not compiled:
                    self._followers.setdefault(leader.book_order, []).append(compiled)
                if compiled.kinds is None:
                    self._every.append(compiled)
                    if leader is compiled:
                        self._lead_every.append(compiled)
                else:
                    for kind in compiled.kinds:
                        self._by_kind.setdefault(kind, []).append(compiled)
                        if leader is compiled:
                            self._lead_by_kind.setdefault(kind, []).append(compiled)
                if compiled.observes is None:
                    self._observers_every.append(compiled)
                else:
                    for kind in compiled.observes:
                        self._observers_by_kind.setdefault(kind, []).append(compiled)
        for compiled in self.rules:
            compiled.bind(self.rules)
        self._plans: dict[str, _Plan] = {}
        self._observers: dict[str, _Plan] = {}
        self._trigram_of: dict[tuple, str] = {}
        # every action kind's plans now, so that no action pays for building one (a kind no
        # rule names, `any` aside, still gets its plan on first use)
        for kind in sorted((ACTION_KINDS - {"any"}) | self._by_kind.keys() | self._observers_by_kind.keys()):
            self._plan(kind)
            self._observer_plan(kind)

    def __len__(self) -> int:
        return len(self.rules)

    @staticmethod
    def forget_shared() -> None:
        """Forget the compilations shared between books of equal policies: the next book of
        each policy set compiles anew (a benchmark of cold compiles; memory)."""
        _SHARED.clear()

    def _pos(self, rule: CompiledRule) -> int:
        return self._position[id(rule)]

    def _merged(self, a: list[CompiledRule], b: list[CompiledRule]) -> list[CompiledRule]:
        """Two lists in policy order merged into one (linear: the sort finds the two runs)."""
        if not a:
            return b
        if not b:
            return a
        return sorted(a + b, key=_ORDER)

    def rules_for(self, action_kind: str) -> list[CompiledRule]:
        """The evaluators that look at `action_kind`, in policy order."""
        return self._merged(self._by_kind.get(action_kind, []), self._every)

    def _plan(self, kind: str) -> _Plan:
        plan = self._plans.get(kind)
        if plan is not None:
            return plan
        plan = _Plan()
        gates: dict[Hashable, list[tuple[int, CompiledRule]]] = {}
        for rule in self._merged(self._lead_by_kind.get(kind, []), self._lead_every):
            keys = rule.index_keys(kind)
            if keys is None:
                gate = rule.gate(kind)
                if gate is None:
                    plan.always.append(rule)
                else:
                    gates.setdefault(gate[0], []).append((gate[1], rule))
                continue
            for key in keys:
                if key[0] in TRIGRAM_FAMILIES:
                    # a literal must appear whole: index it by its least shared trigram (chosen
                    # once per book: any trigram of it is a sound key for every action kind)
                    by_gram = plan.grams.setdefault(FAMILY[key[0]], {}).setdefault(key[0], {})
                    chosen = self._trigram_of.get(key)
                    if chosen is None:
                        chosen = self._trigram_of[key] = min(
                            trigrams_of(key[1]),  # type: ignore[arg-type]
                            key=lambda t: len(by_gram.get(t, ())),
                        )
                    rules = by_gram.setdefault(chosen, [])
                else:
                    rules = plan.keyed.setdefault(FAMILY[key[0]], {}).setdefault(key, [])
                if not rules or rules[-1] is not rule:
                    rules.append(rule)
        for members in gates.values():
            members.sort(key=_FIRST)
            plan.gated.append((members[0][1], [limit for limit, _ in members], [r for _, r in members]))
        plan.gram_sets = {
            family: {gram_kind: frozenset(by_gram) for gram_kind, by_gram in by_kind.items()}
            for family, by_kind in plan.grams.items()
        }
        self._plans[kind] = plan
        return plan

    def candidates(self, ctx: RuleContext) -> list[CompiledRule]:
        """The rules that can apply to this step, in policy order."""
        plan = self._plan(ctx.step.action.kind)
        if not plan.keyed and not plan.gated and not plan.grams:
            return plan.always
        found: dict[int, CompiledRule] = {}
        for counter, limits, rules in plan.gated:
            try:
                reached = bisect_right(limits, counter.gate_count(ctx))
            except Exception:  # noqa: BLE001 - unknown count: every rule runs (and decides)
                reached = len(rules)
            for rule in rules[:reached]:
                found[id(rule)] = rule
        for family, index in plan.keyed.items():
            keys = step_keys(ctx, family)
            if len(keys) <= len(index):
                for key in keys:
                    for rule in index.get(key, ()):
                        found[id(rule)] = rule
            else:
                for key, rules in index.items():
                    if key in keys:
                        for rule in rules:
                            found[id(rule)] = rule
        for family, by_kind in plan.grams.items():
            texts = step_texts(ctx, family)
            indexed = plan.gram_sets[family]
            for gram_kind, by_gram in by_kind.items():
                for text in texts.get(gram_kind, ()):
                    for gram in trigram_set(text) & indexed[gram_kind]:
                        for rule in by_gram[gram]:
                            found[id(rule)] = rule
        if not found:
            return plan.always
        # the rules that always run and those found are disjoint: one sort gives policy order
        return sorted([*plan.always, *found.values()], key=_ORDER)

    def evaluate(self, ctx: RuleContext, *, exhaustive: bool = False) -> tuple[list[Finding], list[str]]:
        """All findings for the step, and errors of evaluators that failed.

        A failing evaluator does not let the action through silently: it contributes a
        finding at its policy's risk level that says the rule could not be evaluated.
        `exhaustive` runs every rule of the action kind, without the index (the reference the
        index is tested against).
        """
        rules = self.rules_for(ctx.step.action.kind) if exhaustive else self.candidates(ctx)
        followers = {} if exhaustive else self._followers
        findings: list[Finding] = []
        errors: list[str] = []
        #: (position in the book, findings, error) of every rule with something to say, kept
        #: only once a group's findings were copied (they are then put back in policy order)
        said: list[tuple[int, list[Finding], str | None]] | None = None
        for rule in rules:
            error = None
            try:
                found = list(rule.check(ctx))
            except Exception as exc:  # noqa: BLE001 - a rule bug must fail closed, not crash the agent
                error = f"{type(exc).__name__}: {exc}"
                found = [self._failed(rule, exc)]
            if not found:
                continue
            failed = error and f"rule {rule.kind} of {rule.policy.id} failed: {error}"
            group = followers.get(rule.book_order)
            if said is None and group is None:
                findings += found
                if failed:
                    errors.append(failed)
                continue
            if said is None:  # the first group that fired: from now on, keep positions
                said = [(-1, findings, None)] if findings else []
                if errors:
                    said += [(-1, [], e) for e in errors]
            said.append((rule.book_order, found, failed))
            for other in group or ():  # same rule, same risk level and category: the same findings
                mine = [_signed(f, other.policy.id) for f in found]
                failed = error and f"rule {other.kind} of {other.policy.id} failed: {error}"
                said.append((other.book_order, mine, failed))
        if said is not None:
            said.sort(key=_FIRST)  # policy order, as if every rule of every group had run
            findings = [f for _, found, _ in said for f in found]
            errors = [error for _, _, error in said if error]
        return findings, errors

    @staticmethod
    def _failed(rule: CompiledRule, exc: BaseException) -> Finding:
        """The finding of a rule that could not be evaluated: at its policy's risk level."""
        level = rule.policy.risk_level.value
        return Finding(
            policy_id=rule.policy.id,
            rule=rule.kind,
            message=f"could not evaluate this rule ({type(exc).__name__}); failing closed",
            risk_level=level,
            category=rule.policy.category.value,
            score=RISK_BASE[level],
        )

    def _observer_plan(self, kind: str) -> _Plan:
        plan = self._observers.get(kind)
        if plan is not None:
            return plan
        plan = _Plan()
        keyed = plan.keyed.setdefault(ELEMENT, {})
        for rule in self._merged(self._observers_by_kind.get(kind, []), self._observers_every):
            keys = rule.observe_keys()
            if keys is None or any(FAMILY.get(key[0]) != ELEMENT for key in keys):
                plan.always.append(rule)
                continue
            for key in keys:
                rules = keyed.setdefault(key, [])
                if not rules or rules[-1] is not rule:
                    rules.append(rule)
        self._observers[kind] = plan
        return plan

    def observe(self, memory: RuleMemory, entry: HistoryEntry, history: Sequence[HistoryEntry]) -> None:
        """Update the rules' running state with an action that ran (`entry`, the last of
        `history`): the rules that watch its kind and whose element keys it has."""
        plan = self._observer_plan(entry.kind)
        observers = plan.always
        index = plan.keyed[ELEMENT]
        if index:
            found = {id(r): r for key in entry_keys(entry) for r in index.get(key, ())}
            if found:
                observers = [*observers, *found.values()]
        for rule in observers:
            try:
                rule.observe(entry, memory, history)
            except Exception:  # noqa: BLE001 - a broken counter must not crash the agent
                memory.pop(rule, None)
                memory.broken.add(id(rule))  # the rule scans the history from now on
