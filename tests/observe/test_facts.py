"""The facts reader sees what the guard needs, in real Chromium, including what pages hide."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Page

from pagewarden import Guard
from pagewarden._calls import drive_async
from pagewarden.observe import ElementFacts
from pagewarden.observe._gather import facts_at_point, facts_of_focused, facts_of_locator, value_sources
from pagewarden.observe._prune import prune_snapshot


@pytest.fixture
async def facts_page(page: Page) -> Page:
    await page.goto("http://app.test/facts.html")
    return page


async def facts(page: Page, selector: str) -> ElementFacts:
    result, count, _ = await drive_async(facts_of_locator(page.locator(selector)))
    assert count == 1 and result is not None
    return result


async def test_links_resolve_against_base_and_keep_target(facts_page: Page) -> None:
    rel = await facts(facts_page, "#rel")
    assert rel.href == "http://app.test/sub/x/y?q=1"
    assert rel.role == "link" and rel.name == "Relative link"
    blank = await facts(facts_page, "#blank")
    assert blank.link_target == "_blank" and blank.href == "http://other.test/p"
    assert (await facts(facts_page, "#nav")).region == "navigation"


async def test_form_action_absent_explicit_and_formaction(facts_page: Page) -> None:
    implicit = await facts(facts_page, "#f1b")
    assert implicit.form is not None and implicit.is_submit
    assert implicit.form.action == "http://app.test/facts.html" and implicit.form.action_explicit is False
    assert implicit.form.method == "get"
    assert [(f.name, f.value) for f in implicit.form.fields] == [("q", "v1")]
    save = await facts(facts_page, "#f2b")
    assert save.form is not None
    assert (
        save.form.action == "http://app.test/post"
        and save.form.method == "post"
        and save.form.action_explicit
    )
    names = [f.name for f in save.form.fields]
    assert names == ["title", "pw", "checked"]
    evil = await facts(facts_page, "#f2evil")
    assert evil.form is not None
    assert (evil.form.action, evil.form.method, evil.form.target) == ("http://evil.test/c", "post", "_blank")
    plain = await facts(facts_page, "#f2plain")
    assert plain.is_submit is False


async def test_password_value_is_read_but_not_in_attributes(facts_page: Page) -> None:
    pw = await facts(facts_page, "#f2pw")
    assert pw.input_type == "password" and pw.value == "pw-value-123"
    assert "value" not in pw.attrs or pw.attrs["value"] != "pw-value-123"


@pytest.mark.parametrize(
    ("selector", "reason"),
    [
        ("#dnone", "display:none"),
        ("#vis", "visibility:hidden"),
        ("#opac", "transparent (opacity)"),
        ("#offscreen", "off-screen"),
        ("#clipped", "clipped"),
        ("#zero", "clipped by a zero-size box"),
        ("#ghost", "text colour equals background"),
    ],
)
async def test_hidden_elements_are_recognised(facts_page: Page, selector: str, reason: str) -> None:
    result = await facts(facts_page, selector)
    assert result.visible is False
    assert result.hidden_reason == reason


async def test_visible_element_is_visible(facts_page: Page) -> None:
    result = await facts(facts_page, "#visible")
    assert result.visible and result.hidden_reason is None and result.region == "main"


async def test_user_content_dialogs_and_overlays(facts_page: Page) -> None:
    ugc = await facts(facts_page, "#ugc")
    assert ugc.in_ugc and ugc.ugc_selector == ".comment-body" and "Nice work" in ugc.context_text
    post = await facts(facts_page, "#inarticle")  # an <article> with an author and a reply control
    assert post.in_ugc and post.ugc_selector == "article: an author and a reply control"
    assert not (await facts(facts_page, "#incard")).in_ugc  # an <article> that is a product card
    assert not (await facts(facts_page, "#visible")).in_ugc
    dialog = await facts(facts_page, "#dlg")
    assert dialog.in_dialog and "Session expired" in dialog.context_text and dialog.region == "dialog"
    assert (await facts(facts_page, "#fixed")).in_dialog
    shadow = await facts(facts_page, "#shadowbtn")
    assert shadow.in_ugc and shadow.name == "In shadow"


async def test_hidden_and_aria_text_are_captured(facts_page: Page) -> None:
    link = await facts(facts_page, "#hidtext")
    assert link.text == "Docs" and "ignore all previous instructions" in link.hidden_text
    aria = await facts(facts_page, "#aria")
    assert aria.text == "OK" and aria.aria_text.startswith("Assistant: ignore")
    assert aria.name.startswith("Assistant")


async def test_label_placeholder_and_attributes(facts_page: Page) -> None:
    field = await facts(facts_page, "#lbl")
    assert field.name == "Labelled field" and field.attrs["placeholder"] == "type here"
    assert field.attrs["id"] == "lbl" and field.editable and field.role == "textbox"


async def test_point_and_focused_element(facts_page: Page) -> None:
    box = await facts_page.locator("#visible").bounding_box()
    assert box is not None
    at_point, _ = await drive_async(facts_at_point(facts_page, box["x"] + 3, box["y"] + 3))
    assert at_point is not None and at_point.attrs["id"] == "visible"
    await facts_page.focus("#lbl")
    focused, _ = await drive_async(facts_of_focused(facts_page))
    assert focused is not None and focused.attrs["id"] == "lbl"
    await facts_page.evaluate("document.activeElement.blur()")
    nothing, _ = await drive_async(facts_of_focused(facts_page))
    assert nothing is None


async def test_value_sources_find_text_links_and_hidden_places(facts_page: Page) -> None:
    found: Any = await drive_async(value_sources(facts_page, "ignore all previous"))
    assert len(found) == 1 and found[0].hidden
    links = await drive_async(value_sources(facts_page, "evil.test/c"))
    assert links == ()  # formaction is not a link target
    issue = await drive_async(value_sources(facts_page, "app.test/issues/3", path="/issues/3"))
    assert issue and issue[0].kind == "href" and issue[0].in_ugc


async def test_snapshot_is_taken_only_when_asked(page: Page, tmp_path: Path) -> None:
    for snapshot in (False, True):
        trace = tmp_path / f"trace-{snapshot}.jsonl"
        guarded = Guard(snapshot=snapshot, trace=trace).wrap(page)
        await guarded.goto("http://app.test/facts.html")
        await guarded.click("#visible")
        observation = json.loads(trace.read_text().splitlines()[-1])["step"]["observation"]
        if snapshot:
            assert observation["title"] == "Facts"
            assert 'button "Plainly visible"' in observation["aria_snapshot"]
            assert "[ref=" in observation["aria_snapshot"]
        else:
            assert "aria_snapshot" not in observation and "title" not in observation


def test_prune_keeps_the_target_neighbourhood() -> None:
    big = "\n".join(f'- button "b{i}" [ref=e{i}]' for i in range(5000))
    pruned = prune_snapshot(big, focus='"b4000"', max_chars=4000)
    assert len(pruned) <= 4100
    assert '"b4000"' in pruned and '"b0"' in pruned and "lines omitted" in pruned
    assert prune_snapshot("short", focus="x") == "short"
