"""Exceptions an agent sees when the guard stops an action; each carries the verdict."""

from __future__ import annotations

from pagewarden.steps import Verdict

__all__ = [
    "ActionBlocked", "ApprovalRequired", "GuardError", "GuardReleased", "RevisionRequired", "SessionStopped",
]


class GuardError(Exception):
    """Base class: the guard did not let the action run. `verdict` says why.

    The message never shows a secret registered with any guard of this process nor a
    recognisable credential (the guard also redacts `verdict` and `action` before raising).
    """

    def __init__(self, verdict: Verdict, action: str = "") -> None:
        from pagewarden.secrets import redact_credentials
        from pagewarden.trace import global_secrets

        self.verdict = verdict
        self.action = action
        ids = ", ".join(verdict.violated_policy_ids) or "-"
        text = f"{type(self).__name__}: {action} [{ids}] {verdict.explanation}".strip()
        if verdict.guidance:
            text += f"\nGuidance: {verdict.guidance}"
        super().__init__(redact_credentials(global_secrets().redact(text)))


class ActionBlocked(GuardError):
    """A policy violation at or above the block threshold."""


class ApprovalRequired(GuardError):
    """The action needs a human's approval, and no approver gave it."""


class RevisionRequired(GuardError):
    """The agent should revise its plan; `verdict.guidance` says how. Nothing ran."""


class SessionStopped(GuardError):
    """A supervisor stopped this session from the console: no further action runs."""


class GuardReleased(RuntimeError):
    """A stand-in of a browser context the guard was released from (``page.release()``) was
    used: the guard no longer judges that context, so its stand-ins refuse to act."""
