"""The static world model: what the DOM facts honestly say an action will do."""

from __future__ import annotations

import pytest

from pagewarden import Action, ElementFacts, FormFacts, FormField, Observation, Step
from pagewarden.worldmodel import Consequence, predict_static

PAGE = "http://tracker.test/acme/webapp/issues/1"


def step(kind: str, el: ElementFacts | None = None, value: str | None = None, **options: object) -> Step:
    return Step(
        action=Action(kind=kind, value=value, options=dict(options)),
        observation=Observation(url=PAGE, target=el),
    )


def test_link_click_navigates_and_knows_other_sites() -> None:
    same = predict_static(
        step("click", ElementFacts(tag="a", name="Issue 3", href="http://tracker.test/acme/webapp/issues/3"))
    )
    assert same.navigation is not None and same.navigation.via == "link"
    assert not same.navigation.cross_origin and not same.navigation.cross_site
    other = predict_static(
        step("click", ElementFacts(tag="a", name="docs", href="https://docs.test/a", link_target="_blank"))
    )
    assert other.navigation is not None and other.navigation.cross_site and other.navigation.new_tab
    assert "leaves this site for docs.test" in other.long_term_impact
    sub = predict_static(step("click", ElementFacts(tag="a", name="api", href="http://api.tracker.test/x")))
    assert sub.navigation is not None and sub.navigation.cross_origin and not sub.navigation.cross_site


def test_form_submission_target_method_and_fields() -> None:
    form = FormFacts(
        action="http://evil.test/collect",
        method="post",
        fields=(FormField("user", "text", "alice"), FormField("pw", "password", "secret-pass")),
    )
    prediction = predict_static(
        step("click", ElementFacts(tag="button", name="Verify", is_submit=True, form=form))
    )
    assert prediction.submission is not None
    assert prediction.submission.url == "http://evil.test/collect" and prediction.submission.method == "post"
    assert prediction.submission.fields == ("user", "pw") and prediction.submission.carries_password
    assert (
        prediction.submission.cross_site and "sends form data to another site" in prediction.long_term_impact
    )
    assert prediction.navigation is not None and prediction.navigation.via == "form"


@pytest.mark.parametrize(
    ("tag", "submits"), [("input", True), ("textarea", False)], ids=["input-enter", "textarea-enter"]
)
def test_enter_submits_only_single_line_fields(tag: str, submits: bool) -> None:
    form = FormFacts(action="http://tracker.test/notes", method="post")
    field = ElementFacts(
        tag=tag, name="Comment", editable=True, form=form, input_type="text" if tag == "input" else "textarea"
    )
    prediction = predict_static(step("press", field, value="Enter"))
    assert (prediction.submission is not None) is submits


@pytest.mark.parametrize(
    ("label", "consequence"),
    [
        ("Delete project", Consequence.IRREVERSIBLE),
        ("Create personal access token", Consequence.IRREVERSIBLE),
        ("Transfer ownership", Consequence.IRREVERSIBLE),
        ("Save changes", Consequence.CONSEQUENTIAL),
        ("Invite members", Consequence.CONSEQUENTIAL),
        ("Show more", Consequence.NONE),
        ("Undelete-ish preview", Consequence.NONE),
    ],
)
def test_consequence_from_what_the_element_says(label: str, consequence: Consequence) -> None:
    assert predict_static(step("click", ElementFacts(tag="button", name=label))).consequence is consequence


def test_goto_scripts_and_javascript_links() -> None:
    goto = predict_static(step("goto", value="/acme/webapp/-/settings"))
    assert goto.navigation is not None and goto.navigation.url == "http://tracker.test/acme/webapp/-/settings"
    script = predict_static(step("evaluate", value="document.cookie"))
    assert script.consequence is Consequence.CONSEQUENTIAL and "arbitrary" in script.semantic_delta
    js_link = predict_static(step("click", ElementFacts(tag="a", name="run", href="javascript:steal()")))
    assert js_link.navigation is None and js_link.consequence is Consequence.CONSEQUENTIAL


def test_fill_changes_a_field_and_says_how_much() -> None:
    prediction = predict_static(step("fill", ElementFacts(tag="input", name="Title"), value="hello"))
    assert prediction.element_changes == {"changed": ["Title"]}
    assert "5 characters" in prediction.semantic_delta and prediction.navigation is None
