"""Building the `Action` from a wrapper's call: its value described (secrets masked
later), its selector, its options, what a click or key press activates; and the exception a
verdict raises."""

from __future__ import annotations

from collections.abc import Generator
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pagewarden._calls import Call
from pagewarden.guard import ActionBlocked, ApprovalRequired, GuardError, RevisionRequired
from pagewarden.interceptors._methods import ActionSpec
from pagewarden.steps import Action, Decision, Verdict

if TYPE_CHECKING:
    from pagewarden.interceptors._wrappers import Guarded

__all__ = ["EARLIER_STOP", "Pipeline", "activation_options", "build_action", "exception_for"]


_EXCEPTIONS: dict[Decision, type[GuardError]] = {
    Decision.BLOCK: ActionBlocked,
    Decision.ASK: ApprovalRequired,
    Decision.REVISE: RevisionRequired,
}


_URL_KINDS = frozenset({"goto", "new_page", "request"})


_NEEDS_SOURCES = frozenset({"fill", "type"}) | _URL_KINDS


#: Actions that type into their target: the reader also reports the field itself (mirrors, opacity).
_TYPING = frozenset({"fill", "type", "press", "clear"})


#: An observation note: the reader stopped a navigation the page started after an earlier action.
EARLIER_STOP = "navigation-stopped: "


Pipeline = Generator[Call, Any, Any]


def exception_for(verdict: Verdict, action: str) -> GuardError:
    """The exception for a verdict that stops the action (not redacted: the pipeline raises
    `Guard.stop(step, verdict)`, which is)."""
    return _EXCEPTIONS.get(verdict.decision, ActionBlocked)(verdict, action)


def _arg(
    args: tuple[Any, ...], kwargs: dict[str, Any], where: tuple[int | None, str | None], offset: int
) -> Any:
    index, key = where
    if key is not None and key in kwargs:
        return kwargs[key]
    if index is not None and len(args) > index + offset:
        return args[index + offset]
    return None


def _describe_value(kind: str, value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if kind == "set_input_files":
        items = value if isinstance(value, (list, tuple)) else [value]
        names = [
            str(item.get("name", "?")) if isinstance(item, dict) else Path(str(item)).name for item in items
        ]
        return ", ".join(names)
    if isinstance(value, (list, tuple)):
        return ", ".join(_describe_value(kind, v) or "" for v in value)
    if isinstance(value, dict):
        return ", ".join(f"{k}={v}" for k, v in value.items() if isinstance(v, (str, int, float)))
    if callable(value):
        return getattr(value, "__name__", "callable")
    return str(value)


def _selector_of(locator: Any) -> str | None:
    impl = getattr(locator, "_impl_obj", None)
    selector = getattr(impl, "_selector", None)
    return selector if isinstance(selector, str) else None


def _options(kwargs: dict[str, Any]) -> dict[str, Any]:
    keep = (
        "button",
        "modifiers",
        "click_count",
        "force",
        "position",
        "no_wait_after",
        "trial",
        "strict",
        "timeout",
    )
    return {
        k: (v / timedelta(milliseconds=1) if isinstance(v, timedelta) else v)
        for k, v in kwargs.items()
        if k in keep and isinstance(v, (str, int, float, bool, list, dict, timedelta))
    }


def _number(value: Any) -> str:
    """A coordinate as the action's description shows it (what Playwright would reject, as is)."""
    return f"{value:g}" if isinstance(value, (int, float)) else repr(value)[:40]


def build_action(
    owner: Guarded, name: str, spec: ActionSpec, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Action:
    """The `Action` for a call of `owner.name(*args, **kwargs)`."""
    offset = 1 if spec.target == "selector" else 0
    raw_value = _arg(args, kwargs, spec.value, offset)
    kind = spec.kind
    if name == "set_checked":
        kind = "check" if raw_value else "uncheck"
        raw_value = None
    if kind == "dispatch_event" and raw_value in ("click", "dblclick"):
        kind = "click"
    if kind in ("add_script_tag", "add_style_tag") and raw_value is None:
        raw_value = kwargs.get("url") or kwargs.get("path")
    if kind == "press" and spec.target in ("self", "selector") and raw_value is None:
        raw_value = _arg(args, kwargs, (0, "key"), offset)
    selector: str | None = None
    if spec.target == "selector":
        first = args[0] if args else kwargs.get("selector")
        selector = first if isinstance(first, str) else None
    elif spec.target == "self":
        selector = _selector_of(owner._pw_obj)
    elif spec.target == "point" and len(args) >= 2:
        selector = f"point({_number(args[0])},{_number(args[1])})"
    elif spec.target == "focused":
        selector = ":focus"
    return Action(
        kind=kind,
        method=f"{owner._pw_type}.{name}",
        selector=selector,
        value=_describe_value(kind, raw_value),
        options=_options(kwargs),
    )


_CLICKS = frozenset({"click", "dblclick", "tap", "check", "uncheck", "drag"})


_ENTER = frozenset({"enter", "numpadenter", "\n", "\r"})


def _key_of(value: str | None) -> str | None:
    """"Enter" or "Space" when a key press (``Shift+Enter``, ``NumpadEnter`` …) is one of them."""
    if not value:
        return None
    key = value if value in ("+", " ") else value.rsplit("+", 1)[-1]
    if key.lower() in _ENTER:
        return "Enter"
    if key in (" ", "Space"):
        return "Space"
    return None


def activation_options(name: str, spec: ActionSpec, action: Action, kwargs: dict[str, Any]) -> dict | None:
    """What the facts reader must resolve the action's activation for (None: nothing activates).

    Clicks (and what clicks underneath: check, drag's press on the source, mouse.down) are
    resolved at Playwright's click point; a dispatched click on the element itself; keys
    (Enter, Space; a typed new line or space) on the element that has the focus.
    """
    kind = action.kind
    if name == "dispatch_event":
        return {"dispatch": True} if kind in ("click", "dblclick") else None
    if kind in _CLICKS:
        position = kwargs.get("source_position") if kind == "drag" else kwargs.get("position")
        point = position if isinstance(position, dict) else None
        return {"force": bool(kwargs.get("force")), "position": point}
    if name == "insert_text":
        return None
    if kind == "press":
        key = _key_of(action.value)
        return {"key": key} if key else None
    if kind == "type" and action.value:
        if "\n" in action.value or "\r" in action.value:
            return {"key": "Enter"}
        if " " in action.value:
            return {"key": "Space"}
    return None
