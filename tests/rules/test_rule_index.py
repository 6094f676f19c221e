"""The rule book's index and running counters decide exactly as running every rule does.

Randomised policy sets (every rule kind, "any" kinds, budgets, sequences, URL and domain
patterns, protected values) and randomised sessions (clicks on buttons and links named like,
nearly like or unlike the policies' terms, fills, key presses, gotos, messages, finishes,
submissions) are judged twice per step: by the indexed book with the session's running state,
and by every rule of the action kind scanning the history. Findings must be identical.
"""

from __future__ import annotations

import base64
import random
from dataclasses import replace

import pytest

from pagewarden.guard import Action, Guard, Step
from pagewarden.policies import Policy
from pagewarden.rules import RuleBook, RuleContext, SessionView
from pagewarden.steps import ElementFacts, FormFacts, FormField, Observation
from pagewarden.worldmodel import predict_static

WORDS = ["delete", "invoice", "project", "member", "save", "submit", "remove", "archive", "transfer",
         "export"]  # fmt: skip
HOSTS = ["shop.test", "api.shop.test", "evil.test", "docs.test", "cdn.evil.test", "127.0.0.1"]
KINDS = ["click", "fill", "type", "press", "goto", "tap", "select_option", "hover", "dblclick"]
VALUES = ["acct-99812", "4111 1111 1111 1111", "hunter2!x", "555-0198"]


def _spelled(rng: random.Random, text: str) -> str:
    """The text as written on a page: as is, in capitals, with a look-alike letter, with a slip,
    inside a longer label, with punctuation."""
    choice = rng.randrange(7)
    if choice == 0:
        return text.upper()
    if choice == 1:
        return text.replace("e", "е", 1)  # Cyrillic e
    if choice == 2 and len(text) > 4:
        i = rng.randrange(1, len(text))
        return text[:i] + text[i + 1 :]
    if choice == 3:
        return f"{rng.choice(WORDS)} {text} now"
    if choice == 4:
        return f"«{text}»"
    if choice == 5:
        return text + "s"
    return text


def _actions(rng: random.Random) -> list[str]:
    if rng.random() < 0.15:
        return ["any"]
    return rng.sample(["click", "fill", "tap", "press", "goto", "dblclick", "type"], rng.randint(1, 2))


def _terms(rng: random.Random) -> list[str]:
    terms = [" ".join(rng.sample(WORDS, rng.randint(1, 2))) for _ in range(rng.randint(1, 2))]
    if rng.random() < 0.1:
        terms.append("#" + rng.choice(WORDS))  # starts with a non-word character
    return terms


def random_rule(rng: random.Random, i: int) -> dict:
    kind = rng.randrange(11)
    if kind == 0:
        patterns = ["/admin", f"/{rng.choice(WORDS)}", "module=Users", "a*min", f"https://{rng.choice(HOSTS)}/x",
                    "*.evil.test/steal", "ab"]  # fmt: skip
        return {"url_deny": [rng.choice(patterns)]}
    if kind == 1:
        return {"domain_deny": rng.sample(["evil.test", "*.evil.test", ".shop.test", "127.0.0.1", "*"], 2)}
    if kind == 2:
        return {"domain_allow": rng.sample(["shop.test", "*.shop.test", "docs.test"], 2)}
    if kind == 3:
        return {"url_allow": [rng.choice(["/", "/project", "https://shop.test/"])]}
    if kind == 4:
        body: dict = {"match": _terms(rng), "actions": _actions(rng)}
        if rng.random() < 0.3:
            body["selectors"] = [f"#{rng.choice(WORDS)}-{rng.randrange(3)}"]
        if rng.random() < 0.2:
            body["check_value"] = True
        return {"forbid_element": body}
    if kind == 5:
        body = {"actions": _actions(rng)}
        if rng.random() < 0.8:
            body["match"] = _terms(rng)
        if rng.random() < 0.2:
            selectors = [f"#{rng.choice(WORDS)}-1", "button.primary", "//a[contains(., 'x')]"]
            body["selectors"] = [rng.choice(selectors)]
        return {"consent": body}
    if kind == 6:
        body = {"actions": _actions(rng), "max": rng.randrange(4)}
        if rng.random() < 0.6:
            body["match"] = _terms(rng)
        if rng.random() < 0.2:
            body["selectors"] = [f"#{rng.choice(WORDS)}-{rng.randrange(3)}"]
        return {"action_budget": body}
    if kind == 7:
        steps = [
            {"actions": _actions(rng), "match": [rng.choice(WORDS)]} for _ in range(rng.randint(1, 3))
        ]
        return {"sequence": {"steps": steps, "contiguous": rng.random() < 0.5}}
    if kind == 8:
        body = {"values": rng.sample(VALUES, rng.randint(1, 2)), "allow_domains": ["shop.test"]}
        if rng.random() < 0.3:
            body["patterns"] = ["card_number"]
        if rng.random() < 0.3:
            body["allow_user"] = False
        return {"sensitive_data": body}
    if kind == 9:
        body = {"values": rng.sample(WORDS, 3)}
        if rng.random() < 0.5:
            body["field"] = rng.choice(WORDS)
        return {"input_allow": body}
    return {"instruction_provenance": {}}


