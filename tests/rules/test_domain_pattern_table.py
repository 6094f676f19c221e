"""One table of domain patterns × hosts, tested against every layer that reads a pattern: the
rules tier's matcher (`host_matches`), the egress rules both layers share (the browser layer's
navigation gate without a proxy, the network layer's `EgressPolicy` with ``proxy=True``), the
gate's route pattern (a superset of what it refuses), and the network layer's navigation
grants (a page's navigation to an allow-listed host passes, as in the browser layer). A pattern
means one thing everywhere (issue 29)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from mitmproxy.test import tflow

from pagewarden import Guard
from pagewarden._url import host_matches
from pagewarden.interceptors._gate import NavigationGate, navigation_pattern
from pagewarden.policies import PolicySet
from pagewarden.proxy import EgressPolicy
from pagewarden.proxy._grants import NavigationGrants, NetworkSession
from pagewarden.rules._egress import EgressRules

HOSTS = ("example.test", "www.example.test", "a.b.example.test", "EXAMPLE.Test", "badexample.test",
         "example.test.evil.test", "evil.test", "wwwexample.test")  # fmt: skip
COVERS = {
    "example.test": {"example.test", "EXAMPLE.Test"},
    ".example.test": {"example.test", "EXAMPLE.Test", "www.example.test", "a.b.example.test"},
    "*.example.test": {"www.example.test", "a.b.example.test"},
    "*": set(HOSTS),
    "https://www.example.test/any/path": {"www.example.test"},
    ".Example.TEST": {"example.test", "EXAMPLE.Test", "www.example.test", "a.b.example.test"},
}
TABLE = [(p, h, h in covered) for p, covered in COVERS.items() for h in HOSTS]


def _policies(pattern: str) -> PolicySet:
    return PolicySet.from_dict({"version": 1, "policies": [{
        "id": "T-DOM", "category": "boundary", "risk_level": "high", "description": "table",
        "rules": [{"domain_allow": [pattern]}],
    }]})  # fmt: skip


def _navigation(url: str, *, frame: bool = False) -> SimpleNamespace:
    parent = object() if frame else None
    return SimpleNamespace(
        url=url, method="GET", is_navigation_request=lambda: True,
        frame=SimpleNamespace(parent_frame=parent),
    )  # fmt: skip


def _browser_layer(pattern: str, host: str) -> bool:
    gate = NavigationGate.for_guard(Guard(_policies(pattern)))
    if gate is None:  # no rule can refuse anything
        return True
    return gate.judge(_navigation(f"http://{host}/page")) is None


def _network_layer(pattern: str, host: str) -> bool:
    egress = EgressPolicy(_policies(pattern))
    flow = tflow.tflow()
    flow.request.url = f"http://{host.lower()}/page"
    flow.request.headers["sec-fetch-mode"] = "navigate"
    flow.request.headers["sec-fetch-dest"] = "document"
    egress.request(flow)
    if flow.response is not None:
        return False
    # a navigation the page starts by itself, in a tab that reached no site yet
    session = NetworkSession(Guard(_policies(pattern)))
    grants = NavigationGrants({session.token: session}, egress)
    flow.metadata["pagewarden_session"] = session.token
    grants.request(flow)
    return flow.response is None


@pytest.mark.parametrize(("pattern", "host", "covered"), TABLE)
def test_every_layer_agrees_on_what_a_pattern_covers(pattern: str, host: str, covered: bool) -> None:
    assert host_matches(host, pattern) is covered
    assert _browser_layer(pattern, host) is covered
    # (``*`` names no host: there the network layer still wants a judged action for a page's own
    # navigation to another site, its grants, which the browser layer has no equivalent of)
    assert _network_layer(pattern, host) is (covered and pattern != "*")
    rules = EgressRules.from_policies(_policies(pattern))
    assert rules.allow_listed(host) is (covered and pattern != "*")
    route = navigation_pattern(rules)
    if not covered:  # the gate's route pattern sees every URL the rules refuse
        assert route is not None and route.search(f"http://{host.lower()}/page")


def test_a_frame_refusal_is_marked_in_both_layers() -> None:
    gate = NavigationGate.for_guard(Guard(_policies(".example.test")))
    assert gate is not None
    assert gate.judge(_navigation("http://evil.test/ad", frame=True)).subframe is True
    assert gate.judge(_navigation("http://evil.test/ad")).subframe is False
    egress = EgressPolicy(_policies(".example.test"))
    refusals = []
    egress.sinks.append(refusals.append)
    for dest in ("iframe", "document"):
        flow = tflow.tflow()
        flow.request.url = "http://evil.test/ad"
        flow.request.headers["sec-fetch-mode"] = "navigate"
        flow.request.headers["sec-fetch-dest"] = dest
        egress.request(flow)
    assert [r.subframe for r in refusals] == [True, False]


def _embed_policies(pattern: str) -> PolicySet:
    """A site (``site.test``) whose pages may load from `pattern` (``subresources``)."""
    return PolicySet.from_dict({"version": 1, "policies": [{
        "id": "T-EMBED", "category": "boundary", "risk_level": "high", "description": "table",
        "rules": [{"domain_allow": {"patterns": ["site.test"], "subresources": [pattern]}}],
    }]})  # fmt: skip


def _request(url: str) -> SimpleNamespace:
    return SimpleNamespace(
        url=url, method="GET", is_navigation_request=lambda: False, frame=SimpleNamespace(parent_frame=None)
    )  # fmt: skip


def _proxy_passes(pattern: str, host: str, dest: str | None) -> bool:
    """Whether the network layer lets a request to `host` through: a subresource (`dest` None)
    or a navigation labelled ``Sec-Fetch-Dest: dest`` ("" for plain HTTP: no label)."""
    egress = EgressPolicy(_embed_policies(pattern))
    flow = tflow.tflow()
    flow.request.url = f"https://{host.lower()}/x"
    if dest is not None:
        flow.request.headers["upgrade-insecure-requests"] = "1"
        flow.request.headers["accept"] = "text/html"
        if dest:
            flow.request.headers["sec-fetch-mode"] = "navigate"
            flow.request.headers["sec-fetch-dest"] = dest
    egress.request(flow)
    if flow.response is not None or dest is None:
        return flow.response is None
    session = NetworkSession(Guard(_embed_policies(pattern)))
    flow.metadata["pagewarden_session"] = session.token
    NavigationGrants({session.token: session}, egress).request(flow)
    return flow.response is None


@pytest.mark.parametrize(("pattern", "host", "covered"), [t for t in TABLE if t[0] != "*"])
def test_subresource_hosts_are_read_like_allowed_hosts_and_never_navigated_to(
    pattern: str, host: str, covered: bool
) -> None:
    """``domain_allow``'s ``subresources`` use the same matcher in every layer: a covered host
    serves subresources and frames inside a page, never a tab's document (issue 29)."""
    rules = EgressRules.from_policies(_embed_policies(pattern))
    url = f"https://{host.lower()}/x"
    assert (rules.judge(url, navigation=False) is None) is covered
    assert (rules.judge(url, navigation=True, frame=True) is None) is covered
    assert rules.judge(url, navigation=True) is not None  # a tab's document: never
    assert rules.allow_listed(host) is False
    assert rules.host_allowed(host) is covered  # CONNECT: the requests inside are judged one by one
    # the browser layer: subresources, a frame's document, a tab's document (a popup's first
    # request, whose frame cannot be told, counts as a tab's)
    gate = NavigationGate.for_guard(Guard(_embed_policies(pattern)))
    assert gate is not None
    assert (gate.judge(_request(url)) is None) is covered
    assert (gate.judge(_navigation(url, frame=True)) is None) is covered
    refusal = gate.judge(_navigation(url))
    assert refusal is not None and refusal.subframe is False
    assert gate.pattern.search(url)  # the route sees it: navigations there are judged
    # the network layer: a labelled frame passes, a tab's document or an unlabelled one does not
    assert _proxy_passes(pattern, host, None) is covered
    assert _proxy_passes(pattern, host, "iframe") is covered
    assert _proxy_passes(pattern, host, "document") is False
    assert _proxy_passes(pattern, host, "") is False


