"""Navigation grants: a page-initiated cross-site navigation after an allowed click is
refused, the guard's trace and events get it, and the agent hears of it on its next call."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pagewarden import ActionBlocked, Guard, launch
from pagewarden.guard import GuardEvent
from pagewarden.proxy._grants import NetworkSession
from pagewarden.sync_api import launch as launch_sync
from pagewarden.testing import LocalSite

pytestmark = pytest.mark.browser


@pytest.mark.parametrize(("button", "url"), [
    ("#jsnav", "http://evil.test/landing"),      # location = … in the click handler
    ("#submitjs", "http://evil.test/form"),      # form.submit() from a type=button
])  # fmt: skip
async def test_page_initiated_cross_site_navigation_is_refused_and_reported(
    netsite: LocalSite, tmp_path: Path, button: str, url: str
) -> None:
    guard = Guard(trace=tmp_path / "trace.jsonl", goal="Save the draft of the issue")
    events: list[GuardEvent] = []
    guard.subscribe(events.append)
    async with launch(guard, proxy=True, host_map={"*.test": netsite.port}) as page:
        await page.goto("http://site.test/grants.html")
        await page.click(button)  # allowed: a same-site button; its handler leaves by itself
        await page.wait_for_url(url)
        assert "PW-NETWORK" in await page.content()
        with pytest.raises(ActionBlocked) as blocked:
            await page.go_back()
        assert list(blocked.value.verdict.violated_policy_ids) == ["PW-NETWORK"]
        assert "evil.test" in blocked.value.verdict.explanation
        await page.go_back()  # heard once: the next call runs
        assert page.url == "http://site.test/grants.html"
    assert netsite.requests_to("evil.test") == []
    network = [e.data for e in events if e.kind == "network"]
    assert [(d["rule"], d["url"]) for d in network if d["host"].endswith(".test")] == [("grant", url)]
    assert all(d["rule"] == "no_session" for d in network if not d["host"].endswith(".test"))
    lines = [json.loads(line) for line in (tmp_path / "trace.jsonl").read_text().splitlines()]
    refused = [line for line in lines if line["verdict"]["decision"] == "block"]
    assert refused and refused[0]["verdict"]["findings"][0]["rule"] == "network:grant"


async def test_window_open_from_a_click_handler_is_refused(netsite: LocalSite) -> None:
    async with launch(proxy=True, host_map={"*.test": netsite.port}) as page:
        await page.goto("http://site.test/grants.html")
        async with page.context.expect_page() as opened:
            await page.click("#open")
        popup = await opened.value
        await popup.wait_for_load_state()
        assert "Blocked by pagewarden" in await popup.title()
        with pytest.raises(ActionBlocked):
            await page.click("#same")
    assert netsite.requests_to("evil.test") == []


async def test_judged_navigations_and_same_site_scripts_pass(netsite: LocalSite) -> None:
    async with launch(proxy=True, host_map={"*.test": netsite.port}) as page:
        await page.goto("http://site.test/grants.html")
        await page.click("#same")  # the page's own script, same site
        await page.wait_for_url("http://site.test/plain.html")
        await page.go_back()
        await page.click("#other")  # a judged link to another site: granted
        await page.wait_for_url("http://other.test/")
        assert await page.content() and "reached" in await page.content()
        await page.goto("http://site.test/grants.html")  # back to a visited site
    assert [r.path for r in netsite.requests_to("other.test")][:1] == ["/"]


def test_grants_under_the_sync_api(netsite: LocalSite) -> None:
    with launch_sync(proxy=True, host_map={"*.test": netsite.port}) as page:
        page.goto("http://site.test/grants.html")
        page.click("#jsnav")
        page.wait_for_url("http://evil.test/landing")
        with pytest.raises(ActionBlocked):
            page.click("#same")
        page.go_back()
        page.click("#other")
        page.wait_for_url("http://other.test/")
    assert netsite.requests_to("evil.test") == []


def test_monitor_mode_reports_without_refusing() -> None:
    guard = Guard(mode="monitor")
    session = NetworkSession(guard)
    assert not session.enforce
    assert session.navigation_allowed("http://evil.test/") is False
