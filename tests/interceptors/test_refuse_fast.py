"""Issue 24: when the page itself goes to a refused host while the agent's action runs (a
script redirect as it loads, a same-site URL whose redirect chain ends on a refused host, a
script navigation from a click), the action fails at once with `ActionBlocked` naming the
refused destination, the chain from where the action started, the policy and the guidance —
instead of waiting for Playwright's timeout or failing with a bare ``net::ERR_ABORTED``. The
tab stays usable, the refusal is the action's step in the trace and a ``network`` event. A
refusal that comes after the action returned (a meta refresh after the load, a popup) is
raised, naming it, at the next call. Both layers: the navigation gate and
``launch(proxy=True)``. Real Chromium over 127.0.0.1.

"At once" is checked by cause, not by the clock: a refused action that failed says how it
ended in its findings (``evidence["ended"]``), and none may have ended by Playwright's timeout
(the wait the guard must cut short). Speed targets belong to the benchmarks."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest

from pagewarden import ActionBlocked, Guard, PolicySet, launch
from pagewarden.testing import LocalSite, Response
from pagewarden.trace import read_trace

pytestmark = pytest.mark.browser

POLICIES = PolicySet.from_dict({"version": 1, "policies": [{
    "id": "STAY", "category": "boundary", "risk_level": "high", "description": "Stay on the app",
    "rules": [{"domain_allow": [".app.test"]}],
}]})  # fmt: skip
#: Playwright's timeout in these tests: a hang would take this long
TIMEOUT_MS = 12_000


def _redirect(location: str) -> Response:
    return Response("", status=302, headers={"Location": location})


def _slow(request: Any) -> Response:
    time.sleep(0.5)
    return Response("x")


def _stalled(request: Any) -> Response:
    time.sleep(TIMEOUT_MS / 1000 + 2)
    return Response("x")


@pytest.fixture
def app() -> Any:
    site = LocalSite()
    page = "<title>{t}</title>{b}"
    site.route("app.test", "/script", lambda r: Response(page.format(
        t="s", b="<script>location.replace('http://evil.test/x')</script><img src='/slow'>")))
    site.route("app.test", "/slow", _slow)
    site.route("app.test", "/hop", lambda r: _redirect("http://www.app.test/hop2"))
    site.route("www.app.test", "/hop2", lambda r: _redirect("http://evil.test/y"))
    site.route("app.test", "/meta", lambda r: Response(page.format(
        t="m", b="<meta http-equiv='refresh' content='0;url=http://evil.test/m'>")))
    site.route("app.test", "/page", lambda r: Response(page.format(t="p", b=(
        "<button id=p onclick=\"window.open('http://evil.test/pop')\">Help</button>"
        "<button id=s onclick=\"setTimeout(() => location.href='http://evil.test/s', 50)\">Go</button>"))))
    site.route("app.test", "/ok", lambda r: Response("<title>ok</title><p>fine</p>"))
    # a popup the page opens as it loads; a download the page starts as it loads, and one a goto asks for
    site.route("app.test", "/popload", lambda r: Response(page.format(
        t="pl", b="<script>window.open('http://evil.test/popload')</script><img src='/slow'>")))
    site.route("app.test", "/dlload", lambda r: Response(page.format(
        t="dl", b="<script>location.href = '/file'</script><img src='/slow'>")))
    attachment = {"Content-Disposition": "attachment; filename=x.csv"}
    csv = Response("a,b\n1,2\n", content_type="text/csv", headers=attachment)
    site.route("app.test", "/file", lambda r: csv)
    # the page's own frames, refused as the page loads: on a refused host, redirected there, moved there
    site.route("app.test", "/framed", lambda r: Response(page.format(t="f", b=(
        "<iframe src='http://evil.test/embed'></iframe><iframe src='/frame-hop'></iframe>"
        "<iframe src='/frame-script'></iframe><button>Read</button>"))))
    site.route("app.test", "/frame-hop", lambda r: _redirect("http://evil.test/fhop"))
    site.route("app.test", "/frame-script", lambda r: Response(
        "<script>location.replace('http://evil.test/fscript')</script>"))
    # a page whose load takes longer than the tests' Playwright timeout (an image that never comes)
    site.route("app.test", "/never", lambda r: Response(page.format(t="n", b="<img src='/stalled'>")))
    site.route("app.test", "/stalled", _stalled)
    for path in ("/x", "/y", "/m", "/pop", "/s", "/popload", "/embed", "/fhop", "/fscript"):
        site.route("evil.test", path, lambda r: Response("<title>evil</title>"))
    with site:
        yield site


async def _heard(page: Any, action: Any) -> tuple[ActionBlocked, bool]:
    """The agent hears of the refusal: its action fails (True), or, where the action ran (the
    network layer shows its refusal page), its next call (False); well before a timeout."""
    try:
        await action()
    except ActionBlocked as during:
        blocked, now = during, True
    else:
        with pytest.raises(ActionBlocked) as caught:
            await page.hover("body")
        blocked, now = caught.value, False
    _not_timed_out(blocked)
    return blocked, now


def _not_timed_out(blocked: ActionBlocked) -> None:
    """The refusal ended the action, or the action failed by itself: it did not wait for
    Playwright's timeout to hear of it."""
    ended = {f.evidence.get("ended") for f in blocked.verdict.findings} - {None}
    assert ended <= {"refused", "failed"}, (ended, blocked.verdict.timings_ms, blocked.verdict.explanation)


