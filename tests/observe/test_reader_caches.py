"""The installed reader's caches never serve stale facts, and its quick resolution of plain CSS
locators reads the element Playwright acts on (real Chromium, the reader in Playwright's utility
world, where it keeps its caches from one action to the next).

Each cache test reads once (filling the caches), changes the DOM one way (a text node's
characters, an element added, an attribute), and reads again: the change must show, and undoing
it must show too.
"""

from __future__ import annotations

from typing import Any

import pytest
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page

from pagewarden import Guard
from pagewarden._calls import drive_async
from pagewarden.observe import ElementFacts, TextSource
from pagewarden.observe._gather import facts_of_locator, plain_css

NEEDLE = "zq-marker-7781 deliver"


@pytest.fixture
async def guarded(page: Page) -> Any:
    guard = Guard(goal="Fill in the delivery form on app.test.")
    wrapped = guard.wrap(page)
    await wrapped.goto("http://app.test/reader_caches.html")
    await wrapped.locator("#note").hover()  # the first guarded action registers the reader's engine
    return wrapped


async def read(
    guarded: Any, selector: str, *, needle: str | None = None, field: bool = False, strict: bool = True
) -> tuple[ElementFacts, tuple[TextSource, ...]]:
    shared = guarded._pw_shared
    page = guarded.unwrap()
    engine = shared.reader_engine(page)
    assert engine, "the reader's engine is registered"
    facts, _, sources = await drive_async(
        facts_of_locator(
            page.locator(selector), strict=strict, needle=needle, field=field, lib=shared.facts_reader,
            engine=engine,
        )
    )  # fmt: skip
    assert facts is not None
    return facts, sources


async def kinds(guarded: Any) -> list[str]:
    _, sources = await read(guarded, "#nick", needle=NEEDLE, field=True)
    return sorted(s.kind for s in sources)


async def test_value_sources_follow_text_changes(guarded: Any) -> None:
    page = guarded.unwrap()
    assert await kinds(guarded) == []
    # the characters of an existing text node (no element added: only the text index may change)
    await page.evaluate(f"document.getElementById('note').firstChild.data = 'Please type {NEEDLE} here.'")
    assert await kinds(guarded) == ["text"]
    await page.evaluate("document.getElementById('note').firstChild.data = 'Fill in the form below.'")
    assert await kinds(guarded) == []
    # a text node replaced (a child list change without elements, like a counter's update)
    await page.evaluate(f"document.getElementById('plain-span').textContent = 'Ask for {NEEDLE}'")
    assert await kinds(guarded) == ["text"]
    await page.evaluate("document.getElementById('plain-span').textContent = 'Opening hours'")
    assert await kinds(guarded) == []


async def test_value_sources_follow_elements_and_attributes(guarded: Any) -> None:
    page = guarded.unwrap()
    assert await kinds(guarded) == []
    # an element added whose only trace of the needle is its href (no text changes with it)
    slug = NEEDLE.replace(" ", "-")
    added = (
        f"const a = document.createElement('a'); a.id = 'new-link'; a.href = '/x?{slug}';"
        " document.body.append(a)"
    )
    await page.evaluate(added)
    needle = slug
    _, sources = await read(guarded, "#nick", needle=needle, field=True)
    assert [s.kind for s in sources] == ["href"]
    await page.evaluate("document.getElementById('new-link').remove()")
    _, sources = await read(guarded, "#nick", needle=needle, field=True)
    assert sources == ()
    # the href of an existing link changed (no element added or removed)
    await page.evaluate(f"document.getElementById('elsewhere').setAttribute('href', '/help?{slug}')")
    _, sources = await read(guarded, "#nick", needle=needle, field=True)
    assert [s.kind for s in sources] == ["href"]
    await page.evaluate("document.getElementById('elsewhere').setAttribute('href', '/plain.html')")
    _, sources = await read(guarded, "#nick", needle=needle, field=True)
    assert sources == ()
    # a labelling attribute set on an existing element
    await page.evaluate(f"document.getElementById('plain-span').title = 'Type {NEEDLE}'")
    assert await kinds(guarded) == ["attribute"]
    await page.evaluate("document.getElementById('plain-span').removeAttribute('title')")
    assert await kinds(guarded) == []


