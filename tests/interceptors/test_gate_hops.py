"""The navigation gate without a proxy, beyond the first request: every HTTP redirect hop of a
document (any 3xx status, chains of them, whatever started it: a same-site link, a form post,
``goto``, a popup, a frame, a meta refresh, a script) and every frame's document is judged
against the egress rules. A refused one never reaches its host (the local server's request
log says so) and the agent hears of it at its next call; the benign twins (redirects and
frames to hosts the policies allow) still load. Real Chromium over 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import itertools
from typing import Any
from urllib.parse import quote

import pytest
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page

from pagewarden import ActionBlocked, Guard, PolicySet
from pagewarden.guard._exceptions import GuardError
from pagewarden.testing import LocalSite, RecordedRequest, Response

POLICIES = PolicySet.from_dict(
    {
        "version": 1,
        "policies": [
            {
                "id": "T-0",
                "category": "boundary",
                "risk_level": "high",
                "description": "Where the agent may go.",
                "rules": [{"domain_allow": ["app.test", "other.test"]}],
            }
        ],
    }
)
_COUNTER = itertools.count()


def _hop(request: RecordedRequest) -> Response:
    status = int(request.query.get("s", ["302"])[0])
    return Response("", status=status, headers={"Location": request.query["to"][0]})


def _landing(request: RecordedRequest) -> Response:
    return Response(f"<!doctype html><title>landed</title><p id=landed>{request.host} landed</p>")


@pytest.fixture
def hops(site: LocalSite) -> LocalSite:
    for host in ("app.test", "other.test", "evil.test"):
        site.route(host, "/hop", _hop)
        site.route(host, "/landing", _landing)
    return site


def hop(host: str, to: str, status: int = 302) -> str:
    """A URL on `host` answering `status` with ``Location: to``."""
    return f"http://{host}/hop?s={status}&to={quote(to, safe='')}"


def _serve(site: LocalSite, body: str) -> str:
    path = f"/hops/{next(_COUNTER)}.html"
    html = f"<!doctype html><body>{body}</body>"
    site.route("app.test", path, lambda _r: Response(html))
    return f"http://app.test{path}"


def _reached(site: LocalSite, host: str, mark: str) -> list[RecordedRequest]:
    return [r for r in site.requests_to(host) if r.query.get("c") == [mark]]


async def _until(predicate: Any, seconds: float = 20.0) -> bool:
    """Whether `predicate` holds within `seconds` (looked at every 50 ms; it returns at once when
    it holds, so the bound only matters for a check that fails or a machine under heavy load)."""
    for _ in range(int(seconds / 0.05)):
        if predicate():
            return True
        await asyncio.sleep(0.05)
    return bool(predicate())


# Pages whose one same-site action starts a document request that ends in a redirect chain.
STARTERS = {
    "link": '<a id="t" href="{U}">Continue</a>',
    "link_new_tab": '<a id="t" href="{U}" target="_blank">Continue</a>',
    "form_post": '<form method="post" action="{U}"><input name="q" value="1">'
    '<button id="t">Send</button></form>',
    "window_open": '<button id="t" type="button" onclick="window.open(\'{U}\')">Help</button>',
    "script": '<button id="t" type="button" onclick="location.assign(\'{U}\')">Go</button>',
    "iframe": '<button id="t" type="button" onclick="const f = document.createElement(\'iframe\');'
    " f.src = '{U}'; document.body.append(f)\">Show</button>",
    "meta_refresh_tab": '<a id="t" href="/hops/meta?to={Q}">Continue</a>',
}


def _meta(request: RecordedRequest) -> Response:
    to = request.query["to"][0]
    return Response(f'<!doctype html><meta http-equiv="refresh" content="0;url={to}">moving on')


def _chain(final: str, status: int, length: int) -> str:
    """An allowed URL whose redirect chain (through both allowed hosts) ends at `final`."""
    url = final
    for i in range(length):
        url = hop("app.test" if i % 2 == 0 else "other.test", url, status)
    return url


async def _act(guarded: Any) -> GuardError | None:
    """Click ``#t``; the guard's refusal of it (a refusal reported from the page's load) or None."""
    try:
        await guarded.click("#t")
    except GuardError as exc:
        return exc
    except PlaywrightError:
        pass
    return None


