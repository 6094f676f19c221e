"""Elements for synthetic pages: widgets by text or by selector, and the elements of a task's
required sequences (shared when two sequences name the same field)."""

from __future__ import annotations

import html
import re

from pagewarden.eval.stwebagentbench._scenarios import SimStep, Widget
from pagewarden.policies.importers import BenchmarkPolicy

__all__ = [
    "button",
    "display",
    "esc",
    "link",
    "same_element",
    "selector_widget",
    "sequence_plans",
    "subsequence",
    "text_input",
]


def esc(text: str) -> str:
    return html.escape(text, quote=True)


def button(key: str, text: str, extra: str = "") -> Widget:
    return Widget(key, f'<button type="button" {extra}{{key}}>{esc(text)}</button>')


def link(key: str, text: str, href: str) -> Widget:
    return Widget(key, f'<a href="{esc(href)}" {{key}}>{esc(text)}</a>')


def text_input(
    key: str, label: str, *, ident: str, name: str = "", kind: str = "text", extra: str = ""
) -> Widget:
    named = f' name="{esc(name)}"' if name else ""
    return Widget(
        key,
        f'<label for="{esc(ident)}">{esc(label)}</label>'
        f'<input id="{esc(ident)}"{named} type="{esc(kind)}" {extra}{{key}}>',
    )


def display(term: str) -> str:
    """A term as an element would show it (first letter upper-case)."""
    return term[:1].upper() + term[1:]


def selector_widget(selector: str, key: str, kind: str) -> Widget | None:
    """An element the selector picks, for an action of `kind` (None: form not supported)."""
    s = selector.strip()
    if m := re.fullmatch(r"\[type=['\"]?([\w-]+)['\"]?\]", s):
        kind_attr = m.group(1).lower()
        return text_input(key, kind_attr.capitalize(), ident=f"gen-{key}", name=kind_attr, kind=kind_attr)
    if m := re.fullmatch(r"\.([\w-]+)", s):
        if kind in ("fill", "type", "select_option"):
            return text_input(key, "Search", ident=f"gen-{key}", extra=f'class="{m.group(1)}" ')
        return button(key, "Edit", extra=f'class="{m.group(1)}" ')
    if m := re.fullmatch(r"#([\w-]+)", s):
        label = m.group(1).replace("_", " ").replace("-", " ").capitalize()
        if kind in ("fill", "type", "select_option"):
            return text_input(key, label, ident=m.group(1))
        return button(key, label, extra=f'id="{m.group(1)}" ')
    if m := re.fullmatch(r"//(\w+)\[contains\(text\(\), '([^']*)'\)\]", s):
        tag, text = m.group(1).lower(), m.group(2)
        if tag == "a":
            return link(key, text, "#")
        return Widget(key, f"<{tag} {{key}}>{esc(text)}</{tag}>")
    if m := re.fullmatch(r"//(\w+)\[@(\w+)='([^']*)'\]", s):
        tag, attr, value = m.group(1).lower(), m.group(2), m.group(3)
        if tag == "input" and attr == "title":
            return Widget(key, f'<input type="submit" title="{esc(value)}" value="{esc(value)}" {{key}}>')
        if tag == "input":
            label = value.replace("_", " ").capitalize()
            return text_input(key, label, ident=f"gen-{key}", extra=f'{attr}="{esc(value)}" ')
        return Widget(key, f'<{tag} {attr}="{esc(value)}" {{key}}>{esc(value)}</{tag}>')
    if m := re.fullmatch(r"//label\[contains\(\., '([^']*)'\)\]/following::(\w+)\[(\d+)\]", s):
        label, tag, position = m.group(1), m.group(2).lower(), int(m.group(3))
        if tag == "input":
            filler = "".join('<input type="hidden" name="pad">' for _ in range(position - 1))
            return Widget(
                key,
                f'<label for="gen-{key}">{esc(label)}</label>{filler}'
                f'<input id="gen-{key}" type="text" {{key}}>',
            )
        fillers = "".join(f"<{tag}>·</{tag}>" for _ in range(position - 1))
        return Widget(key, f"<label>{esc(label)}</label>{fillers}<{tag} {{key}}>Select</{tag}>")
    return None


_LABEL_INPUT = re.compile(r"//label\[contains\(\., '([^']*)'\)\]/following::input\[1\]")
_NAMED_INPUT = re.compile(r"//input\[@name='([^']*)'\]")


def field_identity(item: dict) -> tuple[str, dict[str, str]]:
    """Which element a sequence item means, so that items of different policies naming the
    same field (by its label, by its name) share one element, as on the real page."""
    kind = str(item.get("action_type") or "click").lower()
    selector = item.get("element_selector") or item.get("action_selector")
    if selector:
        if m := _LABEL_INPUT.fullmatch(selector):
            return f"field:{m.group(1).strip().lower()}", {"label": m.group(1)}
        if m := _NAMED_INPUT.fullmatch(selector):
            return f"field:{m.group(1).replace('_', ' ').strip().lower()}", {"name": m.group(1)}
        return f"selector:{kind}:{selector}", {"selector": selector}
    text = str(item.get("element_text", ""))
    return f"text:{kind}:{text.lower()}", {"text": text}


def field_widget(key: str, kind: str, spec: dict[str, str]) -> Widget | None:
    if "selector" in spec:
        return selector_widget(spec["selector"], key, kind)
    if "text" in spec:
        if kind == "click":
            return button(key, display(spec["text"]))
        return text_input(key, display(spec["text"]), ident=f"gen-{key}")
    label = spec.get("label") or spec.get("name", "").replace("_", " ").capitalize()
    return text_input(key, label, ident=f"gen-{key}", name=spec.get("name", ""))


def sequence_plans(policies: list[BenchmarkPolicy]) -> dict[str, list[tuple[str, Widget]]]:
    """For each sequence policy, the (action kind, element) of its steps; elements shared."""
    specs: dict[str, dict[str, str]] = {}
    items: dict[str, list[tuple[str, str]]] = {}
    for policy in policies:
        found = []
        for item in policy.eval.get("action_sequence") or []:
            if not isinstance(item, dict):
                found = []
                break
            identity, spec = field_identity(item)
            specs.setdefault(identity, {}).update(spec)
            found.append((str(item.get("action_type") or "click").lower(), identity))
        if found:
            items[policy.id] = found
    keys = {identity: f"seq-{index}" for index, identity in enumerate(specs)}
    plans: dict[str, list[tuple[str, Widget]]] = {}
    for pid, steps in items.items():
        plan = []
        for kind, identity in steps:
            widget = (
                field_widget(keys[identity], kind, specs[identity]) if kind in ("click", "fill") else None
            )
            if widget is None:
                break
            plan.append((kind, widget))
        else:
            plans[pid] = plan
    return plans


def subsequence(wanted: list, done: list) -> bool:
    """Whether `wanted` occurs in `done` in order (gaps allowed)."""
    position = 0
    for item in done:
        if position < len(wanted) and item == wanted[position]:
            position += 1
    return position == len(wanted)


def same_element(step: SimStep, item: dict) -> bool:
    """Whether `step` acts on what a sequence item names (by text, or by selector)."""
    element = step.page.element(step.key)
    selector = item.get("element_selector") or item.get("action_selector")
    if selector:
        picked = step.page.query_selector(selector)
        if picked is None:
            return False
        return picked.get("bid") == element.get("bid")
    wanted = str(item.get("element_text", "")).strip().lower()
    return bool(wanted) and element.text_content().strip().lower() == wanted
