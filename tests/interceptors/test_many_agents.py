"""Many agents on one browser (issue 33): one Chromium, a browser context and a `Guard` per agent,
each agent allowed its own site only, all acting at once. Every refusal (a same-site link that
redirects off-site, ``goto`` of that URL again, a redirect to the *next* agent's site, which
that agent's own guard would allow) reaches its own agent as `ActionBlocked` and no other agent;
every benign action runs; a context no guard wraps is left alone; a guard whose context closes
leaves the others working, and the browser's shared DevTools session goes with the last one.
Real Chromium over 127.0.0.1 (the session's `browser`); no time is asserted here (the latencies
are `benchmarks/many_agents.py`'s)."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from playwright.async_api import Browser
from playwright.async_api import Error as PlaywrightError
from playwright.sync_api import sync_playwright

from pagewarden import ActionBlocked, Guard, PolicySet
from pagewarden._browser import chromium_launch_options
from pagewarden.interceptors._interception import interception_for
from pagewarden.testing import LocalSite, RecordedRequest, Response
from tests.heard import heard


def _policies(host: str) -> PolicySet:
    return PolicySet.from_dict({"version": 1, "policies": [{
        "id": f"ONLY-{host}", "category": "boundary", "risk_level": "high",
        "description": f"Stay on {host}.", "rules": [{"domain_allow": [host]}],
    }]})  # fmt: skip


def _hop(request: RecordedRequest) -> Response:
    return Response("", status=302, headers={"Location": request.query["to"][0]})


def _landing(request: RecordedRequest) -> Response:
    return Response(f"<!doctype html><title>landed</title><p id=landed>{request.host} landed</p>")


def _home(request: RecordedRequest) -> Response:
    host = request.host
    return Response(
        f'<!doctype html><title>{host}</title><input id="q" aria-label="Query">'
        f'<a id="off" href="/hop?to=http%3A%2F%2Fevil.test%2Flanding%3Fc%3D{host}-click">Off-site</a>'
        f'<a id="on" href="/landing?c={host}-benign">On-site</a>'
    )


def _agent_host(i: int) -> str:
    return f"agent{i}.many.test"


@pytest.fixture
def many(site: LocalSite) -> LocalSite:
    for i in range(8):
        host = _agent_host(i)
        site.route(host, "/", _home)
        site.route(host, "/hop", _hop)
        site.route(host, "/landing", _landing)
    site.route("evil.test", "/landing", _landing)
    return site


def _hop_url(host: str, to: str) -> str:
    from urllib.parse import quote

    return f"http://{host}/hop?to={quote(to, safe='')}"


def _marks(site: LocalSite, host: str) -> list[str]:
    return [r.query.get("c", [""])[0] for r in site.requests_to(host) if r.path == "/landing"]


class Agent:
    """One agent: its context, its guard, its page, and what it was told."""

    def __init__(self, browser: Browser, i: int, count: int) -> None:
        self.browser, self.i, self.count = browser, i, count
        self.host = _agent_host(i)
        self.neighbour = _agent_host((i + 1) % count) if count > 1 else "evil.test"
        self.guard = Guard(_policies(self.host), goal=f"Work on {self.host}.")
        self.blocked: list[ActionBlocked] = []
        self.context: Any = None
        self.page: Any = None

    async def start(self) -> None:
        self.context = await self.browser.new_context()
        self.page = self.guard.wrap(await self.context.new_page())
        self.page.set_default_timeout(60_000)  # a refusal that hung would end as a TimeoutError

    async def refusals(self, round_: int) -> None:
        """Three refusals, each heard as `ActionBlocked` (the action's own, or the next call's)."""
        page = self.page
        await page.goto(f"http://{self.host}/")
        self.blocked.append(await heard(lambda: page.click("#off"), lambda: page.hover("body")))
        # the same URL again, by goto: refused as well (not a bare net::ERR_ABORTED)
        off = _hop_url(self.host, f"http://evil.test/landing?c={self.host}-click")
        self.blocked.append(await heard(lambda: page.goto(off), lambda: page.hover("body")))
        # the next agent's site: its guard would allow it, this one's does not
        mark = f"{self.host}-to-neighbour-{round_}"
        to = _hop_url(self.host, f"http://{self.neighbour}/landing?c={mark}")
        self.blocked.append(await heard(lambda: page.goto(to), lambda: page.hover("body")))
        assert page.url.startswith(f"http://{self.host}/")

    async def round(self, round_: int) -> None:
        """The agent's refusals, then its benign actions (the agents run their rounds at once)."""
        await self.refusals(round_)
        await self.benign(round_)

    async def again(self) -> None:
        """After another agent left: a refusal and a benign action still work."""
        page = self.page
        await page.goto(f"http://{self.host}/")
        self.blocked.append(await heard(lambda: page.click("#off"), lambda: page.hover("body")))
        await page.fill("#q", "again")
        assert await page.input_value("#q") == "again"

    async def benign(self, round_: int) -> None:
        """Benign actions: a fill, a same-site link, a same-site redirect; each runs."""
        page = self.page
        await page.goto(f"http://{self.host}/")
        await page.fill("#q", f"round {round_}")
        assert await page.input_value("#q") == f"round {round_}"
        await page.click("#on")
        await page.wait_for_url(f"http://{self.host}/landing?c={self.host}-benign")
        mark = f"{self.host}-benign-hop-{round_}"
        await page.goto(_hop_url(self.host, f"http://{self.host}/landing?c={mark}"))
        assert page.url == f"http://{self.host}/landing?c={mark}"
        await page.hover("body")  # nothing refused meanwhile

    def check_own(self, site: LocalSite) -> None:
        """Every refusal told names this agent's own policy and its own URLs only."""
        for blocked in self.blocked:
            finding = blocked.verdict.findings[0]
            assert finding.policy_id == f"ONLY-{self.host}"
            assert finding.rule == "network:domain_allow"
        gate = self.page._pw_shared.gate
        refused = [r.url for r in gate.refusals]
        assert refused and all(self.host in url for url in refused), refused
        assert f"{self.host}-click" not in _marks(site, "evil.test")
        assert not [m for m in _marks(site, self.neighbour) if m.startswith(f"{self.host}-to-neighbour")]

    async def close(self) -> None:
        await self.context.close()
        self.guard.close()


