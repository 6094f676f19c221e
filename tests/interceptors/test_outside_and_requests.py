"""With an allow-list in force, a tab that ended up on another site cannot be acted on, and
`page.request` judges every redirect hop before fetching it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.async_api import Page

from pagewarden import ActionBlocked, Guard, PolicySet
from pagewarden.testing import LocalSite, RecordedRequest, Response

from .test_activation import ALLOW_APP


@pytest.fixture(scope="module", autouse=True)
def _routes(site: LocalSite) -> Iterator[None]:
    def bounce(to: str) -> Response:
        return Response("", status=302, headers={"Location": to})

    site.route("app.test", "/bounce-away", lambda r: bounce("http://other.test/plain.html"))
    yield


def _reached(site: LocalSite, host: str, case: str) -> list[RecordedRequest]:
    return [r for r in site.requests_to(host, "/plain.html") if r.query.get("c") == [case]]


async def test_actions_on_a_page_outside_the_allow_list_are_refused(page: Page) -> None:
    # The tab left the allowed domains before the guard was attached (redirects and navigations
    # after the wrap are refused by the navigation gate).
    await page.goto("http://app.test/plain.html")
    await page.goto("http://app.test/bounce-away")
    assert page.url == "http://other.test/plain.html"
    guarded = Guard(ALLOW_APP, goal="Use the app.").wrap(page)
    with pytest.raises(ActionBlocked) as caught:
        await guarded.click("#pbutton")
    assert "outside the allowed domains" in caught.value.verdict.explanation
    assert "go_back" in caught.value.verdict.guidance
    assert await page.title() == "Plain"  # the button's handler did not run
    with pytest.raises(ActionBlocked):
        await guarded.hover("#pbutton")
    await guarded.go_back()  # leaving is allowed
    assert page.url == "http://app.test/plain.html"
    await guarded.click("#pbutton")  # back on the allowed site, actions run again
    assert await page.title() == "clicked"


# page.request runs in Playwright's driver, not in Chromium (no host mapping there): these
# use 127.0.0.1 as the allowed host and localhost as the other one.
ALLOW_LOOPBACK = PolicySet.from_dict(
    {
        "version": 1,
        "policies": [
            {
                "id": "T-LOOP",
                "category": "boundary",
                "risk_level": "high",
                "description": "Stay on 127.0.0.1.",
                "rules": [{"domain_allow": ["127.0.0.1"]}],
            }
        ],
    }
)


@pytest.fixture(scope="module")
def loop_routes(site: LocalSite) -> str:
    base = f"http://127.0.0.1:{site.port}"
    other = f"http://localhost:{site.port}"

    def bounce(to: str) -> Response:
        return Response("", status=302, headers={"Location": to})

    site.route("127.0.0.1", "/hop-evil", lambda r: bounce(f"{other}/plain.html?c=hop"))
    site.route("127.0.0.1", "/hop-ok", lambda r: bounce("/plain.html?c=hop-ok"))
    site.route("127.0.0.1", "/hop-chain", lambda r: bounce("/hop-evil"))
    see_other = Response("", status=303, headers={"Location": "/plain.html?c=post"})
    site.route("127.0.0.1", "/post-hop", lambda r: see_other)
    for host in ("127.0.0.1", "localhost"):
        site.route(host, "/plain.html", lambda r: Response("<title>Plain</title>"))
    return base


async def test_request_redirect_off_site_is_not_fetched(
    page: Page, site: LocalSite, loop_routes: str
) -> None:
    guarded = Guard(ALLOW_LOOPBACK, goal="Use the app.").wrap(page)
    for start in (f"{loop_routes}/hop-evil", f"{loop_routes}/hop-chain"):
        with pytest.raises(ActionBlocked) as caught:
            await guarded.request.get(start)
        assert "localhost" in caught.value.verdict.explanation
    assert _reached(site, "localhost", "hop") == []
    assert len(site.requests_to("127.0.0.1", "/hop-evil")) >= 2  # the first hops were fetched


async def test_request_same_site_redirects_are_followed(
    page: Page, site: LocalSite, loop_routes: str
) -> None:
    guarded = Guard(ALLOW_LOOPBACK, goal="Use the app.").wrap(page)
    response = await guarded.request.get(f"{loop_routes}/hop-ok")
    assert response.status == 200 and response.url == f"{loop_routes}/plain.html?c=hop-ok"
    response = await guarded.request.post(f"{loop_routes}/post-hop", data="a=1")
    assert response.status == 200
    posted = _reached(site, "127.0.0.1", "post")[-1]
    assert posted.method == "GET"  # 303: the browser's GET, without the body
    response = await guarded.request.get(f"{loop_routes}/hop-evil", max_redirects=0)
    assert response.status == 302  # not followed: nothing to judge
