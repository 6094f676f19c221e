"""Books of equal policies share one compilation (rules, plans, indexes) and nothing else:
each guard keeps its own running state, and a policy set that differs in any way (content,
rule kind, a list changed in place) gets its own compilation."""

from __future__ import annotations

import threading

from pagewarden.rules import RuleBook
from pagewarden.rules._book import _SharedBooks
from tests.rules.rulekit import act, button, decision, policy
from tests.rules.rulekit import guard as make_guard

BUDGET = {"action_budget": {"action": "click", "max": 1}}
SEQUENCE = {
    "sequence": {"steps": [{"action": "click", "match": "Review"}, {"action": "click", "match": "Pay"}]}
}


def test_guards_of_equal_policies_share_the_compiled_rules_not_their_counters() -> None:
    first, second = make_guard(BUDGET, SEQUENCE), make_guard(BUDGET, SEQUENCE)  # equal, not the same objects
    assert next(iter(first.policies)) is not next(iter(second.policies))
    assert all(a is b for a, b in zip(first.rulebook.rules, second.rulebook.rules, strict=True))
    assert decision(act(first, "click", target=button("Next"))) == "allow"
    assert decision(act(first, "click", target=button("Again"))) == "block"  # first's budget is spent
    assert decision(act(second, "click", target=button("Next"))) == "allow"  # second's is not
    assert decision(act(second, "click", target=button("Again"))) == "block"
    third = make_guard(BUDGET, SEQUENCE)
    assert decision(act(third, "click", target=button("Pay"))) == "block"  # the sequence is not done
    assert decision(act(make_guard(SEQUENCE), "click", target=button("Review"))) == "allow"


def test_guards_in_threads_keep_their_own_budgets() -> None:
    decisions: dict[int, list[str]] = {}

    def session(n: int) -> None:
        g = make_guard(BUDGET)
        decisions[n] = [decision(act(g, "click", target=button(f"B{i}"))) for i in range(3)]

    threads = [threading.Thread(target=session, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert decisions == {n: ["allow", "block", "block"] for n in range(8)}


def test_rule_kinds_written_alike_are_compiled_apart() -> None:
    """``url_deny`` and ``url_allow`` of the same pattern serialise alike: the kind is in the key."""
    deny, allow = make_guard({"url_deny": "evil"}), make_guard({"url_allow": "evil"})
    assert type(deny.rulebook.rules[0]) is not type(allow.rulebook.rules[0])
    assert decision(act(deny, "goto", value="https://evil.test/")) == "block"
    assert decision(act(allow, "goto", value="https://evil.test/")) == "allow"
    assert decision(act(allow, "goto", value="https://good.test/")) == "block"


def test_policies_that_differ_get_their_own_compilation() -> None:
    base = RuleBook([policy({"url_deny": "evil"})])
    assert RuleBook([policy({"url_deny": "evil"})]).rules[0] is base.rules[0]
    assert RuleBook([policy({"url_deny": "evil"}, risk="low")]).rules[0] is not base.rules[0]
    assert RuleBook([policy({"url_deny": "evil"}, pid="P2")]).rules[0] is not base.rules[0]
    changed = policy({"url_deny": "evil"})
    changed.rules[0].patterns.append("bad")  # a list changed in place (the models are frozen, not deep)
    book = RuleBook([changed])
    assert book.rules[0] is not base.rules[0]
    g = make_guard({"url_deny": "evil"})
    g.rulebook = book  # judged by the changed policy's book: its new pattern is in force
    assert decision(act(g, "goto", value="https://bad.test/")) == "block"


def test_the_shared_compilations_are_bounded() -> None:
    shared = _SharedBooks(limit=2)
    books = [RuleBook([policy({"url_deny": f"evil{n}"})]) for n in range(3)]
    for n, book in enumerate(books):
        shared.put((n,), book)
    assert shared.get((0,)) is None and shared.get((1,)) is books[1]
    shared.put((3,), books[0])  # (1,) was used last: (2,) goes
    assert shared.get((2,)) is None and shared.get((1,)) is books[1] and shared.get((3,)) is books[0]


def test_the_shared_compilations_are_bounded_in_rules() -> None:
    shared = _SharedBooks(limit=10, max_rules=6)
    small = RuleBook([policy({"url_deny": "a"}, {"url_deny": "b"})])  # 2 rules (+1 per set)
    big = RuleBook([policy(*({"url_deny": f"x{n}"} for n in range(9)))])  # above the bound alone
    shared.put(("a",), small)
    shared.put(("b",), small)
    assert shared.get(("a",)) is small and shared.get(("b",)) is small
    shared.put(("c",), small)  # 9 counted, above 6: the least recently used goes
    assert shared.get(("a",)) is None and shared.get(("c",)) is small
    shared.put(("big",), big)  # the newest is kept even alone above the bound, the others go
    assert shared.get(("big",)) is big and shared.get(("b",)) is None and shared.get(("c",)) is None