def _gate_events(events: list[Any]) -> list[Any]:
    return [e for e in events if e.kind == "network" and e.data.get("layer") == "gate"]


async def _blocked(guarded: Any, earlier: GuardError | None) -> ActionBlocked:
    """The BLOCK the agent hears for a refusal: at its next call, or already at `earlier`."""
    if isinstance(earlier, ActionBlocked):
        return earlier
    with pytest.raises(ActionBlocked) as caught:
        await guarded.hover("body")
    return caught.value


CASES = [
    ("link", 302, 1),
    ("link", 301, 1),
    ("link", 303, 2),
    ("link", 307, 1),
    ("link", 308, 3),
    ("link_new_tab", 302, 1),
    ("form_post", 307, 1),
    ("form_post", 303, 2),
    ("window_open", 302, 2),
    ("script", 308, 1),
    ("iframe", 302, 1),
    ("meta_refresh_tab", 302, 1),
]


@pytest.mark.parametrize(("starter", "status", "length"), CASES, ids=[f"{s}-{c}-x{n}" for s, c, n in CASES])
async def test_a_redirect_hop_to_a_refused_host_never_leaves(
    page: Page, hops: LocalSite, starter: str, status: int, length: int
) -> None:
    guard = Guard(POLICIES, goal="Use the app.")
    events: list[Any] = []
    guard.subscribe(events.append)
    guarded = guard.wrap(page)
    mark = f"hop-{starter}-{status}-{length}"
    url = _chain(f"http://evil.test/landing?c={mark}", status, length)
    hops.route("app.test", "/hops/meta", _meta)
    body = STARTERS[starter].replace("{U}", url).replace("{Q}", quote(url, safe=""))
    await guarded.goto(_serve(hops, body))
    earlier = await _act(guarded)  # (the click fails itself when the hop is refused while it runs)
    await page.wait_for_timeout(900)
    assert _reached(hops, "evil.test", mark) == []
    assert all(not p.url.startswith("http://evil.test") for p in page.context.pages)
    assert all(not f.url.startswith("http://evil.test") for p in page.context.pages for f in p.frames)
    if starter == "iframe":
        # a frame inside the page, not the tab, went there: recorded, never raised at the agent
        assert await _until(lambda: any(e.data.get("host") == "evil.test" and e.data.get("subframe")
                                        for e in _gate_events(events)))  # fmt: skip
        await guarded.hover("body")
        return
    blocked = await _blocked(guarded, earlier)
    gate_events = _gate_events(events)  # (the refusal's event comes before the agent hears of it)
    finding = blocked.verdict.findings[0]
    assert (finding.policy_id, finding.rule) == ("T-0", "network:domain_allow")
    assert "evil.test" in blocked.verdict.explanation
    assert "navigation gate" in blocked.verdict.explanation
    assert any(e.data.get("host") == "evil.test" and not e.data.get("subframe") for e in gate_events)
    await guarded.hover("body")  # heard once


TWINS = [
    ("link", 302, 1), ("link", 307, 3), ("form_post", 307, 1), ("window_open", 301, 2), ("iframe", 302, 2),
]  # fmt: skip


@pytest.mark.parametrize(("starter", "status", "length"), TWINS, ids=[f"{s}-{c}-x{n}" for s, c, n in TWINS])
async def test_an_allowed_redirect_still_lands(
    page: Page, hops: LocalSite, starter: str, status: int, length: int
) -> None:
    guarded = Guard(POLICIES, goal="Use the app.").wrap(page)
    mark = f"twin-{starter}-{status}-{length}"
    url = _chain(f"http://other.test/landing?c={mark}", status, length)
    await guarded.goto(_serve(hops, STARTERS[starter].replace("{U}", url)))
    await _act(guarded)
    assert await _until(lambda: _reached(hops, "other.test", mark))
    if status in (307, 308) and starter == "form_post":
        assert _reached(hops, "other.test", mark)[0].method == "POST"
    await page.wait_for_timeout(300)
    await guarded.hover("body")  # nothing was refused


