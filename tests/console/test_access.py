"""The console's HTTP surface: tokens, roles, Host and Origin checks, headers, bad input."""

from __future__ import annotations

import asyncio
import http.client
import json
import logging
from typing import Any

import pytest

from pagewarden.console import Console, ProtocolError
from pagewarden.console._protocol import check_command

JPEG = b"\xff\xd8\xff\xe0" + b"\0" * 64


class Client:
    def __init__(self, console: Console) -> None:
        self.port = console.port
        self.full = console.url.split("token=")[1]
        self.view = console.read_only_url.split("token=")[1]
        self.guard = console.guard_url.split("token=")[1]

    def _do(
        self, method: str, path: str, body: bytes | None, headers: dict[str, str]
    ) -> tuple[int, dict, bytes]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            conn.request(method, path, body=body, headers={"Host": f"127.0.0.1:{self.port}", **headers})
            response = conn.getresponse()
            return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
        finally:
            conn.close()

    async def call(
        self,
        method: str,
        path: str,
        data: Any = None,
        *,
        token: str | None = "full",
        raw: bytes | None = None,
        headers: dict[str, str] | None = None,
    ) -> tuple[int, dict, bytes]:
        sent = dict(headers or {})
        if token is not None:
            sent.setdefault("Authorization", f"Bearer {getattr(self, token)}")
        body = raw
        if data is not None:
            body = json.dumps(data).encode()
            sent.setdefault("Content-Type", "application/json")
        return await asyncio.to_thread(self._do, method, path, body, sent)


@pytest.fixture
def client(console: Console) -> Client:
    return Client(console)


async def _remote_session(client: Client, sid: str = "s1") -> None:
    status, _, _ = await client.call("POST", "/api/v1/sessions", {"session": sid})
    assert status == 201


async def test_the_page_needs_a_token_and_carries_the_security_headers(client: Client) -> None:
    assert (await client.call("GET", "/", token=None))[0] == 403
    assert (await client.call("GET", "/?token=nope", token=None))[0] == 403
    status, headers, body = await client.call("GET", f"/?token={client.view}", token=None)
    assert status == 200 and b"console.js" in body
    csp = headers["content-security-policy"]
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp
    assert "require-trusted-types-for 'script'" in csp and "frame-ancestors 'none'" in csp
    assert headers["x-frame-options"] == "DENY" and headers["x-content-type-options"] == "nosniff"
    assert headers["referrer-policy"] == "no-referrer"
    # static files carry no data and need no token, but the same headers
    status, headers, _ = await client.call("GET", "/static/console.js", token=None)
    assert status == 200 and headers["x-content-type-options"] == "nosniff"
    assert (await client.call("GET", "/static/../_server.py", token=None))[0] in (403, 404)


async def test_reads_need_a_token(client: Client) -> None:
    await _remote_session(client)
    for path in ("/api/sessions", "/api/sessions/s1", "/api/stream", "/sessions/s1/report"):
        assert (await client.call("GET", path, token=None))[0] == 403, path
    status, _, body = await client.call("GET", "/api/sessions", token="view")
    assert status == 200 and json.loads(body)["sessions"][0]["id"] == "s1"


async def test_a_rebound_host_name_is_refused(client: Client) -> None:
    status, _, _ = await client.call(
        "GET", f"/?token={client.full}", headers={"Host": f"evil.test:{client.port}"}
    )
    assert status == 403


async def test_state_changes_need_the_full_token_in_the_header_and_the_own_origin(client: Client) -> None:
    await _remote_session(client)
    pause = {"action": "pause"}
    path = "/api/sessions/s1/control"
    assert (await client.call("POST", path, pause, token=None))[0] == 403
    assert (await client.call("POST", f"{path}?token={client.full}", pause, token=None))[
        0
    ] == 403  # not from a URL
    assert (await client.call("POST", path, pause, token="view"))[0] == 403
    assert (await client.call("POST", path, pause, headers={"Origin": "http://evil.test"}))[0] == 403
    assert (await client.call("POST", path, pause, headers={"Origin": "null"}))[0] == 403
    assert (await client.call("POST", path, pause, headers={"Sec-Fetch-Site": "cross-site"}))[0] == 403
    own = {"Origin": f"http://127.0.0.1:{client.port}", "Sec-Fetch-Site": "same-origin"}
    assert (await client.call("POST", path, pause, headers=own))[0] == 202
    status, _, body = await client.call("GET", "/api/v1/sessions/s1/commands?after=0&wait=0")
    assert status == 200
    commands = json.loads(body)["commands"]
    assert [c["type"] for c in commands] == ["pause"]  # only the accepted request reached the guard


