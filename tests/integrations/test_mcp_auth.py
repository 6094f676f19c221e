"""`pagewarden mcp --port` lets in only the clients it should: a bearer token on every request
(401 with the MCP authorization specification's challenge otherwise, logged without the token),
tokens from the environment, a file or made once on loopback (0600, printed once), tokens
limited to a policy set or a goal, TLS beyond loopback (checked by the refusal alone: nothing here
binds or connects beyond loopback), and tokens in no log, trace or error. Clients are the MCP
SDK's HTTP client, or raw HTTP where the status and headers are what is checked."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import ssl
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from pagewarden.integrations.mcp import (
    Clients,
    ClientsError,
    GuardedBrowserServer,
    HttpOptions,
    ServerOptions,
    check_http,
    token_digest,
)
from pagewarden.testing import LocalSite
from tests.console._fleet import make_certs
from tests.integrations._mcp_client import (
    MCP_HEADERS,
    free_port,
    http_client,
    http_server,
    initialize_request,
    text_of,
)

pytestmark = [pytest.mark.timeout(300)]

TOKEN = "right-token-" + "r" * 32
OTHER = "other-token-" + "o" * 32
WRONG = "wrong-token-" + "w" * 32
NARROW = """
version: 1
policies:
  - id: APP-ONLY
    category: boundary
    risk_level: high
    description: Only the app.
    rules:
      - domain_allow: [app.test]
