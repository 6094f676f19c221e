"""Synthetic pages for the conformance evaluation: HTML documents parsed with lxml.

Two readers look at the same document, the way the two sides of the evaluation do:

* the benchmark side (`query_selector`, `element_text`): BrowserGym ids (``bid``) on every
  element, selectors resolved by lxml's XPath engine (CSS translated to XPath here), and
  an element's text as ``textContent``;
* the guard side (`element_facts`): the `ElementFacts` pagewarden's observer would read
  from the DOM — accessible name, role, link, form, input type.

Nothing here imports the rules tier.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property
from urllib.parse import urljoin

from lxml import html as lxml_html
from lxml.etree import XPathError

from pagewarden.observe import ElementFacts, FormFacts, FormField

__all__ = ["Page", "css_to_xpath", "element_facts"]

_SPACE = re.compile(r"\s+")
_MARK = "data-gen"  # marks generated elements by key; not part of what the observer reports


def _squash(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


@dataclass(frozen=True)
class Page:
    """A page: its URL and its HTML body; elements get ``bid`` attributes in document order."""

    url: str
    body: str
    title: str = "Page"
    _extra: dict[str, str] = field(default_factory=dict, compare=False, repr=False)

    @cached_property
    def doc(self) -> lxml_html.HtmlElement:
        """The parsed document, with a ``bid`` on every element of the body."""
        doc = lxml_html.document_fromstring(
            f"<html><head><title>{self.title}</title></head><body>{self.body}</body></html>"
        )
        for index, el in enumerate(doc.body.iter()):
            if isinstance(el.tag, str):
                el.set("bid", str(index))
        return doc

    def element(self, key: str) -> lxml_html.HtmlElement:
        """The generated element marked with `key`."""
        found = self.doc.xpath(f"//*[@{_MARK}=$key]", key=key)
        if not found:
            raise KeyError(f"no element {key!r} on the page")
        return found[0]

    def bid(self, key: str) -> str:
        """The BrowserGym id of the element marked `key`."""
        return self.element(key).get("bid")

    def by_bid(self, bid: str) -> lxml_html.HtmlElement | None:
        """The element with this BrowserGym id."""
        found = self.doc.xpath("//*[@bid=$bid]", bid=bid)
        return found[0] if found else None

    def query_selector(self, selector: str) -> lxml_html.HtmlElement | None:
        """The first element a browser's ``querySelector`` / XPath would return, or None."""
        expression = selector if selector.startswith(("/", "./", "(")) else css_to_xpath(selector)
        try:
            found = self.doc.xpath(expression)
        except XPathError:
            return None
        elements = [e for e in found if isinstance(getattr(e, "tag", None), str)]
        return elements[0] if elements else None


# -- CSS → XPath (the subset ST-WebAgentBench uses, and a little more) ------------------------
_COMPOUND = re.compile(
    r"""(?P<tag>\*|[A-Za-z][A-Za-z0-9\-]*)
      | \#(?P<id>[A-Za-z0-9_\-]+)
      | \.(?P<cls>[A-Za-z0-9_\-]+)
      | \[\s*(?P<attr>[A-Za-z_:][-A-Za-z0-9_:.]*)\s*
          (?:=\s*(?:"(?P<dq>[^"]*)"|'(?P<sq>[^']*)'|(?P<bare>[^\]\s]+))\s*)?\]""",
    re.VERBOSE,
)


def _literal(value: str) -> str:
    if "'" not in value:
        return f"'{value}'"
    return "concat('" + "', \"'\", '".join(value.split("'")) + "')"


def _compound_xpath(text: str) -> str:
    tag, predicates, pos = "*", [], 0
    while pos < len(text):
        m = _COMPOUND.match(text, pos)
        if m is None:
            raise ValueError(f"unsupported CSS {text!r}")
        if m.group("tag"):
            tag = m.group("tag").lower()
        elif m.group("id"):
            predicates.append(f"@id={_literal(m.group('id'))}")
        elif m.group("cls"):
            predicates.append(
                f"contains(concat(' ', normalize-space(@class), ' '), {_literal(' ' + m.group('cls') + ' ')})"
            )
        else:
            value = next((g for g in (m.group("dq"), m.group("sq"), m.group("bare")) if g is not None), None)
            name = m.group("attr").lower()
            if value is None:
                predicates.append(f"@{name}")
            elif name == "type":  # HTML compares type values case-insensitively
                upper, lower = "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz"
                predicates.append(f"translate(@type, '{upper}', '{lower}')={_literal(value.lower())}")
            else:
                predicates.append(f"@{name}={_literal(value)}")
        pos = m.end()
    return tag + "".join(f"[{p}]" for p in predicates)


def css_to_xpath(css: str) -> str:
    """An XPath expression for a simple CSS selector list (descendant combinators only)."""
    alternatives = []
    for alternative in css.split(","):
        compounds = alternative.split()
        if not compounds:
            raise ValueError(f"empty selector in {css!r}")
        alternatives.append("//" + "//".join(_compound_xpath(c) for c in compounds))
    return " | ".join(alternatives)


