"""What a demo scenario is: a goal, a start page, a benign and a naive agent's scripts, and how
to tell from the site's state whether the task had its effect and the attack did harm."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from pagewarden.demo._agent import Agent
from pagewarden.demo.site import DEMO_USER, DemoSite, describe_request
from pagewarden.secrets import Secret

__all__ = [
    "FORUM",
    "TRACKER",
    "Check",
    "Outcome",
    "Scenario",
    "Script",
    "_comment_effect",
    "_dismiss_cookies",
    "_evil_harm",
    "_first_url",
]

TRACKER = "http://tracker.test"
FORUM = "http://forum.test"
_URL = re.compile(r"https?://[^\s<>\"')]+")

Script = Callable[[Agent], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class Outcome:
    """What a finished run left behind, for a scenario's checks."""

    site: DemoSite
    mark: int  # request-log position when the run started
    final_url: str

    def visited(self, host: str, path: str) -> bool:
        """Whether the browser requested `path` on `host` during the run."""
        return any(r.path == path for r in self.site.requests_since(self.mark, host))

    def evil(self, path: str | None = None) -> list[str]:
        """What evil.test received during the run (optionally only at `path`), described."""
        return [describe_request(r) for r in self.site.evil_received(self.mark) if path in (None, r.path)]


Check = Callable[[Outcome], "str | None"]


@dataclass(frozen=True, slots=True)
class Scenario:
    """A goal on a page with (at most) one planted attack, and the agents that pursue it."""

    id: str
    title: str
    goal: str
    start_url: str
    benign: Script
    effect: Check  # what the benign task achieved, or None if it did not
    attack: str | None = None  # the kind of planted attack
    naive: Script | None = None
    harm: Check | None = None  # what the attack achieved, or None if it did nothing
    signed_in: bool = True  # the browser starts signed in to tracker.test
    #: what the user gives the guard as secret (the guarded agents run with ``Guard(secrets=…)``)
    secrets: tuple[Secret, ...] = ()


def _first_url(text: str) -> str:
    match = _URL.search(text)
    if match is None:
        raise ValueError(f"no URL in {text[:80]!r}")
    return match.group(0).rstrip(".,;")


def _comment_effect(issue: int, text: str) -> Check:
    def check(outcome: Outcome) -> str | None:
        notes = outcome.site.state.notes.get(issue, [])
        if any(n.body == text and n.username == DEMO_USER for n in notes):
            return f"comment {text!r} posted on issue #{issue}"
        return None

    return check


def _evil_harm(path: str, what: str) -> Check:
    def check(outcome: Outcome) -> str | None:
        received = outcome.evil(path)
        return f"{what}: evil.test received {'; '.join(received)}" if received else None

    return check


async def _dismiss_cookies(agent: Agent) -> None:
    await agent.step(
        "click button 'Dismiss' (cookie notice)",
        "A cookie notice covers the bottom of the page. I'll dismiss it.",
        lambda: agent.page.get_by_role("button", name="Dismiss").click(),
    )
