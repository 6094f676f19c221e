"""The navigation gate: without a proxy, a top-level navigation the policies refuse never leaves
the browser, wherever it starts (a popup a click handler opened, a new document's own script, a
navigation long after the action); the agent hears of it at its next call. Benign twins (the
same page going where the policies allow) still run. Real Chromium, asserting on the local
server's request log.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import pytest
from playwright.async_api import Page

from pagewarden import ActionBlocked, Guard, PolicySet
from pagewarden.guard._exceptions import GuardError
from pagewarden.interceptors._gate import navigation_pattern
from pagewarden.rules._egress import EgressRules
from pagewarden.testing import LocalSite, Response
from tests.heard import heard


def _policies(*rules: dict[str, Any]) -> PolicySet:
    return PolicySet.from_dict(
        {
            "version": 1,
            "policies": [
                {
                    "id": f"T-{i}",
                    "category": "boundary",
                    "risk_level": "high",
                    "description": "Where the agent may go.",
                    "rules": [rule],
                }
                for i, rule in enumerate(rules)
            ],
        }
    )


APP_AND_OTHER = _policies({"domain_allow": ["app.test", "other.test"]})

# -- the route pattern: every URL the rules may refuse matches it -----------------------------
POLICY_SETS = [
    [{"domain_allow": ["app.test"]}],
    [{"domain_allow": ["*.app.test", "other.test:8080"]}, {"domain_allow": [".app.test", "other.test"]}],
    [{"domain_allow": ["Bücher.example", "app.test"]}],
    [{"domain_deny": ["evil.test", "*.bad.test", "127.0.0.1"]}],
    [{"url_deny": ["/admin", "module=Users", "https://*.evil.test/x", "p*th"]}],
    [{"url_allow": ["http://app.test/docs/*"]}],
    [{"domain_allow": ["*"]}, {"domain_deny": ["[::1]"]}],
]
URLS = [
    "http://app.test/",
    "http://APP.test:8000/a?b#c",
    "http://a.app.test/",
    "http://app.test.evil.test/",
    "http://app.test@evil.test/",
    "http://evil.test/",
    "http://evil.test./",
    "http://x.bad.test/",
    "http://127.0.0.1:9/",
    "http://[::ffff:7f00:1]/",
    "http://[::1]/",
    "http://xn--bcher-kva.example/",
    "http://other.test/",
    "http://other.test:8080/",
    "http://app.test/ADMIN/x",
    "http://app.test/%61dmin",
    "http://app.test/?module=Users",
    "http://www.evil.test/x/y",
    "http://app.test/docs/a",
    "http://app.test/pXXth",
    "https://app.test/",
]


@pytest.mark.parametrize("rules", POLICY_SETS, ids=[str(i) for i in range(len(POLICY_SETS))])
def test_route_pattern_matches_every_url_the_rules_refuse(rules: list[dict[str, Any]]) -> None:
    egress = EgressRules.from_policies(_policies(*rules))
    pattern = navigation_pattern(egress)
    assert pattern is not None
    refused = [u for u in URLS if egress.judge(u, navigation=True) is not None]
    assert refused, "the policy set refuses something"
    assert [u for u in refused if not pattern.search(u)] == []


def test_route_pattern_leaves_allowed_hosts_to_the_driver() -> None:
    rules = EgressRules.from_policies(_policies({"domain_allow": ["app.test", "*.cdn.test"]}))
    pattern = navigation_pattern(rules)
    assert pattern is not None
    assert not pattern.search("http://app.test/page?x=1")
    assert not pattern.search("http://img.cdn.test/a.png")
    assert pattern.search("http://evil.test/")


def test_no_url_or_domain_rule_no_gate() -> None:
    rules = EgressRules.from_policies(_policies({"forbid_element": {"match": ["x"]}}))
    assert navigation_pattern(rules) is None


# -- in Chromium -------------------------------------------------------------------------------
PAGES = {
    "open": '<button id="t" type="button" onclick="window.open(\'{D}\')">Help</button>',
    "popup_redirects": '<a id="t" href="/gate/aux-{N}.html" target="_blank">Help</a>',
    "tab_redirects": '<a id="t" href="/gate/aux-{N}.html">Help</a>',
    "late": '<button id="t" type="button" onclick="setTimeout(() => { location.href = \'{D}\'; }, 10600)">'
    "Later</button>",
    "script_after_click": '<button id="t" type="button" onclick="location.href=\'{D}\'">Continue</button>',
}
AUX = "<script>location.href = '{D}';</script>help"


def _serve(site: LocalSite, kind: str, dest: str) -> str:
    name = f"{kind}-{abs(hash(dest)) % 10**8}"
    html = PAGES[kind].replace("{D}", dest).replace("{N}", name)
    aux = AUX.replace("{D}", dest)
    for path, body in ((f"/gate/{name}.html", html), (f"/gate/aux-{name}.html", aux)):
        page = f"<!doctype html><body>{body}</body>"
        site.route("app.test", path, lambda _r, page=page: Response(page))
    return f"http://app.test/gate/{name}.html"


async def _settle(page: Page, ms: int = 700) -> None:
    await page.wait_for_timeout(ms)


@pytest.mark.parametrize("kind", ["open", "popup_redirects", "tab_redirects"])
async def test_refused_navigation_never_leaves_and_the_agent_hears_once(
    page: Page, site: LocalSite, kind: str
) -> None:
    guard = Guard(APP_AND_OTHER, goal="Use the app.")
    events: list[Any] = []
    guard.subscribe(events.append)
    guarded = guard.wrap(page)
    dest = f"http://evil.test/plain.html?c=gate-{kind}"
    await guarded.goto(_serve(site, kind, dest))
    # a same-site button or link: allowed; the agent hears of the refusal it set off: the click
    # fails with it (it came while the click ran), or the next call
    async def next_call() -> None:
        await _settle(page)
        await guarded.hover("body")

    blocked = await heard(lambda: guarded.click("#t"), next_call)
    await _settle(page)
    assert [r for r in site.requests_to("evil.test") if r.query.get("c") == [f"gate-{kind}"]] == []
    assert all(not p.url.startswith("http://evil.test") for p in page.context.pages)
    finding = blocked.verdict.findings[0]
    assert (finding.policy_id, finding.rule) == ("T-0", "network:domain_allow")
    assert "evil.test" in blocked.verdict.explanation
    assert "navigation gate" in blocked.verdict.explanation
    assert any(e.kind == "network" and e.data.get("host") == "evil.test" for e in events)
    await guarded.goto("http://app.test/plain.html")  # heard once: the next action runs


@pytest.mark.parametrize("kind", ["open", "popup_redirects", "tab_redirects", "script_after_click"])
async def test_allowed_twin_runs(page: Page, site: LocalSite, kind: str) -> None:
    """The same pages going to another host the policies allow: nothing is stopped (the pin
    knows the allow-list, so a cross-origin script redirect after a click is not a false stop)."""
    guarded = Guard(APP_AND_OTHER, goal="Use the app.").wrap(page)
    dest = f"http://other.test/plain.html?c=gate-twin-{kind}"
    await guarded.goto(_serve(site, kind, dest))
    await guarded.click("#t")
    for _ in range(80):
        if [r for r in site.requests_to("other.test") if r.query.get("c") == [f"gate-twin-{kind}"]]:
            break
        await asyncio.sleep(0.05)
    assert [r for r in site.requests_to("other.test") if r.query.get("c") == [f"gate-twin-{kind}"]]
    await _settle(page, 300)
    await guarded.hover("body")  # nothing was refused: the next action runs


async def test_script_redirect_after_click_to_a_refused_host_is_still_stopped(
    page: Page, site: LocalSite
) -> None:
    guarded = Guard(APP_AND_OTHER, goal="Use the app.").wrap(page)
    await guarded.goto(_serve(site, "script_after_click", "http://evil.test/plain.html?c=gate-script"))
    with contextlib.suppress(GuardError):
        await guarded.click("#t")
    await _settle(page, 400)
    with pytest.raises(ActionBlocked):
        await guarded.hover("#t")
    assert [r for r in site.requests_to("evil.test") if r.query.get("c") == ["gate-script"]] == []
    assert page.url.startswith("http://app.test/")


async def test_navigation_long_after_the_action_is_refused(page: Page, site: LocalSite) -> None:
    """The pin holds 10 s after an action; the gate has no window."""
    guarded = Guard(APP_AND_OTHER, goal="Use the app.").wrap(page)
    await guarded.goto(_serve(site, "late", "http://evil.test/plain.html?c=gate-late"))
    await guarded.click("#t")
    await page.wait_for_timeout(11_300)
    assert [r for r in site.requests_to("evil.test") if r.query.get("c") == ["gate-late"]] == []
    assert page.url.startswith("http://app.test/")
    with pytest.raises(ActionBlocked) as caught:
        await guarded.hover("#t")
    assert caught.value.verdict.findings[0].rule == "network:domain_allow"


async def test_url_deny_on_the_same_site_is_refused(page: Page, site: LocalSite) -> None:
    """A same-origin script navigation passes the pin; the gate judges it against url_deny."""
    policies = _policies({"url_deny": ["/gate-denied"]})
    guarded = Guard(policies, goal="Use the app.").wrap(page)
    site.route("app.test", "/gate-denied", lambda _r: Response("denied page"))
    site.route("app.test", "/gate-fine", lambda _r: Response("fine page"))
    await guarded.goto(_serve(site, "script_after_click", "/gate-denied?c=1"))
    async def next_call() -> None:
        await _settle(page, 500)
        await guarded.hover("#t")

    blocked = await heard(lambda: guarded.click("#t"), next_call)
    assert site.requests_to("app.test", "/gate-denied") == []
    assert blocked.verdict.findings[0].rule == "network:url_deny"
    await guarded.goto(_serve(site, "script_after_click", "/gate-fine?c=1"))
    async with page.expect_navigation():
        await guarded.click("#t")
    assert site.requests_to("app.test", "/gate-fine")


async def test_monitor_mode_reports_and_does_not_refuse(page: Page, site: LocalSite) -> None:
    guard = Guard(APP_AND_OTHER, goal="Use the app.", mode="monitor")
    guarded = guard.wrap(page)
    await guarded.goto(_serve(site, "tab_redirects", "http://evil.test/plain.html?c=gate-monitor"))
    await guarded.click("#t")
    await page.wait_for_url("http://evil.test/**")
    gate = guarded._pw_shared.gate
    assert gate is not None and [r.host for r in gate.refusals] == ["evil.test"]


async def test_no_policies_no_routing(page: Page) -> None:
    guarded = Guard(goal="Use the app.").wrap(page)
    await guarded.goto("http://app.test/plain.html")
    gate = guarded._pw_shared.gate  # it judges downloads only: no request is routed
    assert gate is not None and gate.pattern is None
    raw = page.context._impl_obj  # type: ignore[attr-defined]
    assert raw._routes == [] and raw._web_socket_routes == []


async def test_same_site_script_redirect_without_an_allow_list_runs(page: Page, site: LocalSite) -> None:
    """No allow-list: the pin lets a script navigation after a click reach the page's own site
    (another subdomain, e.g. a login host) …"""
    site.route("login.app.test", "/plain.html", lambda _r: Response("login page"))
    guarded = Guard(goal="Use the app.").wrap(page)
    await guarded.goto(_serve(site, "script_after_click", "http://login.app.test/plain.html?c=gate-sub"))
    async with page.expect_navigation():
        await guarded.click("#t")
    assert page.url == "http://login.app.test/plain.html?c=gate-sub"


async def test_cross_site_script_redirect_without_an_allow_list_is_stopped(
    page: Page, site: LocalSite
) -> None:
    """… but not another site: without an allow-list nothing vouches for it (the agent hears of
    it and can open it with goto, which is judged)."""
    guarded = Guard(goal="Use the app.").wrap(page)
    await guarded.goto(_serve(site, "script_after_click", "http://other.test/plain.html?c=gate-cross"))
    await guarded.click("#t")
    await _settle(page, 400)
    assert [r for r in site.requests_to("other.test") if r.query.get("c") == ["gate-cross"]] == []
    with pytest.raises(ActionBlocked) as caught:
        await guarded.hover("#t")
    assert caught.value.verdict.findings[0].rule == "destination_pinning"
    await guarded.goto("http://other.test/plain.html?c=gate-cross")


def test_route_pattern_of_many_policies_matches_every_url_they_refuse() -> None:
    """Thousands of deny patterns are folded into one alternation per kind (shared prefixes
    factored out, for the driver's sake): still every refused URL matches, however the denied
    texts overlap, nest or differ in case."""
    import random

    rng = random.Random(5)
    words = ["admin", "adm", "Admin1", "module=Users", "export", "exp", "x%2F", "delete-all", "ü-path"]
    hosts = ["evil.test", "ev.test", "bad.example", "sub.bad.example", "127.0.0.1", "Bücher.example"]
    rules: list[dict[str, Any]] = []
    for _ in range(400):
        roll = rng.random()
        if roll < 0.5:
            rules.append({"url_deny": [f"/{rng.choice(words)}{rng.randrange(30)}", rng.choice(words)]})
        elif roll < 0.8:
            rules.append({"domain_deny": [rng.choice(hosts), f"*.h{rng.randrange(50)}.{rng.choice(hosts)}"]})
        else:
            rules.append({"url_deny": [f"https://{rng.choice(hosts)}/{rng.choice(words)}", "http://*.w*.example/p"]})
    egress = EgressRules.from_policies(_policies(*rules))
    pattern = navigation_pattern(egress)
    assert pattern is not None and len(pattern.pattern) < 20_000
    urls = []
    for _ in range(3000):
        host = rng.choice([*hosts, "app.test", f"h{rng.randrange(60)}.evil.test", "w1.x.example"])
        path = "/".join(rng.choice([*words, "page", "ADMIN7", "Exp", "p"]) for _ in range(rng.randint(0, 3)))
        urls.append(f"{rng.choice(['http', 'https'])}://{host}/{path}{rng.choice(['', '?q=1', '#x'])}")
    refused = [u for u in urls if egress.judge(u, navigation=True) is not None]
    assert len(refused) > 100
    assert [u for u in refused if not pattern.search(u)] == []
    assert not pattern.search("http://app.test/page?x=1")


async def test_page_loaded_before_the_wrap_is_gated_too(page: Page, site: LocalSite) -> None:
    """An agent attached to a running page: the gate routes the page's context at wrap time."""
    await page.goto(_serve(site, "open", "http://evil.test/plain.html?c=gate-before-wrap"))
    guarded = Guard(APP_AND_OTHER, goal="Use the app.").wrap(page)
    async def next_call() -> None:
        await _settle(page)
        await guarded.hover("#t")

    await heard(lambda: guarded.click("#t"), next_call)
    assert [r for r in site.requests_to("evil.test") if r.query.get("c") == ["gate-before-wrap"]] == []
