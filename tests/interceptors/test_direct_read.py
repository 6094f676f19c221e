"""The facts reader called over CDP in Playwright's utility world (`observe._direct`).

The guard reads a plain-CSS locator of the main frame, a point, the focused element, the
page's text and the report of stopped navigations with one `Runtime.evaluate` in the world the
reader's selector engine runs in, instead of a Playwright `get_attribute` on an engine selector.
It must read what the engine reads, the current document only, the same reader (one pin, one
report), and fall back to the engine whenever the world is not known or the call fails.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from playwright.async_api import Page

from pagewarden import Guard
from pagewarden._calls import drive_async
from pagewarden.guard._exceptions import GuardError
from pagewarden.observe._gather import facts_of_locator
from pagewarden.testing import LocalSite, Response

from .test_activation import ALLOW_APP
from .test_reader_isolation import PATCHES


def _doc(body: str) -> str:
    return f'<!doctype html><html><head><meta charset="utf-8"></head><body>{body}</body></html>'


@pytest.fixture(scope="module", autouse=True)
def _routes(site: LocalSite) -> Iterator[None]:
    pages = {
        "same": '<p><a id="t" href="/plain.html?c=direct">Open</a> <input id="f" aria-label="Name"></p>',
        "evil": '<p><a id="t" href="http://evil.test/plain.html?c=direct">Open</a></p>',
        "patched": '<p><a id="t" href="http://evil.test/plain.html?c=direct">Open</a></p>' + PATCHES,
    }
    for name, body in pages.items():
        html = _doc(body)
        site.route("app.test", f"/direct/{name}.html", lambda _r, html=html: Response(html))
    yield


def _reader(guarded: object, page: Page):
    return guarded._pw_shared.direct_readers.get(page)  # type: ignore[attr-defined]


async def test_reads_go_over_cdp_and_agree_with_the_engine(page: Page) -> None:
    guard = Guard(ALLOW_APP, goal="Use the app.")
    guarded = guard.wrap(page)
    await guarded.goto("http://app.test/facts.html")
    await guarded.locator("#rel").hover()
    reader = _reader(guarded, page)
    assert reader is not None and reader.world is not None and reader._installed
    engine = guarded._pw_shared.reader_engine(page)  # type: ignore[attr-defined]
    for selector in ("#rel", "#blank", "#nav", "#f1b", "#f2b", "#f2evil"):
        both = []
        for direct in (None, reader):
            facts, count, _ = await drive_async(
                facts_of_locator(page.locator(selector), lib=engine, engine=engine, selector=selector,
                                 direct=direct)
            )  # fmt: skip
            assert count == 1 and facts is not None
            both.append(facts)
        assert both[0] == both[1], selector
    assert reader.world is not None and reader._installed


async def test_each_document_is_read_in_its_own_world(page: Page, site: LocalSite) -> None:
    guarded = Guard(ALLOW_APP, goal="Use the app.").wrap(page)
    await guarded.goto("http://app.test/direct/same.html")
    await guarded.locator("#t").hover()
    reader = _reader(guarded, page)
    first = reader.world
    assert first is not None
    await guarded.goto("http://app.test/direct/evil.html")
    with pytest.raises(GuardError) as caught:
        await guarded.locator("#t").click()
    prediction = caught.value.verdict.prediction
    assert prediction is not None and prediction.navigation is not None
    assert prediction.navigation.url == "http://evil.test/plain.html?c=direct"
    assert reader.world not in (None, first) and reader._installed
    assert [r for r in site.requests_to("evil.test", "/plain.html") if r.query.get("c") == ["direct"]] == []


async def test_the_page_world_cannot_change_a_direct_read(page: Page) -> None:
    await page.goto("http://app.test/direct/patched.html")
    guarded = Guard(ALLOW_APP, goal="Use the app.").wrap(page)
    with pytest.raises(GuardError) as caught:
        await guarded.locator("#t").click()
    prediction = caught.value.verdict.prediction
    assert prediction is not None and prediction.navigation is not None
    assert prediction.navigation.url == "http://evil.test/plain.html?c=direct"
    assert _reader(guarded, page)._installed


async def test_an_unknown_world_falls_back_to_the_engine(page: Page) -> None:
    guarded = Guard(ALLOW_APP, goal="Use the app.").wrap(page)
    await guarded.goto("http://app.test/direct/same.html")
    await guarded.locator("#f").fill("Ada")
    reader = _reader(guarded, page)
    reader.world = "no-such-world"
    await guarded.locator("#t").hover()  # read through the engine: the action runs
    assert reader.world is None
    await guarded.goto("http://app.test/direct/evil.html")
    assert reader.world is not None  # the next document's world is announced
    with pytest.raises(GuardError):
        await guarded.locator("#t").click()


async def test_a_new_document_gets_the_reader_before_its_first_action(page: Page) -> None:
    """Under the async API the reader is put in each new document's utility world as soon as
    the world is announced (in the background), and the engine then uses that same reader."""
    guarded = Guard(ALLOW_APP, goal="Use the app.").wrap(page)
    await guarded.goto("http://app.test/direct/same.html")
    await guarded.locator("#f").fill("Ada")
    reader = _reader(guarded, page)
    first = reader.world
    await guarded.goto("http://app.test/direct/evil.html")
    for _ in range(100):
        if reader.world not in (None, first) and reader._installed:
            break
        await asyncio.sleep(0.02)
    assert reader.world not in (None, first) and reader._installed
    # the engine (a non-plain locator is read through it) finds the reader that is there
    with pytest.raises(GuardError) as caught:
        await guarded.locator("#t >> nth=0").click()
    prediction = caught.value.verdict.prediction
    assert prediction is not None and prediction.navigation is not None
    assert prediction.navigation.url == "http://evil.test/plain.html?c=direct"
    assert await page.evaluate("window.location.pathname") == "/direct/evil.html"


async def test_reads_go_straight_onto_the_connection(page: Page) -> None:
    """Under the async API a read is a message on Playwright's connection, not a
    `CDPSession.send` call (no stack capture, validation or API zone per read): with the
    session's public send broken, reads still go over CDP and the world is kept."""
    guarded = Guard(ALLOW_APP, goal="Use the app.").wrap(page)
    await guarded.goto("http://app.test/direct/same.html")
    await guarded.locator("#f").fill("Ada")
    reader = _reader(guarded, page)
    assert reader is not None and reader._raw is not None and reader.world is not None
    world = reader.world

    async def broken(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("CDPSession.send was called")

    reader.session.send = broken  # type: ignore[method-assign]
    sent: list[str] = []
    raw = reader._raw
    reader._raw = lambda method, params, timeout: sent.append(method) or raw(method, params, timeout)
    await guarded.locator("#f").fill("Grace Hopper")
    assert sent == ["Runtime.evaluate"] and reader.world == world and reader._installed
    await guarded.goto("http://app.test/direct/evil.html")
    with pytest.raises(GuardError):  # still judged on what the direct read saw
        await guarded.locator("#t").click()
    assert sent[-1] == "Runtime.evaluate" and len(sent) >= 2


async def test_the_observations_own_work_runs_while_the_read_is_on_its_way(page: Page) -> None:
    """`meanwhile` runs after the read was sent and before its answer is taken; an error in it
    is the caller's (raised once the answer is in), and does not make the reader forget the
    world."""
    from pagewarden.observe._direct import DirectReader

    guarded = Guard(ALLOW_APP, goal="Use the app.").wrap(page)
    await guarded.goto("http://app.test/direct/same.html")
    await guarded.locator("#f").fill("Ada")
    reader: DirectReader = _reader(guarded, page)
    order: list[str] = []
    raw = reader._raw

    def send(method: str, params: dict, timeout: float) -> object:
        order.append("sent")
        return raw(method, params, timeout)

    reader._raw = send  # type: ignore[assignment]
    text = await drive_async(reader.read("report", {"lib": reader.name}, lambda: order.append("meanwhile")))
    assert order == ["sent", "meanwhile"] and isinstance(text, str)

    def fails() -> None:
        raise KeyError("the caller's own")

    with pytest.raises(KeyError):
        await drive_async(reader.read("report", {"lib": reader.name}, fails))
    assert reader.world is not None and reader._installed
