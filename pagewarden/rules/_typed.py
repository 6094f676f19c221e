"""What text an action puts into the page: filled, typed, selected or pressed key by key."""

from __future__ import annotations

from dataclasses import dataclass

from pagewarden.rules._base import RuleContext

__all__ = ["INPUT_KINDS", "Typed", "typed_text"]

#: Action kinds that enter data.
INPUT_KINDS = frozenset({"fill", "type", "select_option", "press"})
_KEY_TEXT = {"space": " "}


@dataclass(frozen=True, slots=True)
class Typed:
    """The text of this action (`chunk`) and the field's text after it, as far as known."""

    chunk: str
    field_text: str
    keywise: bool = False  # entered key by key (press): `field_text` may still be growing


def _key_text(key: str) -> str | None:
    """The character a key press types, or None for navigation keys and shortcuts."""
    if len(key) == 1:
        return key
    return _KEY_TEXT.get(key.lower())


def typed_text(ctx: RuleContext) -> Typed | None:
    """The text this step enters, or None when it enters none (computed once per step)."""
    if "typed" not in ctx.memo:
        ctx.memo["typed"] = _typed_text(ctx)
    return ctx.memo["typed"]  # type: ignore[return-value]


def _typed_text(ctx: RuleContext) -> Typed | None:
    action = ctx.action
    kind = action.kind
    if kind not in INPUT_KINDS or action.value is None:
        return None
    if kind in ("fill", "select_option"):
        return Typed(action.value, action.value)
    chunk = _key_text(action.value) if kind == "press" else action.value
    if chunk is None:
        return None
    return Typed(chunk, _earlier(ctx) + chunk, keywise=kind == "press")


def _earlier(ctx: RuleContext) -> str:
    """Text typed into the same element by the directly preceding type / key presses."""
    selector = ctx.action.selector
    earlier = []
    for entry in reversed(ctx.session.history):
        if entry.kind not in ("press", "type") or entry.selector != selector or entry.value is None:
            break
        piece = _key_text(entry.value) if entry.kind == "press" else entry.value
        if piece is None:
            break
        earlier.append(piece)
    return "".join(reversed(earlier))
