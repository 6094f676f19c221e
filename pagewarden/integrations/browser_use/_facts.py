"""The guard's view of a browser-use step: the target element's facts read from the DOM
tree browser-use captured for the model (`EnhancedDOMTreeNode`), the page's URL and title."""

from __future__ import annotations

from typing import Any
from urllib.parse import urljoin

from pagewarden.steps import ElementFacts, FormFacts, FormField

__all__ = ["element_facts"]

_TEXT_LIMIT = 400
_CONTEXT_LIMIT = 1200
_CONTEXT_LEVELS = 3
_EDITABLE = frozenset({"input", "textarea", "select"})


def _tag(node: Any) -> str:
    return str(getattr(node, "node_name", "") or "").lower()


def _attrs(node: Any) -> dict[str, str]:
    attributes = getattr(node, "attributes", None) or {}
    return {str(k): str(v) for k, v in attributes.items()}


def _text(node: Any, limit: int) -> str:
    try:
        text = node.get_all_children_text()
    except Exception:  # noqa: BLE001 - a node without text
        return ""
    return " ".join(str(text).split())[:limit]


def _ancestor(node: Any, tag: str, levels: int = 32) -> Any:
    current = node
    for _ in range(levels):
        if current is None:
            return None
        if _tag(current) == tag:
            return current
        current = getattr(current, "parent_node", None)
    return None


def _context(node: Any) -> str:
    """The text around `node`: its ancestors' text, a few levels up (hidden text included:
    browser-use's tree holds the DOM's text whether or not it is rendered)."""
    current = node
    for _ in range(_CONTEXT_LEVELS):
        parent = getattr(current, "parent_node", None)
        if parent is None or _tag(parent) in ("body", "html"):
            break
        current = parent
    return _text(current, _CONTEXT_LIMIT)


def _form(node: Any, url: str) -> FormFacts | None:
    form = _ancestor(node, "form")
    owner = _attrs(node).get("form")
    if form is None and not owner:
        return None
    attrs = _attrs(form) if form is not None else {}
    node_attrs = _attrs(node)
    action = node_attrs.get("formaction") or attrs.get("action") or ""
    method = (node_attrs.get("formmethod") or attrs.get("method") or "get").lower()
    fields = tuple(
        FormField(name=_attrs(child).get("name", ""), type=_attrs(child).get("type", "text"))
        for child in _descendants(form)
        if _tag(child) in _EDITABLE and _attrs(child).get("name")
    ) if form is not None else ()  # fmt: skip
    return FormFacts(
        action=urljoin(url, action) if action else url,
        method=method,
        action_explicit=bool(action),
        target=attrs.get("target"),
        fields=fields,
    )


def _descendants(node: Any, limit: int = 500) -> list[Any]:
    out: list[Any] = []
    stack = list(getattr(node, "children_nodes", None) or [])
    while stack and len(out) < limit:
        child = stack.pop()
        out.append(child)
        stack.extend(getattr(child, "children_nodes", None) or [])
    return out


def _is_submit(node: Any, form: FormFacts | None) -> bool:
    tag = _tag(node)
    kind = _attrs(node).get("type", "").lower()
    if tag == "button":
        return form is not None and kind in ("", "submit")
    return tag == "input" and kind in ("submit", "image")


def element_facts(node: Any, url: str) -> ElementFacts:
    """`ElementFacts` for browser-use's DOM node `node` on the page at `url`."""
    tag = _tag(node)
    attrs = _attrs(node)
    text = _text(node, _TEXT_LIMIT)
    aria = " ".join(v for k, v in attrs.items() if k in ("aria-label", "title", "alt", "aria-description"))
    link = _ancestor(node, "a")
    href = _attrs(link).get("href") if link is not None else None
    form = _form(node, url)
    input_type = attrs.get("type", "text").lower() if tag == "input" else None
    return ElementFacts(
        tag=tag,
        role=attrs.get("role"),
        name=(attrs.get("aria-label") or text or attrs.get("title") or attrs.get("placeholder") or "")[
            :_TEXT_LIMIT
        ],
        text=text,
        aria_text=aria[:_TEXT_LIMIT],
        attrs={k: v[:200] for k, v in list(attrs.items())[:40]},
        href=urljoin(url, href) if href else None,
        link_target=_attrs(link).get("target") if link is not None else None,
        download=link is not None and "download" in _attrs(link),
        form=form,
        is_submit=_is_submit(node, form),
        input_type=input_type,
        editable=tag in _EDITABLE
        or (attrs.get("contenteditable", "").lower() in ("", "true") and "contenteditable" in attrs),
        visible=getattr(node, "is_visible", True) is not False,
        context_text=_context(node),
    )
