"""One console for a fleet: guards on other machines over TLS, sessions listed and filtered by
agent, host and status, approvals routed to whoever watches (the first answer wins), guards
that fail closed when the console goes away, and hostile agent names shown as text.

The console listens on 127.0.0.1 over real TLS with a certificate made by the
test (a CA of its own, which guards trust through ``PAGEWARDEN_CONSOLE_CA`` and Chromium by
its SPKI pin); guards run in processes of their own.
"""

from __future__ import annotations

import asyncio
import http.client
import inspect
import json
import logging
import os
import ssl
import subprocess
import sys
import urllib.parse
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Browser, BrowserContext, async_playwright

from pagewarden import Action, ApprovalRequired, ElementFacts, Guard, Observation
from pagewarden._browser import chromium_launch_options
from pagewarden.console import Console, ConsoleUnavailable
from pagewarden.console._access import Access
from pagewarden.testing import LocalSite
from tests.console._fleet import Api, Certs, make_certs
from tests.console.conftest import Person, consent

pytestmark = pytest.mark.browser

#: Tests connect to loopback only: the console runs over real TLS on 127.0.0.1; binding beyond
#: loopback is tested by the refusal alone (`test_a_console_beyond_loopback_needs_tls`-style tests).
ADDRESS = "127.0.0.1"
AGENT = Path(__file__).with_name("fleet_agent.py")
ROOT = Path(__file__).parents[2]


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Certs:
    return make_certs(tmp_path_factory.mktemp("fleet-tls"), sorted({ADDRESS, "127.0.0.1"}))


@pytest.fixture
async def fleet(certs: Certs, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Console]:
    """A console over TLS (on loopback: tests connect nowhere else); guards here trust the test CA."""
    monkeypatch.setenv("PAGEWARDEN_CONSOLE_CA", str(certs.ca))
    async with Console(host=ADDRESS, tls_cert=certs.cert, tls_key=certs.key, approval_timeout=60) as console:
        yield console


@pytest.fixture(scope="module")
async def watchers_browser(site: LocalSite, certs: Certs) -> AsyncIterator[Browser]:
    """The supervisors' Chromium: it trusts the console's certificate by its SPKI pin only."""
    pins = ",".join(certs.pins)
    options = chromium_launch_options(
        host_map={"*.test": site.port}, extra_args=(f"--ignore-certificate-errors-spki-list={pins}",)
    )
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(**options)
        yield browser
        await browser.close()


@pytest.fixture
async def watcher(watchers_browser: Browser) -> AsyncIterator[Callable[[], Awaitable[Person]]]:
    contexts: list[BrowserContext] = []

    async def make() -> Person:
        context = await watchers_browser.new_context(viewport={"width": 1400, "height": 1000})
        contexts.append(context)
        person = Person(await context.new_page())

        async def on_dialog(dialog: Any) -> None:
            person.dialogs.append(dialog.message)
            await dialog.dismiss()

        person.page.on("dialog", on_dialog)
        person.page.on("pageerror", lambda e: person.errors.append(str(e)))
        person.page.on("request", lambda r: person.requests.append(r.url))
        return person

    yield make
    for context in contexts:
        await context.close()


def _token(url: str) -> str:
    return url.split("token=")[1]


async def _line(proc: asyncio.subprocess.Process, prefix: str) -> str:
    assert proc.stdout is not None
    while True:
        raw = await asyncio.wait_for(proc.stdout.readline(), 90)
        if not raw:
            err = await proc.stderr.read() if proc.stderr else b""
            raise AssertionError(f"the agent ended before {prefix!r}: {err.decode()[-2000:]}")
        line = raw.decode().strip()
        if line.startswith(prefix):
            return line


async def _until(check: Callable[[], bool], what: str, timeout: float = 30) -> None:
    for _ in range(int(timeout * 20)):
        if check():
            return
        await asyncio.sleep(0.05)  # polling the console's state, which other processes change
    raise AssertionError(f"timed out waiting for {what}")