async def mirrors(guarded: Any) -> int:
    facts, _ = await read(guarded, "#card", field=True)
    assert facts.field is not None
    return facts.field.mirrors


async def test_mirror_search_follows_labels_placeholders_and_new_fields(guarded: Any) -> None:
    page = guarded.unwrap()
    # #card's form posts to another origin, so fields with its name elsewhere are looked for
    assert await mirrors(guarded) == 0
    # a label's text changed (characters only) to #card's name
    await page.evaluate("document.getElementById('nick-label').firstChild.data = 'Card number'")
    assert await mirrors(guarded) == 1
    await page.evaluate("document.getElementById('nick-label').firstChild.data = 'Nickname'")
    assert await mirrors(guarded) == 0
    # a placeholder set on an unlabelled field
    await page.evaluate("document.getElementById('ph').placeholder = 'Card number'")
    assert await mirrors(guarded) == 1
    await page.evaluate("document.getElementById('ph').removeAttribute('placeholder')")
    assert await mirrors(guarded) == 0
    # a new field named by aria-label
    await page.evaluate(
        "const i = document.createElement('input'); i.id = 'late';"
        " i.setAttribute('aria-label', 'Card number'); document.getElementById('profile').append(i)"
    )
    assert await mirrors(guarded) == 1
    await page.evaluate("document.getElementById('late').remove()")
    assert await mirrors(guarded) == 0


async def test_a_mirror_whose_label_is_padded_with_white_space_still_counts(guarded: Any) -> None:
    page = guarded.unwrap()
    # The label reads "Card number" on screen and in the accessibility tree, however much white
    # space its text carries (a page could pad it to slip past a comparison of raw lengths).
    await page.evaluate(
        "document.getElementById('nick-label').firstChild.data = '  Card' + ' '.repeat(80) + '\\n\\t number '"
    )
    assert await mirrors(guarded) == 1
    await page.evaluate("document.getElementById('nick-label').firstChild.data = 'Card numbers'")
    assert await mirrors(guarded) == 0


async def native_label_names(guarded: Any, selector: str) -> list[str]:
    """The label text of each field `selector` matches, from the browser's own `labels` lists."""
    return await guarded.unwrap().eval_on_selector_all(
        selector, "els => els.map(el => Array.from(el.labels || []).map(l => l.innerText).join(' '))"
    )


async def test_label_names_follow_labels_added_retargeted_and_removed(guarded: Any) -> None:
    # The reader indexes labels by their `for` attribute and keeps the index from one read to the
    # next: after each change, the name it reads is the one the browser's own `labels` list gives.
    page = guarded.unwrap()
    steps = [
        "",
        # a label retargeted from one field to another, then back
        "document.getElementById('nick-label').htmlFor = 'ph'",
        "document.getElementById('nick-label').htmlFor = 'nick'",
        # a second label for the field, earlier in the document
        "const l = document.createElement('label'); l.htmlFor = 'nick'; l.textContent = 'Your';"
        " document.getElementById('profile').prepend(l)",
        # a label around a new field, and a label naming it by id before it
        "const w = document.createElement('label'); w.textContent = 'Wrapped';"
        " const i = document.createElement('input'); i.id = 'inner'; i.name = 'inner'; w.append(i);"
        " document.getElementById('profile').append(w);"
        " const b = document.createElement('label'); b.htmlFor = 'inner'; b.textContent = 'Before';"
        " document.getElementById('profile').prepend(b)",
        # an element earlier in the document takes the field's id: the labels are no longer its own
        "const d = document.createElement('input'); d.id = 'nick'; d.name = 'decoy';"
        " document.querySelector('main').prepend(d)",
        "document.querySelector('input[name=decoy]').remove()",
        # the field's own id changed
        "document.querySelector('input[name=nick]').id = 'renamed'",
        "document.getElementById('nick-label').remove()",
    ]
    for step in steps:
        if step:
            await page.evaluate(step)
        for selector in ("input[name=nick]", "#ph", "input[name=inner]"):
            if not await page.locator(selector).count():
                continue
            facts, _ = await read(guarded, selector)
            native = (await native_label_names(guarded, selector))[0]
            assert facts.name == native, (step, selector)


