"""Navigation grants: a page-initiated cross-site navigation after an allowed click is
refused, the guard's trace and events get it, and the agent hears of it on its next call."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pagewarden import Guard, launch
from pagewarden.guard import GuardEvent
from pagewarden.proxy._grants import NetworkSession
from pagewarden.sync_api import launch as launch_sync
from pagewarden.testing import LocalSite
from tests.heard import heard, heard_sync, refused_url, refused_url_async

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
        before = await page.unwrap().evaluate("history.length")
        # allowed: a same-site button; its handler leaves by itself. The agent hears of it: the
        # click fails with it (it came while the click ran), or the next call does not run
        async def next_call() -> None:
            assert await refused_url_async(page, url)
            await page.hover("body")

        blocked = await heard(lambda: page.click(button), next_call)
        assert list(blocked.verdict.violated_policy_ids) == ["PW-NETWORK"]
        assert "evil.test" in blocked.verdict.explanation
        await page.hover("body")  # heard once: the next call runs
        # the tab stayed where it was: no refusal page, the refused URL not in its history
        assert page.url == "http://site.test/grants.html" and await page.title() != "Blocked by pagewarden"
        assert await page.unwrap().evaluate("history.length") == before
    assert netsite.requests_to("evil.test") == []
    network = [e.data for e in events if e.kind == "network"]
    assert [(d["rule"], d["url"]) for d in network if d["host"].endswith(".test")] == [("grant", url)]
    assert all(d["rule"] == "no_session" for d in network if not d["host"].endswith(".test"))
    lines = [json.loads(line) for line in (tmp_path / "trace.jsonl").read_text().splitlines()]
    refused = [line for line in lines if line["verdict"]["decision"] == "block"]
    assert refused and refused[0]["verdict"]["findings"][0]["rule"] == "network:grant"


async def test_window_open_from_a_click_handler_is_refused(netsite: LocalSite) -> None:
    """The popup's first request is answered 204: no tab ever shows the refused page or URL (as
    in plain Playwright for a 204, no popup page appears), and the agent hears of it."""
    async with launch(proxy=True, host_map={"*.test": netsite.port}) as page:
        await page.goto("http://site.test/grants.html")

        async def next_call() -> None:
            assert await refused_url_async(page, "http://evil.test/opened")
            await page.click("#same")

        blocked = await heard(lambda: page.click("#open"), next_call)
        assert "evil.test" in blocked.verdict.explanation
        assert [p.url for p in page.context.pages if "evil.test" in p.url] == []
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
        heard_sync(lambda: page.click("#jsnav"),
                   lambda: (refused_url(page, "http://evil.test/landing"), page.hover("body")))  # fmt: skip
        assert page.url == "http://site.test/grants.html"
        page.click("#other")
        page.wait_for_url("http://other.test/")
    assert netsite.requests_to("evil.test") == []


def test_monitor_mode_reports_without_refusing() -> None:
    guard = Guard(mode="monitor")
    session = NetworkSession(guard)
    assert not session.enforce
    assert session.navigation_allowed("http://evil.test/") is False


TAB_PAGE = """<!doctype html><title>Tab</title>
<a id="held" href="http://other.test/landing" onclick="event.preventDefault()">Open the other site</a>
<button id="leave" onclick="location.href='http://other.test/landing'">Refresh</button>"""


async def _after_refusal(tab: Any, count: int) -> None:
    """The agent's next call after the `count`-th refusal (the tab stayed where it was)."""
    assert await refused_url_async(tab, "http://other.test/landing", count)
    await tab.hover("body")


async def test_a_grant_of_one_tab_is_no_use_to_another(netsite: LocalSite) -> None:
    """Grants are per tab: tab A's judged link to other.test (which its page cancels, so the
    grant is still live) and tab A's visit there do not let tab B's own script go there."""
    from pagewarden.testing import Response

    netsite.route("site.test", "/tab.html", lambda r: Response(TAB_PAGE))
    async with launch(proxy=True, host_map={"*.test": netsite.port}) as tab_a:
        await tab_a.goto("http://site.test/tab.html")
        tab_b = await tab_a.context.new_page()
        await tab_b.goto("http://site.test/tab.html")
        await tab_a.click("#held")  # judged: a link to other.test → a live grant for tab A
        # an allowed same-site button; its handler leaves by itself: the click fails with the
        # refusal, or the next call does
        blocked = await heard(lambda: tab_b.click("#leave"), lambda: _after_refusal(tab_b, 1))
        assert "other.test" in blocked.verdict.explanation
        assert tab_b.url == "http://site.test/tab.html"
        await tab_a.goto("http://other.test/")  # tab A goes there (judged)
        # still refused in tab B: tab A's reached sites are its own
        await heard(lambda: tab_b.click("#leave"), lambda: _after_refusal(tab_b, 2))
        assert tab_b.url == "http://site.test/tab.html"
    landing = [r for r in netsite.requests_to("other.test") if r.path == "/landing"]
    assert landing == []  # neither of tab B's attempts reached the server
    assert [r.path for r in netsite.requests_to("other.test")][:1] == ["/"]  # tab A's judged goto


async def test_the_same_tab_uses_its_own_grant(netsite: LocalSite) -> None:
    from pagewarden.testing import Response

    netsite.route("site.test", "/tab.html", lambda r: Response(TAB_PAGE))
    async with launch(proxy=True, host_map={"*.test": netsite.port}) as page:
        await page.goto("http://site.test/tab.html")
        await page.click("#held")  # a live grant for this tab
        await page.click("#leave")  # the same tab's script goes there within the grant
        await page.wait_for_url("http://other.test/landing")
        assert "reached" in await page.content()


def test_grants_and_reached_sites_are_kept_per_tab() -> None:
    from pagewarden.guard import Decision, Verdict
    from pagewarden.steps import Action, ElementFacts, Navigation, Observation, Prediction, Step

    session = NetworkSession(Guard())
    session.tagged("t1", "http://site.test/")
    session.tagged("t2", "http://site.test/")
    link = ElementFacts(tag="a", href="http://other.test/x")
    here = Observation("http://site.test/", tab="t1", target=link)
    step = Step(Action("goto", value="http://other.test/x"), here)
    assert session.grant(step, Verdict(Decision.ALLOW)) == ["other.test"]
    assert session.navigation_allowed("http://site.test/y", "t2")  # its own site
    assert not session.navigation_allowed("http://other.test/x", "t2")
    assert not session.navigation_allowed("http://other.test/x", None)  # untagged pages neither
    assert session.navigation_allowed("http://other.test/x", "t1")
    assert not session.navigation_allowed("http://other.test/", "t2")  # reached by t1 only
    blank = Step(Action("click"), Observation("http://site.test/", tab="t2",
                                              target=ElementFacts(tag="a", href="http://third.test/",
                                                                  link_target="_blank")))  # fmt: skip
    opens = Prediction(navigation=Navigation("http://third.test/", via="link", new_tab=True))
    session.grant(blank, Verdict(Decision.ALLOW, prediction=opens))  # untagged pages get it too
    assert session.navigation_allowed("http://third.test/", None)