# -- where the console may listen ---------------------------------------------------------------
def test_beyond_loopback_only_with_tls_or_behind_a_proxy(certs: Certs) -> None:
    for host in ("0.0.0.0", "192.0.2.10"):
        with pytest.raises(ValueError, match=f"refusing to listen on {host} without TLS"):
            Console(host=host)
    with pytest.raises(ValueError, match="--public-url"):
        Console(host="0.0.0.0", tls_cert=certs.cert, tls_key=certs.key)  # which name is it?
    with pytest.raises(ValueError, match="--public-url"):
        Console(host="127.0.0.1", behind_proxy=True)
    with pytest.raises(ValueError, match="both a certificate"):
        Console(host="127.0.0.1", tls_cert=certs.cert)
    with pytest.raises(ValueError, match="under a path"):
        Console(host="0.0.0.0", behind_proxy=True, public_url="https://example.test/pagewarden/")
    Console(host="127.0.0.1")  # loopback, as before
    Console(host="0.0.0.0", tls_cert=certs.cert, tls_key=certs.key, public_url="https://localhost:9443")
    # the command line says the same, before it listens
    refused = subprocess.run(
        [sys.executable, "-m", "pagewarden", "console", "--host", "0.0.0.0", "--port", "0"],
        capture_output=True, text=True, timeout=60, cwd=ROOT,
    )  # fmt: skip
    assert refused.returncode == 2
    assert "refusing to listen on 0.0.0.0 without TLS" in refused.stderr
    assert "--behind-proxy" in refused.stderr
    # a guard will not send its token to another machine over plain HTTP
    with pytest.raises(ValueError, match="https:// only"):
        Guard(console="http://192.0.2.10:8765/?token=not-sent-anywhere")


async def test_behind_a_proxy_the_public_name_is_the_console() -> None:
    async with Console(host=ADDRESS, behind_proxy=True, public_url="https://console.fleet.test") as console:
        assert console.url.startswith("https://console.fleet.test/?token=")
        view = _token(console.read_only_url)

        def get(host: str, origin: str | None = None) -> int:
            conn = http.client.HTTPConnection(ADDRESS, console.port, timeout=30)  # the proxy's side
            headers = {"Host": host, "Authorization": f"Bearer {_token(console.url)}"}
            if origin is not None:
                headers.update({"Origin": origin, "Content-Type": "application/json"})
                conn.request(
                    "POST", "/api/sessions/none/control", body=b'{"action":"pause"}', headers=headers
                )
            else:
                conn.request("GET", f"/api/sessions?token={view}", headers={"Host": host})
            try:
                return conn.getresponse().status
            finally:
                conn.close()

        assert await asyncio.to_thread(get, "console.fleet.test") == 200  # as nginx forwards it
        assert await asyncio.to_thread(get, "console.fleet.test:443") == 200
        assert await asyncio.to_thread(get, "evil.test") == 403  # a rebound name
        # beyond loopback only the public name (a loopback bind keeps its own names, for the
        # proxy on the same machine)
        assert await asyncio.to_thread(get, f"{ADDRESS}:{console.port}") == 200
        # bound beyond loopback behind a proxy, the public name is the only one (checked without
        # binding there: tests connect to loopback only)
        beyond = Access("f" * 32, "v" * 32, "192.0.2.10", behind_proxy=True, public_url="https://console.fleet.test")
        beyond.port = 8765
        assert beyond.hosts() == {"console.fleet.test", "console.fleet.test:443"}
        assert await asyncio.to_thread(get, "console.fleet.test", "https://console.fleet.test") == 404
        assert await asyncio.to_thread(get, "console.fleet.test", "https://evil.test") == 403


