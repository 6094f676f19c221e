"""Issue 37 in the browser layer (no network layer): the baseline keeps an agent and the pages it
reads off the cloud's metadata service, asks before a public page leads into a private range,
refuses credentials in URLs and look-alike hosts.

Nothing here can leave this machine, even if the guard failed: the browser sends every request
(loopback included) to a catcher on 127.0.0.1 started by the test (``--proxy-server``), which
serves the test pages for any host and records every request; the tests assert what never
arrived there.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path

import pytest
from playwright.async_api import Browser, BrowserContext, Page, async_playwright

from pagewarden import Guard, PolicySet
from pagewarden._browser import chromium_launch_options
from pagewarden.guard._exceptions import ActionBlocked, ApprovalRequired, GuardError
from pagewarden.testing import LocalSite, RecordedRequest, Response
from pagewarden.trace import global_secrets

pytestmark = pytest.mark.timeout(300)

GOAL = "Summarise today's market story on news.test."
NEWS = """<!doctype html><html><head><meta charset="utf-8"><title>Town news</title></head><body>
<h1>Town news</h1><p>The market opens at nine.</p>
<button id="go" onclick="location = '{TO}'">Continue</button>
<a id="link" href="{TO}">Read more</a>
</body></html>"""
SUBRESOURCES = """<!doctype html><title>Gallery</title><h1>Gallery</h1>
<img src="http://169.254.169.254/latest/meta-data/pic.png">
<script>
window.results = {};
for (const [name, url] of [["meta", "http://169.254.169.254/latest/meta-data/iam/"],
                           ["private", "http://10.0.0.7/api"], ["mapped", "http://[::ffff:a9fe:a9fe]/x"]]) {
  fetch(url, {mode: "no-cors"})
    .then(() => window.results[name] = "sent", () => window.results[name] = "refused");
}
</script>"""
LOCAL_APP = """<!doctype html><title>Local app</title><h1>Dev server</h1>
<script>fetch("/api/items").then(r => window.items = r.status, () => window.items = "refused");</script>"""


def _routes(site: LocalSite) -> None:
    for name, to in {
        "meta-nav": "http://169.254.169.254/latest/meta-data/",
        "creds": "http://admin:hunter2secret@news.test/",
        "lookalike": "http://nevvs.test/login",
        "homograph": "http://n\u0435ws.test/login",
        "idn": "http://bücher.test/",
    }.items():
        html = NEWS.replace("{TO}", to)
        site.route("news.test", f"/{name}.html", lambda _r, html=html: Response(html))
    site.route("news.test", "/gallery.html", lambda _r: Response(SUBRESOURCES))
    later = "<p>Loading</p><script>setTimeout(() => location = 'http://169.254.169.254/auto', 100)</script>"
    site.route("news.test", "/auto-meta.html", lambda _r: Response(later))
    site.route(
        "news.test",
        "/redir-meta",
        lambda _r: Response("", 302, headers={"Location": "http://169.254.169.254/r"}),
    )
    site.route("127.0.0.1", "/app", lambda _r: Response(LOCAL_APP))
    site.route("127.0.0.1", "/api/items", lambda _r: Response("[]", content_type="application/json"))
    site.route("*", "/", lambda _r: Response("<p>reached</p>"))


@pytest.fixture(scope="module")
def catcher() -> Iterator[LocalSite]:
    """Serves every host (it is the browser's proxy) and records every request."""
    with LocalSite() as site:
        _routes(site)
        yield site


@pytest.fixture(autouse=True)
def _a_fresh_log(catcher: LocalSite) -> None:
    """Each test reads only its own requests: the catcher serves the whole module, and some tests
    reach an internal address on purpose (a policy naming it, an approval)."""
    catcher.requests.clear()


@pytest.fixture(scope="module")
async def caught_browser(catcher: LocalSite) -> AsyncIterator[Browser]:
    proxy = (f"--proxy-server=http://127.0.0.1:{catcher.port}", "--proxy-bypass-list=<-loopback>")
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(**chromium_launch_options(extra_args=proxy))
        yield browser
        await browser.close()


@pytest.fixture
async def contexts(
    caught_browser: Browser, catcher: LocalSite
) -> AsyncIterator[Callable[[], Awaitable[Page]]]:
    """`await contexts()`: a page in a new context (each guard judges its own contexts); the
    context's proxy carries `page.request` (Playwright's own client) to the catcher too."""
    opened: list[BrowserContext] = []

    async def new_page() -> Page:
        context = await caught_browser.new_context(proxy={"server": f"http://127.0.0.1:{catcher.port}"})
        opened.append(context)
        return await context.new_page()

    yield new_page
    for context in opened:
        await context.close()


@pytest.fixture
async def ctx(contexts: Callable[[], Awaitable[Page]]) -> BrowserContext:
    return (await contexts()).context


def _host(request: RecordedRequest) -> str:
    value = (request.headers.get("Host") or "").lower()
    if value.startswith("["):
        return value[1 : value.find("]")]
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


def _to(site: LocalSite, *hosts: str) -> list[RecordedRequest]:
    return [r for r in site.requests if _host(r) in hosts]


def _policy(rules: list[dict]) -> PolicySet:
    return PolicySet.from_dict({"version": 1, "policies": [
        {"id": "MINE", "category": "boundary", "risk_level": "high", "description": "ours", "rules": rules},
    ]})  # fmt: skip


METADATA = [
    "http://169.254.169.254/latest/meta-data/iam/security-credentials/",
    "http://0xa9fea9fe/latest/meta-data/",
    "http://2852039166/latest/",
    "http://[::ffff:169.254.169.254]/latest/",
    "http://[fd00:ec2::254]/latest/",
    "http://metadata.google.internal/computeMetadata/v1/",
    "http://169.254.170.2/v2/credentials",
]


@pytest.mark.parametrize("url", METADATA)
async def test_agent_never_reaches_the_metadata_service(
    ctx: BrowserContext, catcher: LocalSite, url: str
) -> None:
    page = Guard(goal=GOAL).wrap(await ctx.new_page())
    await page.goto("http://news.test/")
    with pytest.raises(ActionBlocked) as caught:
        await page.goto(url)
    assert "PW-ADDRESSES" in caught.value.verdict.violated_policy_ids
    assert "metadata" in caught.value.verdict.explanation or "link-local" in caught.value.verdict.explanation
    with pytest.raises(ActionBlocked):
        await page.request.get(url)
    assert not _to(catcher, "169.254.169.254", "169.254.170.2", "::ffff:a9fe:a9fe", "fd00:ec2::254",
                   "metadata.google.internal")  # fmt: skip


async def test_the_page_own_navigations_subresources_and_redirects_are_refused(
    contexts: Callable[[], Awaitable[Page]], catcher: LocalSite
) -> None:
    raw = await contexts()
    guard = Guard(goal=GOAL)
    page = guard.wrap(raw)
    await page.goto("http://news.test/gallery.html")
    await raw.wait_for_function("Object.keys(window.results).length === 3")
    assert await raw.evaluate("window.results") == {
        "meta": "refused",
        "private": "refused",
        "mapped": "refused",
    }
    await page.goto("http://news.test/meta-nav.html")
    with contextlib.suppress(GuardError):  # refused while the click ran, or stopped by the pin
        await page.click("#go")  # the page's own script navigates there, in the click's handler
    # a navigation the page starts on its own, later: the gate refuses it and the agent hears of it
    refused = asyncio.Event()
    guard.subscribe(
        lambda e: e.kind == "network" and e.data.get("host") == "169.254.169.254" and refused.set()
    )
    await page.goto("http://news.test/auto-meta.html")
    await asyncio.wait_for(refused.wait(), 60)
    with pytest.raises(ActionBlocked) as told:
        await page.goto("http://news.test/")
    assert "PW-ADDRESSES" in told.value.verdict.violated_policy_ids
    with pytest.raises(GuardError):
        await page.goto("http://news.test/redir-meta")  # an allowed URL redirecting there
    with pytest.raises(GuardError):
        await page.request.get("http://news.test/redir-meta")  # page.request follows no hop unjudged
    assert not _to(catcher, "169.254.169.254", "10.0.0.7", "::ffff:a9fe:a9fe")


async def test_only_a_policy_naming_the_address_allows_it(
    contexts: Callable[[], Awaitable[Page]], catcher: LocalSite
) -> None:
    wide = Guard(_policy([{"internal_addresses": {"allow": ["0.0.0.0/0"]}}]), goal=GOAL).wrap(
        await contexts()
    )
    with pytest.raises(ActionBlocked):
        await wide.goto("http://169.254.169.254/latest/")
    assert not _to(catcher, "169.254.169.254")
    named = Guard(_policy([{"internal_addresses": {"allow": ["169.254.169.254"]}}]), goal=GOAL)
    page = named.wrap(await contexts())
    await page.goto("http://news.test/")
    await page.goto("http://169.254.169.254/")
    assert [r.path for r in _to(catcher, "169.254.169.254")] == ["/"]


async def test_a_public_page_asks_before_a_private_range(
    contexts: Callable[[], Awaitable[Page]], catcher: LocalSite
) -> None:
    page = Guard(goal=GOAL).wrap(await contexts())
    await page.goto("http://news.test/")
    with pytest.raises(ApprovalRequired) as asked:
        await page.goto("http://10.20.30.40/admin")
    assert (
        "10.0.0.0/8" in asked.value.verdict.explanation
        and "internal_addresses" in asked.value.verdict.guidance
    )
    with pytest.raises(ApprovalRequired):
        await page.goto("http://localhost:3000/")
    assert not _to(catcher, "10.20.30.40", "localhost")
    # approved: the range is the session's from then on
    approving = Guard(goal=GOAL, approver=lambda verdict, step: True).wrap(await contexts())
    await approving.goto("http://news.test/")
    await approving.goto("http://10.20.30.40/")
    await approving.goto("http://10.1.1.1/")
    assert {_host(r) for r in _to(catcher, "10.20.30.40", "10.1.1.1")} == {"10.20.30.40", "10.1.1.1"}
    # a policy allowing the range: no question
    allowed = Guard(_policy([{"internal_addresses": {"allow": ["192.168.0.0/16"]}}]), goal=GOAL)
    allowed_page = allowed.wrap(await contexts())
    await allowed_page.goto("http://news.test/")
    await allowed_page.goto("http://192.168.1.1/")
    assert _to(catcher, "192.168.1.1")


async def test_a_session_that_starts_on_a_local_app_keeps_using_it(
    contexts: Callable[[], Awaitable[Page]], catcher: LocalSite
) -> None:
    raw = await contexts()
    page = Guard(goal="Check the items list of my dev server.").wrap(raw)
    await page.goto(f"http://127.0.0.1:{catcher.port}/app")
    await raw.wait_for_function("window.items !== undefined")
    assert await raw.evaluate("window.items") == 200  # the page's own request to its block
    await page.goto(f"http://localhost:{catcher.port}/")  # loopback by another name: the same block
    assert [r.path for r in _to(catcher, "localhost")] == ["/"]
    with pytest.raises(ApprovalRequired):
        await page.goto("http://192.168.0.10/")  # another private range: still a boundary
    assert not _to(catcher, "192.168.0.10")


async def test_credentials_in_urls_are_refused_and_never_traced(
    contexts: Callable[[], Awaitable[Page]], catcher: LocalSite, tmp_path: Path
) -> None:
    global_secrets().add("hunter2secret", label="test-url-password", enforce=False)
    trace = tmp_path / "trace.jsonl"
    guard = Guard(goal=GOAL, trace=trace)
    page = guard.wrap(await contexts())
    await page.goto("http://news.test/creds.html")
    with pytest.raises(ActionBlocked) as typed:
        await page.goto("http://admin:hunter2secret@news.test/account")
    with pytest.raises(ActionBlocked) as clicked:
        await page.click("#link")
    for caught in (typed, clicked):
        assert "url_credentials" in caught.value.verdict.explanation
        assert "hunter2secret" not in str(caught.value)
    assert not [r for r in catcher.requests if "authorization" in {k.lower() for k in r.headers}]
    text = trace.read_text()
    assert "hunter2secret" not in text and "admin:" not in text
    assert sum("url_credentials" in line for line in text.splitlines()) == 2
    allowed = Guard(_policy([{"url_credentials": {"allow": ["news.test"]}}]), goal=GOAL)
    await allowed.wrap(await contexts()).goto("http://admin:hunter2secret@news.test/")


async def test_lookalike_hosts_are_refused_naming_the_real_one(
    contexts: Callable[[], Awaitable[Page]], catcher: LocalSite
) -> None:
    page = Guard(goal=GOAL).wrap(await contexts())
    for name, fake in (("lookalike", "nevvs.test"), ("homograph", "xn--nws-rdd.test")):
        await page.goto(f"http://news.test/{name}.html")
        with pytest.raises(ActionBlocked) as caught:
            await page.click("#link")
        verdict = caught.value.verdict
        assert "lookalike_hosts" in verdict.explanation and fake in verdict.explanation
        assert "news.test" in verdict.guidance
    for fake in (
        "http://news.test.evil.test/",
        "http://news-login.test/",
        "http://newz.test/",
        "http://news.com/",
    ):
        with pytest.raises(ActionBlocked):
            await page.goto(fake)
    fakes = (
        "nevvs.test",
        "xn--nws-rdd.test",
        "news.test.evil.test",
        "news-login.test",
        "newz.test",
        "news.com",
    )
    assert not _to(catcher, *fakes)
    # an ordinary internationalised name is not deceptive by itself
    await page.goto("http://news.test/idn.html")
    await page.click("#link")
    await page.wait_for_url("http://xn--bcher-kva.test/")
