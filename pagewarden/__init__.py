"""pagewarden: a safety guard between browser agents and the browser.

This package is the composition root: it plugs the adapters (the Playwright page wrappers,
the console, the OpenTelemetry export) into the decision core, which imports neither (see the layer map in the
architecture docs)."""

from pagewarden._launch import launch
from pagewarden._version import __version__
from pagewarden.console import attach as _attach_console
from pagewarden.guard import (
    Action,
    ActionBlocked,
    ApprovalRequired,
    CascadeOptions,
    Decision,
    Finding,
    Guard,
    GuardError,
    GuardEvent,
    GuardReleased,
    RevisionRequired,
    SessionStopped,
    Step,
    Thresholds,
    Verdict,
    approve_all,
    deny_all,
    terminal_approver,
)
from pagewarden.guard import plug_adapters as _plug_adapters
from pagewarden.interceptors import wrap_page as _wrap_page
from pagewarden.llm import LLMConfig
from pagewarden.observe import ElementFacts, FormFacts, FormField, Observation, TextSource
from pagewarden.policies import Policy, PolicyError, PolicySet
from pagewarden.policies.store import PolicyStore
from pagewarden.secrets import Secret
from pagewarden.telemetry import attach as _attach_telemetry
from pagewarden.trace import configure_logging, read_trace
from pagewarden.worldmodel import Prediction

_plug_adapters(wrap_page=_wrap_page, attach_console=_attach_console, attach_telemetry=_attach_telemetry)

__all__ = [
    "Action",
    "ActionBlocked",
    "ApprovalRequired",
    "CascadeOptions",
    "Decision",
    "ElementFacts",
    "Finding",
    "FormFacts",
    "FormField",
    "Guard",
    "GuardError",
    "GuardEvent",
    "GuardReleased",
    "LLMConfig",
    "Observation",
    "Policy",
    "PolicyError",
    "PolicySet",
    "PolicyStore",
    "Prediction",
    "RevisionRequired",
    "Secret",
    "SessionStopped",
    "Step",
    "TextSource",
    "Thresholds",
    "Verdict",
    "__version__",
    "approve_all",
    "configure_logging",
    "deny_all",
    "launch",
    "read_trace",
    "terminal_approver",
]
