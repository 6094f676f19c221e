"""Approvers: who says yes to an ASK decision."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TextIO

from pagewarden.steps import Step, Verdict
from pagewarden.trace import global_secrets

__all__ = ["approve_all", "deny_all", "terminal_approver"]

#: Action kinds whose value is code or content the approver must see in full before saying yes.
_SHOWN_IN_FULL = frozenset(
    {"evaluate", "add_script_tag", "add_style_tag", "add_init_script", "set_content", "route",
     "expose_function"}
)  # fmt: skip
_MAX_SHOWN = 4000


def terminal_approver(
    stdin: TextIO | None = None, stdout: TextIO | None = None
) -> Callable[[Verdict, Step], bool]:
    """An approver that asks on the terminal (y/N); with no terminal it answers no."""

    def approve(verdict: Verdict, step: Step) -> bool:
        source = stdin or sys.stdin
        sink = stdout or sys.stderr
        if not source.isatty() and stdin is None:
            return False
        target = step.observation.target
        what = step.action.describe() + (f" on {target.label[:80]!r}" if target is not None else "")
        sink.write(
            f"\npagewarden asks: {what}\n  at {step.observation.url}\n  because {verdict.explanation}\n"
        )
        value = step.action.value
        if value and step.action.kind in _SHOWN_IN_FULL:
            # the script (or content) that would run: the person approves what they read
            shown = value
            if len(value) > _MAX_SHOWN:
                shown = f"{value[:_MAX_SHOWN]}\n… ({len(value)} characters)"
            body = global_secrets().redact(shown).replace("\n", "\n    ")
            sink.write(f"  it would run:\n    {body}\n")
        sink.write("Allow this action? [y/N] ")
        sink.flush()
        answer = source.readline().strip().lower()
        return answer in ("y", "yes")

    return approve


def approve_all(verdict: Verdict, step: Step) -> bool:
    """Approve every ASK (useful with `mode="enforce"` when only BLOCKs should stop the agent)."""
    return True


def deny_all(verdict: Verdict, step: Step) -> bool:
    """Approve nothing (the default when no approver is given)."""
    return False