async def test_goto_an_allowed_url_that_redirects_to_a_refused_host(page: Page, hops: LocalSite) -> None:
    """The agent's own goto is judged on its URL; the hop is judged too."""
    guarded = Guard(POLICIES, goal="Use the app.").wrap(page)
    await guarded.goto("http://app.test/plain.html")
    # the goto fails with the refusal itself (issue 24), not a bare net::ERR_ABORTED
    with pytest.raises(ActionBlocked) as caught:
        await guarded.goto(hop("app.test", "http://evil.test/landing?c=hop-goto"))
    finding = caught.value.verdict.findings[0]
    assert finding.rule == "network:domain_allow" and finding.evidence["action"] == "redirect"
    assert finding.evidence["chain"] == [hop("app.test", "http://evil.test/landing?c=hop-goto"),
                                         "http://evil.test/landing?c=hop-goto"]  # fmt: skip
    assert _reached(hops, "evil.test", "hop-goto") == []
    assert page.url == "http://app.test/plain.html"
    await guarded.hover("body")  # heard once
    await guarded.goto(hop("app.test", "http://other.test/landing?c=hop-goto-twin"))
    assert page.url == "http://other.test/landing?c=hop-goto-twin"


async def test_a_chain_with_a_denied_url_inside_an_allowed_host_is_refused(
    page: Page, hops: LocalSite
) -> None:
    """url_deny applies to every hop, on allowed hosts too."""
    policies = PolicySet.from_dict(
        {
            "version": 1,
            "policies": [
                {
                    "id": "T-1",
                    "category": "boundary",
                    "risk_level": "high",
                    "description": "No admin pages.",
                    "rules": [{"url_deny": ["/landing?c=hop-admin"]}],
                }
            ],
        }
    )
    guarded = Guard(policies, goal="Use the app.").wrap(page)
    url = hop("app.test", hop("other.test", "http://app.test/landing?c=hop-admin", 307))
    await guarded.goto(_serve(hops, f'<a id="t" href="{url}">Continue</a>'))
    earlier = await _act(guarded)
    await page.wait_for_timeout(700)
    assert _reached(hops, "app.test", "hop-admin") == []
    blocked = await _blocked(guarded, earlier)
    assert blocked.verdict.findings[0].rule == "network:url_deny"


async def test_monitor_mode_reports_a_hop_and_lets_it_through(page: Page, hops: LocalSite) -> None:
    guard = Guard(POLICIES, goal="Use the app.", mode="monitor")
    guarded = guard.wrap(page)
    url = hop("app.test", "http://evil.test/landing?c=hop-monitor")
    await guarded.goto(_serve(hops, f'<a id="t" href="{url}">Continue</a>'))
    await guarded.click("#t")
    await page.wait_for_url("http://evil.test/**")
    gate = guarded._pw_shared.gate
    assert gate is not None and [r.action for r in gate.refusals] == ["redirect"]


async def test_a_hop_in_another_context_of_the_browser_is_not_judged(page: Page, hops: LocalSite) -> None:
    """The gate is the guarded context's: a raw context of the same browser is left alone."""
    guarded = Guard(POLICIES, goal="Use the app.").wrap(page)
    await guarded.goto("http://app.test/plain.html")
    browser = page.context.browser
    assert browser is not None
    raw = await browser.new_context()
    try:
        other = await raw.new_page()
        await other.goto(hop("app.test", "http://evil.test/landing?c=hop-raw"))
        assert other.url == "http://evil.test/landing?c=hop-raw"
        frames = _serve(hops, f'<iframe src="{hop("app.test", "http://evil.test/landing?c=hop-raw-frame")}">'
                        "</iframe>")  # fmt: skip
        await other.goto(frames)
        assert await _until(lambda: _reached(hops, "evil.test", "hop-raw-frame"))
    finally:
        await raw.close()
    await guarded.hover("body")  # nothing refused in the guarded context