def _named(blocked: ActionBlocked, now: bool, dest: str, start: str, hops: tuple[str, ...] = ()) -> None:
    finding = next(f for f in blocked.verdict.findings if f.rule.startswith("network:"))
    assert finding.policy_id == "STAY"
    assert finding.evidence["host"] == "evil.test"
    assert finding.evidence["url"] == dest
    assert "evil.test" in finding.message
    if now:
        assert finding.evidence["chain"] == [start, *hops, dest]  # from where the action started
        assert "during this action" in finding.message
    assert "leave the allowed sites" in blocked.verdict.guidance


@pytest.mark.parametrize("proxy", [False, True], ids=["gate", "proxy"])
async def test_a_refused_page_navigation_fails_the_action_at_once(
    app: LocalSite, proxy: bool, tmp_path: Path
) -> None:
    guard = Guard(POLICIES, trace=tmp_path / "trace.jsonl")
    events: list[Any] = []
    guard.subscribe(events.append)
    async with launch(guard, proxy=proxy, host_map={"*.test": app.port}) as page:
        page.set_default_timeout(TIMEOUT_MS)
        # a script that moves the page as it loads (the goto would wait for a load that never comes)
        blocked, now = await _heard(page, lambda: page.goto("http://app.test/script"))
        _named(blocked, now, "http://evil.test/x", "http://app.test/script")
        assert now  # the goto fails at once (gate: it would wait for a load that never comes)
        await page.goto("http://app.test/ok")  # the tab stays usable; nothing else to hear
        assert await page.title() == "ok"
        # a same-site URL whose redirect chain ends on a refused host
        blocked, now = await _heard(page, lambda: page.goto("http://app.test/hop"))
        _named(blocked, now, "http://evil.test/y", "http://app.test/hop", ("http://www.app.test/hop2",))
        assert now  # (gate: a bare net::ERR_ABORTED; proxy: the refusal page would load)
        await page.goto("http://app.test/page")
        # a click whose handler moves the page a moment later: the click itself fails when the
        # refusal comes while it runs, else the next call names it
        async def click_and_wait() -> None:
            await page.click("#s")
            await page.wait_for_timeout(500)

        blocked, now = await _heard(page, click_and_wait)
        if any(f.rule.startswith("network:") for f in blocked.verdict.findings):
            _named(blocked, now, "http://evil.test/s", "http://app.test/page")
        else:  # the reader's pin stopped it in the page first (destination pinning)
            assert "evil.test" in blocked.verdict.explanation
        await page.goto("http://app.test/ok")
        assert await page.title() == "ok"
    assert app.requests_to("evil.test") == []
    steps = list(read_trace(tmp_path / "trace.jsonl"))
    refused = [r for r in steps if any(f.rule.startswith("network:") for f in r.verdict.findings)]
    assert len(refused) >= 2  # each refusal is a step of the trace: the action's, or the next call's
    if not proxy:
        assert [r.step.action.value for r in refused][:2] == ["http://app.test/script", "http://app.test/hop"]
    network = [e.data for e in events if e.kind == "network" and e.data.get("host") == "evil.test"]
    assert {d["url"] for d in network} >= {"http://evil.test/x", "http://evil.test/y"}


