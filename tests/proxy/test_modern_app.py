"""A modern single-page app on allowed hosts works under the guard as in plain Playwright, with
and without the network layer (issue 34): a CORS preflight with credentials, Server-Sent Events,
a WebSocket, dedicated, shared and service workers, a beacon and a keepalive fetch while the page
unloads, a CDN image, an allowed iframe and a form post answered 303.

The app is on ``app.test``, its API on ``api.test``, images on ``cdn.test``, an embed on
``frame.test`` and websockets on ``ws.test``, all in ``domain_allow``. Each check is a button
of the app (the agent clicks it, as an agent would); the app writes ``<name>: ok`` or
``<name>: failed …`` next to it. One browser per mode for the module."""

from __future__ import annotations

import asyncio
import os
import re
import threading
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from pagewarden import Guard, launch
from pagewarden._browser import find_chromium
from pagewarden.guard import GuardEvent
from pagewarden.testing import LocalSite, Response
from tests.proxy.conftest import policies
from tests.proxy.wsserver import WebSocketServer

pytestmark = pytest.mark.browser

HOSTS = ["app.test", "api.test", "cdn.test", "frame.test", "ws.test"]
CHECKS = ["preflight", "events", "websocket", "dedicated", "shared", "service", "image"]
#: Service workers need a secure context: the app's origin counts as one (as HTTPS would)
SECURE = "--unsafely-treat-insecure-origin-as-secure=http://app.test"


@pytest.fixture(scope="module", autouse=True)
def full_browser() -> Iterator[None]:
    """Chromium's headless shell ignores ``--unsafely-treat-insecure-origin-as-secure`` (the app's
    origin stays insecure there: no ``navigator.serviceWorker``), so this module launches the
    full browser, in its headless mode."""
    browser = find_chromium(headless=False)
    with pytest.MonkeyPatch.context() as patch:
        if browser is not None and not os.environ.get("PAGEWARDEN_CHROMIUM"):
            patch.setenv("PAGEWARDEN_CHROMIUM", browser)
        yield
#: a 1x1 PNG
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489"
    "0000000d49444154789c6360f8cfc0f01f0005fe02fe0def46b80000000049454e44ae426082"
)

INDEX = """<!doctype html><html><head><title>Modern app</title></head><body>
<h1>Modern app</h1>
<img id="logo" src="http://cdn.test/logo.png" alt="logo">
<iframe id="embed" src="http://frame.test/embed" title="embed"></iframe>
<form method="post" action="/submit"><input name="q" value="hello" aria-label="Query">
<button type="submit">Send form</button></form>
<a href="/next">Next page</a>
<ul>__ITEMS__</ul>
<script>
const show = (name, text) => { document.getElementById(name).textContent = name + ': ' + text; };
const checks = {
  async preflight() {
    // a new URL each run: Chromium caches a preflight's answer per URL for a few seconds
    const url = 'http://api.test/data?run=' + Math.random();
    const r = await fetch(url, {method: 'POST', credentials: 'include',
      headers: {'Content-Type': 'application/json', 'Authorization': 'Bearer t0k'}, body: '{"n": 1}'});
    return r.ok ? await r.text() : 'status ' + r.status;
  },
  events() {
    return new Promise((ok, no) => { const es = new EventSource('/events');
      es.onmessage = (e) => { es.close(); ok(e.data); };
      es.onerror = () => { es.close(); no(new Error('no event')); }; });
  },
  websocket() {
    return new Promise((ok, no) => { const ws = new WebSocket('ws://ws.test/');
      ws.onopen = () => ws.send('ping');
      ws.onmessage = (e) => { ws.close(); ok(e.data === 'echo:ping' ? 'ok' : e.data); };
      ws.onerror = () => no(new Error('websocket error')); });
  },
  dedicated() {
    return new Promise((ok, no) => { const w = new Worker('/dedicated.js');
      w.onmessage = (e) => ok(e.data); w.onerror = (e) => no(new Error(e.message)); });
  },
  shared() {
    return new Promise((ok, no) => { const w = new SharedWorker('/shared.js');
      w.port.onmessage = (e) => ok(e.data); w.onerror = () => no(new Error('worker error'));
      w.port.start(); });
  },
  async service() {
    await navigator.serviceWorker.register('/service.js');
    await navigator.serviceWorker.ready;
    if (!navigator.serviceWorker.controller) {
      const changed = (ok) => navigator.serviceWorker.addEventListener('controllerchange', ok, {once: true});
      await new Promise(changed);
    }
    return await (await fetch('/via-service')).text();
  },
  image() {
    const img = document.getElementById('logo');
    return new Promise((ok, no) => {
      const done = () => img.naturalWidth > 0 ? ok('ok') : no(new Error('not loaded'));
      if (img.complete) done(); else { img.onload = done; img.onerror = done; } });
  },
};
async function run(name) {
  show(name, 'running');
  try { show(name, await checks[name]()); } catch (e) { show(name, 'failed ' + e); }
}
addEventListener('pagehide', () => {
  navigator.sendBeacon('/beacon', 'bye');
  fetch('/keepalive', {method: 'POST', body: 'bye', keepalive: true});
});
</script></body></html>"""