async def test_a_label_element_of_another_namespace_does_not_break_the_read(guarded: Any) -> None:
    # getElementsByTagName("label") also lists an SVG-namespace <label>, which has no `control`:
    # a page that plants one naming a field must not make the field unreadable.
    page = guarded.unwrap()
    await page.evaluate(
        "for (const id of ['card', 'nick']) {"
        " const l = document.createElementNS('http://www.w3.org/2000/svg', 'label');"
        " l.setAttribute('for', id); l.textContent = 'Card number';"
        " document.querySelector('main').prepend(l); }"
    )
    facts, _ = await read(guarded, "#nick", field=True)
    assert facts.name == "Nickname"
    assert await mirrors(guarded) == 0


async def test_a_replaced_element_is_read_anew(guarded: Any) -> None:
    page = guarded.unwrap()
    facts, _ = await read(guarded, "#elsewhere")
    assert facts.href == "http://app.test/plain.html"
    await page.evaluate(
        "document.getElementById('elsewhere').outerHTML = '<a id=\"elsewhere\" href=\"http://evil.test/x\">Help</a>'"
    )
    facts, _ = await read(guarded, "#elsewhere")
    assert facts.href == "http://evil.test/x"


async def test_plain_css_reads_the_element_playwright_acts_on(guarded: Any) -> None:
    page = guarded.unwrap()
    # Playwright lists light-tree matches before shadow ones (the quick read relies on it)
    assert await page.locator(".many").first.get_attribute("id") == "many-1"
    facts, _ = await read(guarded, ".many", strict=False)
    assert facts.attrs.get("id") == "many-1"
    await guarded.click(".many")  # not strict: the first match
    assert await page.text_content("#counter") == "many-1:1"
    # only in a shadow root: the usual resolution finds it
    facts, _ = await read(guarded, "#only-shadow")
    assert facts.attrs.get("id") == "only-shadow" and facts.name == "Only in the shadow"
    await guarded.locator("#only-shadow").click()
    assert await page.text_content("#counter") == "only-shadow:2"
    # one light match and one in a shadow root: a strict locator fails as in raw Playwright,
    # and nothing is clicked
    with pytest.raises(PlaywrightError, match="strict mode violation"):
        await page.locator(".dup").click(timeout=2000)
    with pytest.raises(PlaywrightError, match="strict mode violation"):
        await guarded.locator(".dup").click(timeout=2000)
    assert await page.text_content("#counter") == "only-shadow:2"


@pytest.mark.parametrize(
    ("selector", "plain"),
    [
        ("#field-3", True),
        ("button.act", True),
        ('form > input[name="q"]', True),
        ("main a[href^='/x'] ~ span", True),
        ("text=Pay", False),
        ("#a >> nth=0", False),
        ("a, b", False),
        ("button:visible", False),
        ("li:has-text('x')", False),
        ("//div", False),
        ('"Pay"', False),
        ("internal:role=button", False),
        ("css=#a", False),
        ("#a\\:b", False),
        ("", False),
    ],
)
def test_which_selectors_are_plain_css(selector: str, plain: bool) -> None:
    assert (plain_css(selector) is not None) is plain


# -- the change log: indexes brought up to date across reads, never left behind -------------------
# The reader brings its page-wide indexes (labels by `for`, link targets, labelling attributes,
# names of fields, the page's text) up to date from a log of the changes since it last read them,
# instead of making them anew. These tests change the same node again after a read has taken in its
# first change, change it twice between two reads, change more than the log keeps, and add
# subtrees whose labels and links are nested inside: each read must see the page as it is.


async def href_sources(guarded: Any, needle: str) -> list[str]:
    _, sources = await read(guarded, "#nick", needle=needle, field=True)
    return [s.kind for s in sources]