@pytest.mark.parametrize("proxy", [False, True], ids=["gate", "proxy"])
async def test_a_refusal_after_the_action_returned_is_named_at_the_next_call(
    app: LocalSite, proxy: bool
) -> None:
    async with launch(Guard(POLICIES), proxy=proxy, host_map={"*.test": app.port}) as page:
        page.set_default_timeout(TIMEOUT_MS)
        for start, act, dest in (
            ("http://app.test/meta", None, "http://evil.test/m"),
            ("http://app.test/page", "#p", "http://evil.test/pop"),
        ):
            try:
                await page.goto(start)
                if act:
                    await page.click(act)
                await page.wait_for_timeout(600)
                with pytest.raises(ActionBlocked) as caught:
                    await page.hover("body")
                blocked = caught.value
            except ActionBlocked as during:  # it came while the action still ran: named there
                blocked = during
            urls = [f.evidence.get("url") for f in blocked.verdict.findings]
            assert dest in urls
            assert "evil.test" in blocked.verdict.explanation
            await page.goto("http://app.test/ok")
            assert await page.title() == "ok"
    assert app.requests_to("evil.test") == []


@pytest.mark.parametrize("proxy", [False, True], ids=["gate", "proxy"])
async def test_a_popup_the_page_opens_as_it_loads_fails_the_goto_at_once(app: LocalSite, proxy: bool) -> None:
    async with launch(Guard(POLICIES), proxy=proxy, host_map={"*.test": app.port}) as page:
        page.set_default_timeout(TIMEOUT_MS)
        blocked, now = await _heard(page, lambda: page.goto("http://app.test/popload"))
        assert now  # the goto was still waiting for the page's load: it fails with the popup's refusal
        _named(blocked, now, "http://evil.test/popload", "http://app.test/popload")
        await page.goto("http://app.test/ok")  # the tab stays usable; nothing else to hear
        assert await page.title() == "ok"
    assert app.requests_to("evil.test") == []


async def test_a_download_refused_while_the_action_runs_fails_it_at_once(app: LocalSite) -> None:
    """Through the proxy (which refuses downloads no judged download action led to): a goto that
    is a download, and a page that starts one as it loads."""
    async with launch(Guard(POLICIES), proxy=True, host_map={"*.test": app.port}) as page:
        page.set_default_timeout(TIMEOUT_MS)
        for start in ("http://app.test/file", "http://app.test/dlload"):
            blocked, now = await _heard(page, lambda start=start: page.goto(start))
            assert now, start
            finding = next(f for f in blocked.verdict.findings if f.rule == "network:download")
            assert finding.evidence["url"] == "http://app.test/file"
            assert finding.evidence["chain"][0] == start
            assert "download" in blocked.verdict.explanation
            # the page that starts a download as it loads never fires its load event (raw, the
            # goto waits for Playwright's timeout): only the refusal can have ended it
            ways = ("refused",) if start.endswith("dlload") else ("refused", "failed")
            assert finding.evidence["ended"] in ways
            await page.goto("http://app.test/ok")
            assert await page.title() == "ok"
    assert [r for r in app.requests_to("app.test") if r.path == "/file"]  # asked, never saved


@pytest.mark.parametrize("proxy", [False, True], ids=["gate", "proxy"])
async def test_a_refusal_recorded_while_the_action_was_judged_ends_it(app: LocalSite, proxy: bool) -> None:
    """The page leaves for a refused host while the agent's goto is being judged (here: while
    the user is asked to approve it), after the guard looked for refusals and before the goto
    was sent: the goto, whose page never finishes loading, still ends with that refusal, not
    at Playwright's timeout."""
    ask_goto = PolicySet.from_dict({"version": 1, "policies": [{
        "id": "ASK", "category": "consent", "risk_level": "medium", "description": "Ask before a goto",
        "rules": [{"consent": {"actions": ["goto"]}}],
    }]})  # fmt: skip
    events: list[Any] = []
    raw: list[Any] = []

    async def approver(verdict: Any, step: Any) -> bool:
        if step.action.value == "http://app.test/never":
            await raw[0].evaluate("location.href = 'http://evil.test/x'")  # the page leaves meanwhile
            for _ in range(100):
                if any(e.kind == "network" and e.data.get("host") == "evil.test" for e in events):
                    break
                await asyncio.sleep(0.05)
        return True

    guard = Guard(POLICIES.merged(ask_goto), approver=approver)
    guard.subscribe(events.append)
    async with launch(guard, proxy=proxy, host_map={"*.test": app.port}) as page:
        page.set_default_timeout(TIMEOUT_MS)
        raw.append(page.unwrap())
        await page.goto("http://app.test/ok")
        with pytest.raises(ActionBlocked) as caught:
            await page.goto("http://app.test/never")
        finding = next(f for f in caught.value.verdict.findings if f.rule.startswith("network:"))
        assert finding.evidence["url"] == "http://evil.test/x"
        assert finding.evidence["ended"] == "refused"  # not "timed out": the wait was cut short
    assert app.requests_to("evil.test") == []


