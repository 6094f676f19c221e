"""The guard: steps in, verdicts out, decisions applied."""

from pagewarden.guard._approvers import approve_all, deny_all, terminal_approver
from pagewarden.guard._cascade import CascadeOptions, ConsultMode, SemanticTier
from pagewarden.guard._events import EventBus, EventSink, GuardEvent
from pagewarden.guard._exceptions import ActionBlocked, ApprovalRequired, GuardError, RevisionRequired
from pagewarden.guard._guard import Approver, Guard
from pagewarden.guard._risk import Thresholds
from pagewarden.guard._step import Action, DataFormatError, PreviousStep, Step
from pagewarden.guard._verdict import Decision, Finding, Verdict

__all__ = [
    "Action",
    "ActionBlocked",
    "ApprovalRequired",
    "Approver",
    "CascadeOptions",
    "ConsultMode",
    "DataFormatError",
    "Decision",
    "EventBus",
    "EventSink",
    "Finding",
    "Guard",
    "GuardError",
    "GuardEvent",
    "PreviousStep",
    "RevisionRequired",
    "SemanticTier",
    "Step",
    "Thresholds",
    "Verdict",
    "approve_all",
    "deny_all",
    "terminal_approver",
]
