"""The targeted observation: what the model is shown of the page around one action.

Instead of the whole page's accessibility tree, a consulted step shows the model the target
element and where it sits (its landmark region, whether it is user-written content or the
site's own chrome, a dialog), its form (where and how it submits, its fields), the text
around it, what changed since the previous judged step, the tab's open pages, and the
page's lines that give orders to an agent or the guard or that the agent's reasoning cites
(`evidence_lines` over the page's text, found wherever they are on the page). Everything
comes from the facts the reader already took (`ElementFacts`) plus, at consult time, one
bounded read of the page's rendered text; every part is clipped, so the prompt's size does
not grow with the page. `build_context` renders these lines into the one set of sections
that the world model and the utility agent share.

Facts pagewarden measured itself (provenance, method, whether the address changed) are
trusted lines; everything the page wrote (names, field names, values, URLs, text) goes
inside the fence.
"""

from __future__ import annotations

from pagewarden._url import parse_url
from pagewarden.steps import Step

__all__ = [
    "PAGE_TEXT_CHARS",
    "PAGE_TEXT_TIMEOUT_MS",
    "as_text_lines",
    "measured_lines",
    "page_lines",
    "provenance",
]

#: Most characters of page text read at consult time (the rest is not searched for evidence).
PAGE_TEXT_CHARS = 200_000
#: Bound of the consult-time read of the page's rendered text (``innerText`` of the body, read
#: by Playwright in its own JavaScript world: a page that patched ``innerText`` or ``String``
#: in its world can neither hang the read nor change what it returns). Past it, or on any
#: error, the model judges from the element's measured facts alone.
PAGE_TEXT_TIMEOUT_MS = 2_000
_FIELDS = 12
_FIELD_VALUE_CHARS = 80
_TABS = 5
_LINE_CHARS = 300
_LINES = 6000
_CHROME = {"banner": "site header", "navigation": "site navigation", "contentinfo": "site footer"}


def _clip(text: str | None, limit: int) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def as_text_lines(text: str | None) -> str:
    """Page text as aria-snapshot-like ``- text: …`` lines (what `evidence_lines` reads),
    one per non-empty line, each and their number bounded."""
    if not text:
        return ""
    out = []
    for line in text[:PAGE_TEXT_CHARS].splitlines():
        line = _clip(line, _LINE_CHARS)
        if line:
            out.append(f"- text: {line}")
            if len(out) >= _LINES:
                break
    return "\n".join(out)


def provenance(step: Step) -> str:
    """Who wrote what the action acts on, as measured: user content, site chrome, a dialog."""
    el = step.observation.target
    if el is None:
        return ""
    if el.overlay_in_ugc:
        return "a pop-up drawn inside user-written content"
    if el.in_ugc:
        return "user-written content" + (f" (inside {el.ugc_selector})" if el.ugc_selector else "")
    if el.in_dialog or el.region == "dialog":
        return "a dialog or pop-up of the page"
    if el.region in _CHROME:
        return f"the site's own controls ({_CHROME[el.region]})"
    return "page content, not marked as user-written"


def measured_lines(step: Step) -> list[str]:
    """Trusted lines: the target's provenance, how the tab changed, how many tabs are open."""
    out = []
    where = provenance(step)
    if where:
        out.append(f"provenance of the target: {where}")
    prev = step.previous
    if prev is not None and prev.url:
        here, there = parse_url(step.observation.url), parse_url(prev.url)
        if here.url == there.url:
            out.append("since the previous step the page's address is unchanged")
        elif here.host == there.host:
            out.append("since the previous step the tab moved to another address on the same host")
        else:
            out.append("since the previous step the tab moved to another host")
    tabs = step.observation.tabs
    if len(tabs) > 1:
        out.append(f"{len(tabs)} tabs are open in this session")
    return out


def page_lines(step: Step, evidence: list[str] | None = None) -> list[str]:
    """Untrusted lines (they go inside the page fence): the form's fields, what changed since
    the previous step, the other open tabs, and the flagged page text (`evidence`)."""
    obs = step.observation
    el = obs.target
    out: list[str] = []
    if el is not None and el.form is not None:
        form = el.form
        fields = []
        for f in form.fields[:_FIELDS]:
            shown = f"{_clip(f.name, 60) or '(unnamed)'} ({f.type or 'text'})"
            if f.value and f.type != "hidden":
                shown += f" = {_clip(f.value, _FIELD_VALUE_CHARS)}"
            fields.append(shown)
        more = len(form.fields) - _FIELDS
        out.append(
            f"the target's form: {form.method.upper()} {_clip(form.action, 200)}"
            + (f"; fields: {'; '.join(fields)}" if fields else "")
            + (f"; and {more} more" if more > 0 else "")
        )
    prev = step.previous
    if prev is not None:
        changes = []
        if prev.url and prev.url != obs.url:
            changes.append(f"address was {_clip(prev.url, 200)}")
        if prev.title and obs.title and prev.title != obs.title:
            changes.append(f"title was {_clip(prev.title, 120)}")
        if changes:
            out.append("changed since the previous step: " + "; ".join(changes))
    others = [t for t in obs.tabs if t != obs.url][:_TABS]
    if others:
        out.append("other open tabs: " + "; ".join(_clip(t, 120) for t in others))
    if evidence:
        out.append(
            "page text the guard flagged (orders to an agent or the guard, or what the agent's "
            "reasoning cites; from anywhere on the page):"
        )
        out += [f"- {_clip(line, _LINE_CHARS)}" for line in evidence]
    return out