# -- guards across machines ----------------------------------------------------------------------
async def test_a_fleet_over_tls(
    fleet: Console,
    certs: Certs,
    watcher: Callable[[], Awaitable[Person]],
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="pagewarden")
    assert fleet.url.startswith(f"https://{ADDRESS}:")
    full, view, guard_token = _token(fleet.url), _token(fleet.read_only_url), _token(fleet.guard_url)
    api = Api(fleet.url.split("/?")[0], certs.ca)
    fleet_env = {"PAGEWARDEN_CONSOLE_CA": str(certs.ca)}
    agents = [("billing-bot", "runner-a"), ("billing-bot", "runner-b"), ("support-bot", "runner-a")]
    procs = [
        await asyncio.create_subprocess_exec(
            sys.executable,
            str(AGENT),
            fleet.guard_url,
            name,
            host,
            cwd=ROOT,
            env={**os.environ, **fleet_env},
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        for name, host in agents
    ]
    try:
        asked = [(await _line(p, "ASKED")).split() for p in procs]
        assert [a[2] for a in asked] == ["ask"] * 3
        sessions = {agents[i]: asked[i][1] for i in range(3)}

        # -- the JSON API lists and filters (only over verified TLS, only with a reading token)
        await _until(lambda: len(fleet.hub.approvals()) == 3, "three pending approvals")
        status, answer = await asyncio.to_thread(api.call, "GET", "/api/sessions", view)
        assert status == 200 and len(answer["sessions"]) == 3
        assert {(s["agent"], s["host"]) for s in answer["sessions"]} == set(agents)
        status, answer = await asyncio.to_thread(api.call, "GET", "/api/sessions?agent=billing-bot", view)
        assert {s["id"] for s in answer["sessions"]} == {sessions[agents[0]], sessions[agents[1]]}
        status, answer = await asyncio.to_thread(
            api.call, "GET", "/api/sessions?agent=billing-bot&host=runner-b", view
        )
        assert [s["id"] for s in answer["sessions"]] == [sessions[agents[1]]]
        status, answer = await asyncio.to_thread(
            api.call, "GET", "/api/sessions?agent=billing-bot&agent=support-bot&host=runner-a", view
        )
        assert {s["id"] for s in answer["sessions"]} == {sessions[agents[0]], sessions[agents[2]]}
        status, answer = await asyncio.to_thread(api.call, "GET", "/api/sessions?status=waiting", view)
        assert len(answer["sessions"]) == 3 and all(s["pending"] == 1 for s in answer["sessions"])
        status, answer = await asyncio.to_thread(api.call, "GET", "/api/approvals?agent=support-bot", view)
        assert [a["session"] for a in answer["approvals"]] == [sessions[agents[2]]]
        assert (await asyncio.to_thread(api.call, "GET", "/api/sessions?status=sleeping", view))[0] == 400
        # the guard token attaches guards and does nothing else
        assert await asyncio.to_thread(api.call, "GET", "/api/sessions", guard_token) == (
            403, {"error": "Guard token (attaching guards only)"}
        )  # fmt: skip
        # an unverified certificate is refused by the client (this is real TLS)
        with pytest.raises(Exception, match="CERTIFICATE_VERIFY_FAILED"):
            await asyncio.to_thread(
                api.call, "GET", "/api/sessions", view, context=ssl.create_default_context()
            )

        # -- two watchers: one filtered to billing-bot, one seeing everything
        billing, everyone = await watcher(), await watcher()
        await billing.page.goto(fleet.url + "&agent=billing-bot")
        await everyone.page.goto(fleet.url)
        await billing.page.locator("#inbox li[data-status='pending']").nth(1).wait_for()
        await everyone.page.locator("#inbox li[data-status='pending']").nth(2).wait_for()
        billing_cards = billing.page.locator("#inbox li[data-status='pending']")
        assert await billing_cards.count() == 2  # support-bot's approval is not routed to it
        assert {await c.get_attribute("data-session") for c in await billing_cards.all()} == {
            sessions[agents[0]], sessions[agents[1]]
        }  # fmt: skip
        assert await billing.page.locator("#session-list li").count() == 2
        assert "runner-b" in await billing.page.locator("#session-list").inner_text()

        # support-bot's approval goes to the watcher who sees it
        card = everyone.page.locator(f"#inbox li[data-session='{sessions[agents[2]]}']")
        assert "support-bot" in await card.inner_text()
        await card.locator("button.approve").click()
        assert await _line(procs[2], "ANSWER") == "ANSWER True"

        # billing-bot on runner-a: the first answer wins, the other watcher sees it answered
        first = sessions[agents[0]]
        await billing.page.locator(f"#inbox li[data-session='{first}'] button.approve").click()
        assert await _line(procs[0], "ANSWER") == "ANSWER True"
        # … under "Recently answered", no longer under "Waiting for approval"
        other = everyone.page.locator(f"#answered li[data-session='{first}']:not([data-status='pending'])")
        await other.wait_for()
        assert await other.locator("button.approve").count() == 0
        assert await everyone.page.locator(f"#inbox li[data-session='{first}']").count() == 0
        assert "(console)" in await other.inner_text()  # who answered: the shared full token
        approval_id = await other.get_attribute("data-approval")
        late = await asyncio.to_thread(
            api.call, "POST", f"/api/sessions/{first}/approvals/{approval_id}", full, {"approved": False}
        )
        assert late == (409, {"error": "no such pending approval (already answered, expired or unknown)"})

        # billing-bot on runner-b: denied by the unfiltered watcher
        await everyone.page.locator(f"#inbox li[data-session='{sessions[agents[1]]}'] button.deny").click()
        assert await _line(procs[1], "ANSWER") == "ANSWER False"

        # the UI's filters: by agent, then by status once a session has closed
        await everyone.page.locator("#f-agent").select_option("support-bot")
        await _until_count(everyone, 1)
        assert sessions[agents[2]] in await everyone.page.locator("#session-list li").get_attribute(
            "data-session"
        )
        await everyone.page.locator("#f-agent").select_option("")
        await everyone.page.locator("#f-status").select_option("closed")
        await _until_count(everyone, 0)
        assert procs[0].stdin is not None
        procs[0].stdin.write(b"done\n")
        await procs[0].stdin.drain()
        await _line(procs[0], "DONE")
        await everyone.page.locator(f"#session-list li[data-session='{first}']").wait_for()
        await _until_count(everyone, 1)
        status, answer = await asyncio.to_thread(api.call, "GET", "/api/sessions?status=closed", view)
        assert [s["id"] for s in answer["sessions"]] == [first]

        for person in (billing, everyone):
            assert person.errors == [] and person.dialogs == []
        for token in (full, view, guard_token):
            assert token not in caplog.text
        assert caplog.records
    finally:
        for proc in procs:
            if proc.returncode is None:
                if proc.stdin is not None and not proc.stdin.is_closing():
                    proc.stdin.write(b"done\n")
                    proc.stdin.close()
                try:
                    await asyncio.wait_for(proc.wait(), 30)
                except TimeoutError:
                    proc.kill()
                    await proc.wait()


async def _until_count(person: Person, count: int) -> None:
    rows = person.page.locator("#session-list li")
    for _ in range(300):
        if await rows.count() == count:
            return
        await asyncio.sleep(0.05)  # the list follows the stream
    raise AssertionError(f"the session list did not show {count} sessions: {await rows.count()}")


def _ask(guard: Guard) -> tuple[Any, Any]:
    step = guard.make_step(
        Action(kind="click", selector="#publish"),
        Observation(
            url="http://app.test/supervised.html",
            target=ElementFacts(tag="button", role="button", name="Publish release"),
        ),
    )
    return guard.assess(step), step


async def test_a_guard_fails_closed_when_the_tls_console_goes_away(certs: Certs, monkeypatch: Any) -> None:
    monkeypatch.setenv("PAGEWARDEN_CONSOLE_CA", str(certs.ca))
    console = Console(host=ADDRESS, tls_cert=certs.cert, tls_key=certs.key).start()
    guard = Guard([consent("Publish release")], console=console.guard_url, agent_name="ops-bot")
    try:
        verdict, step = _ask(guard)
        assert verdict.decision.value == "ask"
        answer = guard.ask_approver(verdict, step)
        assert inspect.isawaitable(answer)
        waiting = asyncio.ensure_future(answer)
        await _until(lambda: len(console.hub.approvals()) == 1, "the approval at the console")
        console.close()  # the console dies while a person was being asked
        assert await asyncio.wait_for(waiting, 60) is False
        assert guard.ask_approver(verdict, step) is False  # and later ASKs are refused at once
    finally:
        guard.close()
        console.close()
    # a guard that does not trust the console's certificate does not attach (and says why,
    # without its token)
    monkeypatch.delenv("PAGEWARDEN_CONSOLE_CA")
    async with Console(host=ADDRESS, tls_cert=certs.cert, tls_key=certs.key) as other:
        with pytest.raises(ConsoleUnavailable, match="CERTIFICATE_VERIFY_FAILED") as failed:
            await asyncio.to_thread(Guard, console=other.guard_url)
        assert _token(other.guard_url) not in str(failed.value)


# -- the page is hostile, so are the names guards report ---------------------------------------
HOSTILE_NAME = "<img src=x onerror=\"window.__pwned=11;fetch('http://evil.test/console-pwned/agent')\">bot"
HOSTILE_HOST = "<script>window.__pwned=12</script><svg onload=alert(13)>"


async def test_hostile_agent_names_and_page_text_render_inert(
    fleet: Console, context: BrowserContext, watcher: Callable[[], Awaitable[Person]], site: LocalSite
) -> None:
    guard = await asyncio.to_thread(  # over HTTPS, to the console on this loop
        Guard,
        [consent("Publish release")],
        goal="Publish the release",
        console=fleet.guard_url,
        agent_name=HOSTILE_NAME,
        agent_host=HOSTILE_HOST,
    )
    try:
        page = guard.wrap(await context.new_page())
        await page.goto("http://app.test/hostile_console.html")
        person = await watcher()
        await person.page.goto(fleet.url)
        ask = asyncio.create_task(page.click("#svg"))
        card = person.page.locator("#inbox li[data-status='pending']")
        await card.wait_for()
        text = await card.inner_text()
        assert HOSTILE_NAME[:50] in text and HOSTILE_HOST[:50] in text  # shown, literally (clipped)
        assert "<svg onload=" in text or "<img src=x onerror=" in text  # the page's own text
        await person.page.locator("#f-agent").select_option(HOSTILE_NAME)  # a filter option, as text
        await card.wait_for()
        await card.locator("button.open").click()
        await person.page.locator("#d-agent", has_text="bot").wait_for()
        assert await person.page.locator("#d-agent").inner_text() == HOSTILE_NAME
        assert await person.page.locator("#d-host").inner_text() == HOSTILE_HOST
        await card.locator("button.deny").click()
        with pytest.raises(ApprovalRequired):
            await ask
        row = person.page.locator("#session-list li")
        assert HOSTILE_NAME[:50] in await row.inner_text()
        assert await person.page.locator("aside img, aside script, aside svg, #detail img:not(#frame), "
                                         "#detail script, #detail svg").count() == 0  # fmt: skip
        assert await person.page.evaluate("() => window.__pwned") is None
        assert person.dialogs == [] and person.errors == []
        assert [u for u in person.requests if urllib.parse.urlsplit(u).hostname != ADDRESS] == []
        assert [r.path for r in site.requests_to("evil.test") if r.path.startswith("/console-pwned")] == []
        status, answer = await asyncio.to_thread(
            Api(fleet.url.split("/?")[0], Path(os.environ["PAGEWARDEN_CONSOLE_CA"])).call,
            "GET",
            "/api/sessions?" + urllib.parse.urlencode({"agent": HOSTILE_NAME}),
            _token(fleet.read_only_url),
        )
        assert status == 200 and [s["agent"] for s in answer["sessions"]] == [HOSTILE_NAME]
        assert json.dumps(answer)  # plain JSON, the names as strings
    finally:
        guard.close()


async def test_a_guard_attaches_again_when_the_console_restarts() -> None:
    tokens = {
        "token": "full-" + "f" * 30,
        "read_only_token": "view-" + "v" * 30,
        "guard_token": "guard-" + "g" * 30,
    }
    console = Console(approval_timeout=30, **tokens).start()
    port = console.port
    guard = await asyncio.to_thread(
        Guard, [consent("Publish release")], console=console.guard_url, agent_name="restart-bot"
    )
    link = guard.console
    try:
        verdict, step = _ask(guard)
        console.close()  # the console is restarted (a new version deployed) …
        await _until(lambda: not link.channel.available, "the guard to notice")
        assert guard.ask_approver(verdict, step) is False  # … meanwhile ASKs are denied
        console = Console(port=port, approval_timeout=30, **tokens).start()
        # the guard registers again on its own and says who it is and where it stands
        await _until(
            lambda: [s["agent"] for s in console.hub.summaries()] == ["restart-bot"], "re-registration"
        )
        await _until(lambda: link.channel.available, "the console to be available again")
        (summary,) = console.hub.summaries()
        assert summary["id"] == guard.session_id and summary["status"] == "running"
        answer = guard.ask_approver(verdict, step)
        assert inspect.isawaitable(answer)
        waiting = asyncio.ensure_future(answer)
        await _until(lambda: len(console.hub.approvals()) == 1, "the approval at the new console")
        approval = console.hub.approvals()[0]["approval"]["id"]
        console.hub.command(guard.session_id, {"type": "decide", "approval": approval, "approved": True})
        assert await asyncio.wait_for(waiting, 30) is True
        # and the new console's commands reach it (numbered from 1 again)
        console.hub.command(guard.session_id, {"type": "pause"})
        await _until(lambda: link.status == "paused", "the pause to arrive")
    finally:
        guard.close()
        console.close()
