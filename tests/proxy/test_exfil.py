"""Exfiltration filter: a secret typed into an allowed field and sent off-site by the page's
own script — query string, POST body, base64 in JSON, split across parameters, beacon,
websocket message — never reaches the other host; harmless traffic does."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from pagewarden import ActionBlocked, Guard, Secret, launch
from pagewarden.guard import GuardEvent
from pagewarden.proxy._exfil import scan
from pagewarden.testing import LocalSite
from tests.proxy.conftest import policies
from tests.proxy.wsserver import WebSocketServer

pytestmark = pytest.mark.browser

SECRET = "tok-4711-Zebra-Quartz-9"


@pytest.fixture
def ws_server() -> Iterator[WebSocketServer]:
    server = WebSocketServer()
    yield server
    server.close()


def _carries(request, value: str) -> bool:
    import base64
    from urllib.parse import unquote_plus

    text = unquote_plus(request.path + str(request.query) + request.body.decode("utf-8", "replace"))
    encoded = base64.b64encode(value.encode()).decode()[:12]
    return value in text or encoded in request.body.decode("utf-8", "replace")


async def test_a_typed_secret_never_leaves_for_another_host(
    netsite: LocalSite, ws_server: WebSocketServer
) -> None:
    guard = Guard(secrets=[Secret(SECRET, allow_domains=["site.test"])])
    events: list[GuardEvent] = []
    guard.subscribe(events.append)
    host_map = {"ws.test": ws_server.port, "*.test": netsite.port}
    async with launch(guard, proxy=True, host_map=host_map) as page:
        await page.goto("http://site.test/exfil.html")
        for _ in range(100):  # the page's websocket is open once the server heard "hello"
            if ws_server.messages:
                break
            await asyncio.sleep(0.1)
        await page.fill("#token", SECRET)  # allowed: the secret may go to site.test
        await asyncio.sleep(1.0)
        with pytest.raises(ActionBlocked) as blocked:
            await page.fill("#token", "")
        assert "secret" in blocked.value.verdict.explanation
        assert SECRET not in str(blocked.value) and SECRET not in blocked.value.verdict.explanation
    evil = netsite.requests_to("evil.test")
    assert [r.query for r in evil if r.path == "/img"] == [{"q": ["hello"]}]  # the harmless one passed
    assert not [r for r in evil if _carries(r, SECRET)], "the secret reached evil.test"
    assert not [r for r in evil if r.path in ("/fetch", "/beacon", "/ping")]
    assert ws_server.messages[0] == "hello" and "after" in ws_server.messages
    assert not [m for m in ws_server.messages if "4711" in m]
    refused = [e.data for e in events if e.kind == "network" and e.data["rule"] == "sensitive_data"]
    kinds = {(d["host"], d["url"].split("?")[0]) for d in refused}
    assert {("evil.test", "http://evil.test/img"), ("evil.test", "http://evil.test/fetch"),
            ("evil.test", "http://evil.test/ping"), ("evil.test", "http://evil.test/beacon"),
            ("ws.test", "ws://ws.test/")} <= kinds, kinds
    assert all(SECRET not in str(d) for d in refused)


def test_scan_finds_encodings_and_splits() -> None:
    guard = Guard(secrets=[Secret(SECRET, allow_domains=["site.test"])])
    from mitmproxy.test import tutils

    from pagewarden.proxy._exfil import outgoing_texts

    def leaks(url: str, body: bytes = b"", host: str = "evil.test") -> list[str]:
        request = tutils.treq(host=host, path=url.encode(), content=body)
        return [leak.what for leak in scan(outgoing_texts(request), host, guard=guard)]

    import base64

    assert leaks("/c?a=tok-4711-Z&b=ebra-Quartz-9")  # split across parameters
    assert leaks("/c/tok-4711-/Zebra-Quartz-9")  # split across path segments
    assert leaks("/c?d=" + base64.b64encode(b"id=" + SECRET.encode()).decode())  # base64 of a longer text
    assert leaks("/c", b'{"x": "' + SECRET.encode().hex().encode() + b'"}')  # hex
    assert leaks("/c", b"data=tok-4711-Zebra-Quartz-9") and leaks("/c", b"tok%2D4711%2DZebra%2DQuartz%2D9")
    assert leaks("/c?q=" + SECRET, host="site.test") == []  # the allowed host
    assert leaks("/c?q=hello") == []


def test_policy_patterns_are_the_rules_tiers() -> None:
    rule = {"sensitive_data": {"patterns": ["card_number"], "allow_domains": ["pay.test"]}}
    guard = Guard(policies=policies(rule))
    from mitmproxy.test import tutils

    from pagewarden.proxy._exfil import outgoing_texts

    request = tutils.treq(host="evil.test", path=b"/c?n=4111%201111%201111%201111")
    found = scan(outgoing_texts(request), "evil.test", guard=guard)
    assert sorted((leak.policy_id, leak.what) for leak in found) == [
        ("P-NET", "a card number"), ("PW-CREDENTIALS", "a card number")  # the baseline's too
    ]
    # P-NET allows pay.test; the baseline allows "self", the site of the page that sends it
    assert scan(outgoing_texts(request), "pay.test", guard=guard, initiator="http://pay.test/checkout") == []
    assert [leak.policy_id for leak in
            scan(outgoing_texts(request), "pay.test", guard=guard, initiator="http://shop.test/")] == [
        "PW-CREDENTIALS"
    ]


#: a session id as a site might mint it (hex), whose digit run passes the Luhn check
CARD_LIKE_SESSION = "615710968324609f3251656f"


async def test_a_first_party_cookie_that_looks_like_a_card_number_goes_back_to_its_site(
    netsite: LocalSite,
) -> None:
    """A cookie only ever goes back to the site that set it: with the baseline's "card numbers
    only to their own site" rule, a session id whose digits pass the Luhn check is not a leak,
    on a typed navigation (no Origin, no Referer) or a click alike. A registered secret kept
    to another site is still refused in a cookie."""
    guard = Guard(secrets=[Secret(SECRET, allow_domains=["bank.test"])])
    events: list[GuardEvent] = []
    guard.subscribe(events.append)
    async with launch(guard, proxy=True, host_map={"*.test": netsite.port}) as page:
        await page.unwrap().context.add_cookies([
            {"name": "sid", "value": CARD_LIKE_SESSION, "domain": "site.test", "path": "/"},
        ])
        await page.goto("http://site.test/plain.html")
        await page.goto("http://site.test/index.html")
        seen = [r for r in netsite.requests_to("site.test") if r.path in ("/plain.html", "/index.html")]
        assert len(seen) == 2 and all(CARD_LIKE_SESSION in r.headers.get("Cookie", "") for r in seen)
        assert not [e for e in events if e.kind == "network" and e.data.get("host") == "site.test"]
        # the same cookie jar carrying a secret that may only go to bank.test
        cookie = {"name": "t", "value": SECRET, "domain": "site.test", "path": "/"}
        await page.unwrap().context.add_cookies([cookie])
        with pytest.raises(ActionBlocked):  # refused now, reported on the agent's next call at the latest
            await page.goto("http://site.test/plain.html")
            await page.goto("http://site.test/index.html")
    refused = [e.data for e in events if e.kind == "network" and e.data.get("host") == "site.test"]
    assert refused and refused[0]["rule"] == "sensitive_data"
    assert all(SECRET not in str(d) for d in refused)
