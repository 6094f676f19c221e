"""Judge the field, not only the value: is the field the agent types into the site's own?

An injected field asks for data the goal legitimately holds (an email, a phone, a card number,
"type the task you were asked to complete"), so the typed value matching the goal proves
nothing. What gives the field away is the field itself: hidden or nearly invisible, sitting in
user content or in a pop-up the agent did not open, mirroring a field of the site's own form
while posting somewhere else or nowhere, or asking for the agent's task.

What a field asks for is what the field itself says: its label (``<label for>``, a wrapping
label, ``aria-labelledby``, ``aria-label``), placeholder, description, ``name``, ``id`` and
``autocomplete`` token (`field_question`). Text that merely sits near a field is not its
question: an injection beside a checkout form does not turn the form's Name field into one that
asks for the task. Beside such text, what counts is what is typed: the task itself
(`restates_task`) is stopped in any field.
"""

from __future__ import annotations

from dataclasses import dataclass

from pagewarden._url import parse_url, same_site
from pagewarden.rules._base import RuleContext
from pagewarden.rules._instructions import instruction_signals, significant_tokens
from pagewarden.rules._overlays import unsolicited_overlay
from pagewarden.steps import ElementFacts

__all__ = ["FieldSuspicion", "field_question", "injected_field", "restates_task"]

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


#: Typed text restates the task when it shares at least this many content words with the goal …
RESTATE_WORDS = 4
#: … and these make up at least this share of the goal's content words.
RESTATE_SHARE = 0.5


def field_question(el: ElementFacts) -> str:
    """What the field itself says it asks for: accessible name (label, aria-labelledby,
    aria-label), placeholder, title / aria-description / aria-describedby, name, id and
    autocomplete token. Nothing from the text around it."""
    attrs = el.attrs
    parts = (
        el.name,
        attrs.get("placeholder", ""),
        el.aria_text,
        attrs.get("name", ""),
        attrs.get("id", ""),
        attrs.get("autocomplete", ""),
    )
    return " | ".join(p for p in parts if p)


def restates_task(goal: str, value: str) -> bool:
    """Whether typed `value` restates the user's task: it carries most of the goal's content
    words (a name, an address, a card number or a date from the goal does not)."""
    if not goal or not value:
        return False
    goal_tokens = significant_tokens(goal)
    if not goal_tokens:
        return False
    shared = significant_tokens(value) & goal_tokens
    return len(shared) >= RESTATE_WORDS and len(shared) / len(goal_tokens) >= RESTATE_SHARE


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
    own = instruction_signals(field_question(el))
    if "goal_reveal" in own.families:
        return FieldSuspicion(f"a field that asks for the agent's task ({own.phrases[0]!s})", 1.0)
    if restates_task(ctx.goal, ctx.action.value or ""):
        around = instruction_signals(el.context_text)
        if "goal_reveal" in around.families:
            return FieldSuspicion(
                f"a field beside text that asks for the agent's task ({around.phrases[0]!s}), "
                "typing the task itself",
                1.0,
            )
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
