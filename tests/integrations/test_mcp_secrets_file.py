"""The --secrets file (dotenv, read as Playwright MCP reads it, plus ``# domains:``), the masking
of values in what the model reads, the guidance an MCP model gets, and the --caps / --secrets
options of `pagewarden mcp` (no browser)."""

from __future__ import annotations

import base64
from pathlib import Path
from urllib.parse import quote

import pytest
from click.testing import CliRunner

from pagewarden import Guard
from pagewarden.cli import main
from pagewarden.integrations.mcp import NamedSecret, SecretBook, SecretsFileError, load_secrets
from pagewarden.integrations.mcp._guidance import for_mcp
from pagewarden.integrations.mcp._secrets import parse_dotenv

VALUE = "Tr0ub4dor&3xyz"


def test_dotenv_is_read_as_the_npm_dotenv_package_reads_it() -> None:
    text = (
        "# a comment\n"
        'export BANK_PASSWORD="Tr0ub4dor&3xyz"   # domains: bank.test, .bank-cdn.test\n'
        "TOKEN=abc#def\n"
        "SPACED = 'x y z w'  # DOMAINS: a.test\r\n"
        'MULTI="line1\\nline2"\n'
        "BACK=`it's`\n"
        "EMPTY=\n"
        "TOKEN=later\n"
    )
    entries = {name: (value, comment) for name, value, comment, _ in parse_dotenv(text)}
    assert entries["BANK_PASSWORD"] == ("Tr0ub4dor&3xyz", "# domains: bank.test, .bank-cdn.test")
    assert entries["TOKEN"] == ("later", "")  # the last entry wins
    assert entries["SPACED"] == ("x y z w", "# DOMAINS: a.test")
    assert entries["MULTI"][0] == "line1\nline2" and entries["BACK"][0] == "it's"
    assert entries["EMPTY"] == ("", "")
    assert parse_dotenv("ONLY=abc#def\n")[0][1:3] == ("abc", "#def")  # unquoted: '#' starts a comment


def test_load_secrets_names_domains_and_refuses_bad_files(tmp_path: Path) -> None:
    good = tmp_path / "secrets.env"
    good.write_text(f'BANK_PASSWORD="{VALUE}" # domains: bank.test, *.bank.test\nNOWHERE=abcdefgh\nEMPTY=\n')
    secrets = load_secrets(good)
    assert [(s.name, s.domains) for s in secrets] == [
        ("BANK_PASSWORD", ("bank.test", "*.bank.test")),
        ("NOWHERE", ()),
    ]
    assert VALUE not in repr(secrets)
    for body, message in (
        ("PIN=123 # domains: bank.test\n", "at least 4 characters"),
        ("PW=abcdefgh # domains: https://bank.test/login\n", "is not a domain pattern"),
        ("PW=abcdefgh # domains: *\n", "is not a domain pattern"),
    ):
        bad = tmp_path / "bad.env"
        bad.write_text(body)
        with pytest.raises(SecretsFileError, match=message) as caught:
            load_secrets(bad)
        assert "abcdefgh" not in str(caught.value) and "line 1" in str(caught.value)
    with pytest.raises(SecretsFileError, match="cannot be read"):
        load_secrets(tmp_path / "missing.env")
    binary = tmp_path / "binary.env"
    binary.write_bytes(b"PW=\xff\xfe\n")
    with pytest.raises(SecretsFileError, match="not UTF-8"):
        load_secrets(binary)


def test_the_book_types_by_name_registers_with_the_guard_and_masks_every_form() -> None:
    book = SecretBook([NamedSecret("BANK_PASSWORD", VALUE, ("bank.test",))])
    assert book.lookup("BANK_PASSWORD") == VALUE and book.lookup("hello") == "hello"
    guard = Guard()
    try:
        book.register(guard)
        (secret,) = list(guard.secrets)
        assert secret.allow_domains == ("bank.test",) and secret.label == "BANK_PASSWORD"
    finally:
        guard.close()
    spread = " ".join(VALUE)
    forms = [
        VALUE, VALUE.upper(), VALUE[::-1], spread, "-".join(VALUE), quote(VALUE, safe=""),
        base64.b64encode(VALUE.encode()).decode(), "Tr0ub4dor&amp;3xyz",
        "".join(chr(ord(c) + 0xFEE0) for c in VALUE),  # full-width
        "Tr0ub\u200b4dor&3xyz",  # a zero-width space inside
        "\u0422r0ub4dor&3\u0445\u0443z",  # Cyrillic Т, х, у for Latin T, x, y
    ]  # fmt: skip
    for form in forms:
        masked = book.mask(f"title: {form} (end)")
        assert masked == "title: <secret>BANK_PASSWORD</secret> (end)", (form, masked)
    assert book.mask("nothing secret here") == "nothing secret here"
    assert SecretBook().mask(VALUE) == VALUE


def test_mcp_guidance_names_what_an_mcp_model_can_do() -> None:
    text = for_mcp(
        "Guidance: Ask the user before this action: send them a message naming 'Delete' and wait for their "
        "answer. This action needs the user's approval. Tell the user what you are about to do and why "
        "(send_msg_to_user), then wait for their answer."
    )
    assert "send_msg_to_user" not in text and "send them a message" not in text
    assert "in your reply to the user" in text and "tell them in your reply" in text


def test_cli_caps_and_secrets_are_checked(tmp_path: Path) -> None:
    runner = CliRunner()
    bogus = runner.invoke(main, ["mcp", "--caps", "vision,telepathy"])
    assert bogus.exit_code == 2 and "telepathy" in bogus.output
    bad = tmp_path / "bad.env"
    bad.write_text("PIN=123\n")
    refused = runner.invoke(main, ["mcp", "--secrets", str(bad)])
    assert refused.exit_code == 2 and "at least 4 characters" in refused.output