@pytest.mark.parametrize(
    ("path", "body", "status"),
    [
        ("/api/sessions/s1/control", {"action": "explode"}, 400),
        ("/api/sessions/s1/control", ["pause"], 400),
        ("/api/sessions/nope/control", {"action": "pause"}, 404),
        ("/api/sessions/s1/goal", {"goal": ""}, 400),
        ("/api/sessions/s1/goal", {"goal": "x" * 5000}, 400),
        ("/api/sessions/s1/goal", {"goal": 42}, 400),
        ("/api/sessions/s1/approvals/abc", {"approved": True}, 409),
        ("/api/sessions/s1/approvals/abc", {"approved": "yes"}, 400),
        ("/api/sessions/s1/orders", {"op": "goto", "args": {"url": "javascript:alert(1)"}}, 400),
        ("/api/sessions/s1/orders", {"op": "click", "args": {"x": "1", "y": 2}}, 400),
        ("/api/sessions/s1/orders", {"op": "press", "args": {"key": "Control+W"}}, 400),
        ("/api/sessions/s1/orders", {"op": "evaluate", "args": {}}, 400),
        ("/api/v1/events", {"events": [{"kind": "step", "session": "s1", "data": "x"}]}, 400),
        ("/api/v1/events", {"events": [{"kind": "step", "session": "unknown", "data": {}}]}, 409),
        ("/api/v1/sessions", {"session": "../../etc"}, 400),
    ],
)
async def test_bad_requests_get_a_clear_refusal(client: Client, path: str, body: Any, status: int) -> None:
    await _remote_session(client)
    got, _, text = await client.call("POST", path, body)
    assert got == status, text
    assert json.loads(text)["error"]


async def test_malformed_bodies(client: Client) -> None:
    await _remote_session(client)
    path = "/api/sessions/s1/control"
    bad_json = {"Content-Type": "application/json"}
    assert (await client.call("POST", path, raw=b"{nope", headers=bad_json))[0] == 400
    assert (await client.call("POST", path, raw=b"action=pause", headers={"Content-Type": "text/plain"}))[
        0
    ] == 415
    frame = "/api/v1/sessions/s1/frame"
    assert (await client.call("PUT", frame, raw=b"<svg/>", headers={"Content-Type": "image/jpeg"}))[0] == 400
    assert (await client.call("PUT", frame, raw=JPEG, headers={"Content-Type": "image/png"}))[0] == 415


async def test_events_and_frames_from_another_process(client: Client) -> None:
    await _remote_session(client)
    event = {
        "kind": "step", "session": "s1", "ts": 1.0,
        "data": {"index": 1, "step": {"action": {"kind": "click", "selector": "#b"}, "observation": {"url": "http://a.test/"},
                 "reasoning": "key sk-" + "A" * 40}, "verdict": {"decision": "allow"}},
    }  # fmt: skip
    status, _, _ = await client.call("POST", "/api/v1/events", {"events": [event]})
    assert status == 200
    status, _, body = await client.call("GET", "/api/sessions/s1", token="view")
    detail = json.loads(body)
    assert detail["summary"]["steps"] == 1 and detail["summary"]["url"] == "http://a.test/"
    assert "sk-AAAA" not in body.decode()  # recognisable credentials are redacted on arrival too
    jpeg = {"Content-Type": "image/jpeg", "X-Viewport": "800x600"}
    status, _, _ = await client.call("PUT", "/api/v1/sessions/s1/frame", raw=JPEG, headers=jpeg)
    assert status == 204
    status, headers, body = await client.call("GET", "/api/sessions/s1/frame.jpg", token="view")
    assert status == 200 and body == JPEG and headers["content-type"] == "image/jpeg"


async def test_the_guard_token_attaches_guards_and_does_nothing_else(client: Client) -> None:
    status, _, body = await client.call("POST", "/api/v1/sessions", {"session": "g1"}, token="guard")
    assert status == 201
    key = {"X-Session-Key": json.loads(body)["key"]}
    event = {"kind": "session", "session": "g1", "ts": 1.0, "data": {"status": "running", "agent": "a1"}}
    events = {"events": [event]}
    assert (await client.call("POST", "/api/v1/events", events, token="guard", headers=key))[0] == 200
    frame = {"Content-Type": "image/jpeg", **key}
    assert (await client.call("PUT", "/api/v1/sessions/g1/frame", raw=JPEG, headers=frame, token="guard"))[
        0
    ] == 204
    poll = "/api/v1/sessions/g1/commands?wait=0"
    assert (await client.call("GET", poll, token="guard", headers=key))[0] == 200
    # … and nothing else: no reading, no approving, no control
    for path in ("/api/sessions", "/api/sessions/g1", "/api/approvals", "/api/stream", "/sessions/g1/report"):
        status, _, body = await client.call("GET", path, token="guard")
        assert status == 403 and b"Guard token" in body, path
    assert (await client.call("GET", f"/?token={client.guard}", token=None))[0] == 403
    for path, body in (
        ("/api/sessions/g1/control", {"action": "stop"}),
        ("/api/sessions/g1/goal", {"goal": "x"}),
    ):
        assert (await client.call("POST", path, body, token="guard"))[0] == 403, path
    # the read-only token cannot pose as a guard
    assert (await client.call("POST", "/api/v1/sessions", {"session": "g2"}, token="view"))[0] == 403
    status, _, body = await client.call("GET", "/api/sessions?agent=a1", token="view")
    assert [s["id"] for s in json.loads(body)["sessions"]] == ["g1"]


