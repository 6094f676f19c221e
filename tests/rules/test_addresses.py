"""The address rules without a browser (issue 37): address zones in every spelling, what a policy
allows, the session's opened ranges, URL credentials and their redaction, look-alike hosts."""

from __future__ import annotations

import pytest

from pagewarden import Action, Guard, Observation, PolicySet
from pagewarden._netaddr import zone_of
from pagewarden._url import parse_url
from pagewarden.policies import PolicyError, baseline_policies
from pagewarden.rules import EgressRules, InternalAccess
from pagewarden.rules._lookalike import deception, goal_hosts, standalone_deception
from pagewarden.secrets import redact_credentials

GOAL = "Summarise today's story on news.test."


def _zone(url: str) -> tuple[str, str] | None:
    zone = zone_of(parse_url(url).host)
    return (zone.kind, zone.block) if zone is not None else None


@pytest.mark.parametrize(
    ("url", "zone"),
    [
        ("http://169.254.169.254/latest/", ("metadata", "169.254.0.0/16")),
        ("http://0xa9fea9fe/", ("metadata", "169.254.0.0/16")),
        ("http://2852039166/", ("metadata", "169.254.0.0/16")),
        ("http://0251.0376.0251.0376/", ("metadata", "169.254.0.0/16")),
        ("http://169.254.43518/", ("metadata", "169.254.0.0/16")),
        ("http://[::ffff:169.254.169.254]/", ("metadata", "169.254.0.0/16")),
        ("http://[64:ff9b::a9fe:a9fe]/", ("metadata", "169.254.0.0/16")),
        ("http://[fd00:ec2::254]/", ("metadata", "fd00:ec2::254")),
        ("http://[fe80::1]/", ("metadata", "fe80::/10")),
        ("http://METADATA.google.internal./", ("metadata", "metadata.google.internal")),
        ("http://100.100.100.200/", ("metadata", "100.100.100.200")),
        ("http://１６９．２５４．１６９．２５４/", ("metadata", "169.254.0.0/16")),
        ("http://127.0.0.2:8772/", ("private", "127.0.0.0/8")),
        ("http://0.0.0.0:8080/", ("private", "127.0.0.0/8")),
        ("http://[::1]/", ("private", "127.0.0.0/8")),
        ("http://localhost:3000/", ("private", "127.0.0.0/8")),
        ("http://app.localhost/", ("private", "127.0.0.0/8")),
        ("http://10.1.2.3/", ("private", "10.0.0.0/8")),
        ("http://172.31.255.1/", ("private", "172.16.0.0/12")),
        ("http://192.168.1.1/", ("private", "192.168.0.0/16")),
        ("http://100.64.0.1/", ("private", "100.64.0.0/10")),
        ("http://[fd12:3456::1]/", ("private", "fc00::/7")),
        ("http://172.32.0.1/", None),
        ("http://8.8.8.8/", None),
        ("http://news.test/", None),
        ("http://metadata.example.org/", None),
    ],
)
def test_every_spelling_lands_in_its_zone(url: str, zone: tuple[str, str] | None) -> None:
    assert _zone(url) == zone


def _guard(*rules: dict, **kwargs) -> Guard:
    mine = {"id": "MINE", "category": "boundary", "risk_level": "high", "description": "ours"}
    mine["rules"] = list(rules)
    policies = PolicySet.from_dict({"version": 1, "policies": [mine]}) if rules else None
    return Guard(policies, goal=GOAL, **kwargs)


def _decide(guard: Guard, url: str, page: str = "http://news.test/", kind: str = "goto") -> tuple[str, tuple]:
    step = guard.make_step(Action(kind, method="test", value=url), Observation(url=page, tab="t1"))
    verdict = guard.check(step)
    return verdict.decision.value, tuple(verdict.violated_policy_ids)


def test_metadata_is_refused_unless_a_policy_names_it() -> None:
    assert _decide(_guard(), "http://169.254.169.254/latest/") == ("block", ("PW-ADDRESSES",))
    assert _decide(_guard(), "http://169.254.169.254/", kind="request")[0] == "block"
    wide = _guard({"internal_addresses": {"allow": ["0.0.0.0/0", "::/0", "*"]}})
    assert _decide(wide, "http://169.254.169.254/")[0] == "block"
    assert _decide(wide, "http://10.0.0.1/")[0] == "allow"  # the wide range allows private ones
    for named in ("169.254.169.254", "169.254.0.0/16", "169.254.169.0/24"):
        assert _decide(_guard({"internal_addresses": {"allow": [named]}}), "http://0xa9fea9fe/")[0] == "allow"
    assert (
        _decide(_guard({"domain_allow": ["news.test", "169.254.169.254"]}), "http://169.254.169.254/")[0]
        == "allow"
    )
    named_host = _guard({"internal_addresses": {"allow": ["metadata.google.internal"]}})
    assert _decide(named_host, "http://metadata.google.internal/")[0] == "allow"
    assert _decide(named_host, "http://169.254.169.254/")[0] == "block"


