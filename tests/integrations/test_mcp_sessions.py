"""`pagewarden mcp --port`: a session per client. Two clients of one server over streamable HTTP
(the SDK's HTTP client, each with its own token) never see each other's page, cookies, goal,
refusals or trace; each is named in the console after its token; one closing leaves the other
working; sessions past the limits are refused with a clear error while the others are served;
an idle session's context is closed; ``shared_context`` gives Playwright MCP's shared context."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from pagewarden.integrations.mcp import Clients, HttpOptions, ServerOptions
from pagewarden.testing import LocalSite, RecordedRequest, Response
from tests.integrations._mcp_client import (
    MCP_HEADERS,
    http_client,
    http_server,
    initialize_request,
    text_of,
)

pytestmark = [pytest.mark.browser, pytest.mark.timeout(420)]

ALICE = "alice-token-" + "a" * 32
BOB = "bob-token-" + "b" * 32
CAROL = "carol-token-" + "c" * 32
POLICIES = """
version: 1
policies:
  - id: VAULT-ONLY
    category: boundary
    risk_level: high
    description: Work on the vault only.
    rules:
      - domain_allow: [vault.test]
"""


def _vault(request: RecordedRequest) -> Response:
    """``/login?user=X`` signs X in (a cookie); every page says who is signed in."""
    user = (request.query.get("user") or [""])[0]
    headers = {}
    if request.path == "/login" and user.isalnum():
        headers["Set-Cookie"] = f"vault_user={user}; Path=/"
    else:
        cookies = dict(
            part.strip().split("=", 1) for part in request.headers.get("Cookie", "").split(";") if "=" in part
        )
        user = cookies.get("vault_user", "")
    who = f"signed in as {user}" if user else "signed out"
    body = f"<!doctype html><title>Vault ({who})</title><h1>Vault</h1><p>You are {who}.</p>"
    return Response(body, headers=headers)


@pytest.fixture(scope="module")
def vault() -> Iterator[LocalSite]:
    site = LocalSite()
    for path in ("/", "/login"):
        site.route("vault.test", path, _vault)
    site.route("evil.test", "/", lambda request: Response("<title>evil</title>collected"))
    with site:
        yield site


def _auth(token: str) -> dict[str, str]:
    return {**MCP_HEADERS, "Authorization": f"Bearer {token}"}


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(0o600)
    return path


def _tokens(tmp_path: Path, bob_max: int | None = None) -> Clients:
    bob = {"name": "bob", "token": BOB, **({"max_sessions": bob_max} if bob_max else {})}
    clients = {"clients": [{"name": "alice", "token": ALICE}, bob, {"name": "carol", "token": CAROL}]}
    return Clients.from_file(_write(tmp_path / "tokens.json", json.dumps(clients)))


def _options(vault: LocalSite, tmp_path: Path, **changes) -> ServerOptions:
    policies = _write(tmp_path / "vault.yaml", POLICIES)
    base = dict(isolated=True, host_map={"*.test": vault.port}, policies=(policies,),
                output_dir=tmp_path / "out")  # fmt: skip
    return ServerOptions(**{**base, **changes})


def _leaves(error: BaseException) -> list[BaseException]:
    """The exceptions inside (nested) exception groups."""
    if isinstance(error, BaseExceptionGroup):
        return [leaf for inner in error.exceptions for leaf in _leaves(inner)]
    return [error]


async def _console_agents(console_url: str) -> list[str | None]:
    base, token = console_url.split("/?token=")
    async with httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"}) as http:
        answer = await http.get(f"{base}/api/sessions", timeout=30)
    answer.raise_for_status()
    return sorted(s.get("agent") or "" for s in answer.json()["sessions"])


async def test_two_clients_are_isolated_and_named_and_one_closing_leaves_the_other(
    vault: LocalSite, tmp_path: Path
) -> None:
    from pagewarden.console import Console

    console = Console(approval_timeout=30).start()  # as `pagewarden console` in another process
    record = tmp_path / "sessions"
    options = _options(vault, tmp_path, record=record, console=console.url)
    try:
        async with http_server(options, HttpOptions(clients=_tokens(tmp_path))) as (url, server):  # noqa: SIM117
            async with http_client(url, ALICE, name="claude-code") as alice:
                assert not (await alice.call_tool("set_goal", {"goal": "Read alice's vault."})).isError
                async with http_client(url, BOB, name="claude-code") as bob:
                    assert not (await bob.call_tool("set_goal", {"goal": "Read bob's vault."})).isError
                    # both open their browser context and network layer at the same moment
                    signed_in, signed_out = await asyncio.gather(
                        alice.call_tool("browser_navigate", {"url": "http://vault.test/login?user=alice"}),
                        bob.call_tool("browser_navigate", {"url": "http://vault.test/"}),
                    )
                    assert "signed in as alice" in text_of(signed_in)
                    assert "signed out" in text_of(signed_out) and "alice" not in text_of(signed_out)
                    # B sees none of A's tabs or pages, and has none of A's cookies
                    seen = text_of(await bob.call_tool("browser_snapshot", {}))
                    seen += text_of(await bob.call_tool("browser_tabs", {"action": "list"}))
                    seen += text_of(await bob.call_tool("browser_navigate", {"url": "http://vault.test/"}))
                    assert "alice" not in seen and "signed out" in seen
                    # B's refusal is B's; A acts at the same time and is not held up by it
                    refused, mine = await asyncio.gather(
                        bob.call_tool("browser_navigate", {"url": "http://evil.test/"}),
                        alice.call_tool("browser_navigate", {"url": "http://vault.test/"}),
                    )
                    assert refused.isError and "VAULT-ONLY" in text_of(refused)
                    assert not mine.isError and "signed in as alice" in text_of(mine)
                    # one guard, goal and name per session, named after the token (not the clientInfo)
                    by_name = {s.agent_name: s for s in server.sessions}
                    assert set(by_name) == {"alice", "bob"}
                    assert by_name["alice"].guard.goal == "Read alice's vault."
                    assert by_name["bob"].guard.goal == "Read bob's vault."
                    assert by_name["alice"].guard is not by_name["bob"].guard
                    # and one memory: B's guard remembers none of A's steps
                    alice_steps = [repr(h) for h in by_name["alice"].guard.session.history]
                    bob_steps = [repr(h) for h in by_name["bob"].guard.session.history]
                    assert any("user=alice" in u for u in alice_steps) and bob_steps
                    assert not any("alice" in u for u in bob_steps)
                    assert await _console_agents(console.url) == ["alice", "bob"]
                    bobs = by_name["bob"]
                # B disconnected: its session, context and guard are closed; A goes on working
                await asyncio.wait_for(bobs.closed.wait(), 60)
                assert [s.agent_name for s in server.sessions] == ["alice"]
                again = await alice.call_tool("browser_navigate", {"url": "http://vault.test/"})
                assert not again.isError and "signed in as alice" in text_of(again)
    finally:
        console.close()
    # each session recorded into its own directory, under its client's name
    dirs = {json.loads((d / "manifest.json").read_text())["agent"]: d for d in record.iterdir()}
    assert set(dirs) == {"alice", "bob"}
    alices, bobs_trace = (dirs[n] / "trace.jsonl" for n in ("alice", "bob"))
    assert "evil.test" in bobs_trace.read_text() and "evil.test" not in alices.read_text()
    assert "login?user=alice" in alices.read_text() and "alice" not in bobs_trace.read_text()
    assert json.loads((dirs["alice"] / "manifest.json").read_text())["goal"] == "Read alice's vault."
    assert vault.requests_to("evil.test") == []


async def test_session_limits_refuse_clearly_while_the_others_are_served(
    vault: LocalSite, tmp_path: Path
) -> None:
    http = HttpOptions(clients=_tokens(tmp_path, bob_max=1), max_sessions=2)
    async with http_server(_options(vault, tmp_path), http) as (url, server):  # noqa: SIM117
        async with http_client(url, BOB, name="bot") as bob:
            assert not (await bob.call_tool("browser_navigate", {"url": "http://vault.test/"})).isError
            async with httpx.AsyncClient(timeout=60) as raw:
                # bob's token may hold one session (its tokens-file limit)
                second = await raw.post(url, json=initialize_request(), headers=_auth(BOB))
                assert second.status_code == 429
                assert "its limit (1)" in second.json()["error"]["message"]
                # the SDK's client gets the refusal too, as an HTTP error
                with pytest.raises(BaseException) as refused:
                    async with http_client(url, BOB):
                        pass
                assert any("429" in str(e) for e in _leaves(refused.value))
                async with http_client(url, ALICE) as alice:
                    assert [s.agent_name for s in server.sessions].count("alice") == 1
                    # the server's limit (2): carol waits for a free slot
                    third = await raw.post(url, json=initialize_request(), headers=_auth(CAROL))
                    assert third.status_code == 503 and "--max-sessions 2" in third.json()["error"]["message"]
                    assert third.headers.get("retry-after")
                    # the open sessions are served all the while
                    assert not (await alice.call_tool("browser_snapshot", {})).isError
                    assert not (await bob.call_tool("browser_snapshot", {})).isError
            # a request too big is refused before it is read; the session goes on
            async with httpx.AsyncClient(timeout=60) as raw:
                big = await raw.post(
                    url, content=b"x" * (http.max_request_bytes + 1),
                    headers=_auth(BOB),
                )  # fmt: skip

                # and so is one sent in chunks, without a declared length
                async def chunks():
                    for _ in range(40):
                        yield b"x" * 32768

                chunked = await raw.post(url, content=chunks(), headers=_auth(BOB))
            assert big.status_code == 413 and "at most 1048576" in big.json()["error"]["message"]
            assert chunked.status_code == 413 and "at most 1048576" in chunked.json()["error"]["message"]
            assert not (await bob.call_tool("browser_snapshot", {})).isError


async def test_an_idle_session_is_closed_with_its_context(vault: LocalSite, tmp_path: Path) -> None:
    """A client that goes away without ending its session (no DELETE, no open stream): after the
    idle timeout the server closes the session and its browser context; the others stay."""
    from pagewarden.console import Console

    token = "unnamed-token-" + "u" * 32
    http = HttpOptions(clients=Clients.from_token(token), session_idle_timeout=2)
    console = Console(approval_timeout=30).start()
    try:
        async with http_server(_options(vault, tmp_path, console=console.url), http) as (url, server):
            async with http_client(url, token, name="gone-client", terminate_on_close=False) as gone:
                assert not (await gone.call_tool("browser_navigate", {"url": "http://vault.test/"})).isError
                (session,) = server.sessions
                context = session.browser.tabs[0].unwrap().context
                # no token name: the agent is named after the client's clientInfo, in the console too
                assert session.agent_name == "gone-client" and session.guard.agent_name == "gone-client"
                assert await _console_agents(console.url) == ["gone-client"]
            await asyncio.wait_for(session.closed.wait(), 120)
            assert server.sessions == () and not session.browser.started
            with pytest.raises(Exception, match="closed"):
                await context.new_page()
    finally:
        console.close()


async def test_shared_context_is_one_session_for_every_client(vault: LocalSite, tmp_path: Path) -> None:
    """``--shared-context``: Playwright MCP's behaviour on request, never by default."""
    http = HttpOptions(clients=_tokens(tmp_path))
    async with (
        http_server(_options(vault, tmp_path, shared_context=True), http) as (url, server),
        http_client(url, ALICE) as alice,
        http_client(url, BOB) as bob,
    ):
        await alice.call_tool("browser_navigate", {"url": "http://vault.test/login?user=alice"})
        seen = text_of(await bob.call_tool("browser_snapshot", {}))
        assert "signed in as alice" in seen  # one page for both, as asked
        assert len(server.sessions) == 1 and server.connections() == 2
