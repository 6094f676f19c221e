"""The policy language's element selectors and text folding, shared by the policy loader
(which checks that a policy's selectors compile) and the rules engine (which matches them).

* `normalise` folds text the way an attacker would try to dodge a term: Unicode
  compatibility forms, invisible characters (zero-width, soft hyphen, bidi controls),
  combining marks, common Cyrillic/Greek look-alikes of Latin letters, case and spacing.
* `compile_selector` reads the simple CSS and XPath selectors that policies (and
  ST-WebAgentBench) use — ``#id``, ``.class``, ``tag[attr='v']``, selector lists,
  ``//button[contains(text(), 'Save')]``, ``//input[@name='x']``,
  ``//label[contains(., 'Name')]/following::input[1]`` — and matches them against
  `ElementFacts`. Facts hold the element, not its ancestors: combinators and positions are
  approximated by the element's own part (a compiled selector says so in `approximate`).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from pagewarden.steps import ElementFacts

__all__ = ["Selector", "SelectorError", "compile_selector", "element_texts", "folded", "normalise"]

_SPACE = re.compile(r"\s+")
_INVISIBLE = re.compile(
    r"[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    r"\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0]"
)
# Letters of other scripts that render like Latin ones (after NFKC and lower-casing).
_CONFUSABLES = str.maketrans(
    {
        # Cyrillic
        "а": "a", "в": "b", "с": "c", "е": "e", "ё": "e", "һ": "h", "і": "i", "ї": "i", "ј": "j",
        "к": "k", "м": "m", "н": "h", "о": "o", "р": "p", "ԛ": "q", "ѕ": "s", "т": "t", "у": "y",
        "х": "x", "ԝ": "w", "ӏ": "l", "ɡ": "g",
        # Greek
        "α": "a", "β": "b", "ε": "e", "η": "n", "ι": "i", "κ": "k", "ν": "v", "ο": "o", "ρ": "p",
        "τ": "t", "υ": "u", "χ": "x", "ω": "w", "ϲ": "c",
        # Latin look-alikes and digits used as letters in spoofed words
        "ı": "i", "ł": "l", "ƚ": "l", "ȷ": "j",
    }
)  # fmt: skip


@lru_cache(maxsize=8192)
def normalise(text: str) -> str:
    """NFKC, invisible characters and combining marks removed, look-alikes folded to Latin,
    lower-case, whitespace collapsed."""
    if text.isascii():
        # ASCII is its own NFKC and NFD form and has no combining marks or invisible
        # characters (`_folded` is the same without these shortcuts)
        return _SPACE.sub(" ", text.lower().translate(_CONFUSABLES)).strip()
    return folded(text)


def folded(text: str) -> str:
    """`normalise` for any text."""
    text = _INVISIBLE.sub("", unicodedata.normalize("NFKC", text))
    decomposed = unicodedata.normalize("NFD", text)
    if any(unicodedata.combining(ch) for ch in decomposed):
        text = unicodedata.normalize("NFC", "".join(ch for ch in decomposed if not unicodedata.combining(ch)))
    text = text.lower().translate(_CONFUSABLES)
    return _SPACE.sub(" ", text).strip()


def element_texts(el: ElementFacts) -> tuple[str, ...]:
    """The texts by which a person or a policy would name the element."""
    texts = [el.name, el.text[:300], el.aria_text, el.attrs.get("value", ""), el.attrs.get("title", "")]
    if el.attrs.get("placeholder"):
        texts.append(el.attrs["placeholder"])
    return tuple(t for t in texts if t)


class SelectorError(ValueError):
    """A selector uses syntax the matcher does not support."""


Check = Callable[[ElementFacts], bool]


@dataclass(frozen=True, slots=True)
class Selector:
    """A compiled selector: `matches(facts)`; `approximate` when parts could not be checked."""

    source: str
    alternatives: tuple[tuple[Check, ...], ...]
    approximate: bool = False

    def matches(self, el: ElementFacts | None) -> bool:
        """Whether the element satisfies one of the selector's alternatives."""
        if el is None:
            return False
        return any(all(check(el) for check in checks) for checks in self.alternatives)


def _attr(el: ElementFacts, name: str) -> str | None:
    name = name.lower()
    if name in el.attrs:
        return el.attrs[name]
    if name == "type" and el.input_type:
        return el.input_type
    if name == "href" and el.href:
        return el.href
    if name == "role" and el.role:
        return el.role
    if name == "value" and el.value is not None:
        return el.value
    return None


# Attribute values HTML compares case-insensitively in selectors.
_CASELESS_ATTRS = frozenset({"type", "method", "dir", "lang", "align", "checked", "disabled", "selected"})