async def test_a_guard_cannot_speak_for_another_guards_session(client: Client) -> None:
    status, _, body = await client.call("POST", "/api/v1/sessions", {"session": "mine"}, token="guard")
    key = json.loads(body)["key"]
    # another holder of the guard token, without the session's key (or with a wrong one)
    forged = {"kind": "approval", "session": "mine", "ts": 1.0, "data": {"id": "x", "status": "pending"}}
    for headers in ({}, {"X-Session-Key": key[:-2] + "xx"}):
        assert (
            await client.call("POST", "/api/v1/events", {"events": [forged]}, token="guard", headers=headers)
        )[0] == 403
        poll = "/api/v1/sessions/mine/commands?wait=0"
        assert (await client.call("GET", poll, token="guard", headers=headers))[0] == 403
        frame = {"Content-Type": "image/jpeg", **headers}
        assert (
            await client.call("PUT", "/api/v1/sessions/mine/frame", raw=JPEG, headers=frame, token="guard")
        )[0] == 403
        # nor take the session over by registering it again, or joining it as an alias
        status, _, _ = await client.call(
            "POST", "/api/v1/sessions", {"session": "mine"}, token="guard", headers=headers
        )
        assert status == 409
        alias = {"session": "other", "alias_of": "mine"}
        assert (await client.call("POST", "/api/v1/sessions", alias, token="guard", headers=headers))[
            0
        ] == 403
    status, _, body = await client.call("GET", "/api/sessions/mine", token="view")
    assert json.loads(body)["approvals"] == []  # the forged approval never arrived
    # with the key, the guard itself may register a new session id of its own
    alias = {"session": "mine-2", "alias_of": "mine"}
    status, _, body = await client.call(
        "POST", "/api/v1/sessions", alias, token="guard", headers={"X-Session-Key": key}
    )
    assert status == 201 and json.loads(body)["key"] == key


async def test_long_poll_wakes_on_a_command(client: Client) -> None:
    await _remote_session(client)
    poll = asyncio.create_task(client.call("GET", "/api/v1/sessions/s1/commands?after=0&wait=30"))
    status, _, _ = await client.call("POST", "/api/sessions/s1/goal", {"goal": "new goal"})
    assert status == 202
    status, _, body = await poll
    assert status == 200 and json.loads(body)["commands"][0] == {"seq": 1, "type": "goal", "goal": "new goal"}


async def test_the_token_never_reaches_the_log(client: Client, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="pagewarden")  # whatever level an earlier CLI run left
    await client.call("GET", f"/?token={client.full}", token=None)
    await client.call("GET", f"/api/sessions?token={client.view}", token=None)
    await client.call("GET", "/?token=" + client.full, token=None, headers={"Host": "evil.test"})
    assert caplog.records  # the requests were logged …
    await client.call("GET", f"/api/sessions?token={client.guard}", token=None)
    assert client.full not in caplog.text and client.view not in caplog.text  # … without the tokens
    assert client.guard not in caplog.text


@pytest.mark.parametrize(
    "command",
    [None, [], {"type": "nope"}, {"type": "decide", "approval": "a", "approved": 1},
     {"type": "order", "order": "o", "op": "goto", "args": {"url": "file:///etc/passwd"}},
     {"type": "goal", "goal": None}],
)  # fmt: skip
def test_malformed_commands_are_refused(command: Any) -> None:
    with pytest.raises(ProtocolError):
        check_command(command)


def test_console_repr_and_errors_hide_the_token() -> None:
    console = Console(token="t" * 32)
    assert "t" * 32 not in repr(console)
    with pytest.raises(ValueError):
        Console(token="same", read_only_token="same")
    with pytest.raises(ValueError, match="differ"):
        Console(token="one", read_only_token="two", guard_token="one")
