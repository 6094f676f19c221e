"""`Action` and `Step`: what the agent is about to do, in the documented JSON shape.

A trace line records ``{"step": Step.to_dict(), "verdict": ...}``; `Step.from_dict` reads
that `step` object back, so recorded sessions can be judged again without a browser.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from pagewarden._serde import DataFormatError, from_data, to_data
from pagewarden.steps._observation import Observation

__all__ = ["Action", "DataFormatError", "PreviousStep", "Step"]


@dataclass(frozen=True, slots=True)
class Action:
    """One action: its kind (`click`, `fill`, `goto` …), the Playwright call, target and value.

    `value` is the typed text for fill/type, the URL for goto, the key for press, the
    script for evaluate, the message for send_msg_to_user.
    """

    kind: str
    method: str = ""
    selector: str | None = None
    value: str | None = None
    options: dict[str, Any] = field(default_factory=dict)

    def describe(self) -> str:
        """A short readable form, e.g. ``click 'text=Delete'``."""
        parts = [self.kind]
        if self.selector:
            parts.append(repr(self.selector))
        if self.value is not None and self.kind not in {"evaluate", "add_script_tag"}:
            shown = self.value if len(self.value) <= 60 else self.value[:57] + "..."
            parts.append(repr(shown))
        return " ".join(parts)


@dataclass(frozen=True, slots=True)
class PreviousStep:
    """The previous step as the second-order window sees it (no further history)."""

    action: Action
    reasoning: str | None = None
    url: str | None = None
    decision: str | None = None
    target: str | None = None  # the target element's label (compact observation)
    title: str | None = None


@dataclass(frozen=True, slots=True)
class Step:
    """Everything the guard judges: goal, reasoning, action, observation, previous step."""

    action: Action
    observation: Observation
    goal: str | None = None
    reasoning: str | None = None
    previous: PreviousStep | None = None
    index: int = 0
    session: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The documented JSON shape (the `step` object of a trace line)."""
        return to_data(self)

    @classmethod
    def from_dict(cls, data: Any) -> Step:
        """Rebuild a step from its JSON shape; `DataFormatError` names a bad field."""
        return from_data(cls, data, "step")

    def with_previous(self, previous: PreviousStep | None) -> Step:
        """A copy with another previous step."""
        return replace(self, previous=previous)
