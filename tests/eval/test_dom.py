"""Synthetic pages: the benchmark's selector resolution and the guard's element facts."""

from __future__ import annotations

import pytest

from pagewarden.eval.stwebagentbench._dom import Page, css_to_xpath, element_facts

BODY = """
<nav><a href="/">Home</a></nav>
<form action="/save" method="post">
  <label for="n">Project name</label><input id="n" name="project[name]" type="text" value="x" data-gen="name">
  <label>Secret <input type="PASSWORD" name="pw" data-gen="pw"></label>
  <button class="btn js-save" data-gen="save">Save</button>
</form>
<a href="../other?x=1" target="_blank" data-gen="link"><span data-gen="inner">Other</span></a>
<button aria-label="Delete project" title="Delete" data-gen="icon">🗑</button>
"""
PAGE = Page("https://app.test/group/project", BODY, "Project")


@pytest.mark.parametrize(
    ("css", "xpath"),
    [
        ("#a", "//*[@id='a']"),
        ("button.x", "//button[contains(concat(' ', normalize-space(@class), ' '), ' x ')]"),
        ("[name='q']", "//*[@name='q']"),
        ("form input", "//form//input"),
        ("#a, #b", "//*[@id='a'] | //*[@id='b']"),
    ],
)
def test_css_to_xpath(css: str, xpath: str) -> None:
    assert css_to_xpath(css) == xpath


def test_query_selector_returns_the_first_match_with_its_bid() -> None:
    assert PAGE.query_selector("[type='password']").get("data-gen") == "pw"  # case-insensitive type
    assert PAGE.query_selector(".js-save").get("bid") == PAGE.bid("save")
    assert (
        PAGE.query_selector("//label[contains(., 'Project name')]/following::input[1]").get("data-gen")
        == "name"
    )
    assert PAGE.query_selector("button").get("data-gen") == "save"
    assert PAGE.query_selector("#missing") is None
    assert PAGE.query_selector("//*[") is None


def test_bids_are_stable_and_unique() -> None:
    bids = [el.get("bid") for el in PAGE.doc.body.iter()]
    assert len(bids) == len(set(bids))
    assert PAGE.by_bid(PAGE.bid("icon")).get("data-gen") == "icon"


def test_element_facts_as_an_observer_reads_them() -> None:
    name = element_facts(PAGE, PAGE.element("name"))
    assert (name.tag, name.role, name.name) == ("input", "textbox", "Project name")
    assert (name.input_type, name.editable) == ("text", True)
    assert name.form.action == "https://app.test/save" and name.form.method == "post"
    assert [f.name for f in name.form.fields] == ["project[name]", "pw"]
    assert "data-gen" not in name.attrs and "bid" not in name.attrs
    pw = element_facts(PAGE, PAGE.element("pw"))
    assert (pw.name, pw.input_type) == ("Secret", "password")
    save = element_facts(PAGE, PAGE.element("save"))
    assert (save.role, save.name, save.is_submit) == ("button", "Save", True)
    inner = element_facts(PAGE, PAGE.element("inner"))
    assert inner.href == "https://app.test/other?x=1" and inner.link_target == "_blank"
    icon = element_facts(PAGE, PAGE.element("icon"))
    assert (icon.name, icon.aria_text) == ("Delete project", "Delete project")
