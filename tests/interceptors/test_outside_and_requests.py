"""With an allow-list in force, a tab that ended up on another site cannot be acted on, and
`page.request` judges every redirect hop before fetching it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.async_api import Page

from pagewarden import ActionBlocked, Guard
from pagewarden.testing import LocalSite, RecordedRequest, Response

from .test_activation import ALLOW_APP


@pytest.fixture(scope="module", autouse=True)
def _routes(site: LocalSite) -> Iterator[None]:
    def bounce(to: str) -> Response:
        return Response("", status=302, headers={"Location": to})

    site.route("app.test", "/bounce-away", lambda r: bounce("http://other.test/plain.html"))
    site.route("app.test", "/hop-evil", lambda r: bounce("http://evil.test/plain.html?c=hop"))
    site.route("app.test", "/hop-ok", lambda r: bounce("/plain.html?c=hop-ok"))
    site.route("app.test", "/hop-chain", lambda r: bounce("/hop-evil"))
    see_other = Response("", status=303, headers={"Location": "/plain.html?c=post"})
    site.route("app.test", "/post-hop", lambda r: see_other)
    yield


def _reached(site: LocalSite, host: str, case: str) -> list[RecordedRequest]:
    return [r for r in site.requests_to(host, "/plain.html") if r.query.get("c") == [case]]


async def test_actions_on_a_page_outside_the_allow_list_are_refused(page: Page) -> None:
    guarded = Guard(ALLOW_APP, goal="Use the app.").wrap(page)
    await guarded.goto("http://app.test/plain.html")
    # A redirect (no proxy here) takes the tab off the allowed domains without the guard seeing it.
    await page.goto("http://app.test/bounce-away")
    assert page.url == "http://other.test/plain.html"
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


async def test_request_redirect_off_site_is_not_fetched(page: Page, site: LocalSite) -> None:
    guarded = Guard(ALLOW_APP, goal="Use the app.").wrap(page)
    await guarded.goto("http://app.test/plain.html")
    for start in ("http://app.test/hop-evil", "http://app.test/hop-chain"):
        with pytest.raises(ActionBlocked) as caught:
            await guarded.request.get(start)
        assert "evil.test" in caught.value.verdict.explanation
    assert _reached(site, "evil.test", "hop") == []


async def test_request_same_site_redirects_are_followed(page: Page, site: LocalSite) -> None:
    guarded = Guard(ALLOW_APP, goal="Use the app.").wrap(page)
    await guarded.goto("http://app.test/plain.html")
    response = await guarded.request.get("http://app.test/hop-ok")
    assert response.status == 200 and response.url == "http://app.test/plain.html?c=hop-ok"
    response = await guarded.request.post("http://app.test/post-hop", data="a=1")
    assert response.status == 200
    posted = _reached(site, "app.test", "post")[-1]
    assert posted.method == "GET"  # 303: the browser's GET, without the body
    response = await guarded.request.get("http://app.test/hop-evil", max_redirects=0)
    assert response.status == 302  # not followed: nothing to judge
