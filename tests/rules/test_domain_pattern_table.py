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
