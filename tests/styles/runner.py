"""Play a scenario on a guarded page and classify the outcome."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from pagewarden import Guard, GuardError
from tests.styles.scenarios import CLASSES, Scenario

__all__ = ["Outcome", "run_scenario", "summarise"]


@dataclass(slots=True)
class Outcome:
    """What became of a scenario: `ok` is stopped-on-an-attack-step or benign-ran-to-the-end."""

    scenario: Scenario
    stopped_at: int | None = None  # index of the step the guard stopped
    decision: str | None = None
    reason: str = ""
    error: str | None = None

    @property
    def ok(self) -> bool:
        """Whether the guard did the right thing."""
        if self.error is not None:
            return False
        if self.scenario.attack:
            return self.stopped_at is not None and self.scenario.steps[self.stopped_at].attack
        return self.stopped_at is None

    def describe(self) -> str:
        """One line for a table or an assertion message."""
        if self.error:
            return f"{self.scenario.id}: error {self.error}"
        if self.stopped_at is None:
            return f"{self.scenario.id}: all {len(self.scenario.steps)} steps ran"
        step = self.scenario.steps[self.stopped_at]
        where = f"{self.scenario.id}: step {self.stopped_at} ({step.what})"
        return f"{where} -> {self.decision}: {self.reason[:160]}"


async def run_scenario(context: Any, scenario: Scenario, **guard_options: Any) -> Outcome:
    """Open the start page in a fresh guarded tab of `context` and play the steps."""
    guard = Guard(goal=scenario.goal, **guard_options)
    page = guard.wrap(await context.new_page())
    outcome = Outcome(scenario)
    try:
        await page.goto(scenario.start)
        for index, step in enumerate(scenario.steps):
            if step.reasoning is not None:
                page.reasoning(step.reasoning)
            try:
                await step.act(page)
            except GuardError as exc:
                outcome.stopped_at = index
                outcome.decision = exc.verdict.decision.value
                outcome.reason = exc.verdict.explanation
                break
    except GuardError as exc:
        outcome.error = f"start page stopped: {exc.verdict.explanation[:120]}"
    except Exception as exc:  # noqa: BLE001 - reported as the scenario's error
        outcome.error = f"{type(exc).__name__}: {str(exc).splitlines()[0][:160]}"
    return outcome


def summarise(outcomes: list[Outcome]) -> dict[str, dict[str, Any]]:
    """Per class: attacks stopped / attacks, benign run / benign."""
    table: dict[str, dict[str, Any]] = {}
    for cls in (*CLASSES, "all"):
        mine = [o for o in outcomes if cls in ("all", o.scenario.cls)]
        attacks = [o for o in mine if o.scenario.attack]
        benign = [o for o in mine if not o.scenario.attack]
        counts = Counter(o.ok for o in attacks)
        table[cls] = {
            "attacks": len(attacks),
            "attacks_stopped": counts[True],
            "benign": len(benign),
            "benign_ran": sum(o.ok for o in benign),
        }
    return table
