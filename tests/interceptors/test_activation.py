"""The guard judges what an action really activates, not the element it was pointed at.

Each case is served twice from the same template: pointing at `evil.test` (the guard must
stop it, and the local server must see nothing reach evil.test) and pointing same-site (the
benign twin, which must run). Real Chromium, `domain_allow: [app.test]`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page

from pagewarden import ApprovalRequired, Guard, PolicySet
from pagewarden.guard._exceptions import GuardError
from pagewarden.testing import LocalSite, RecordedRequest, Response

ALLOW_APP = PolicySet.from_dict(
    {
        "version": 1,
        "policies": [
            {
                "id": "T-SITE",
                "category": "boundary",
                "risk_level": "high",
                "description": "Stay on app.test.",
                "rules": [{"domain_allow": ["app.test"]}],
            }
        ],
    }
)

Act = Callable[[Any], Awaitable[Any]]


@dataclass(frozen=True)
class Case:
    name: str
    html: str  # {D}: the destination; {F}: the origin of framed content
    act: Act


async def _center(p: Any, selector: str) -> tuple[float, float]:
    box = await p.unwrap().locator(selector).bounding_box()
    assert box is not None
    return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2


async def _hover_down_up(p: Any) -> None:
    await p.hover("#t")
    await p.mouse.down()
    await p.mouse.up()


async def _mouse_click_frame(p: Any) -> None:
    await p.unwrap().wait_for_timeout(200)  # the frame's document
    await p.mouse.click(*await _center(p, "#t"))


async def _focus_frame_link_enter(p: Any) -> None:
    await p.frame_locator("#t").locator("a").focus(timeout=5000)  # (no link in a refused frame)
    await p.keyboard.press("Enter")


async def _focus_enter(p: Any) -> None:
    await p.focus("#t")
    await p.keyboard.press("Enter")


async def _focus_space(p: Any) -> None:
    await p.focus("#t")
    await p.keyboard.press("Space")


SUBMIT_FORM = '<form action="{D}" method="post"><input name="q" value="1">{BUTTON}</form>'
LINK_FRAME = (
    '<iframe id="t" style="width:300px;height:100px;border:0" '
    "srcdoc=\"<a href='{D}' target='_top' style='display:block;width:300px;height:100px'>in a frame</a>\">"
    "</iframe>"
)
XLINK_SCRIPT = (
    "<script>customElements.define('x-link', class extends HTMLElement { connectedCallback() {"
    " const root = this.attachShadow({mode: 'open'}); const a = document.createElement('a');"
    " a.href = this.dataset.href; a.appendChild(document.createElement('slot')); root.appendChild(a); } });"
    "</script>"
)

CASES = [
    Case("span_in_submit",
         SUBMIT_FORM.replace("{BUTTON}", '<button><span id="t">Send it</span></button>'),
         lambda p: p.click("#t")),
    Case("label_for_submit",
         SUBMIT_FORM.replace("{BUTTON}", '<button id="b">Go</button>')
         + '<p><label for="b" id="t">Go there</label></p>',
         lambda p: p.click("#t")),
    Case("bogus_button_type", SUBMIT_FORM.replace("{BUTTON}", '<button type="bogus" id="t">Go</button>'),
         lambda p: p.click("#t")),
    Case("slotted_text_in_shadow_link",
         '<x-link id="t" data-href="{D}">Open the page</x-link>' + XLINK_SCRIPT,
         lambda p: p.click("#t")),
    Case("container_centre_is_link",
         '<div id="t" style="position:relative;width:300px;height:80px;background:#eee">Box text'
         '<a href="{D}" style="position:absolute;left:100px;top:30px;width:100px;height:20px">link</a></div>',
         lambda p: p.click("#t")),
    Case("image_map_area",
         '<img id="t" usemap="#m" width="120" height="60" alt="map" '
         'src="data:image/gif;base64,R0lGODlhAQABAIAAAP///wAAACwAAAAAAQABAAACAkQBADs=">'
         '<map name="m"><area shape="rect" coords="0,0,120,60" href="{D}" alt="area"></map>',
         lambda p: p.click("#t")),
    Case("check_on_link_checkbox",
         '<a id="t" role="checkbox" aria-checked="false" href="{D}">Remember me</a>',
         lambda p: p.check("#t", timeout=2000)),  # the link navigates: check() cannot see the state
    Case("mouse_down_up_after_hover", '<p><a id="t" href="{D}">Hover me</a></p>', _hover_down_up),
    Case("point_over_frame_top_link", LINK_FRAME, _mouse_click_frame),
    Case("element_over_frame_top_link", LINK_FRAME, lambda p: p.click("#t")),
    Case("point_over_cross_origin_frame",
         '<iframe id="t" style="width:300px;height:100px;border:0" src="{F}/act/frame-link.html"></iframe>',
         _mouse_click_frame),
    Case("focus_in_cross_origin_frame_link",
         '<iframe id="t" style="width:300px;height:100px;border:0" src="{F}/act/frame-link.html"></iframe>',
         _focus_frame_link_enter),
    Case("force_click_under_transparent_link",
         '<div style="position:relative;width:200px;height:40px"><button id="t" type="button">Do it</button>'
         '<a href="{D}" style="position:absolute;left:0;top:0;width:200px;height:40px;opacity:0">x</a></div>',
         lambda p: p.click("#t", force=True)),
    Case("drag_inside_link",
         '<p><a href="{D}" id="t" draggable="false"><span id="s1">first part</span> and '
         '<span id="s2">second part</span></a></p>',
         lambda p: p.locator("#s1").drag_to(p.locator("#s2"))),
    Case("ping_destination", '<a id="t" href="/plain.html?c=ping_destination" ping="{D}">Pinged link</a>',
         lambda p: p.click("#t")),
    Case("enter_on_focused_link", '<p><a id="t" href="{D}">Next</a></p>', _focus_enter),
    Case("locator_press_enter_on_link", '<p><a id="t" href="{D}">Next</a></p>',
         lambda p: p.locator("#t").press("Enter")),
    Case("space_on_focused_submit",
         SUBMIT_FORM.replace("{BUTTON}", '<button id="t">Go</button>'), _focus_space),
    Case("typed_newline_in_field", '<form action="{D}" method="post"><input id="t" name="q"></form>',
         lambda p: p.locator("#t").press_sequentially("hello\n")),
    Case("shift_enter_in_field", '<form action="{D}" method="post"><input id="t" name="q" value="x"></form>',
         lambda p: p.locator("#t").press("Shift+Enter")),
    Case("default_button_formaction",
         '<form action="/plain.html?c=other" method="post"><input id="t" name="q" value="x">'
         '<button formaction="{D}">Go</button></form>',
         lambda p: p.locator("#t").press("Enter")),
]  # fmt: skip

IDS = [c.name for c in CASES]
#: Cases whose evil twin frames a document of the refused host itself (not a link to it).
FRAME_REFUSED_AT_LOAD = {"point_over_cross_origin_frame", "focus_in_cross_origin_frame_link"}
LINK = '<a id="l" href="/plain.html?c=svg">{}</a>'


def _page(case: Case, twin: str) -> str:
    dest = f"http://evil.test/plain.html?c={case.name}" if twin == "evil" else f"/plain.html?c={case.name}"
    frame = "http://evil.test" if twin == "evil" else "http://app.test"
    body = case.html.replace("{D}", dest).replace("{F}", frame)
    head = f'<head><meta charset="utf-8"><title>{case.name}</title></head>'
    return f"<!doctype html><html>{head}<body>{body}</body></html>"


def _frame_page(request: RecordedRequest) -> Response:
    # The framed page links (target _top) to a page of its own origin.
    case = (request.headers.get("Referer") or "").rsplit("/", 1)[-1].split("-")[0]
    return Response(
        f'<!doctype html><body style="margin:0"><a href="/plain.html?c={case}" target="_top" '
        'style="display:block;width:300px;height:100px">framed link</a></body>'
    )


@pytest.fixture(scope="module", autouse=True)
def _routes(site: LocalSite) -> Iterator[None]:
    for case in CASES:
        for twin in ("evil", "ok"):
            html = _page(case, twin)
            site.route("app.test", f"/act/{case.name}-{twin}.html", lambda _r, html=html: Response(html))
    for host in ("app.test", "evil.test"):
        site.route(host, "/act/frame-link.html", _frame_page)
    yield


def _reached(site: LocalSite, host: str, case: str) -> list[RecordedRequest]:
    return [r for r in site.requests_to(host, "/plain.html") if r.query.get("c") == [case]]


@pytest.mark.parametrize("case", CASES, ids=IDS)
async def test_off_site_activation_is_stopped(page: Page, site: LocalSite, case: Case) -> None:
    guard = Guard(ALLOW_APP, goal="Use the app.")
    events: list[Any] = []
    guard.subscribe(events.append)
    guarded = guard.wrap(page)
    await guarded.goto(f"http://app.test/act/{case.name}-evil.html")
    if case.name in FRAME_REFUSED_AT_LOAD:
        # The framed document itself is on the refused host: the gate refuses it as the page
        # loads (the page's own load, recorded, not raised at the agent: issue 29), so there is
        # no framed link to activate; the agent's action finds nothing or does nothing there.
        with contextlib.suppress(PlaywrightError):
            await case.act(guarded)
        await page.wait_for_timeout(300)
        assert _reached(site, "evil.test", case.name) == []
        assert page.url == f"http://app.test/act/{case.name}-evil.html"
        assert any(e.kind == "network" and e.data.get("host") == "evil.test" and e.data.get("subframe")
                   for e in events)  # fmt: skip
        return
    with pytest.raises(GuardError) as caught:
        await case.act(guarded)
    await page.wait_for_timeout(300)
    assert _reached(site, "evil.test", case.name) == []
    assert page.url == f"http://app.test/act/{case.name}-evil.html"
    assert "evil.test" in caught.value.verdict.explanation


@pytest.mark.parametrize("case", CASES, ids=IDS)
async def test_same_site_twin_runs(page: Page, site: LocalSite, case: Case) -> None:
    guarded = Guard(ALLOW_APP, goal="Use the app.").wrap(page)
    await guarded.goto(f"http://app.test/act/{case.name}-ok.html")
    before = len(_reached(site, "app.test", case.name))
    try:
        await case.act(guarded)
    except PlaywrightError as exc:
        # Playwright may complain after the fact (check() on a link that navigated away).
        assert not isinstance(exc, GuardError)
    for _ in range(50):
        if len(_reached(site, "app.test", case.name)) > before:
            break
        await asyncio.sleep(0.05)
    assert len(_reached(site, "app.test", case.name)) > before


@pytest.mark.parametrize(
    "markup",
    [
        LINK.format('<svg id="t" width="40" height="40"><circle cx="20" cy="20" r="18"/></svg>'),
        LINK.format('<svg width="40" height="40"><circle id="t" cx="20" cy="20" r="18"/></svg>'),
        LINK.format('<math id="t"><mi>x</mi><mo>+</mo><mn>1</mn></math>'),
        LINK.format('<my-icon id="t" style="display:inline-block;width:30px;height:20px">i</my-icon>'),
        '<svg width="60" height="40"><a id="t" href="/plain.html?c=svg">'
        '<rect width="60" height="40"/></a></svg>',
    ],
    ids=["svg", "svg_child", "mathml", "custom_element", "svg_link"],
)
async def test_click_on_foreign_elements_in_same_site_link_runs(
    page: Page, site: LocalSite, markup: str
) -> None:
    await page.goto("http://app.test/plain.html")
    await page.evaluate("html => { document.body.innerHTML = html; }", markup)
    guarded = Guard(ALLOW_APP, goal="Use the app.").wrap(page)
    before = len(_reached(site, "app.test", "svg"))
    await guarded.click("#t")
    await page.wait_for_url("**/plain.html?c=svg")
    assert len(_reached(site, "app.test", "svg")) > before


async def test_hover_on_svg_reads_facts(page: Page) -> None:
    guarded = Guard(ALLOW_APP, goal="Use the app.").wrap(page)
    await guarded.goto("http://app.test/plain.html")
    await page.evaluate(
        "() => { document.body.innerHTML ="
        " '<svg width=40 height=40><circle id=t cx=20 cy=20 r=18 /></svg>'; }"
    )
    await guarded.hover("#t")  # the facts reader does not fail on SVG (it failed closed before)
    assert guarded.guard.session.previous is not None


async def test_prediction_names_pointed_and_activated(page: Page) -> None:
    guarded = Guard(ALLOW_APP, goal="Use the app.").wrap(page)
    await guarded.goto("http://app.test/act/span_in_submit-evil.html")
    with pytest.raises(GuardError) as caught:
        await guarded.click("#t")
    prediction = caught.value.verdict.prediction
    assert prediction is not None and "pointed at span#t" in prediction.semantic_delta
    assert prediction.submission is not None and "evil.test" in prediction.submission.url


async def test_javascript_link_is_script_execution(page: Page) -> None:
    guarded = Guard(goal="Read the page.").wrap(page)  # the embedded default: no policy file
    await guarded.goto("http://app.test/plain.html")
    await page.evaluate(
        """() => { document.body.innerHTML =
            '<a id="t" href="javascript:document.title=&quot;ran&quot;">Run</a>' +
            '<a id="n" href="javascript:void(0)">Nothing</a>'; }"""
    )
    with pytest.raises(ApprovalRequired) as caught:
        await guarded.click("#t")
    assert caught.value.verdict.findings[0].rule == "javascript_url"
    assert await page.title() != "ran"
    await guarded.click("#n")  # javascript:void(0) runs nothing: not asked