# -- frames -------------------------------------------------------------------------------------
FRAMES = {
    "iframe_src": '<iframe id="f" src="{D}"></iframe><button id="t" type="button">x</button>',
    "late_iframe": '<button id="t" type="button" onclick="document.body.insertAdjacentHTML(\'beforeend\','
    " '<iframe src=&quot;{D}&quot;></iframe>')\">Show</button>",
    "targeted_link": '<iframe name="pane" src="/plain.html"></iframe>'
    '<a id="t" href="{D}" target="pane">Open</a>',
    "frame_script": '<iframe id="f" srcdoc="<button id=go'
    " onclick=&quot;location.href='{D}'&quot;>go</button>\"></iframe>"
    '<button id="t" type="button" onclick="document.getElementById(\'f\')'
    ".contentDocument.getElementById('go').click()\">Go</button>",
}


@pytest.mark.parametrize("kind", list(FRAMES))
async def test_a_frame_document_on_a_refused_host_never_loads(page: Page, hops: LocalSite, kind: str) -> None:
    guarded = Guard(POLICIES, goal="Use the app.").wrap(page)
    mark = f"frame-{kind}"
    await guarded.goto(_serve(hops, FRAMES[kind].replace("{D}", f"http://evil.test/landing?c={mark}")))
    earlier = await _act(guarded)
    await page.wait_for_timeout(700)
    assert _reached(hops, "evil.test", mark) == []
    assert all(not f.url.startswith("http://evil.test") for f in page.frames)
    if kind != "targeted_link":
        # the page's own frame went there (its load, its script), not the tab and not a link the
        # agent clicked: the refusal is recorded and never raised at the agent (issue 29)
        assert earlier is None
        assert any(r.subframe and mark in r.url for r in guarded._pw_shared.gate.refusals)
        await guarded.hover("body")
        return
    blocked = await _blocked(guarded, earlier)
    # the rules tier's refusal before the click (a link naming a refused host), or the gate's
    assert blocked.verdict.findings[0].rule in ("network:domain_allow", "domain_allow")


@pytest.mark.parametrize("kind", list(FRAMES))
@pytest.mark.parametrize("host", ["app.test", "other.test"])
async def test_same_site_and_allowed_frames_still_load(
    page: Page, hops: LocalSite, kind: str, host: str
) -> None:
    guarded = Guard(POLICIES, goal="Use the app.").wrap(page)
    mark = f"frame-twin-{kind}-{host}"
    await guarded.goto(_serve(hops, FRAMES[kind].replace("{D}", f"http://{host}/landing?c={mark}")))
    await _act(guarded)
    assert await _until(lambda: _reached(hops, host, mark))
    assert await _until(lambda: any(f.url.endswith(f"c={mark}") for f in page.frames))
    await page.wait_for_timeout(200)
    await guarded.hover("body")


async def test_a_persistent_context_gets_its_hops_judged(hops: LocalSite, tmp_path: Any) -> None:
    """``launch_persistent_context`` (an agent on a browser profile): its hops are judged too."""
    from playwright.async_api import async_playwright

    from pagewarden._browser import chromium_launch_options

    options = chromium_launch_options(host_map={"*.test": hops.port})
    async with async_playwright() as playwright:
        context = await playwright.chromium.launch_persistent_context(str(tmp_path / "profile"), **options)
        try:
            page = context.pages[0] if context.pages else await context.new_page()
            guarded = Guard(POLICIES, goal="Use the app.").wrap(page)
            for dest in ("evil.test", "other.test"):
                mark = f"hop-persistent-{dest}"
                url = _chain(f"http://{dest}/landing?c={mark}", 307, 2)
                await guarded.goto(_serve(hops, f'<a id="t" href="{url}">Continue</a>'))
                earlier = await _act(guarded)
                await page.wait_for_timeout(700)
                if dest == "evil.test":
                    assert _reached(hops, "evil.test", mark) == []
                    await _blocked(guarded, earlier)
                else:
                    assert _reached(hops, "other.test", mark)
                    assert page.url == f"http://other.test/landing?c={mark}"
        finally:
            await context.close()