DEDICATED = "fetch('/from-worker').then(r => r.text()).then(postMessage, e => postMessage('failed ' + e));"
SHARED = """onconnect = (event) => { const port = event.ports[0];
  fetch('/from-worker').then(r => r.text())
    .then(t => port.postMessage(t), e => port.postMessage('failed ' + e)); };"""
SERVICE = """self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (event) => event.waitUntil(clients.claim()));
self.addEventListener('fetch', (event) => {
  if (new URL(event.request.url).pathname === '/via-service') {
    event.respondWith(fetch('/from-worker').then(r => r.text()).then(t => new Response(t)));
  }
});"""


def _api(request: Any) -> Response:
    origin = request.headers.get("Origin", "")
    allow = {
        "Access-Control-Allow-Origin": origin if origin == "http://app.test" else "null",
        "Access-Control-Allow-Credentials": "true",
        "Access-Control-Allow-Headers": "Content-Type, Authorization",
        "Access-Control-Allow-Methods": "POST",
    }
    if request.method == "OPTIONS":
        return Response("", status=204, headers=allow)
    ok = request.headers.get("Authorization") == "Bearer t0k"
    return Response("ok" if ok else "no token", content_type="text/plain", headers=allow)


class App(LocalSite):
    """The app's hosts on one local server; `arrived(path)` is set when a request for `path`
    reached it."""

    def __init__(self) -> None:
        super().__init__()
        self._arrived: dict[str, threading.Event] = {}
        items = "".join(
            f"<li><button onclick=\"run('{name}')\">Run {name}</button>"
            f" <span id='{name}'>{name}: -</span></li>"
            for name in CHECKS
        )
        js = "application/javascript"
        self.route("app.test", "/", lambda r: Response(INDEX.replace("__ITEMS__", items)))
        self.route("app.test", "/dedicated.js", lambda r: Response(DEDICATED, content_type=js))
        self.route("app.test", "/shared.js", lambda r: Response(SHARED, content_type=js))
        self.route("app.test", "/service.js", lambda r: Response(SERVICE, content_type=js))
        self.route("app.test", "/from-worker", lambda r: Response("ok", content_type="text/plain"))
        events = "text/event-stream"
        self.route("app.test", "/events", lambda r: Response("data: ok\n\n", content_type=events))
        self.route("app.test", "/submit", lambda r: Response("", status=303, headers={"Location": "/done"}))
        self.route("app.test", "/done", lambda r: Response("<title>Done</title><p>Thanks</p>"))
        self.route("app.test", "/next", lambda r: Response("<title>Next</title><p>Next</p>"))
        for path in ("/beacon", "/keepalive"):
            self._arrived[path] = threading.Event()
            self.route("app.test", path, self._noting(path))
        self.route("api.test", "/data", _api)
        self.route("cdn.test", "/logo.png", lambda r: Response(PNG, content_type="image/png"))
        self.route("frame.test", "/embed", lambda r: Response("<p id='inner'>embedded ok</p>"))

    def _noting(self, path: str) -> Any:
        def handle(request: Any) -> Response:
            self._arrived[path].set()
            return Response("", status=204)

        return handle

    async def arrived(self, path: str, timeout: float = 30.0) -> bool:
        """Whether a request for `path` reached the app (waits for it up to `timeout` s)."""
        return await asyncio.to_thread(self._arrived[path].wait, timeout)


@pytest.fixture(scope="module")
def app() -> Iterator[App]:
    server = App()
    with server:
        yield server


@pytest.fixture(scope="module")
def websockets() -> Iterator[WebSocketServer]:
    server = WebSocketServer()
    yield server
    server.close()


