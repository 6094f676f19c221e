"""Playwright's errors as the agent's own call would have raised them.

An error Playwright raises through a guarded call keeps its type and message; its ``stack``
(the frames of the code that made the call, which Playwright fills in) loses the guard's own
frames, as it leaves out Playwright's. Where the guard's observation met the failure the action
itself would have met (its element never came within the action's timeout, a strict-mode
violation, a closed page), `as_call_error` makes the observation's error the call's: the
method named is the call's (``Locator.click: Timeout 42ms exceeded``), the timeout is the
call's, and the guard's own lookup is gone from the call log. When the guard's part cannot be
told apart it returns None: the caller then fails closed with the guard's own exception.
"""

from __future__ import annotations

import copy
import os
import re

__all__ = ["as_call_error", "is_playwright_error", "without_guard_frames"]

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
#: a stack line of the guard's own code (Playwright writes ``    at NAME (FILE:LINE:COLUMN)``)
_GUARD_FRAME = re.compile(r"^\s+at .* \(" + re.escape(_PACKAGE_DIR + os.sep) + r".*:\d+:\d+\)$")
_PREFIX = re.compile(r"^[A-Za-z_]\w*\.\w+: ")
_TIMEOUT = re.compile(r"^Timeout [0-9.e+]+ms exceeded")


def is_playwright_error(exc: BaseException) -> bool:
    """Whether `exc` is one of Playwright's errors (``Error`` and its subclasses)."""
    try:
        from playwright._impl._errors import Error
    except ImportError:  # pragma: no cover - Playwright is a dependency
        return False
    return isinstance(exc, Error)


def without_guard_frames(exc: BaseException) -> BaseException:
    """`exc` with the guard's frames left out of its Playwright ``stack`` (changed in place:
    Playwright makes a copy of the error for each call it fails)."""
    stack = getattr(exc, "_stack", None)
    if not isinstance(stack, str) or not is_playwright_error(exc):
        return exc
    lines = stack.split("\n")
    kept = [line for line in lines if not _GUARD_FRAME.match(line)]
    if len(kept) != len(lines):
        exc._stack = "\n".join(kept)  # type: ignore[attr-defined]
    return exc


def _js_number(value: float) -> str:
    """A number as JavaScript prints it in Playwright's messages (42, not 42.0)."""
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def as_call_error(
    exc: BaseException,
    api_name: str,
    *,
    engine: str | None = None,
    timeout_ms: float | None = None,
    added_first: bool = False,
) -> BaseException | None:
    """The error Playwright would have raised for the call `api_name` (``Locator.click``) in
    place of `exc`, which a guard's lookup raised; None when `exc` is not Playwright's or the
    guard's part (the selector engine named `engine`, and the ``.first`` it `added_first`)
    is still in the message after the lookup is taken out."""
    if not is_playwright_error(exc):
        return None
    message = str(getattr(exc, "message", str(exc)))
    body = _PREFIX.sub("", message, count=1)
    if timeout_ms is not None:
        body = _TIMEOUT.sub(f"Timeout {_js_number(timeout_ms)}ms exceeded", body, count=1)
    if engine:
        # the lookup as Playwright describes it: ``.locator("ENGINE=…")`` chained to the agent's
        # locator, or ``… >> ENGINE=…`` when the agent's selector did not parse
        first, nth = (r"(?:\.first)?", r"(?: >> nth=0)?") if added_first else ("", "")
        lookup = re.compile(first + r"\.locator\((['\"])" + re.escape(engine) + r"=.*\1\)")
        chained = re.compile(nth + r" >> " + re.escape(engine) + r"=.*$")
        body = "\n".join(chained.sub("", lookup.sub("", line)) for line in body.split("\n"))
        if engine in body:
            return None
    new_message = f"{api_name}: {body}"
    try:
        error = copy.copy(exc)
    except Exception:  # noqa: BLE001 - an error that cannot be copied is changed itself
        error = exc
    error._message = new_message  # type: ignore[attr-defined]
    error.args = (new_message,)
    stack = getattr(exc, "_stack", None)
    if isinstance(stack, str):
        rest = stack[len(message) :] if stack.startswith(message) else "\n" + stack.split("\n", 1)[-1]
        error._stack = new_message + rest  # type: ignore[attr-defined]
    return without_guard_frames(error.with_traceback(exc.__traceback__))