def test_private_ranges_ask_from_a_public_page_and_open_for_the_session() -> None:
    guard = _guard()
    assert _decide(guard, "http://10.0.0.5/")[0] == "ask"
    first = _guard()
    assert _decide(first, "http://127.0.0.1:3000/", page="about:blank")[0] == "allow"  # its first page
    step = first.make_step(
        Action("goto", method="t", value="http://127.0.0.1:3000/"), Observation(url="about:blank")
    )
    first.commit(step, first.check(step), ran=True)
    assert "127.0.0.0/8" in first.session.internal.blocks
    assert _decide(first, "http://localhost:3000/api", page="http://news.test/")[0] == "allow"
    assert _decide(first, "http://192.168.0.1/", page="http://news.test/")[0] == "ask"  # another range
    on_it = _guard()
    assert _decide(on_it, "http://10.0.0.6/", page="http://10.0.0.5/")[0] == "allow"  # a page inside it
    allowed = _guard({"internal_addresses": {"allow": ["10.0.0.0/8", "*.corp.example"]}})
    assert _decide(allowed, "http://10.200.0.1/")[0] == "allow"
    assert _decide(allowed, "http://wiki.corp.example/")[0] == "allow"
    assert _decide(_guard(baseline=False), "http://169.254.169.254/")[0] == "allow"


def test_egress_rules_judge_a_page_own_requests_and_resolved_addresses() -> None:
    access = InternalAccess()
    rules = EgressRules.from_policies(baseline_policies(), access=lambda: access)
    assert rules.judge("http://[::ffff:a9fe:a9fe]/", navigation=False).rule == "internal_address"
    assert rules.judge("http://10.0.0.7/api", navigation=False).rule == "private_address"
    assert rules.judge("http://news.test/", navigation=True) is None
    import ipaddress

    rebind = rules.judge_address("rebind.test", ipaddress.ip_address("10.9.8.7"), action="request", url="x")
    assert rebind is not None and rebind.rule == "private_address" and "10.9.8.7" in rebind.reason
    access.open("10.0.0.0/8")
    assert rules.judge("http://10.0.0.7/api", navigation=False) is None
    meta = rules.judge_address(
        "meta.test", ipaddress.ip_address("169.254.169.254"), action="request", url="x"
    )
    assert meta is not None
    standalone = EgressRules.from_policies(baseline_policies())  # no session: the page's origin decides
    assert standalone.judge("http://10.0.0.7/", navigation=True) is None
    assert standalone.judge("http://10.0.0.7/", navigation=False, initiator="http://news.test/") is not None
    assert standalone.judge("http://10.0.0.7/", navigation=False, initiator="http://10.0.0.1/") is None
    assert EgressRules.from_policies([]).judge("http://169.254.169.254/", navigation=True) is None


def test_credentials_in_urls_are_refused_and_redacted() -> None:
    guard = _guard()
    assert _decide(guard, "http://admin:pw-9f8e7d6c@news.test/")[0] == "block"
    assert _decide(guard, "https://news.test@evil.test/login")[0] == "block"
    assert _decide(guard, "http://news.test/@someone")[0] == "allow"
    allowed = _guard({"url_credentials": {"allow": ["*.news.test", "news.test"]}})
    assert _decide(allowed, "http://admin:pw-9f8e7d6c@news.test/")[0] == "allow"
    assert redact_credentials("goto http://admin:pw-9f8e7d6c@news.test/x") == (
        "goto http://[REDACTED:userinfo]@news.test/x"
    )
    assert redact_credentials("mail a@b.test") == "mail a@b.test"
    assert "pw-9f8e7d6c" not in guard.secrets.redact("the password pw-9f8e7d6c")


@pytest.mark.parametrize(
    "host",
    ["nevvs.test", "nws.test", "newss.test", "nwes.test", "nrws.test", "news.com", "news.test.evil.com",
     "news-test.com", "news-login.test", "xn--nws-rdd.test", "n\u0435ws.test", "ｎｅｗｓ.com"],
)  # fmt: skip
def test_lookalikes_of_a_named_host_are_deceptive(host: str) -> None:
    found = deception(parse_url(f"http://{host}/").host, goal_hosts(GOAL))
    assert found is not None and found.real == "news.test"
    guard = _guard()
    decision, ids = _decide(guard, f"http://{host}/")
    assert (decision, ids) == ("block", ("PW-ADDRESSES",))


@pytest.mark.parametrize(
    "host",
    ["news.test", "www.news.test", "other.test", "newspaper.test", "wikimedia.org", "xn--mnchen-3ya.de",
     "münchen.de", "日本語.jp", "bücher.test", "сайт.рф", "αυτο.gr", "user.github.io"],
)  # fmt: skip
def test_ordinary_hosts_are_not(host: str) -> None:
    refs = (*goal_hosts(GOAL), "wikipedia.org", "github.com")
    parsed = parse_url(f"http://{host}/").host
    assert deception(parsed, refs) is None and standalone_deception(parsed) is None


def test_mixed_scripts_deceive_by_themselves() -> None:
    assert standalone_deception(parse_url("http://p\u0430ypal.example/").host)
    assert standalone_deception(parse_url("http://\u0430\u0440\u0440\u04cf\u0435.com/").host)
    assert _decide(_guard(), "http://p\u0430ypal.example/")[0] == "block"
    assert (
        _decide(_guard({"lookalike_hosts": {"allow": ["*.example"]}}), "http://p\u0430ypal.example/")[0]
        == "allow"
    )


def test_bad_allow_entries_are_clear_errors() -> None:
    with pytest.raises(PolicyError, match="CIDR"):
        _guard({"internal_addresses": {"allow": ["10.0.0.0/33x"]}})
