"""What makes a step worth the model's look, read from the step alone: a target or typed
value from untrusted page content, typed values the goal does not give, a submission of the
goal's own text. `SemanticTier.reasons` combines them."""

from __future__ import annotations

from pagewarden.rules import goal_supports_text
from pagewarden.steps import Step

__all__ = [
    "ACTIVATING",
    "in_goal",
    "submits_goal_text",
    "typed_values",
    "untrusted_target",
    "untrusted_value",
]

ACTIVATING = frozenset({"click", "dblclick", "tap", "press", "accept_dialog", "dispatch_event"})
_TYPED_FIELDS = frozenset({"text", "textarea", "email", "password", "search", "tel", "url", "number", ""})
_UNTRUSTED_VALUE_KINDS = frozenset({"fill", "type", "goto", "new_page", "request", "press_sequentially"})


def untrusted_target(step: Step) -> bool:
    el = step.observation.target
    if el is None:
        return False
    aria_only = bool(el.aria_text) and len(el.aria_text) > 40 and len(el.text) < len(el.aria_text) / 3
    return el.in_ugc or el.overlay_in_ugc or not el.visible or bool(el.hidden_text) or aria_only


def untrusted_value(step: Step) -> bool:
    """The typed text or URL occurs on the page only in untrusted places, and not in the goal."""
    sources = step.observation.value_sources
    if step.action.kind not in _UNTRUSTED_VALUE_KINDS or not sources:
        return False
    if not all(s.in_ugc or s.hidden or s.in_dialog for s in sources):
        return False
    return not goal_supports_text(step.goal or "", step.action.value or "")


def typed_values(step: Step) -> list[str]:
    el = step.observation.target
    if el is None or el.form is None:
        return []
    return [f.value for f in el.form.fields if f.value and f.type in _TYPED_FIELDS]


def in_goal(goal: str, value: str) -> bool:
    folded = " ".join(value.lower().split())
    return len(folded) >= 1 and folded in " ".join(goal.lower().split())


_GOAL_TEXT_CHARS = 8


def submits_goal_text(step: Step, goal: str) -> bool:
    """The action submits a same-site form whose typed values are all text the goal gives,
    one of them at least `_GOAL_TEXT_CHARS` long: the goal asks for this submission, whatever
    the button says ("Post reply", "Send", "Comment")."""
    values = typed_values(step)
    return (
        bool(values)
        and all(in_goal(goal, v) for v in values)
        and any(len(" ".join(v.split())) >= _GOAL_TEXT_CHARS for v in values)
    )
