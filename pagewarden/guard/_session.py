"""Session memory: the previous step (second-order window) and what earlier steps left."""

from __future__ import annotations

from collections import deque
from dataclasses import replace

from pagewarden._url import parse_url, registrable_domain
from pagewarden.rules import HistoryEntry, RuleMemory, SessionView, TabMemory
from pagewarden.steps import PreviousStep, Step, Verdict
from pagewarden.trace import PASSWORD_MASK

__all__ = ["SessionState"]

MAX_HISTORY = 10_000


class SessionState:
    """Mutable per-session memory, updated after each step that ran."""

    def __init__(self) -> None:
        self.index = 0
        self.previous: PreviousStep | None = None
        self.history: deque[HistoryEntry] = deque(maxlen=MAX_HISTORY)
        self.user_messages: list[str] = []
        self.typed_passwords: dict[str, str] = {}
        self.tabs = TabMemory()
        #: the rules' running state (budget counters, sequence progress), kept by the guard
        self.memory = RuleMemory()

    def view(self, step: Step | None = None) -> SessionView:
        """A read-only view for the rules tier (with `step`: its tab's provenance too)."""
        tab = self.tabs.view(step) if step is not None else None
        return SessionView(self.history, self.user_messages, self.typed_passwords, tab, self.memory)

    def next_index(self) -> int:
        """Index of the step about to be judged."""
        return self.index + 1

    def record(self, step: Step, verdict: Verdict, *, ran: bool) -> HistoryEntry | None:
        """Remember `step`: as the previous step always, in the history only if it ran (the
        history entry is returned, for the rules' running state)."""
        self.index = max(self.index, step.index)
        target = step.observation.target
        password = target is not None and target.input_type == "password"
        # the next step carries this one; a password typed here must not travel with it
        masked = password and bool(step.action.value)
        self.previous = PreviousStep(
            action=replace(step.action, value=PASSWORD_MASK) if masked else step.action,
            reasoning=step.reasoning,
            url=step.observation.url,
            decision=verdict.decision.value,
            target=step.observation.target.label[:200] if step.observation.target is not None else None,
            title=step.observation.title,
        )
        self.tabs.record(step, verdict.prediction, ran=ran)
        if not ran:
            return None
        action = step.action
        if action.kind == "send_msg_to_user" and action.value:
            self.user_messages.append(action.value)
        label = target.label if target is not None else ""
        entry = HistoryEntry(
            kind=action.kind,
            label=label[:200],
            selector=action.selector,
            url=step.observation.url,
            value=None if target is not None and target.input_type == "password" else action.value,
            target=target,
        )
        self.history.append(entry)
        if target is not None and target.input_type == "password" and action.value:
            site = registrable_domain(parse_url(step.observation.url).host)
            self.typed_passwords[action.value] = site
        return entry
