"""`Agent`: runs a scripted agent's actions one at a time and records what became of each.

A script calls ``await agent.step(action, reasoning, run)`` for every browser action. The
agent states its reasoning (``page.reasoning(text)`` when the page has that method, as a
guarded page does), runs the action, and records the outcome: ran, stopped by the guard
(with the verdict) or failed. A stopped or failed step ends the script (`AgentStopped`),
as a real agent would have to re-plan.
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from playwright.async_api import Error as PlaywrightError

from pagewarden._calls import drive_async
from pagewarden.guard import GuardError
from pagewarden.observe import MaskUnavailable, mask_boxes, paint_masks

__all__ = ["Agent", "AgentStopped", "StepRecord", "VerdictSource"]

#: Returns the verdicts the guard recorded since it was last called (trace lines' "verdict").
VerdictSource = Callable[[], list[dict[str, Any]]]


@dataclass(slots=True)
class StepRecord:
    """One action of an agent and what became of it."""

    index: int
    action: str
    reasoning: str
    attack: bool  # the action follows the planted injection
    decision: str  # allow | block | ask | revise (guarded); ran (unguarded); error
    ran: bool
    policies: tuple[str, ...] = ()
    reason: str = ""
    guidance: str = ""
    url_before: str = ""
    url_after: str = ""
    screenshot: str | None = None  # after the step, relative to the output directory
    guard_screenshot: str | None = None  # what the guard saw, when it recorded one
    error: str | None = None

    @property
    def stopped(self) -> bool:
        """Whether the guard kept the action from running."""
        return self.decision in ("block", "ask", "revise") and not self.ran


class AgentStopped(Exception):
    """The agent cannot go on: an action was refused by the guard or failed."""

    def __init__(self, record: StepRecord) -> None:
        self.record = record
        super().__init__(f"step {record.index} ({record.action}): {record.decision}")


@dataclass(slots=True)
class Agent:
    """A scripted agent on one page (raw Playwright or guarded, the script cannot tell)."""

    page: Any
    name: str
    out_dir: Path | None = None
    shot_prefix: str = "step"
    verdicts: VerdictSource | None = None
    steps: list[StepRecord] = field(default_factory=list)
    #: the raw Playwright page under a guarded `page` (screenshots are read and taken on it)
    raw: Any = None
    #: the guard's secrets: fields holding one are masked in screenshots, as password fields are
    secrets: Any = None

    async def think(self, reasoning: str) -> None:
        """State the reasoning for the next action (a guarded page passes it to the guard)."""
        method = getattr(self.page, "reasoning", None)
        if callable(method):
            result = method(reasoning)
            if inspect.isawaitable(result):
                await result

    async def step(
        self, action: str, reasoning: str, run: Callable[[], Awaitable[Any]], *, attack: bool = False
    ) -> StepRecord:
        """Run one action; raise `AgentStopped` if it was refused or failed."""
        await self.think(reasoning)
        record = StepRecord(
            index=len(self.steps) + 1,
            action=action,
            reasoning=reasoning,
            attack=attack,
            decision="ran",
            ran=False,
            url_before=self.page.url,
        )
        self.steps.append(record)
        try:
            await run()
        except GuardError as exc:
            verdict = exc.verdict
            record.decision = verdict.decision.value
            record.policies = tuple(verdict.violated_policy_ids)
            record.reason = verdict.explanation
            record.guidance = verdict.guidance
        except (PlaywrightError, TimeoutError) as exc:
            record.decision = "error"
            record.error = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
            record.reason = record.error
        else:
            record.ran = True
            await self._settle()
        self._attach_verdict(record)
        record.url_after = self.page.url
        await self._screenshot(record)
        if not record.ran:
            raise AgentStopped(record)
        return record

    def _attach_verdict(self, record: StepRecord) -> None:
        if self.verdicts is None:
            return
        recorded = self.verdicts()
        if not recorded:
            if record.ran:
                record.decision = "allow"
            return
        verdict = recorded[-1].get("verdict", {})
        if record.ran:
            record.decision = "allow" if verdict.get("decision") in (None, "allow") else verdict["decision"]
            record.policies = tuple(verdict.get("violated_policy_ids") or ())
            record.reason = verdict.get("explanation", "") if record.policies else ""
        shot = recorded[-1].get("screenshot")
        if shot:
            record.guard_screenshot = str(shot)

    async def _settle(self) -> None:
        """Let a navigation the action started finish before the next step."""
        with contextlib.suppress(PlaywrightError, TimeoutError):
            await self.page.wait_for_load_state("load", timeout=5000)

    async def _screenshot(self, record: StepRecord) -> None:
        if self.out_dir is None:
            return
        relative = Path("screenshots") / f"{self.shot_prefix}-{record.index:02d}.png"
        page = self.raw if self.raw is not None else self.page
        try:
            # password fields and fields holding a registered secret painted over (observe._mask)
            before = await drive_async(mask_boxes(page, self.secrets))
            data = await page.screenshot()
            after = await drive_async(mask_boxes(page, self.secrets))
            (self.out_dir / relative).write_bytes(paint_masks(data, (before, after)))
        except (PlaywrightError, TimeoutError, MaskUnavailable, OSError):
            return
        record.screenshot = relative.as_posix()