def _attr_check(name: str, op: str, value: str, caseless: bool) -> Check:
    caseless = caseless or name.lower() in _CASELESS_ATTRS

    def check(el: ElementFacts) -> bool:
        actual = _attr(el, name)
        if actual is None:
            return False
        if op == "":
            return True
        a, v = (actual.lower(), value.lower()) if caseless else (actual, value)
        if op == "=":
            return a == v
        if op == "~=":
            return v in a.split()
        if op == "|=":
            return a == v or a.startswith(v + "-")
        if op == "^=":
            return bool(v) and a.startswith(v)
        if op == "$=":
            return bool(v) and a.endswith(v)
        return bool(v) and v in a  # *=

    return check


def _tag_check(tag: str) -> Check:
    tag = tag.lower()
    return lambda el: el.tag.lower() == tag


def _text_contains(value: str) -> Check:
    wanted = normalise(value)
    return lambda el: bool(wanted) and any(wanted in normalise(t) for t in element_texts(el))


def _text_equals(value: str) -> Check:
    wanted = normalise(value)
    return lambda el: any(wanted == normalise(t) for t in element_texts(el))


def _label_contains(value: str) -> Check:
    """The element's label (accessible name, else the text around it) contains `value`."""
    wanted = normalise(value)

    def check(el: ElementFacts) -> bool:
        labels = [el.name, el.aria_text, el.attrs.get("placeholder", ""), el.attrs.get("title", "")]
        if not any(labels):
            labels.append(el.context_text[:300])
        return bool(wanted) and any(wanted in normalise(t) for t in labels if t)

    return check


# -- CSS --------------------------------------------------------------------------------------
_CSS_TOKEN = re.compile(
    r"""\s*(?:
        (?P<comma>,)
      | (?P<comb>[>+~])
      | (?P<tag>\*|[A-Za-z][A-Za-z0-9\-]*)
      | \#(?P<id>(?:[A-Za-z0-9_\-]|\\.)+)
      | \.(?P<cls>(?:[A-Za-z0-9_\-]|\\.)+)
      | \[\s*(?P<attr>[A-Za-z_:][-A-Za-z0-9_:.]*)\s*
          (?:(?P<op>[~|^$*]?=)\s*(?:"(?P<dq>[^"]*)"|'(?P<sq>[^']*)'|(?P<bare>[^\]\s]+))\s*(?P<flag>[iIsS])?\s*)?\]
      | (?P<pseudo>::?[A-Za-z\-]+)
    )""",
    re.VERBOSE,
)
_CSS_UNESCAPE = re.compile(r"\\(.)")


def _compile_css(text: str) -> tuple[tuple[tuple[Check, ...], ...], bool]:
    alternatives: list[tuple[Check, ...]] = []
    current: list[Check] = []
    approximate = False
    pos = 0
    while pos < len(text):
        if not text[pos:].strip():
            break
        match = _CSS_TOKEN.match(text, pos)
        if match is None or match.end() == pos:
            raise SelectorError(f"unsupported CSS selector syntax at {text[pos : pos + 20]!r}")
        spaced = match.start() < len(text) and text[pos].isspace()
        simple = not (match.group("comma") or match.group("comb"))
        if simple and current and spaced and pos > 0:
            # a descendant combinator: only the rightmost compound can be checked
            current, approximate = [], True
        if match.group("comma"):
            if not current:
                raise SelectorError(f"empty selector in list {text!r}")
            alternatives.append(tuple(current))
            current = []
        elif match.group("comb"):
            if not current:
                raise SelectorError(f"combinator without a left side in {text!r}")
            current, approximate = [], True
        elif match.group("tag"):
            current.append(_tag_check(match.group("tag")) if match.group("tag") != "*" else (lambda el: True))
        elif match.group("id"):
            ident = _CSS_UNESCAPE.sub(r"\1", match.group("id"))
            current.append(lambda el, ident=ident: el.attrs.get("id") == ident)
        elif match.group("cls"):
            cls = _CSS_UNESCAPE.sub(r"\1", match.group("cls"))
            current.append(lambda el, cls=cls: cls in el.attrs.get("class", "").split())
        elif match.group("attr"):
            op = match.group("op") or ""
            quoted = (match.group("dq"), match.group("sq"), match.group("bare"))
            value = next((g for g in quoted if g is not None), "")
            caseless = (match.group("flag") or "").lower() == "i"
            current.append(_attr_check(match.group("attr"), op, value, caseless))
        elif match.group("pseudo"):
            raise SelectorError(f"pseudo-classes are not supported ({match.group('pseudo')!r} in {text!r})")
        pos = match.end()
    if not current:
        raise SelectorError(f"empty selector {text!r}")
    alternatives.append(tuple(current))
    return tuple(alternatives), approximate


