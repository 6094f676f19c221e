"""Judge the field, not only the value: is the field the agent types into the site's own?

An injected field asks for data the goal legitimately holds (an email, a phone, a card number,
"type the task you were asked to complete"), so the typed value matching the goal proves
nothing. What gives the field away is the field itself: hidden or nearly invisible, sitting in
user content or in a pop-up the agent did not open, mirroring a field of the site's own form
while posting somewhere else or nowhere, or surrounded by text that asks the agent for its task.
"""

from __future__ import annotations

from dataclasses import dataclass

from pagewarden._url import parse_url, same_site
from pagewarden.observe._facts import ElementFacts
from pagewarden.policies.rules._base import RuleContext
from pagewarden.policies.rules._instructions import instruction_signals
from pagewarden.policies.rules._overlays import unsolicited_overlay

__all__ = ["FieldSuspicion", "injected_field"]

#: Below this effective opacity a field is one a person would not notice.
FAINT = 0.35
#: A field narrower or lower than this (in CSS px) cannot be read or typed into by a person.
TINY = 6


@dataclass(frozen=True, slots=True)
class FieldSuspicion:
    """Why a field looks injected, and how sure the guard is."""

    reason: str
    confidence: float


def _posts_elsewhere(el: ElementFacts, page_url: str) -> str | None:
    """The host a field's form posts to when that is another site than the page's."""
    form = el.form
    if form is None or not form.action_explicit:
        return None
    dest = parse_url(form.action, page_url or None)
    here = parse_url(page_url or "about:blank")
    if dest.host and here.host and not same_site(dest.host, here.host):
        return dest.host
    return None


def injected_field(el: ElementFacts, ctx: RuleContext) -> FieldSuspicion | None:
    """Why the field `el` the agent types into looks injected, or None for a field of the site."""
    info = el.field
    if not el.visible:
        return FieldSuspicion(f"a hidden field ({el.hidden_reason or 'not rendered'})", 1.0)
    if info is not None:
        if info.opacity < FAINT:
            return FieldSuspicion(f"a near-invisible field (opacity {info.opacity:g})", 1.0)
        if (info.width or info.height) and (info.width < TINY or info.height < TINY):
            return FieldSuspicion(f"a field too small to see ({info.width}×{info.height} px)", 1.0)
    around = " ".join(
        p for p in (el.name, el.attrs.get("placeholder", ""), el.aria_text, el.context_text) if p
    )
    signals = instruction_signals(around)
    if "goal_reveal" in signals.families:
        return FieldSuspicion(f"a field that asks for the agent's task ({signals.phrases[0]!s})", 1.0)
    elsewhere = _posts_elsewhere(el, ctx.step.observation.url)
    where = f"posts to {elsewhere}" if elsewhere else ("belongs to no form" if el.form is None else "")
    if info is not None and info.mirrors and (elsewhere or (el.form is None and info.mirror_in_form)):
        return FieldSuspicion(
            f"a second {el.label[:40]!r} field next to the site's own that {where or 'posts elsewhere'}", 0.95
        )
    # (A comment box without a form of its own may sit inside a post: only inputs count there.)
    if el.in_ugc and (elsewhere or (el.form is None and el.tag == "input")):
        return FieldSuspicion(f"a field inside user content that {where}", 0.95)
    if unsolicited_overlay(el, ctx) and (elsewhere or el.form is None):
        return FieldSuspicion(f"a field in a pop-up the agent did not open that {where}", 0.9)
    return None