"""


def _file(path: Path, text: str, mode: int = 0o600) -> Path:
    path.write_text(text)
    path.chmod(mode)
    return path


def _leaves(error: BaseException) -> list[BaseException]:
    if isinstance(error, BaseExceptionGroup):
        return [leaf for inner in error.exceptions for leaf in _leaves(inner)]
    return [error]


def _options(site: LocalSite, tmp_path: Path, **changes) -> ServerOptions:
    base = dict(isolated=True, proxy=False, host_map={"*.test": site.port}, output_dir=tmp_path / "out")
    return ServerOptions(**{**base, **changes})


@pytest.mark.browser
async def test_no_token_or_a_wrong_one_is_401_and_the_right_one_works(
    site: LocalSite, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="pagewarden")
    clients = Clients.from_file(_file(tmp_path / "tokens.yaml", json.dumps(
        {"clients": [{"name": "alice", "token": TOKEN}, {"name": "bob", "token_sha256": token_digest(OTHER)}]}
    )))  # fmt: skip
    record = tmp_path / "sessions"
    seen: list[str] = []
    async with http_server(_options(site, tmp_path, record=record), HttpOptions(clients=clients)) as (
        url,
        server,
    ):
        async with httpx.AsyncClient(timeout=60) as raw:
            bare = await raw.post(url, json=initialize_request(), headers=MCP_HEADERS)
            wrong = await raw.post(
                url, json=initialize_request(), headers={**MCP_HEADERS, "Authorization": f"Bearer {WRONG}"}
            )
            basic = await raw.post(
                url, json=initialize_request(), headers={**MCP_HEADERS, "Authorization": f"Basic {TOKEN}"}
            )
            metadata_url = bare.headers["www-authenticate"].split('resource_metadata="')[1].rstrip('"')
            metadata = (await raw.get(metadata_url)).json()
        for answer in (bare, wrong, basic):
            assert answer.status_code == 401
            challenge = answer.headers["www-authenticate"]
            assert challenge.startswith('Bearer realm="pagewarden"') and "resource_metadata=" in challenge
            assert "Authorization: Bearer" in answer.json()["error_description"]
            seen += [challenge, answer.text]
        assert "error=" not in bare.headers["www-authenticate"]  # RFC 6750: no credentials, no error code
        assert 'error="invalid_token"' in wrong.headers["www-authenticate"]
        assert metadata == {"resource": url, "bearer_methods_supported": ["header"],
                            "resource_name": "pagewarden MCP server (a guarded browser)"}  # fmt: skip
        assert server.sessions == ()  # nothing was opened for them
        # the SDK's client: refused without a token, and with a wrong one
        for token in (None, WRONG):
            with pytest.raises(BaseException) as refused:
                async with http_client(url, token):
                    pass
            errors = [str(e) for e in _leaves(refused.value)]
            assert any("401" in e for e in errors), errors
            seen += errors
        # the right tokens work: a file's clear token, and one kept as its SHA-256 only
        async with http_client(url, TOKEN) as alice, http_client(url, OTHER) as bob:
            assert "browser_navigate" in {t.name for t in (await alice.list_tools()).tools}
            page = await alice.call_tool("browser_navigate", {"url": site.url("app.test")})
            assert not page.isError, text_of(page)
            failed = await bob.call_tool("browser_click", {"ref": "e999", "element": "nothing"})
            assert failed.isError
            seen += [text_of(page), text_of(failed)]
            assert sorted(s.agent_name for s in server.sessions) == ["alice", "bob"]
        # a session answers only the token that opened it
        async with httpx.AsyncClient(timeout=60) as raw:
            opened = await raw.post(
                url, json=initialize_request(), headers={**MCP_HEADERS, "Authorization": f"Bearer {TOKEN}"}
            )
            session_id = opened.headers["mcp-session-id"]
            stolen = await raw.post(
                url, json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
                headers={**MCP_HEADERS, "Authorization": f"Bearer {OTHER}", "mcp-session-id": session_id},
            )  # fmt: skip
            assert stolen.status_code == 404
    # each refusal was logged, with the reason and without the token
    refusals = [r.msg for r in caplog.records if "mcp_refused" in str(r.msg)]
    reasons = [r["reason"] for r in refusals if isinstance(r, dict)]
    assert reasons.count("no bearer token") >= 3 and reasons.count("unknown bearer token") >= 2, reasons
    written = [p.read_text(errors="replace") for p in record.rglob("*") if p.is_file()]
    assert written  # the sessions were recorded
    for token in (TOKEN, OTHER, WRONG):
        assert token not in caplog.text
        assert not any(token in text for text in seen + written)


def test_beyond_loopback_without_tls_it_refuses_to_start(tmp_path: Path) -> None:
    """Checked before any socket is bound: nothing here listens beyond loopback."""
    server = GuardedBrowserServer(ServerOptions(isolated=True))
    clients = Clients.from_token(TOKEN)
    for host in ("0.0.0.0", "192.0.2.10", "::"):
        with pytest.raises(ValueError, match=f"refusing to listen on {host} without TLS"):
            check_http(server, HttpOptions(host=host, clients=clients))
    with pytest.raises(ValueError, match="--public-url"):
        check_http(server, HttpOptions(host="127.0.0.1", clients=clients, behind_proxy=True))
    with pytest.raises(ValueError, match="no token"):
        check_http(
            server, HttpOptions(host="0.0.0.0", behind_proxy=True, public_url="https://mcp.example.com")
        )
    with pytest.raises(ValueError, match="--no-auth is for a server on loopback only"):
        check_http(server, HttpOptions(host="0.0.0.0", auth=False, behind_proxy=True,
                                       public_url="https://mcp.example.com"))  # fmt: skip
    # no token and no Host check: a page could reach it by DNS rebinding
    with pytest.raises(ValueError, match="DNS rebinding"):
        check_http(server, HttpOptions(auth=False, allowed_hosts=("*",)))
    check_http(server, HttpOptions(auth=False))
    with pytest.raises(ValueError, match="both a certificate"):
        check_http(server, HttpOptions(clients=clients, tls_cert=tmp_path / "cert.pem"))
    check_http(server, HttpOptions(host="0.0.0.0", clients=clients, behind_proxy=True,
                                   public_url="https://mcp.example.com"))  # fmt: skip
    # a persistent profile is one context: several clients share it only when told to
    persistent = GuardedBrowserServer(ServerOptions(user_data_dir=tmp_path / "profile"))
    with pytest.raises(ValueError, match="--shared-context"):
        check_http(persistent, HttpOptions(clients=clients))
    # the command line says so and exits before listening
    done = subprocess.run(
        [sys.executable, "-m", "pagewarden", "mcp", "--port", "8931", "--host", "0.0.0.0"],
        capture_output=True, text=True, timeout=120, env={**os.environ, "PAGEWARDEN_MCP_TOKEN": TOKEN},
    )  # fmt: skip
    assert done.returncode == 2 and "refusing to listen on 0.0.0.0 without TLS" in done.stderr
    assert TOKEN not in done.stderr + done.stdout


def test_tokens_files_are_checked(tmp_path: Path) -> None:
    good = {"name": "alice", "token": TOKEN}
    cases = {
        "other users may read it": ({"clients": [good]}, 0o644),
        "at least 32 characters": ({"clients": [{"name": "alice", "token": "short"}]}, 0o600),
        "same name": ({"clients": [good, {"name": "alice", "token": OTHER}]}, 0o600),
        "same token": ({"clients": [good, {"name": "bob", "token": TOKEN}]}, 0o600),
        "unknown field": ({"clients": [{**good, "scopes": ["all"]}]}, 0o600),
        "either 'token' or 'token_sha256'": ({"clients": [{"name": "alice"}]}, 0o600),
        "64 hexadecimal digits": ({"clients": [{"name": "alice", "token_sha256": "abc"}]}, 0o600),
        "needs a 'clients' list": ({"tokens": [good]}, 0o600),
        "max_sessions": ({"clients": [{**good, "max_sessions": 0}]}, 0o600),
        "file not found": ({"clients": [{**good, "policies": ["missing.yaml"]}]}, 0o600),
    }
    for i, (message, (data, mode)) in enumerate(cases.items()):
        path = _file(tmp_path / f"tokens-{i}.json", json.dumps(data), mode)
        with pytest.raises(ClientsError, match=message) as refused:
            Clients.from_file(path)
        assert TOKEN not in str(refused.value) and OTHER not in str(refused.value)
    # hashes only: no token in the file, so its mode does not matter
    hashed = _file(
        tmp_path / "hashed.yaml",
        f"clients:\n  - name: alice\n    token_sha256: {token_digest(TOKEN)}\n",
        0o644,
    )
    clients = Clients.from_file(hashed)
    assert clients.match(TOKEN).name == "alice" and clients.match(OTHER) is None and clients.match("") is None
    # a client policy whose id the server's policies use already: refused at start
    _file(tmp_path / "narrow.yaml", NARROW)
    limited = _file(tmp_path / "limited.yaml", json.dumps(
        {"clients": [{"name": "alice", "token": TOKEN, "policies": ["narrow.yaml"]}]}))  # fmt: skip
    server = GuardedBrowserServer(ServerOptions(isolated=True, policies=(tmp_path / "narrow.yaml",)))
    with pytest.raises(ValueError, match="APP-ONLY"):
        check_http(server, HttpOptions(clients=Clients.from_file(limited)))
    shared = GuardedBrowserServer(ServerOptions(isolated=True, shared_context=True))
    with pytest.raises(ValueError, match="cannot apply"):
        check_http(shared, HttpOptions(clients=Clients.from_file(limited)))


@pytest.mark.browser
async def test_a_token_limited_to_policies_and_a_goal(site: LocalSite, tmp_path: Path) -> None:
    goal = "Fill in the form on app.test."
    _file(tmp_path / "narrow.yaml", NARROW)
    tokens = _file(tmp_path / "tokens.yaml", json.dumps({"clients": [
        {"name": "narrow", "token": TOKEN, "policies": ["narrow.yaml"], "goal": goal},
        {"name": "wide", "token": OTHER},
    ]}))  # fmt: skip
    http = HttpOptions(clients=Clients.from_file(tokens))
    async with (
        http_server(_options(site, tmp_path, proxy=True), http) as (url, server),
        http_client(url, TOKEN) as narrow,
        http_client(url, OTHER) as wide,
    ):
        assert "set_goal" not in {t.name for t in (await narrow.list_tools()).tools}
        assert "set_goal" in {t.name for t in (await wide.list_tools()).tools}
        refused = await narrow.call_tool("browser_navigate", {"url": site.url("other.test")})
        assert refused.isError and "APP-ONLY" in text_of(refused)
        allowed = await wide.call_tool("browser_navigate", {"url": site.url("other.test")})
        assert not allowed.isError, text_of(allowed)
        hijack = await narrow.call_tool("set_goal", {"goal": "anything"})
        assert hijack.isError
        goals = {s.agent_name: s.guard.goal for s in server.sessions}
        assert goals == {"narrow": goal, "wide": None}


@pytest.mark.browser
async def test_tls_on_loopback(site: LocalSite, tmp_path: Path) -> None:
    certs = make_certs(tmp_path, ["127.0.0.1"])
    http = HttpOptions(clients=Clients.from_token(TOKEN), tls_cert=certs.cert, tls_key=certs.key)
    trust = ssl.create_default_context(cafile=str(certs.ca))
    async with http_server(_options(site, tmp_path), http) as (url, _):
        assert url.startswith("https://127.0.0.1:")
        async with http_client(url, TOKEN, verify=trust) as client:
            assert (await client.list_tools()).tools
        async with httpx.AsyncClient(timeout=30) as raw:  # plain HTTP is not answered
            with pytest.raises(httpx.HTTPError):
                await raw.post(
                    url.replace("https://", "http://"), json=initialize_request(), headers=MCP_HEADERS
                )


@contextlib.asynccontextmanager
async def _cli(home: Path, *args: str) -> AsyncIterator[tuple[str, list[str]]]:
    """`pagewarden mcp --port P ARGS` in its own process with `home` as the per-user directory:
    ``(endpoint, stderr lines up to "listening")``."""
    port = free_port()
    env = {**os.environ, "PAGEWARDEN_CONFIG_DIR": str(home)}
    env.pop("PAGEWARDEN_MCP_TOKEN", None)
    env.pop("PAGEWARDEN_MCP_TOKENS_FILE", None)
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "pagewarden", "mcp", "--port", str(port), "--no-proxy", "--headless", *args,
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env,
    )  # fmt: skip
    lines: list[str] = []
    try:
        assert process.stderr is not None
        while not any("listening on" in line for line in lines):
            line = await asyncio.wait_for(process.stderr.readline(), 120)
            assert line, "the server exited:\n" + "".join(lines)
            lines.append(line.decode())
        await asyncio.sleep(0)  # what it prints right after "listening"
        with contextlib.suppress(TimeoutError):
            while True:
                line = await asyncio.wait_for(process.stderr.readline(), 3)
                if not line:
                    break
                lines.append(line.decode())
        yield f"http://127.0.0.1:{port}/mcp", lines
    finally:
        process.terminate()
        if process.stderr is not None:  # the rest of what it printed, to the end
            lines.append((await asyncio.wait_for(process.stderr.read(), 60)).decode())
        await asyncio.wait_for(process.wait(), 60)


async def test_the_cli_makes_a_token_once_on_loopback(tmp_path: Path) -> None:
    home = tmp_path / "config"
    async with _cli(home) as (url, first):
        token_file = home / "mcp-token"
        token = token_file.read_text().strip()
        assert token_file.stat().st_mode & 0o777 == 0o600 and len(token) >= 32
        printed = "".join(first)
        assert printed.count(token) >= 4  # once per client configuration to paste
        assert f'--header "Authorization: Bearer {token}"' in printed and url in printed
        async with http_client(url, token) as client:  # the printed configuration works
            assert (await client.list_tools()).tools
        async with httpx.AsyncClient(timeout=30) as raw:
            assert (await raw.post(url, json=initialize_request(), headers=MCP_HEADERS)).status_code == 401
    assert "Traceback" not in "".join(first)  # a client that disconnects is no error
    async with _cli(home) as (url, again):
        assert token not in "".join(again) and str(token_file) in "".join(again)  # printed once only
        assert token_file.read_text().strip() == token
    async with _cli(home, "--no-auth") as (url, loud):
        assert "--no-auth: ANY process on this machine can drive this browser" in " ".join(
            "".join(loud).split()
        )
        async with httpx.AsyncClient(timeout=30) as raw:
            opened = await raw.post(url, json=initialize_request(), headers=MCP_HEADERS)
        assert opened.status_code == 200