async def test_an_attribute_changed_again_after_a_read_is_seen(guarded: Any) -> None:
    page = guarded.unwrap()
    slug = NEEDLE.replace(" ", "-")
    set_href = "v => document.getElementById('elsewhere').setAttribute('href', v)"
    for value, expected in [
        ("/first.html", []),
        (f"/help?{slug}", ["href"]),  # the same element and attribute again, after a read took in the first
        ("/second.html", []),
        (f"/again?{slug}", ["href"]),
    ]:
        await page.evaluate(set_href, value)
        assert await href_sources(guarded, slug) == expected, value
    # twice between two reads: the read sees the last value
    await page.evaluate(set_href, f"/twice?{slug}")
    await page.evaluate(set_href, "/plain.html")
    assert await href_sources(guarded, slug) == []
    await page.evaluate(set_href, "/plain2.html")
    await page.evaluate(set_href, f"/last?{slug}")
    assert await href_sources(guarded, slug) == ["href"]
    # a labelling attribute, set, read, changed, read
    await page.evaluate("document.getElementById('plain-span').title = 'Opening hours'")
    assert await kinds(guarded) == []
    await page.evaluate(f"document.getElementById('plain-span').title = 'Type {NEEDLE}'")
    assert await kinds(guarded) == ["attribute"]
    await page.evaluate("document.getElementById('plain-span').title = 'Closed'")
    assert await kinds(guarded) == []


async def test_text_changed_after_a_read_is_seen_many_nodes_and_one_node_many_times(guarded: Any) -> None:
    page = guarded.unwrap()
    assert await kinds(guarded) == []
    # more changed text nodes than the text index keeps aside (it then reads the page's text again)
    await page.evaluate(
        "const box = document.createElement('div'); box.id = 'spans';"
        " for (let i = 0; i < 400; i++) { const s = document.createElement('span');"
        " s.textContent = 'row ' + i; box.append(s); } document.querySelector('main').append(box)"
    )
    assert await kinds(guarded) == []
    await page.evaluate("for (const s of document.querySelectorAll('#spans span')) s.firstChild.data += '.'")
    assert await kinds(guarded) == []
    # one node, changed after each read: each read sees its current text
    for i in range(3):
        await page.evaluate(f"document.querySelector('#spans span').firstChild.data = 'say {NEEDLE} {i}'")
        assert await kinds(guarded) == ["text"], i
        await page.evaluate(f"document.querySelector('#spans span').firstChild.data = 'row {i}'")
        assert await kinds(guarded) == [], i
    # a new element's text, then its text node changed before the next read
    await page.evaluate(
        "const p = document.createElement('p'); p.id = 'late-p'; p.textContent = 'nothing yet';"
        " document.querySelector('main').append(p)"
    )
    assert await kinds(guarded) == []
    await page.evaluate(f"document.getElementById('late-p').firstChild.data = 'now {NEEDLE}'")
    assert await kinds(guarded) == ["text"]


async def test_more_changes_than_the_log_keeps_between_two_reads(guarded: Any) -> None:
    page = guarded.unwrap()
    slug = NEEDLE.replace(" ", "-")
    assert await kinds(guarded) == []
    facts, _ = await read(guarded, "input[name=nick]")
    assert facts.name == "Nickname"
    # thousands of logged changes (titles, hrefs, label targets), the meaningful ones among them
    await page.evaluate(
        "const box = document.createElement('div'); box.id = 'flood';"
        " for (let i = 0; i < 50; i++) {"
        "   const a = document.createElement('a'); a.href = '/n' + i; box.append(a); }"
        " document.querySelector('main').append(box);"
        " const links = box.querySelectorAll('a');"
        " for (let round = 0; round < 80; round++)"
        "   for (const a of links) { a.title = 't' + round; a.href = '/r' + round; }"
        f" links[17].href = '/found?{slug}';"
        " document.getElementById('nick-label').htmlFor = 'ph';"
    )
    assert await href_sources(guarded, slug) == ["href"]
    facts, _ = await read(guarded, "input[name=nick]")
    assert facts.name == (await native_label_names(guarded, "input[name=nick]"))[0] == ""
    facts, _ = await read(guarded, "#ph")
    assert facts.name == "Nickname"


