"""HTML: the page's main content (lxml), headings kept as context, boilerplate dropped.

Dropped: scripts, styles, navigation, headers, footers, asides, forms, hidden elements
(``hidden``, ``aria-hidden``, ``display:none``/``visibility:hidden`` inline), and elements
whose role, id or class says navigation, menu, footer, sidebar, breadcrumb, cookie banner or
advert. Content is taken from ``<main>`` / ``role=main`` / the single ``<article>`` when the
page has one, else from ``<body>``. A link keeps its absolute target in parentheses so that
"do not visit the admin console" still names the URL.
"""

from __future__ import annotations

import re
from urllib.parse import urljoin

from lxml import etree, html

from pagewarden.policies.extract._documents import (
    Block,
    Document,
    ExtractionError,
    SectionTracker,
    clean_text,
)

__all__ = ["read_html"]

_DROP_TAGS = frozenset(str.split(
    "script style noscript template svg canvas iframe object embed nav header footer aside form "
    "button select option textarea input head title meta link"
))
_DROP_ROLES = frozenset({"navigation", "banner", "contentinfo", "complementary", "search", "menu", "menubar"})
_BOILERPLATE_RE = re.compile(
    r"(^|[\s_-])(nav|navbar|navigation|menu|footer|site-footer|sidebar|side-bar|breadcrumbs?|cookie|"
    r"cookies|consent-banner|banner|advert|ads?|promo|share|social|skip-link|toc)($|[\s_-])",
    re.I,
)
_HIDDEN_STYLE_RE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.I)
_HEADINGS = {f"h{n}": n for n in range(1, 7)}
_BLOCK_TAGS = frozenset(str.split(
    "p div section article main blockquote pre table thead tbody tfoot tr dl dt dd ul ol li "
    "figure figcaption address details summary center hr br"
))


def _dropped(el: etree._Element) -> bool:
    tag = el.tag if isinstance(el.tag, str) else ""
    if tag in _DROP_TAGS:
        return True
    if el.get("hidden") is not None or (el.get("aria-hidden") or "").lower() == "true":
        return True
    if _HIDDEN_STYLE_RE.search(el.get("style") or ""):
        return True
    if (el.get("role") or "").lower() in _DROP_ROLES:
        return True
    marks = f"{el.get('id') or ''} {el.get('class') or ''}"
    return bool(marks.strip()) and bool(_BOILERPLATE_RE.search(marks))


def _main(root: etree._Element) -> etree._Element:
    for query in ("//main", "//*[@role='main']"):
        found = root.xpath(query)
        if found:
            return found[0]
    articles = root.xpath("//article")
    if len(articles) == 1:
        return articles[0]
    body = root.find("body")
    return body if body is not None else root


class _Walker:
    def __init__(self, base_url: str | None) -> None:
        self.base_url = base_url
        self.tracker = SectionTracker()
        self.blocks: list[Block] = []
        self.buffer: list[str] = []
        self.item_depth = 0  # inside a list item (or a definition): blocks are items

    def flush(self) -> None:
        text = clean_text("".join(self.buffer))
        if text:
            kind = "item" if self.item_depth else "paragraph"
            self.blocks.append(Block(kind, text, None, self.tracker.path))
        self.buffer = []

    def walk(self, el: etree._Element) -> None:
        if not isinstance(el.tag, str) or _dropped(el):
            if el.tail:
                self.buffer.append(el.tail)
            return
        tag = el.tag.lower()
        if tag in _HEADINGS:
            self.flush()
            text = clean_text(el.text_content())
            if text:
                self.tracker.heading(_HEADINGS[tag], text)
                self.blocks.append(Block("heading", text, None, self.tracker.path, _HEADINGS[tag]))
        elif tag in _BLOCK_TAGS:
            self.flush()
            item = tag in ("li", "dd")
            self.item_depth += item
            if el.text:
                self.buffer.append(el.text)
            for child in el:
                if item and isinstance(child.tag, str) and child.tag in ("ul", "ol"):
                    self.flush()  # the item's own text first, nested items after it
                self.walk(child)
            self.flush()
            self.item_depth -= item
        else:
            if tag in ("td", "th"):
                pending = "".join(self.buffer).strip()
                if pending and pending[-1] not in ".:;!?":
                    self.buffer = ["".join(self.buffer).rstrip(), ": "]  # "Purchases: Always confirm …"
                self.buffer.append(" ")
            if el.text:
                self.buffer.append(el.text)
            for child in el:
                self.walk(child)
            if tag == "a":
                self._link_target(el)
        if el.tail:
            self.buffer.append(el.tail)

    def _link_target(self, el: etree._Element) -> None:
        href = (el.get("href") or "").strip()
        if not href or href.startswith(("#", "javascript:", "mailto:", "tel:")):
            return
        target = urljoin(self.base_url, href) if self.base_url else href
        if not target.startswith(("http://", "https://", "/")):
            return
        label = clean_text(el.text_content())
        if target.rstrip("/") not in label and href.rstrip("/") not in label:
            self.buffer.append(f" ({target})")


def read_html(text: str | bytes, name: str, base_url: str | None = None) -> Document:
    """A `Document` from an HTML page's main content."""
    if not text or not text.strip():
        raise ExtractionError(name, "the page is empty")
    try:
        root = html.document_fromstring(text)
    except (etree.ParserError, ValueError) as exc:
        raise ExtractionError(name, f"not readable HTML ({exc})") from None
    walker = _Walker(base_url)
    walker.walk(_main(root))
    walker.flush()
    document = Document(name, "html", blocks=walker.blocks)
    title = root.findtext(".//title")
    if title and not any(b.kind == "heading" for b in walker.blocks):
        document.warnings.append(f"no headings; page title {clean_text(title)!r}")
    return document