@pytest.mark.parametrize("proxy", [False, True], ids=["gate", "proxy"])
async def test_a_frames_own_refusal_is_a_trace_line_and_an_event_never_raised(
    app: LocalSite, proxy: bool, tmp_path: Path
) -> None:
    """Issue 29: the page's own frames refused as it loads (on a refused host, redirected there,
    moved there by their script) are recorded — a ``network`` event and a ``refusal`` trace line
    saying it was not raised and why — and never stop the agent: the goto and the next actions
    run."""
    trace = tmp_path / "trace.jsonl"
    guard = Guard(POLICIES, trace=trace)
    events: list[Any] = []
    guard.subscribe(events.append)
    frames = {"http://evil.test/embed", "http://evil.test/fhop", "http://evil.test/fscript"}
    async with launch(guard, proxy=proxy, host_map={"*.test": app.port}) as page:
        page.set_default_timeout(TIMEOUT_MS)
        await page.goto("http://app.test/framed")
        for _ in range(50):  # the frames load after the page did
            if {e.data.get("url") for e in events if e.kind == "network"} >= frames:
                break
            await page.wait_for_timeout(100)
        await page.hover("button")
        await page.click("button")
        await page.goto("http://app.test/ok")
        assert await page.title() == "ok"
    assert app.requests_to("evil.test") == []
    assert {e.data.get("url") for e in events if e.kind == "network"} >= frames
    lines = [json.loads(line) for line in trace.read_text().splitlines()]
    refusals = [line for line in lines if line.get("kind") == "refusal"]
    assert {r["refusal"]["url"] for r in refusals} >= frames
    for r in refusals:
        assert r["raised"] is False and "frame" in r["why"] and "not raised" in r["why"]
        assert r["layer"] == ("network" if proxy else "gate")
        assert r["refusal"]["host"] == "evil.test" and r["refusal"]["policy_id"] == "STAY"
    steps = list(read_trace(trace))  # the steps' reader skips the refusal lines
    assert [r.step.action.kind for r in steps] == ["goto", "hover", "click", "goto"]
    assert all(r.verdict.allowed for r in steps)  # no false stop


# -- the sync API: the same race, driven inside Playwright's own loop ---------------------------


def _heard_sync(page: Any, action: Any) -> tuple[ActionBlocked, bool]:
    try:
        action()
    except ActionBlocked as during:
        blocked, now = during, True
    else:
        with pytest.raises(ActionBlocked) as caught:
            page.hover("body")
        blocked, now = caught.value, False
    _not_timed_out(blocked)
    return blocked, now


@pytest.mark.parametrize("proxy", [False, True], ids=["gate", "proxy"])
def test_sync_a_refused_page_navigation_fails_the_action_at_once(
    app: LocalSite, proxy: bool, tmp_path: Path
) -> None:
    from pagewarden.sync_api import launch as launch_sync

    guard = Guard(POLICIES, trace=tmp_path / "trace.jsonl")
    with launch_sync(guard, proxy=proxy, host_map={"*.test": app.port}) as page:
        page.set_default_timeout(TIMEOUT_MS)
        for start, dest in (
            ("http://app.test/script", "http://evil.test/x"),  # the page moves itself as it loads
            ("http://app.test/hop", "http://evil.test/y"),  # a redirect chain ends on a refused host
        ):
            blocked, now = _heard_sync(page, lambda start=start: page.goto(start))
            _named(blocked, now, dest, start, ("http://www.app.test/hop2",) if start.endswith("/hop") else ())
            assert now  # the goto itself fails, naming it
            page.goto("http://app.test/ok")  # the tab stays usable; nothing else to hear
            assert page.title() == "ok"
        page.goto("http://app.test/page")
        # a popup the click opens, to a refused host: the click fails with it, or the next call
        blocked, now = _heard_sync(page, lambda: (page.click("#p"), page.wait_for_timeout(500)))
        assert "http://evil.test/pop" in [f.evidence.get("url") for f in blocked.verdict.findings]
        page.goto("http://app.test/ok")
        assert page.title() == "ok"
    assert app.requests_to("evil.test") == []
    steps = [r for r in read_trace(tmp_path / "trace.jsonl")]
    refused = [r for r in steps if any(f.rule.startswith("network:") for f in r.verdict.findings)]
    assert [r.step.action.value for r in refused][:2] == ["http://app.test/script", "http://app.test/hop"]
