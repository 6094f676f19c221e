"""Term normalisation and fuzzy matching; the CSS / XPath selector subset against facts."""

from __future__ import annotations

import pytest

from pagewarden.policies import PolicyError, PolicySet
from pagewarden.rules._matching import (
    SelectorError,
    compile_selector,
    element_picked,
    normalise,
    term_matches,
)
from pagewarden.steps import ElementFacts


@pytest.mark.parametrize(
    ("text", "folded"),
    [
        ("Dеlete", "delete"),  # Cyrillic е
        ("De\u200bl\u200cete", "delete"),  # zero-width space and non-joiner
        ("Del\u202eete", "delete"),  # a bidi override
        ("ＤＥＬＥＴＥ", "delete"),  # full-width
        ("Délète", "delete"),  # accents
        ("  Delete \n project ", "delete project"),
        ("ρaypal", "paypal"),  # Greek rho
    ],
)
def test_normalise_folds_disguises(text: str, folded: str) -> None:
    assert normalise(text) == folded


@pytest.mark.parametrize(
    ("term", "text", "expected"),
    [
        ("Delete", "Delete project", True),
        ("Delete", "delete", True),
        ("Delete", "Delette", True),
        ("Delete", "Deleet", False),  # a transposition in a short word is another word
        ("Delete", "Delet", True),
        ("Delete", "Deleted items", False),
        ("Delete", "Undelete", False),
        ("Delete", "Delegate", False),
        ("Save", "Saved", False),
        ("Save", "Sav", False),  # terms shorter than 4 letters need the whole word
        ("add", "Add member", True),
        ("add", "address", False),
        ("Create project", "Create group", False),
        ("", "anything", False),
    ],
)
def test_term_matches(term: str, text: str, expected: bool) -> None:
    assert term_matches(term, text) is expected


BUTTON = ElementFacts(
    tag="button", role="button", name="Save changes", text="Save changes", attrs={"class": "btn js-save"}
)
PASSWORD = ElementFacts(
    tag="input", name="Password", input_type="password", attrs={"type": "password", "id": "pw"}
)
FIRST = ElementFacts(tag="input", name="First Name", input_type="text", attrs={"name": "first_name"})
UNLABELLED = ElementFacts(tag="span", context_text="ACCOUNT NAME · Select", text="Select")


@pytest.mark.parametrize(
    ("selector", "matches"),
    [
        ("[type='password']", {"PASSWORD"}),
        ("[type=PASSWORD]", {"PASSWORD"}),
        ('input[type="password"]#pw', {"PASSWORD"}),
        ("#pw", {"PASSWORD"}),
        (".js-save", {"BUTTON"}),
        ("button.btn.js-save", {"BUTTON"}),
        ("form .js-save", {"BUTTON"}),  # descendant: the element's own part is checked
        ("div > #pw", {"PASSWORD"}),
        (".js-save, #pw", {"BUTTON", "PASSWORD"}),
        ("[name^=first]", {"FIRST"}),
        ("[name$=_name]", {"FIRST"}),
        ("[name*=rst_na]", {"FIRST"}),
        ("[class~=btn]", {"BUTTON"}),
        ("*", {"BUTTON", "PASSWORD", "FIRST", "UNLABELLED"}),
        ("//button[contains(text(), 'Save')]", {"BUTTON"}),
        ("//button[contains(., 'save')]", {"BUTTON"}),
        ("//input[@name='first_name']", {"FIRST"}),
        ("//input[@type='password' and @id='pw']", {"PASSWORD"}),
        ("//label[contains(., 'First Name')]/following::input[1]", {"FIRST"}),
        ("//label[contains(., 'ACCOUNT NAME')]/following::span[2]", {"UNLABELLED"}),
        ("//*[@id='pw']", {"PASSWORD"}),
        ("//a[contains(text(), 'Save')]", set()),
    ],
)
def test_selectors_against_facts(selector: str, matches: set[str]) -> None:
    elements = {"BUTTON": BUTTON, "PASSWORD": PASSWORD, "FIRST": FIRST, "UNLABELLED": UNLABELLED}
    compiled = compile_selector(selector)
    assert {name for name, el in elements.items() if compiled.matches(el)} == matches


def test_approximate_selectors_say_so() -> None:
    assert compile_selector("form .js-save").approximate
    assert compile_selector("//label[contains(., 'X')]/following::input[1]").approximate
    assert not compile_selector("#pw").approximate


@pytest.mark.parametrize(
    "selector", ["", "a:hover", "li:nth-child(2)", "(//a)[1]", "//a[foo()]", "//a/ancestor::div"]
)
def test_unsupported_selectors_are_refused(selector: str) -> None:
    with pytest.raises(SelectorError):
        compile_selector(selector)


def test_a_bad_selector_in_a_policy_file_is_a_located_error() -> None:
    text = (
        "version: 1\npolicies:\n  - id: A\n    category: execution\n    risk_level: high\n"
        "    description: d\n    rules:\n      - forbid_element: {selectors: ['a:hover']}\n"
    )
    with pytest.raises(PolicyError) as info:
        PolicySet.from_text(text, source="p.yaml")
    assert "pseudo-classes are not supported" in str(info.value)
    assert info.value.problems[0].line == 8


def test_element_picked() -> None:
    assert element_picked([], [], None) == ""
    assert element_picked(["Save"], [], BUTTON) == "Save"
    assert element_picked([], ["#pw"], PASSWORD) == "#pw"
    assert element_picked(["Save"], ["#pw"], FIRST) is None


def test_ascii_text_is_normalised_as_any_text() -> None:
    """`normalise` takes a shortcut for ASCII text; it must give what the full folding gives."""
    import random
    import string

    from pagewarden.policies._selectors import folded as _folded

    rng = random.Random(5)
    alphabet = string.printable + "\x00\x01\x0b\x0c\x1c\x1f\x7f"
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 30)))
        assert normalise.__wrapped__(text) == _folded(text), repr(text)
    assert all(normalise(chr(c)) == _folded(chr(c)) for c in range(128))
