"""How BrowserGym's action code reaches the guarded page.

`BrowserEnv.step` turns the agent's action into Python code (its ``action_mapping``) and runs
it with ``exec``, the raw active Playwright page as the global ``page``. A guarded
environment's mapping puts one line in front of that code: ``page`` (and the helper that
sends a message to the user) rebound to the guarded stand-ins of the environment's guard,
found by an unguessable key. Every Playwright call the code makes then goes through the
guard; a refusal raises, and BrowserGym reports it as the step's ``last_action_error``.
"""

from __future__ import annotations

import secrets
import weakref
from collections.abc import Callable
from typing import Any

__all__ = ["guarded_page", "prelude", "register"]

#: the guarded environments of this process, by key (an environment that is gone is not found)
_ENVS: weakref.WeakValueDictionary[str, Any] = weakref.WeakValueDictionary()

_GONE = "pagewarden: the guard of this BrowserGym environment is closed; the action did not run"


def register(env: Any) -> str:
    """Remember `env` (a `GuardedBrowserEnv`) under a new key for its action code."""
    key = secrets.token_hex(16)
    _ENVS[key] = env
    return key


def prelude(key: str) -> str:
    """The line put in front of the action code of the environment registered as `key`."""
    return (
        "page, send_message_to_user = __import__("
        f"{__name__!r}, fromlist=['bind']).bind(page, send_message_to_user, {key!r})\n"
    )


def _env(key: str) -> Any:
    env = _ENVS.get(key)
    if env is None or env.guard_closed:
        raise RuntimeError(_GONE)  # fail closed: no guard, no action
    return env


def guarded_page(page: Any, key: str) -> Any:
    """`page` guarded by the guard of the environment registered as `key`."""
    return _env(key).guard.wrap(page)


def bind(page: Any, send_message_to_user: Callable[[str], Any], key: str) -> tuple[Any, Callable[[str], Any]]:
    """The globals the action code runs with: the guarded `page`, and a message helper
    that tells the guard what the agent told the user (it satisfies consent rules naming it)."""
    env = _env(key)
    guarded = env.guard.wrap(page)
    reasoning = env.take_reasoning()
    if reasoning:
        guarded.reasoning(reasoning)

    def message(text: str) -> Any:
        result = send_message_to_user(text)
        if isinstance(text, str):
            env.guard.message_user(text)
        return result

    return guarded, message
