"""The guard: steps in, verdicts out, decisions applied."""

from pagewarden.guard._adapters import plug_adapters
from pagewarden.guard._approvers import approve_all, deny_all, terminal_approver
from pagewarden.guard._cascade import SemanticTier
from pagewarden.guard._exceptions import (
    ActionBlocked,
    ApprovalRequired,
    GuardError,
    GuardReleased,
    RevisionRequired,
    SessionStopped,
)
from pagewarden.guard._guard import Approver, Guard
from pagewarden.guard._options import CascadeOptions, ConsultMode
from pagewarden.guard._risk import Thresholds
from pagewarden.steps import (
    Action,
    DataFormatError,
    Decision,
    EventBus,
    EventSink,
    Finding,
    GuardEvent,
    PreviousStep,
    Step,
    Verdict,
)

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
    "GuardReleased",
    "PreviousStep",
    "RevisionRequired",
    "SemanticTier",
    "SessionStopped",
    "Step",
    "Thresholds",
    "Verdict",
    "approve_all",
    "deny_all",
    "plug_adapters",
    "terminal_approver",
]
