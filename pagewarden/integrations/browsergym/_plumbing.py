"""BrowserGym's own scripts in the action code: approved by exact text, nothing else.

BrowserGym's tab actions (``new_tab``, ``tab_close``, ``tab_focus``) end with
``page.evaluate(<script>)``, a fixed script that dispatches a ``pageshow`` event so that the
environment learns which tab is active. The guard judges ``evaluate`` like any script the
agent runs (it asks a human: PW-SCRIPT). The scripts are read from BrowserGym's installed
source, and an ASK whose only concern is PW-SCRIPT for one of them, word for word, is
approved; everything else goes to the guard's own approver. A BrowserGym that changes the
scripts gets no approval (the tab actions then fail with ApprovalRequired: closed, not open).
"""

from __future__ import annotations

import ast
import functools
import inspect
from collections.abc import Callable
from typing import Any

from pagewarden.guard import Guard
from pagewarden.steps import Step, Verdict

__all__ = ["approving_plumbing", "plumbing_scripts"]

_TAB_ACTIONS = ("new_tab", "tab_close", "tab_focus")


@functools.cache
def plumbing_scripts() -> frozenset[str]:
    """The string literals BrowserGym's tab actions pass to ``page.evaluate``."""
    from browsergym.core.action import functions

    tree = ast.parse(inspect.getsource(functions))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name in _TAB_ACTIONS:
            for call in ast.walk(node):
                if (
                    isinstance(call, ast.Call)
                    and isinstance(call.func, ast.Attribute)
                    and call.func.attr == "evaluate"
                    and call.args
                    and isinstance(call.args[0], ast.Constant)
                    and isinstance(call.args[0].value, str)
                ):
                    found.add(call.args[0].value)
    return frozenset(found)


def approving_plumbing(guard: Guard) -> Callable[[Verdict, Step], Any]:
    """An approver for `guard` that says yes to BrowserGym's own scripts (see the module
    docstring) and asks `guard`'s approver about the rest (no approver: no)."""
    theirs = guard.approver
    scripts = plumbing_scripts()

    def approve(verdict: Verdict, step: Step) -> Any:
        action = step.action
        if (
            action.kind == "evaluate"
            and action.value in scripts
            and set(verdict.violated_policy_ids) <= {"PW-SCRIPT"}
        ):
            return True
        return theirs(verdict, step) if theirs is not None else False

    approve.__name__ = "browsergym_plumbing"
    return approve