# -- XPath ------------------------------------------------------------------------------------
_XPATH_STEP = re.compile(
    r"(?P<sep>//|/)(?:(?P<axis>[a-z\-]+)::)?(?P<tag>\*|[A-Za-z][A-Za-z0-9\-]*)(?P<preds>(?:\[(?:[^\[\]'\"]|'[^']*'|\"[^\"]*\")*\])*)"
)
_XPATH_PRED = re.compile(r"\[((?:[^\[\]'\"]|'[^']*'|\"[^\"]*\")*)\]")
_STR = r"(?:'(?P<vs>[^']*)'|\"(?P<vd>[^\"]*)\")"
_TEXT = r"(?:text\(\)|\.|normalize-space\((?:\.|text\(\))?\))"
_AT = r"@(?P<a>[A-Za-z_:][-A-Za-z0-9_:.]*)"
_XPATH_EXPRS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(rf"^contains\(\s*{_TEXT}\s*,\s*{_STR}\s*\)$"), "text_contains"),
    (re.compile(rf"^{_TEXT}\s*=\s*{_STR}$"), "text_equals"),
    (re.compile(rf"^contains\(\s*{_AT}\s*,\s*{_STR}\s*\)$"), "attr_contains"),
    (re.compile(rf"^starts-with\(\s*{_AT}\s*,\s*{_STR}\s*\)$"), "attr_starts"),
    (re.compile(rf"^{_AT}\s*=\s*{_STR}$"), "attr_equals"),
    (re.compile(rf"^{_AT}$"), "attr_exists"),
    (re.compile(r"^\d+$|^last\(\)$|^position\(\)\s*[<>=]+\s*\d+$"), "position"),
]


def _xpath_expr(expr: str, *, on_label: bool) -> tuple[list[Check], bool]:
    """Checks for one predicate expression (``a and b`` allowed); True if approximated."""
    checks: list[Check] = []
    approximate = False
    for part in re.split(r"\s+and\s+", expr.strip()):
        for pattern, kind in _XPATH_EXPRS:
            m = pattern.match(part.strip())
            if m is None:
                continue
            value = next((g for g in (m.groupdict().get("vs"), m.groupdict().get("vd")) if g is not None), "")
            if kind == "position":
                approximate = True
            elif on_label and kind in ("text_contains", "text_equals"):
                checks.append(_label_contains(value))
            elif on_label:
                approximate = True  # attributes of the label element itself are not known
            elif kind == "text_contains":
                checks.append(_text_contains(value))
            elif kind == "text_equals":
                checks.append(_text_equals(value))
            elif kind == "attr_contains":
                checks.append(_attr_check(m.group("a"), "*=", value, False))
            elif kind == "attr_starts":
                checks.append(_attr_check(m.group("a"), "^=", value, False))
            elif kind == "attr_equals":
                checks.append(_attr_check(m.group("a"), "=", value, False))
            else:
                checks.append(_attr_check(m.group("a"), "", "", False))
            break
        else:
            raise SelectorError(f"unsupported XPath predicate [{part}]")
    return checks, approximate


def _compile_xpath(text: str) -> tuple[tuple[tuple[Check, ...], ...], bool]:
    steps = []
    pos = 0
    body = text[1:] if text.startswith(".") else text
    while pos < len(body):
        m = _XPATH_STEP.match(body, pos)
        if m is None:
            raise SelectorError(f"unsupported XPath syntax at {body[pos : pos + 20]!r}")
        steps.append(m)
        pos = m.end()
    if not steps:
        raise SelectorError(f"empty XPath {text!r}")
    checks: list[Check] = []
    approximate = len(steps) > 1
    last = steps[-1]
    if last.group("tag") != "*":
        checks.append(_tag_check(last.group("tag")))
    for pred in _XPATH_PRED.findall(last.group("preds")):
        found, approx = _xpath_expr(pred, on_label=False)
        checks.extend(found)
        approximate = approximate or approx
    if len(steps) > 1 and (last.group("axis") or "").startswith("following"):
        # //label[contains(., 'X')]/following::input[1]: the input labelled X
        previous = steps[-2]
        for pred in _XPATH_PRED.findall(previous.group("preds")):
            found, _ = _xpath_expr(pred, on_label=previous.group("tag").lower() == "label")
            if previous.group("tag").lower() == "label":
                checks.extend(found)
    elif last.group("axis") not in (None, "descendant", "descendant-or-self", "child", "self"):
        raise SelectorError(f"unsupported XPath axis {last.group('axis')!r}")
    if not checks:
        checks.append(lambda el: True)
    return (tuple(checks),), approximate


@lru_cache(maxsize=4096)
def compile_selector(text: str) -> Selector:
    """Compile a simple CSS selector or XPath expression; `SelectorError` if unsupported."""
    source = text.strip()
    if not source:
        raise SelectorError("a selector must not be empty")
    if source.startswith(("/", "./", "(")):
        if source.startswith("("):
            raise SelectorError(f"unsupported XPath syntax {source!r}")
        alternatives, approximate = _compile_xpath(source)
    else:
        alternatives, approximate = _compile_css(source)
    return Selector(source, alternatives, approximate)
