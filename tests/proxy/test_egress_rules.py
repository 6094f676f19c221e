"""`EgressRules` without a proxy: the policies' URL and domain rules, judged per request."""

from __future__ import annotations

from pagewarden.proxy import NETWORK_POLICY, EgressRules
from tests.proxy.conftest import policies


def test_domain_deny_refuses_every_request_to_the_host() -> None:
    rules = EgressRules.from_policies(policies({"domain_deny": ["evil.test", "*.bad.test"]}))
    refusal = rules.judge("http://evil.test/x.png", navigation=False)
    assert refusal is not None and refusal.policy_id == "P-NET" and refusal.rule == "domain_deny"
    assert rules.judge("http://a.bad.test/", navigation=True) is not None
    assert rules.judge("http://site.test/", navigation=True) is None
    # browser-like parsing: userinfo, case, trailing dot and IDN spellings do not disguise the host
    assert rules.judge("http://site.test@EVIL.test./", navigation=True) is not None
    assert rules.judge("http://ｅｖｉｌ.test/", navigation=True) is not None


def test_every_domain_allow_rule_must_hold() -> None:
    rules = EgressRules.from_policies(
        [
            *policies({"domain_allow": ["site.test", "cdn.test"]}),
            *policies({"domain_allow": ["site.test"]}, pid="P2"),
        ]
    )
    assert rules.judge("http://site.test/a", navigation=False) is None
    refusal = rules.judge("http://cdn.test/a.js", navigation=False)
    assert refusal is not None and refusal.policy_id == "P2" and refusal.rule == "domain_allow"
    assert rules.judge("http://other.test/", navigation=True).policy_id == "P-NET"


def test_url_rules_judge_navigations_not_subresources() -> None:
    rules = EgressRules.from_policies(policies({"url_deny": ["/admin"]}))
    refusal = rules.judge("http://site.test/admin/users", navigation=True)
    assert refusal is not None and refusal.rule == "url_deny"
    assert rules.judge("http://site.test/admin/logo.png", navigation=False) is None
    allow = EgressRules.from_policies(policies({"url_allow": ["http://site.test/docs/*"]}))
    assert allow.judge("http://site.test/docs/a", navigation=True) is None
    assert allow.judge("http://site.test/blog", navigation=True).rule == "url_allow"


def test_strict_allows_only_the_allow_list() -> None:
    nothing = EgressRules.from_policies(policies({"domain_deny": ["evil.test"]}), strict=True)
    refusal = nothing.judge("http://site.test/", navigation=True)
    assert refusal is not None and refusal.rule == "strict" and refusal.policy_id == NETWORK_POLICY
    listed = EgressRules.from_policies(
        policies({"url_allow": ["http://docs.test/guide"]}), strict=True, allow_hosts=["*.cdn.test"]
    )
    assert listed.judge("http://docs.test/guide", navigation=True) is None
    assert listed.judge("http://img.cdn.test/a.png", navigation=False) is None
    assert listed.judge("http://cdn.test/a.png", navigation=False) is not None
    assert listed.judge("http://site.test/a.png", navigation=False) is not None


def test_requests_without_a_valid_host_are_refused() -> None:
    rules = EgressRules.from_policies(None)
    assert rules.judge("http://site.test/", navigation=True) is None
    for url in ("http://exa mple.test/", "http://a%00b.test/", "data:text/html,x"):
        refusal = rules.judge(url, navigation=False)
        assert refusal is not None and refusal.rule == "no_host", url


def test_deny_hosts_option() -> None:
    rules = EgressRules.from_policies(None, deny_hosts=["*.googleapis.com"])
    assert rules.judge("https://update.googleapis.com/x", navigation=False).rule == "deny_hosts"
