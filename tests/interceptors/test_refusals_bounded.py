"""Each layer keeps a bounded list of its latest refusals: a page that keeps requesting a refused
host for hours (a tracking pixel on a timer) does not grow the agent's memory. Every refusal is
still a `network` event (and a log line), which keep them all."""

from __future__ import annotations

from pagewarden import Guard
from pagewarden.interceptors._gate import NavigationGate
from pagewarden.proxy._egress import EgressPolicy
from pagewarden.rules._egress import REFUSALS_KEPT, Refusal

from .test_gate_hops import POLICIES


def _refusal(i: int) -> Refusal:
    url = f"http://evil.test/pixel?n={i}"
    return Refusal("request", url, "evil.test", "domain_allow", "T-0", "not allowed", "GET")


def test_the_gate_keeps_the_latest_refusals_and_reports_each() -> None:
    guard = Guard(POLICIES, goal="Use the app.")
    events: list[object] = []
    guard.events.subscribe(events.append)
    gate = NavigationGate.for_guard(guard)
    assert gate is not None
    total = REFUSALS_KEPT + 100
    for i in range(total):
        gate.refused(_refusal(i))
    assert len(gate.refusals) == REFUSALS_KEPT
    assert gate.refusals[-1].url.endswith(f"n={total - 1}")
    assert gate.refusals[0].url.endswith(f"n={total - REFUSALS_KEPT}")
    assert len(events) == total  # every one of them was reported as a network event


def test_the_proxy_keeps_the_latest_refusals_and_hands_each_to_its_sinks() -> None:
    seen: list[Refusal] = []
    egress = EgressPolicy([POLICIES], on_refusal=seen.append)
    total = REFUSALS_KEPT + 100
    for i in range(total):
        egress.report(_refusal(i))
    assert len(egress.refusals) == REFUSALS_KEPT
    assert egress.refusals[-1].url.endswith(f"n={total - 1}")
    assert len(seen) == total