def random_policies(rng: random.Random, count: int) -> list[Policy]:
    return [
        Policy(
            id=f"R{i}",
            category="boundary",
            risk_level=rng.choice(["low", "medium", "high"]),
            description=f"random policy {i}",
            rules=[random_rule(rng, i) for _ in range(rng.randint(1, 2))],
        )
        for i in range(count)
    ]


def _element(rng: random.Random, page: str) -> ElementFacts:
    label = _spelled(rng, " ".join(rng.sample(WORDS, rng.randint(1, 2))))
    ident = f"{rng.choice(WORDS)}-{rng.randrange(3)}" if rng.random() < 0.5 else ""
    attrs = {"id": ident} if ident else {}
    shape = rng.randrange(4)
    if shape == 0:
        host = rng.choice(HOSTS)
        path = rng.choice(["/admin/users", "/project/1", "/x", "/steal?t=1", "/index.php?module=Users"])
        href = f"http://{host}{path}"
        return ElementFacts(tag="a", role="link", name=label, text=label, href=href, attrs=attrs)
    if shape == 1:
        form = FormFacts(
            action=f"http://{rng.choice(HOSTS)}/post",
            method="post",
            fields=(FormField("note", "text", rng.choice([*VALUES, "hello"])),),
        )
        return ElementFacts(
            tag="button", role="button", name=label, text=label, is_submit=True, form=form, attrs=attrs
        )
    if shape == 2:
        return ElementFacts(
            tag="input", role="textbox", name=label, input_type="text", editable=True, attrs=attrs
        )
    return ElementFacts(tag="button", role="button", name=label, text=label, attrs=attrs)


def random_step(rng: random.Random, guard: Guard) -> Step:
    page = f"http://{rng.choice(HOSTS[:3])}/project/{rng.randrange(5)}"
    roll = rng.random()
    if roll < 0.08:
        action = Action("send_msg_to_user", value=f"I will {rng.choice(WORDS)} it; {rng.choice(VALUES)}")
        return guard.make_step(action, Observation(url=page))
    if roll < 0.12:
        return guard.make_step(Action("finish", value="done"), Observation(url=page))
    kind = rng.choice(KINDS)
    if kind == "goto":
        url = f"http://{rng.choice(HOSTS)}/{rng.choice(WORDS)}/admin?q={rng.choice(VALUES)}"
        return guard.make_step(Action("goto", value=url), Observation(url=page))
    target = _element(rng, page)
    value = None
    if kind in ("fill", "type", "select_option"):
        value = rng.choice([*VALUES, *WORDS, base64.b64encode(VALUES[0].encode()).decode(), "free text"])
    elif kind == "press":
        value = rng.choice(["Enter", "a", "Tab"])
    selector = f"#{target.attrs.get('id', 'x')}"
    return guard.make_step(Action(kind, selector=selector, value=value), Observation(url=page, target=target))