# -- the guard side: ElementFacts --------------------------------------------------------------
_IMPLICIT_ROLES = {"button": "button", "select": "combobox", "textarea": "textbox", "nav": "navigation"}
_INPUT_ROLES = {
    "checkbox": "checkbox",
    "radio": "radio",
    "submit": "button",
    "button": "button",
    "reset": "button",
    "image": "button",
}
_NAME_FROM_CONTENT = frozenset({"button", "link", "menuitem", "tab", "option", "heading", "cell"})


def _role(el: lxml_html.HtmlElement) -> str | None:
    if el.get("role"):
        return el.get("role")
    tag = el.tag.lower()
    if tag == "a" and el.get("href") is not None:
        return "link"
    if tag == "input":
        return _INPUT_ROLES.get((el.get("type") or "text").lower(), "textbox")
    if re.fullmatch(r"h[1-6]", tag):
        return "heading"
    return _IMPLICIT_ROLES.get(tag)


def _label_text(el: lxml_html.HtmlElement) -> str:
    doc = el.getroottree().getroot()
    ident = el.get("id")
    if ident:
        labels = doc.xpath("//label[@for=$i]", i=ident)
        if labels:
            return _squash(labels[0].text_content())
    for ancestor in el.iterancestors():
        if ancestor.tag == "label":
            return _squash(ancestor.text_content())
    return ""


def _accessible_name(el: lxml_html.HtmlElement, role: str | None) -> str:
    if el.get("aria-label"):
        return _squash(el.get("aria-label"))
    labelled = el.get("aria-labelledby")
    if labelled:
        doc = el.getroottree().getroot()
        parts = [_squash(n.text_content()) for i in labelled.split() for n in doc.xpath("//*[@id=$i]", i=i)]
        if any(parts):
            return " ".join(p for p in parts if p)
    tag = el.tag.lower()
    if tag in ("input", "select", "textarea"):
        label = _label_text(el)
        if label:
            return label
        kind = (el.get("type") or "text").lower()
        if tag == "input" and kind in ("submit", "button", "reset"):
            return el.get("value") or ("Submit" if kind == "submit" else "")
        return el.get("title") or el.get("placeholder") or ""
    if role in _NAME_FROM_CONTENT:
        return _squash(el.text_content()) or el.get("title") or ""
    return el.get("title") or ""


def _form(el: lxml_html.HtmlElement, page_url: str) -> FormFacts | None:
    form = next((a for a in el.iterancestors() if a.tag == "form"), None)
    if form is None:
        return None
    explicit = form.get("action") is not None
    action = urljoin(page_url, form.get("action") or page_url)
    fields = []
    for item in form.iter("input", "textarea", "select"):
        name = item.get("name") or ""
        kind = (item.get("type") or ("textarea" if item.tag == "textarea" else "text")).lower()
        if kind in ("submit", "button", "reset", "image"):
            continue
        value = item.get("value") if item.tag == "input" else _squash(item.text_content())
        fields.append(FormField(name=name, type=kind, value=value or None))
    return FormFacts(
        action=action,
        method=(form.get("method") or "get").lower(),
        action_explicit=explicit,
        target=form.get("target"),
        fields=tuple(fields),
    )


def element_facts(page: Page, el: lxml_html.HtmlElement) -> ElementFacts:
    """What pagewarden's observer would report about `el` on `page`."""
    tag = el.tag.lower()
    role = _role(el)
    attrs = {k: v for k, v in el.attrib.items() if k not in ("bid", _MARK)}
    link = el if tag == "a" else next((a for a in el.iterancestors() if a.tag == "a"), None)
    href = urljoin(page.url, link.get("href")) if link is not None and link.get("href") is not None else None
    input_type = (el.get("type") or "text").lower() if tag == "input" else None
    is_submit = (tag == "button" and (el.get("type") or "submit").lower() == "submit") or (
        input_type in ("submit", "image")
    )
    editable = tag in ("textarea", "select") or (
        tag == "input" and input_type not in ("submit", "button", "reset", "image", "checkbox", "radio")
    )
    parent = el.getparent()
    context = _squash(parent.text_content())[:300] if parent is not None else ""
    return ElementFacts(
        tag=tag,
        role=role,
        name=_accessible_name(el, role),
        text=_squash(el.text_content()),
        aria_text=_squash(el.get("aria-label") or el.get("title") or ""),
        attrs=attrs,
        href=href,
        link_target=link.get("target") if link is not None else None,
        form=_form(el, page.url),
        is_submit=is_submit,
        input_type=input_type,
        value=el.get("value") if tag == "input" else None,
        editable=editable,
        visible=True,
        region="main",
        context_text=context,
        selector=f"[bid='{el.get('bid')}']",
    )
