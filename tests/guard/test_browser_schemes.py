"""PW-NAVIGATION / PW-DOWNLOAD, sans-I/O: each destination kind of an action, every way an
action names one (goto, new page, link, form action), and the URLs that are not asked about."""

from __future__ import annotations

import pytest

from pagewarden.guard import Guard
from pagewarden.steps import Action, ElementFacts, FormFacts, Observation

PAGE = "http://site.test/page"


def _judge(action: Action, target: ElementFacts | None = None) -> tuple[str, list[str]]:
    guard = Guard()
    verdict = guard.evaluate(guard.make_step(action, Observation(url=PAGE, target=target)))
    return verdict.decision.value, [f"{f.policy_id}/{f.rule}" for f in verdict.findings]


@pytest.mark.parametrize(
    ("url", "decision", "rule"),
    [
        ("file:///etc/passwd", "block", "file_url"),
        ("  File:///C:/Users/me/secrets.txt", "block", "file_url"),
        ("file://server/share/x", "block", "file_url"),
        ("chrome://settings/passwords", "block", "browser_url"),
        ("chrome-extension://abc/popup.html", "block", "browser_url"),
        ("view-source:http://site.test/", "block", "browser_url"),
        ("devtools://devtools/bundled/inspector.html", "block", "browser_url"),
        ("about:settings", "block", "browser_url"),
        ("data:text/html;base64,PHRpdGxlPng8L3RpdGxlPg==", "ask", "data_url"),
        ("DATA:text/html,<b>x</b>", "ask", "data_url"),
        ("blob:http://evil.test/0b8c", "ask", "blob_url"),
        ("filesystem:http://evil.test/temporary/x.html", "ask", "blob_url"),
        ("mailto:someone@example.org", "ask", "external_url"),
        ("tel:+15555550100", "ask", "external_url"),
        ("slack://open", "ask", "external_url"),
    ],
)
def test_destinations_that_are_not_web_pages(url: str, decision: str, rule: str) -> None:
    for action, target in (
        (Action("goto", value=url), None),
        (Action("new_page", value=url), None),
        (Action("click", selector="a"), ElementFacts(tag="a", href=url)),
        (Action("click", selector="button"),
         ElementFacts(tag="button", is_submit=True, form=FormFacts(action=url, method="get"))),
    ):  # fmt: skip
        got, rules = _judge(action, target)
        assert (got, rules[:1]) == (decision, [f"PW-NAVIGATION/{rule}"]), (action, target)


@pytest.mark.parametrize(
    "url",
    ["http://site.test/x", "https://other.test/", "about:blank", "about:blank#top", "about:srcdoc",
     "blob:http://site.test/0b8c", "blob:https://www.site.test/1", "javascript:void(0)"],
)  # fmt: skip
def test_web_pages_and_empty_documents_are_left_to_the_policies(url: str) -> None:
    assert _judge(Action("goto", value=url)) == ("allow", [])


def test_a_download_link_asks_and_is_not_also_a_navigation() -> None:
    link = ElementFacts(tag="a", href="blob:http://evil.test/1", download=True, attrs={"download": "x.csv"})
    assert _judge(Action("click", selector="a"), link) == ("ask", ["PW-DOWNLOAD/download"])
    hover = _judge(Action("hover", selector="a"), link)
    assert hover == ("allow", [])  # pointing at it downloads nothing