async def test_labels_and_links_nested_in_an_added_subtree_are_indexed(guarded: Any) -> None:
    page = guarded.unwrap()
    slug = NEEDLE.replace(" ", "-")
    facts, _ = await read(guarded, "#ph")
    assert facts.name == ""
    assert await href_sources(guarded, slug) == []
    await page.evaluate(
        "const box = document.createElement('section'); box.id = 'later';"
        " box.innerHTML = '<div><p><label for=\"ph\">Phone</label></p>"
        f"<ul><li><a href=\"/deep?{slug}\">deep</a></li></ul></div>';"
        " document.querySelector('main').append(box)"
    )
    facts, _ = await read(guarded, "#ph")
    assert facts.name == "Phone"
    assert await href_sources(guarded, slug) == ["href"]
    # the label's text changed after the read, then its target, then the subtree removed
    await page.evaluate("document.querySelector('#later label').firstChild.data = 'Mobile phone'")
    facts, _ = await read(guarded, "#ph")
    assert facts.name == "Mobile phone"
    await page.evaluate("document.querySelector('#later label').htmlFor = 'card'")
    facts, _ = await read(guarded, "#ph")
    assert facts.name == ""
    facts, _ = await read(guarded, "#card")
    assert facts.name == (await native_label_names(guarded, "#card"))[0]
    await page.evaluate("document.querySelector('#later label').htmlFor = 'ph'")
    facts, _ = await read(guarded, "#ph")
    assert facts.name == "Mobile phone"
    await page.evaluate("document.getElementById('later').remove()")
    facts, _ = await read(guarded, "#ph")
    assert facts.name == ""
    assert await href_sources(guarded, slug) == []


async def test_a_field_name_changed_again_after_a_read_counts_as_a_mirror(guarded: Any) -> None:
    page = guarded.unwrap()
    set_label = "v => document.getElementById('ph').setAttribute('aria-label', v)"
    for value, expected in [("Phone", 0), ("Card number", 1), ("Phone", 0), ("Card number", 1)]:
        await page.evaluate(set_label, value)
        assert await mirrors(guarded) == expected, value
    # a new field inside an added subtree, then its name changed before the next read
    await page.evaluate(
        "const box = document.createElement('div');"
        " box.innerHTML = '<p><input id=\"sub\" aria-label=\"Other\"></p>';"
        " document.getElementById('profile').append(box); document.getElementById('sub').placeholder = 'x';"
    )
    assert await mirrors(guarded) == 1
    await page.evaluate("document.getElementById('sub').setAttribute('aria-label', 'Card number')")
    assert await mirrors(guarded) == 2


async def test_a_subtree_moved_around_many_times_between_reads_is_read_where_it_is(guarded: Any) -> None:
    page = guarded.unwrap()
    slug = NEEDLE.replace(" ", "-")
    assert await href_sources(guarded, slug) == []
    # added, removed and added again hundreds of times, moved between containers, a label taken out
    # of it into the page, then the subtree left out of the page: what counts is where each is now
    await page.evaluate(
        "const box = document.createElement('div'); box.id = 'mover';"
        f" box.innerHTML = '<p><label for=\"ph\">Moved</label> <a href=\"/m?{slug}\">m</a></p>';"
        " const main = document.querySelector('main'), form = document.getElementById('profile');"
        " for (let i = 0; i < 300; i++) { main.append(box); box.remove(); form.append(box); }"
    )
    facts, _ = await read(guarded, "#ph")
    assert facts.name == "Moved"
    assert await href_sources(guarded, slug) == ["href"]
    await page.evaluate(
        "const box = document.getElementById('mover'); const label = box.querySelector('label');"
        " for (let i = 0; i < 300; i++) { document.body.append(box); box.remove(); }"
        " document.querySelector('main').append(label);"
    )
    facts, _ = await read(guarded, "#ph")
    assert facts.name == "Moved"
    assert await href_sources(guarded, slug) == []