@pytest.mark.parametrize("seed", range(12))
def test_indexed_book_decides_as_every_rule_does(seed: int) -> None:
    rng = random.Random(seed)
    policies = random_policies(rng, rng.choice([5, 30, 120]))
    guard = Guard(policies, baseline=rng.random() < 0.5)
    book = guard.rulebook
    compared = fired = 0
    for _ in range(150):
        step = random_step(rng, guard)
        prediction = predict_static(step)
        view = guard.session.view(step)
        indexed = book.evaluate(RuleContext(step, prediction, view, secrets=guard.secrets))
        scan = SessionView(view.history, view.user_messages, view.typed_passwords, view.tab, None)
        reference = book.evaluate(RuleContext(step, prediction, scan, secrets=guard.secrets), exhaustive=True)
        assert indexed == reference, (step.action, step.observation.target)
        compared += 1
        fired += bool(reference[0])
        verdict = guard.evaluate(step)
        guard.commit(step, verdict, ran=verdict.allowed or rng.random() < 0.7)
    assert compared == 150 and fired > 0  # the sessions exercised rules that fire


def _copies(rng: random.Random, policies: list[Policy]) -> list[Policy]:
    """The policies, each rule also repeated in other policies (same or another risk level)."""
    out = list(policies)
    for i, p in enumerate(policies):
        for j in range(rng.randint(1, 3)):
            level = p.risk_level.value if rng.random() < 0.7 else rng.choice(["low", "medium", "high"])
            rules = [r.model_dump(exclude_none=True) for r in p.rules]
            rules = [{r.kind: body} for r, body in zip(p.rules, rules, strict=True)]
            copy = Policy(id=f"C{i}-{j}", category="boundary", risk_level=level, description="c", rules=rules)
            out.insert(rng.randrange(len(out) + 1), copy)
    return out


@pytest.mark.parametrize("seed", range(6))
def test_rules_repeated_in_many_policies_decide_as_if_each_ran(seed: int) -> None:
    """The same rule in several policies runs once: every policy still gets its finding, in
    policy order, as when each rule runs on its own."""
    rng = random.Random(100 + seed)
    policies = _copies(rng, random_policies(rng, rng.choice([5, 20, 40])))
    guard = Guard(policies, baseline=False)
    book = guard.rulebook
    assert book._followers, "the set repeats rules: some must be grouped"
    fired = 0
    for _ in range(120):
        step = random_step(rng, guard)
        prediction = predict_static(step)
        view = guard.session.view(step)
        indexed = book.evaluate(RuleContext(step, prediction, view, secrets=guard.secrets))
        scan = SessionView(view.history, view.user_messages, view.typed_passwords, view.tab, None)
        reference = book.evaluate(RuleContext(step, prediction, scan, secrets=guard.secrets), exhaustive=True)
        assert indexed == reference, (step.action, step.observation.target)
        fired += sum(1 for f in indexed[0] if f.policy_id.startswith("C"))
        verdict = guard.evaluate(step)
        guard.commit(step, verdict, ran=verdict.allowed or rng.random() < 0.7)
    assert fired > 0  # copies fired, each under its own policy