async def _raw_context(browser: Browser, site: LocalSite) -> None:
    """A context no guard wraps, on the same browser at the same time: its redirect lands."""
    context = await browser.new_context()
    try:
        page = await context.new_page()
        await page.goto(_hop_url(_agent_host(0), "http://evil.test/landing?c=raw-context"))
        assert page.url == "http://evil.test/landing?c=raw-context"
    finally:
        await context.close()
    assert "raw-context" in _marks(site, "evil.test")


@pytest.mark.timeout(900)  # 8 agents at once on a loaded 2-core machine
@pytest.mark.parametrize("count", [1, 2, 4, 8])
async def test_agents_on_one_browser_hear_their_own_refusals(
    browser: Browser, many: LocalSite, count: int
) -> None:
    agents = [Agent(browser, i, count) for i in range(count)]
    await asyncio.gather(*(a.start() for a in agents))
    await asyncio.gather(*(a.round(1) for a in agents), _raw_context(browser, many))
    for agent in agents:
        assert len(agent.blocked) == 3
        agent.check_own(many)
    shared = interception_for(browser, "async")
    mine = [a.page._pw_shared.gate.hops for a in agents]
    assert set(mine) <= set(shared.members)  # one DevTools session for all of them
    if count > 1:
        # the first agent leaves; the others go on, refused and served as before
        await agents[0].close()
        assert mine[0] not in shared.members and set(mine[1:]) <= set(shared.members)
        await asyncio.gather(*(a.again() for a in agents[1:]))
        for agent in agents[1:]:
            assert len(agent.blocked) == 4
            agent.check_own(many)
        agents = agents[1:]
    for agent in agents:
        await agent.close()
    assert not set(mine) & set(shared.members)
    if not shared.members:
        assert shared.closed  # the browser's session went with the last one


# -- the sync API -----------------------------------------------------------------------------------
class SyncAgent:
    """One agent under the sync API: its own context of `browser` and its own guard."""

    def __init__(self, browser: Any, host: str) -> None:
        from pagewarden.sync_api import Guard as SyncGuard

        self.host = host
        self.context = browser.new_context()
        self.page = SyncGuard(_policies(host), goal=f"Work on {host}.").wrap(self.context.new_page())
        self.page.goto(f"http://{host}/")
        self.told: dict[str, Any] = {}

    def refusal(self) -> None:
        from pagewarden.sync_api import ActionBlocked as SyncBlocked

        try:
            self.page.goto(_hop_url(self.host, f"http://evil.test/landing?c={self.host}-sync"))
        except SyncBlocked as blocked:
            self.told["blocked"] = blocked.verdict.findings[0].policy_id

    def benign(self) -> None:
        self.page.fill("#q", "sync")
        self.page.click("#on")
        self.page.wait_for_url(f"http://{self.host}/landing?c={self.host}-benign")
        self.told["benign"] = self.page.url

    def expected(self) -> dict[str, Any]:
        return {"blocked": f"ONLY-{self.host}", "benign": f"http://{self.host}/landing?c={self.host}-benign"}


