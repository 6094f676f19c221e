"""Session memory: the previous step (second-order window) and what earlier steps left."""

from __future__ import annotations

from collections import deque
from dataclasses import replace

from pagewarden._url import parse_url, registrable_domain
from pagewarden.rules import HistoryEntry, InternalAccess, RuleMemory, SessionView, TabMemory, blocks_reached
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
        #: the private address blocks this session has opened (read by the gate and the proxy too)
        self.internal = InternalAccess()

    def view(self, step: Step | None = None) -> SessionView:
        """A read-only view for the rules tier (with `step`: its tab's provenance too)."""
        tab = self.tabs.view(step) if step is not None else None
        return SessionView(
            self.history, self.user_messages, self.typed_passwords, tab, self.memory, self.internal.blocks
        )

    def open_blocks(self, step: Step, verdict: Verdict) -> None:
        """An allowed step is about to run (or ran): the private address blocks it goes to, and
        the one its page is in, are the session's from now on (see `pagewarden.rules._addresses`)."""
        if not verdict.allowed:
            return
        urls = [step.observation.url or ""]
        prediction = verdict.prediction
        if prediction is not None and prediction.navigation is not None:
            urls.append(prediction.navigation.url)
        if step.action.kind in ("goto", "new_page", "request") and step.action.value:
            urls.append(step.action.value)
        for block in blocks_reached(urls):
            self.internal.open(block)

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
        self.open_blocks(step, verdict)
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
