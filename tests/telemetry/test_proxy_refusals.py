"""The network layer's refusals in telemetry: under ``launch(proxy=True)`` a page that loads an
image from a host the policies refuse gets it refused by the proxy (``layer: network``), and
the refusal is a span event of the agent's next step, counted in ``pagewarden.network.refusals``;
refusals no step followed go out in a ``pagewarden.network`` span when the guard closes. Real
Chromium and mitmproxy."""

from __future__ import annotations

import asyncio

from pagewarden import Guard, PolicySet, launch
from pagewarden.telemetry import METRIC_REFUSALS, SPAN_NETWORK, SPAN_REFUSAL_EVENT, SPAN_STEP
from pagewarden.testing import LocalSite, Response

from ._otel import Memory

POLICIES = PolicySet.from_dict(
    {
        "version": 1,
        "policies": [
            {"id": "ORG-NET", "category": "boundary", "risk_level": "high",
             "description": "Only the app.", "rules": [{"domain_allow": ["app.test"]}]},
        ],
    }
)  # fmt: skip
PAGE = """<!doctype html><title>Tracked</title><label>Search <input id="q"></label>
<button id="late" onclick="setTimeout(() => { new Image().src = 'http://tracker.test/l.png'; }, 50)">
Later</button>
<img src="http://tracker.test/pixel.png?u=1" alt="">"""


def _refusals(memory: Memory, name: str) -> list[dict]:
    return [
        dict(e.attributes or {})
        for s in memory.finished(name)
        for e in s.events
        if e.name == SPAN_REFUSAL_EVENT
    ]


async def test_proxy_refusals_are_span_events_and_counted(site: LocalSite) -> None:
    site.route("app.test", "/otel/tracked.html", lambda _r: Response(PAGE))
    memory = Memory.new()
    guard = Guard(POLICIES, goal="Search the app.", telemetry=memory.pair)
    async with launch(guard, proxy=True, host_map={"*.test": site.port}) as page:
        await page.goto("http://app.test/otel/tracked.html")
        await page.fill("#q", "runner")  # the pixel's refusal rides on this step (or the goto's)
        await page.click("#late")  # the page loads another one after the action: no step follows
        for _ in range(100):  # the late pixel's refusal (Chromium's own background requests may come first)
            if any(a.get("pagewarden.network.host") == "tracker.test" for _, a in guard.telemetry._refusals):
                break
            await asyncio.sleep(0.1)
    guard.close()
    on_steps = _refusals(memory, SPAN_STEP)
    assert any(r["pagewarden.network.layer"] == "network" and r["pagewarden.network.host"] == "tracker.test"
               for r in on_steps), on_steps  # fmt: skip
    leftover = _refusals(memory, SPAN_NETWORK)
    assert "tracker.test" in [r["pagewarden.network.host"] for r in leftover]  # (and Chromium's own, if any)
    tracker = [r for r in on_steps + leftover if r["pagewarden.network.host"] == "tracker.test"]
    assert all(r["pagewarden.network.policy_id"] == "ORG-NET" for r in tracker), on_steps + leftover
    counted = memory.counts(METRIC_REFUSALS, "pagewarden.network.layer")
    assert counted.get("network", 0) == len(on_steps) + len(leftover)