@pytest.mark.timeout(600)  # a Chromium per thread
def test_sync_agents_a_browser_per_thread(many: LocalSite) -> None:
    """The documented way to run sync agents at once (a Playwright browser belongs to the thread
    that started it): a thread per agent, each with its own Chromium."""
    agents: dict[int, SyncAgent] = {}
    errors: list[BaseException] = []
    options = chromium_launch_options(host_map={"*.test": many.port})

    def run(i: int) -> None:
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(**options)
                try:
                    agents[i] = agent = SyncAgent(browser, _agent_host(i))
                    agent.refusal()
                    agent.benign()
                finally:
                    browser.close()
        except BaseException as exc:  # noqa: BLE001 - reported by the test's thread
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert not errors, errors
    assert [a.told for a in agents.values()] == [a.expected() for a in agents.values()] and len(agents) == 2
    assert not [m for m in _marks(many, "evil.test") if m.endswith("-sync")]


def test_sync_agents_stepped_in_turn_on_one_browser(many: LocalSite) -> None:
    """The other way under the sync API: one thread and one browser, the agents (a context and a
    guard each, sharing the browser's DevTools session) stepped in turn."""
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(**chromium_launch_options(host_map={"*.test": many.port}))
        try:
            agents = [SyncAgent(browser, _agent_host(i)) for i in range(3)]
            for agent in agents:
                agent.refusal()
            for agent in agents:
                agent.benign()
            assert [a.told for a in agents] == [a.expected() for a in agents]
        finally:
            browser.close()
    assert not [m for m in _marks(many, "evil.test") if m.endswith("-sync")]


# -- the network layer --------------------------------------------------------------------------------
@pytest.mark.timeout(600)  # a Chromium and a proxy per agent
async def test_agents_behind_their_own_network_layers_hear_their_own_refusals(many: LocalSite) -> None:
    """`launch(proxy=True)` is a browser and a session proxy per agent: agents at once each hear
    the proxy's refusal of their redirect off-site as `ActionBlocked` (never a timeout or a bare
    ``net::`` error) and go on."""
    from pagewarden import launch

    async def agent(i: int) -> tuple[str, str]:
        host = _agent_host(i)
        async with launch(policies=_policies(host), goal=f"Work on {host}.", proxy=True,
                          host_map={"*.test": many.port}) as page:  # fmt: skip
            page.set_default_timeout(60_000)
            await page.goto(f"http://{host}/")
            blocked = await heard(lambda: page.click("#off"), lambda: page.hover("body"))
            await page.goto(f"http://{host}/")
            await page.fill("#q", "proxied")
            await page.click("#on")
            await page.wait_for_url(f"http://{host}/landing?c={host}-benign")
            return blocked.verdict.findings[0].policy_id, page.url

    results = await asyncio.gather(*(agent(i) for i in range(2)))
    assert [policy for policy, _ in results] == [f"ONLY-{_agent_host(i)}" for i in range(2)]
    assert [url.split("?")[0] for _, url in results] == [f"http://{_agent_host(i)}/landing" for i in range(2)]
    assert not {f"{_agent_host(i)}-click" for i in range(2)} & set(_marks(many, "evil.test"))


async def test_a_paused_request_that_cannot_be_decided_is_refused(
    browser: Browser, many: LocalSite, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A gate would act on a paused request (a redirect to a refused host) and deciding it fails:
    the hop is refused all the same (fail closed), never let through; benign documents, which no
    gate would act on, still load."""
    from pagewarden.interceptors._hops import HopGate

    def broken(*_args: Any) -> Any:
        raise RuntimeError("a broken handler")

    monkeypatch.setattr(HopGate, "answer", broken)
    agent = Agent(browser, 0, 1)
    await agent.start()
    try:
        await agent.page.goto(f"http://{agent.host}/")
        mark = f"{agent.host}-undecided"
        with pytest.raises(PlaywrightError) as caught:  # refused unjudged (the guard cannot say whose)
            await agent.page.goto(_hop_url(agent.host, f"http://evil.test/landing?c={mark}"))
        assert "Timeout" not in type(caught.value).__name__
        assert mark not in _marks(many, "evil.test")
        await agent.page.goto(_hop_url(agent.host, f"http://{agent.host}/landing?c=undecided-twin"))
        assert agent.page.url == f"http://{agent.host}/landing?c=undecided-twin"
    finally:
        await agent.close()