@pytest.fixture(scope="module", params=["gate", "proxy"])
async def guarded(
    request: pytest.FixtureRequest, app: App, websockets: WebSocketServer
) -> AsyncIterator[Any]:
    """A guarded page of the app, without the network layer ("gate": the browser layer's
    navigation gate judges requests) or with it ("proxy"); its guard's ``network`` events are
    in ``page.events``."""
    guard = Guard(policies=policies({"domain_allow": HOSTS}), goal="Use the app.")
    events: list[GuardEvent] = []
    guard.subscribe(events.append)
    host_map = {"ws.test": websockets.port, "*.test": app.port}
    proxy = request.param == "proxy"
    async with launch(guard, proxy=proxy, host_map=host_map, browser_args=(SECURE,)) as page:
        page.events = events
        page.mode = request.param
        yield page


async def _run(page: Any, name: str) -> str:
    await page.goto("http://app.test/")
    await page.get_by_role("button", name=f"Run {name}").click()
    result = page.locator(f"#{name}", has_text=re.compile(r": (?!running|-$)"))
    await result.wait_for(timeout=30_000)
    return str(await result.text_content())


@pytest.mark.parametrize("name", CHECKS)
async def test_the_apps_requests_work(guarded: Any, name: str) -> None:
    assert await _run(guarded, name) == f"{name}: ok"


async def test_a_credentialed_preflight_reaches_the_api(guarded: Any, app: App) -> None:
    """Under the network layer the browser's preflight reaches the API (judged as the page's
    own request); without it, Playwright answers the preflight of a context whose requests it
    routes (the navigation gate's) itself, as it does for any routed context."""
    earlier = len(app.requests_to("api.test", "/data"))  # the module's app serves both modes
    assert await _run(guarded, "preflight") == "preflight: ok"
    methods = [r.method for r in app.requests_to("api.test", "/data")[earlier:]]
    assert "POST" in methods
    assert ("OPTIONS" in methods) == (guarded.mode == "proxy")


async def test_beacon_and_keepalive_while_the_page_unloads(guarded: Any, app: App) -> None:
    await guarded.goto("http://app.test/")
    await guarded.get_by_role("link", name="Next page").click()
    await guarded.wait_for_url("http://app.test/next")
    assert await app.arrived("/beacon") and await app.arrived("/keepalive")


async def test_an_allowed_iframe_shows(guarded: Any) -> None:
    await guarded.goto("http://app.test/")
    inner = guarded.frame_locator("#embed").locator("#inner")
    assert await inner.text_content() == "embedded ok"


async def test_a_form_post_answered_303(guarded: Any, app: App) -> None:
    await guarded.goto("http://app.test/")
    await guarded.get_by_role("button", name="Send form").click()
    await guarded.wait_for_url("http://app.test/done")
    assert await guarded.title() == "Done"
    posted = [r for r in app.requests_to("app.test", "/submit") if r.method == "POST"]
    assert posted and posted[-1].form == {"q": ["hello"]}


async def test_nothing_of_the_app_was_refused(guarded: Any) -> None:
    """Every request of the app's hosts was judged as the page's own and allowed: no refusal
    names one (under the network layer the browser's own traffic is refused, as before)."""
    for name in CHECKS:
        assert await _run(guarded, name) == f"{name}: ok"
    refused = [e.data for e in guarded.events if e.kind == "network"]
    assert [d for d in refused if d.get("host") in HOSTS] == []


async def test_a_persistent_profile_behind_the_network_layer(
    app: App, websockets: WebSocketServer, tmp_path: Any
) -> None:
    """A persistent profile has one proxy setting for the browser's own traffic and the page's,
    so both reach the proxy's main port: the page's requests without the session token
    (preflight, workers) are still told apart and judged as the session's; Chromium's own are
    refused."""
    from pagewarden._launch import browser_context

    guard = Guard(policies=policies({"domain_allow": HOSTS}), goal="Use the app.")
    host_map = {"ws.test": websockets.port, "*.test": app.port}
    try:
        async with browser_context(
            guard, proxy=True, host_map=host_map, user_data_dir=tmp_path / "profile", browser_args=(SECURE,)
        ) as context:
            page = guard.wrap(context.pages[0] if context.pages else await context.new_page())
            for name in ("preflight", "shared", "service"):
                assert await _run(page, name) == f"{name}: ok"
            refused = list(guard.network.refusals)
    finally:
        guard.close()
    assert [r for r in refused if r.host in HOSTS] == []
