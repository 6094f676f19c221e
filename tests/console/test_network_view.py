"""The console's "Network refusals": Chromium's own background traffic (no session token, refused
as ``no_session``) is not the agent's and stays out of the list unless a person asks for it; what
the page or the agent tried is always shown, and page-derived text stays text."""

from __future__ import annotations

import asyncio
import http.client
import json
from typing import Any

from pagewarden.console import Console
from tests.console.conftest import Person


def _call(
    console: Console, method: str, path: str, token: str, body: Any, headers: dict | None = None
) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", console.port, timeout=30)
    try:
        conn.request(
            method, path, body=json.dumps(body),
            headers={"Host": f"127.0.0.1:{console.port}", "Authorization": f"Bearer {token}",
                     "Content-Type": "application/json", **(headers or {})},
        )  # fmt: skip
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


def _refusal(url: str, host: str, rule: str, ts: float) -> dict[str, Any]:
    data = {"action": "request", "url": url, "host": host, "rule": rule, "policy_id": "PW-NETWORK",
            "reason": f"refused {host}", "method": "GET", "tab": None, "subframe": False,
            "via": []}  # fmt: skip
    return {"kind": "network", "session": "net1", "ts": ts, "data": data}


async def test_the_browser_s_own_requests_are_hidden_unless_asked_for(person: Person) -> None:
    with Console(approval_timeout=60) as console:  # its own thread
        guard_token = console.guard_url.split("token=")[1]
        status, body = await asyncio.to_thread(
            _call, console, "POST", "/api/v1/sessions", guard_token, {"session": "net1"}
        )
        assert status == 201
        key = {"X-Session-Key": json.loads(body)["key"]}
        events = [
            {"kind": "session", "session": "net1", "ts": 1.0, "data": {"status": "running", "agent": "a"}},
            _refusal("https://update.googleapis.com/u2", "update.googleapis.com", "no_session", 2.0),
            _refusal("https://accounts.google.com/ListAccounts", "accounts.google.com", "no_session", 3.0),
            _refusal("http://evil.test/<img src=x onerror=alert(1)>", "evil.test", "domain_allow", 4.0),
        ]
        status, _ = await asyncio.to_thread(
            _call, console, "POST", "/api/v1/events", guard_token, {"events": events}, key
        )
        assert status == 200
        await person.open(console.url, "net1")
        shown = person.page.locator("#network li:visible")
        await shown.first.wait_for()
        assert await shown.count() == 1  # only what the page tried
        assert "evil.test" in await shown.first.inner_text()
        assert await person.page.locator("#background-count").inner_text() == "2"
        await person.page.locator("#show-background").check()
        await person.page.locator("#network li.background:visible").nth(1).wait_for()
        assert await person.page.locator("#network li:visible").count() == 3
        assert await person.page.locator("#network img").count() == 0  # text, never markup
        assert person.errors == [] and person.dialogs == []