def test_subresource_hosts_pass_strict_egress_for_subresources_only() -> None:
    rules = EgressRules.from_policies(_embed_policies("cdn.test"), strict=True)
    assert rules.judge("https://cdn.test/app.js", navigation=False) is None
    assert rules.judge("wss://cdn.test/live", navigation=False, action="websocket") is None
    assert rules.judge("https://cdn.test/embed", navigation=True, frame=True) is None
    assert rules.judge("https://cdn.test/", navigation=True).rule == "domain_allow"
    assert rules.judge("https://other.test/app.js", navigation=False).rule == "domain_allow"


def test_a_denied_host_stays_denied_under_subresources() -> None:
    policies = PolicySet.from_dict({"version": 1, "policies": [{
        "id": "T-EMBED", "category": "boundary", "risk_level": "high", "description": "table",
        "rules": [{"domain_allow": {"patterns": ["site.test"], "subresources": [".cdn.test"]}},
                  {"domain_deny": ["bad.cdn.test"]}],
    }]})  # fmt: skip
    rules = EgressRules.from_policies(policies)
    assert rules.judge("https://img.cdn.test/a.png", navigation=False) is None
    assert rules.judge("https://bad.cdn.test/a.png", navigation=False).rule == "domain_deny"
    assert rules.judge("https://bad.cdn.test/f", navigation=True, frame=True).rule == "domain_deny"


def test_a_guard_adds_subresource_hosts_to_every_allow_list() -> None:
    policies = PolicySet.from_dict({"version": 1, "policies": [{
        "id": "T-EMBED", "category": "boundary", "risk_level": "high", "description": "table",
        "rules": [{"domain_allow": {"patterns": ["site.test"], "subresources": ["img.test"]}},
                  {"domain_allow": [".site.test", "cdn.test"]}, {"domain_deny": ["bad.test"]}],
    }]})  # fmt: skip
    guard = Guard(policies, subresource_hosts=["cdn.test", ".video.test"], baseline=False)
    allows = [r for p in guard.policies for r in p.rules if r.kind == "domain_allow"]
    assert [r.subresources for r in allows] == [
        ["img.test", "cdn.test", ".video.test"], ["cdn.test", ".video.test"]
    ]
    rules = EgressRules.from_policies(guard.policies)
    assert rules.judge("https://player.video.test/embed", navigation=True, frame=True) is None
    assert rules.judge("https://player.video.test/", navigation=True) is not None
    assert rules.judge("https://img.test/a.png", navigation=False) is not None  # the 2nd rule lacks it
    one = Guard(policies, subresource_hosts="cdn.test").policies.get("T-EMBED")  # a single host
    assert one is not None and one.rules[1].subresources == ["cdn.test"]  # type: ignore[union-attr]
    assert Guard(policies).policies.get("T-EMBED").rules[1].subresources == []  # type: ignore[union-attr]
    with pytest.raises(ValueError, match="subresource patterns must not be empty"):
        Guard(policies, subresource_hosts=[" "])
