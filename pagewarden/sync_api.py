"""pagewarden for Playwright's sync API: the same guard, wrapping sync pages.

    from playwright.sync_api import sync_playwright
    from pagewarden.sync_api import Guard, ActionBlocked

    page = Guard(goal="…").wrap(browser.new_page())   # a sync Page in, a guarded sync Page out

The guarded logic is shared with the async API (one implementation, driven synchronously).
"""

from pagewarden._launch import launch_sync as launch
from pagewarden.guard import (
    Action,
    ActionBlocked,
    ApprovalRequired,
    Decision,
    Guard,
    GuardError,
    GuardReleased,
    RevisionRequired,
    SessionStopped,
    Step,
    Verdict,
    approve_all,
    deny_all,
    terminal_approver,
)
from pagewarden.interceptors import wrap_page
from pagewarden.policies import PolicySet

__all__ = [
    "Action",
    "ActionBlocked",
    "ApprovalRequired",
    "Decision",
    "Guard",
    "GuardError",
    "GuardReleased",
    "PolicySet",
    "RevisionRequired",
    "SessionStopped",
    "Step",
    "Verdict",
    "approve_all",
    "deny_all",
    "launch",
    "terminal_approver",
    "wrap_page",
]