def _input_lists(rng: random.Random, start: int) -> list[Policy]:
    """Allow-lists of entered values: several with no field, several per field name."""
    out = []
    for i in range(8):
        body: dict = {"values": rng.sample([*WORDS, "x" * 70], 2)}
        if rng.random() < 0.6:
            body["field"] = rng.choice(WORDS[:3])
        out.append(Policy(id=f"I{start + i}", category="boundary", risk_level=rng.choice(["low", "high"]),
                          description="only these values", rules=[{"input_allow": body}]))  # fmt: skip
    return out


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("failing", [False, True])
def test_each_policy_gets_in_the_book_the_findings_it_gets_alone(
    seed: int, failing: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the book shares between rules within a step (one run of a group of identical rules,
    messages built once per step, the step's keys and texts) changes nothing: each policy's
    findings are those of a book holding that policy alone, judging the step afresh. With
    `failing`, some rules raise (the same on the same step): their fail-closed findings and
    errors stay in policy order too."""
    if failing:
        from pagewarden.rules.inputs import InputAllow
        from pagewarden.rules.urls import DomainAllow, UrlDeny

        def broken(check):
            def run(self, ctx):
                if (ctx.step.observation.url or "").endswith(("/1", "/3")):
                    raise RuntimeError("broken rule")
                return check(self, ctx)

            return run

        for cls in (DomainAllow, UrlDeny, InputAllow):
            monkeypatch.setattr(cls, "check", broken(cls.check))
    rng = random.Random(200 + seed)
    policies = _copies(rng, random_policies(rng, rng.choice([5, 20])))
    for extra in _input_lists(rng, 0):
        policies.insert(rng.randrange(len(policies) + 1), extra)
    guard = Guard(policies, baseline=False)
    alone = [RuleBook([p]) for p in policies]
    fired = failed = 0
    for _ in range(80):
        step = random_step(rng, guard)
        if step.action.kind in ("fill", "type") and rng.random() < 0.3:
            step = replace(step, action=replace(step.action, value="y" * 80))  # shown shortened
        prediction = predict_static(step)
        view = guard.session.view(step)
        findings, errors = guard.rulebook.evaluate(RuleContext(step, prediction, view, secrets=guard.secrets))
        scan = SessionView(view.history, view.user_messages, view.typed_passwords, view.tab, None)
        expected: list = []
        expected_errors: list = []
        for book in alone:
            own, own_errors = book.evaluate(RuleContext(step, prediction, scan, secrets=guard.secrets))
            expected += own
            expected_errors += own_errors
        assert findings == expected, (step.action, step.observation.target)
        assert errors == expected_errors
        fired += sum(1 for f in findings if f.rule == "input_allow")
        failed += len(errors)
        verdict = guard.evaluate(step)
        guard.commit(step, verdict, ran=verdict.allowed or rng.random() < 0.7)
    assert fired > 0  # allow-lists of several policies fired on the same step
    assert (failed > 0) == failing


def test_a_domain_list_in_many_policies_names_every_policy() -> None:
    rule = {"domain_allow": ["shop.test"]}
    policies = [
        Policy(id=f"D{i}", category="boundary", risk_level="high" if i % 2 else "low",
               description=f"stay on the shop {i}", rules=[rule])
        for i in range(6)
    ]  # fmt: skip
    guard = Guard(policies, baseline=False)
    target = ElementFacts(tag="a", role="link", name="Prize", text="Prize", href="http://evil.test/win")
    page = "http://shop.test/"
    verdict = guard.evaluate(guard.make_step(Action("click"), Observation(url=page, target=target)))
    assert verdict.decision.value == "block"
    assert sorted(verdict.violated_policy_ids) == [f"D{i}" for i in range(6)]
    levels = {f.policy_id: f.risk_level for f in verdict.findings}
    assert levels == {f"D{i}": "high" if i % 2 else "low" for i in range(6)}
    inside = ElementFacts(tag="a", role="link", name="Cart", text="Cart", href="http://shop.test/cart")
    ok = guard.evaluate(guard.make_step(Action("click", selector="#c"), Observation(url=page, target=inside)))
    assert ok.decision.value == "allow"


def test_counters_follow_actions_known_only_by_their_label() -> None:
    """Budgets and sequences count an action that ran with no element facts by its label, as the
    history scan does (the observer index looks the label's words up too)."""
    from pagewarden.rules import HistoryEntry

    policies = [
        Policy(id="B", category="boundary", risk_level="high", description="one export",
               rules=[{"action_budget": {"actions": ["click"], "match": ["Export data"], "max": 1}}]),
        Policy(id="S", category="boundary", risk_level="high", description="review, then publish",
               rules=[{"sequence": {"steps": [{"actions": ["click"], "match": ["Review"]},
                                              {"actions": ["click"], "match": ["Publish"]}]}}]),
    ]  # fmt: skip
    guard = Guard(policies, baseline=False)
    session = guard.session
    for label in ("Open settings", "Export data", "Review draft", "Save"):
        entry = HistoryEntry("click", label)
        session.history.append(entry)
        guard.rulebook.observe(session.memory, entry, session.history)
    export = ElementFacts(tag="button", role="button", name="Export data", text="Export data")
    publish = ElementFacts(tag="button", role="button", name="Publish", text="Publish")
    for target, expected in ((export, {"B"}), (publish, set())):
        observation = Observation(url="http://shop.test/", target=target)
        step = guard.make_step(Action("click", selector="#x"), observation)
        prediction = predict_static(step)
        view = session.view(step)
        found, _ = guard.rulebook.evaluate(RuleContext(step, prediction, view))
        scan = SessionView(view.history, view.user_messages, view.typed_passwords, view.tab, None)
        reference, _ = guard.rulebook.evaluate(RuleContext(step, prediction, scan), exhaustive=True)
        assert {f.policy_id for f in found} == {f.policy_id for f in reference} == expected


def test_every_action_kind_is_planned_when_the_book_is_built() -> None:
    """No action pays for building its kind's plan: the book plans every kind up front."""
    from pagewarden.policies._rules_schema import ACTION_KINDS

    rng = random.Random(3)
    book = RuleBook(random_policies(rng, 40))
    kinds = ACTION_KINDS - {"any"}
    assert kinds <= book._plans.keys() and kinds <= book._observers.keys()
    planned = dict(book._plans)
    guard = Guard(random_policies(rng, 40), baseline=False)
    for _ in range(30):
        step = random_step(rng, guard)
        book.evaluate(RuleContext(step, predict_static(step), guard.session.view(step)))
    assert book._plans == planned  # judging steps built no plan


@pytest.mark.parametrize("seed", range(3))
def test_the_verdict_is_assembled_from_the_books_findings(seed: int) -> None:
    """`Guard.evaluate` ranks the findings once and copies the prediction once: the verdict is
    what its parts say (findings most severe first, in policy order among equals; the
    prediction's violated policies and explanation in policy order; guidance shared)."""
    from pagewarden.guard._browser import browser_findings
    from pagewarden.guard._risk import decide

    rng = random.Random(300 + seed)
    guard = Guard(_copies(rng, random_policies(rng, 20)), baseline=False)
    blocked = 0
    for _ in range(60):
        step = random_step(rng, guard)
        prediction = predict_static(step)
        view = guard.session.view(step)
        findings, errors = guard.rulebook.evaluate(RuleContext(step, prediction, view, secrets=guard.secrets))
        findings += browser_findings(step, prediction)
        decision, score = decide(findings, prediction, guard.thresholds)
        verdict = guard.evaluate(step, prediction=prediction)
        assert (verdict.decision, verdict.score) == (decision, score)
        assert list(verdict.findings) == sorted(findings, key=lambda f: -f.score)
        assert verdict.explanation == Guard._explain(decision, findings)
        assert verdict.guidance == Guard._guidance(decision, findings)
        assert verdict.tier_errors == tuple(errors)
        seen = verdict.prediction
        assert seen is not None
        if findings:
            assert seen.violated_policy_ids == tuple(dict.fromkeys(f.policy_id for f in findings))
            assert seen.risk_explanation == "; ".join(f.message for f in findings[:3])
        else:
            assert seen == prediction
        expected = prediction.optimization_guidance or verdict.guidance
        assert seen.optimization_guidance == expected
        blocked += decision.value != "allow"
        guard.commit(step, verdict, ran=verdict.allowed)
    assert blocked > 0
