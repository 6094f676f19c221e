"""The console's event protocol: what guards send, what the console answers (docs/reference/events.md).

Guards send `GuardEvent`s (``{"kind", "session", "ts", "data"}``); the console sends
commands back (``{"seq", "type", …}``). Both directions are plain JSON, checked here before
anything acts on them: a malformed message is refused with a `ProtocolError`, never half
applied.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = [
    "API_VERSION",
    "CONTROL_ACTIONS",
    "ORDER_OPS",
    "STATUSES",
    "ProtocolError",
    "check_command",
    "check_event",
    "check_order",
]

API_VERSION = 1
#: Session statuses a guard reports in ``session`` events.
STATUSES = ("running", "paused", "taken_over", "stopped", "closed")
#: What the console's control buttons ask of a session.
CONTROL_ACTIONS = ("pause", "resume", "stop", "takeover", "handback")
#: What a person may do on the page while they have taken over.
ORDER_OPS = ("click", "type", "press", "goto", "back", "forward", "reload", "scroll", "frame")

_MAX_TEXT = 4000
_MAX_URL = 4000
_KEYS = frozenset(
    (
        *("Enter", "Tab", "Escape", "Backspace", "Delete", "Space", "Home", "End", "PageUp", "PageDown"),
        *("ArrowUp", "ArrowDown", "ArrowLeft", "ArrowRight"),
    )
)


class ProtocolError(ValueError):
    """A message that does not follow the protocol (the reason is safe to show)."""


def _text(value: Any, name: str, limit: int = _MAX_TEXT, *, empty: bool = False) -> str:
    if not isinstance(value, str):
        raise ProtocolError(f"{name} must be a string")
    if len(value) > limit:
        raise ProtocolError(f"{name} is longer than {limit} characters")
    if not empty and not value.strip():
        raise ProtocolError(f"{name} must not be empty")
    return value


def _number(value: Any, name: str, low: float, high: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ProtocolError(f"{name} must be a number")
    if not low <= value <= high:
        raise ProtocolError(f"{name} must be between {low:g} and {high:g}")
    return float(value)


def check_order(op: Any, args: Any) -> dict[str, Any]:
    """A take-over order ``{"op", "args"}`` with its arguments checked."""
    if op not in ORDER_OPS:
        raise ProtocolError(f"op must be one of {', '.join(ORDER_OPS)}")
    args = args if args is not None else {}
    if not isinstance(args, dict):
        raise ProtocolError("args must be an object")
    clean: dict[str, Any] = {}
    if op == "click":
        clean = {"x": _number(args.get("x"), "x", 0, 100_000), "y": _number(args.get("y"), "y", 0, 100_000)}
    elif op == "type":
        clean = {"text": _text(args.get("text"), "text")}
    elif op == "press":
        key = _text(args.get("key"), "key", 40)
        if key not in _KEYS and not (len(key) == 1 and key.isprintable()):
            raise ProtocolError(f"key must be a single character or one of {', '.join(sorted(_KEYS))}")
        clean = {"key": key}
    elif op == "goto":
        url = _text(args.get("url"), "url", _MAX_URL).strip()
        if not url.lower().startswith(("http://", "https://")):
            raise ProtocolError("url must start with http:// or https://")
        clean = {"url": url}
    elif op == "scroll":
        clean = {"dy": _number(args.get("dy", 0), "dy", -100_000, 100_000)}
    return {"op": op, "args": clean}


def check_command(command: Any) -> dict[str, Any]:
    """A command from the console to a guard, checked (types, lengths, known names)."""
    if not isinstance(command, dict):
        raise ProtocolError("a command must be an object")
    kind = command.get("type")
    if kind in CONTROL_ACTIONS:
        return {"type": kind}
    if kind == "goal":
        return {"type": "goal", "goal": _text(command.get("goal"), "goal")}
    if kind == "decide":
        approval = _text(command.get("approval"), "approval", 64)
        approved = command.get("approved")
        if not isinstance(approved, bool):
            raise ProtocolError("approved must be true or false")
        by = command.get("by", "console")
        return {
            "type": "decide",
            "approval": approval,
            "approved": approved,
            "remember": command.get("remember") is True and approved,
            "by": _text(by, "by", 80),
        }
    if kind == "order":
        order_id = _text(command.get("order"), "order", 64)
        return {"type": "order", "order": order_id, **check_order(command.get("op"), command.get("args"))}
    if kind == "watch":
        return {"type": "watch", "on": command.get("on") is True}
    raise ProtocolError("unknown command type")


def check_event(event: Any) -> dict[str, Any]:
    """A `GuardEvent` in its JSON form, as a guard in another process posts it."""
    if not isinstance(event, dict):
        raise ProtocolError("an event must be an object")
    kind = _text(event.get("kind"), "kind", 40)
    session = _text(event.get("session"), "session", 64)
    data = event.get("data")
    if not isinstance(data, dict):
        raise ProtocolError("data must be an object")
    ts = event.get("ts", 0)
    if isinstance(ts, bool) or not isinstance(ts, (int, float)) or not math.isfinite(ts):
        raise ProtocolError("ts must be a number")
    return {"kind": kind, "session": session, "ts": float(ts), "data": data}
