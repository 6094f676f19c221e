"""Guard events: what a guarded session emits while it runs, for whoever listens.

One small interface between the guard and everything that watches it: the trace, the
supervision console, the network layer's refusals, the violation-reference filer, a
recorder, an OpenTelemetry exporter. A sink is any callable taking a `GuardEvent`; it is
called synchronously on the thread that emitted the event, must not block, and must hand
work to its own thread or loop (``loop.call_soon_threadsafe``) when it needs one. A sink
that raises is logged and skipped; it never breaks the agent's step.

Event kinds (``GuardEvent.kind``) and their ``data``:

* ``step``: a judged step, exactly the trace line (``{"v", "ts", "session", "index",
  "step", "verdict", "screenshot"?}``), already redacted.
* ``session``, ``approval``, ``order``: emitted by a supervised guard's console link
  (`pagewarden.console`); their ``data`` is in docs/reference/events.md.
* others are added by the components that emit them (``network``…); each documents its
  ``data``. Data is JSON-safe and redacted before it
  leaves the guard.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["EventBus", "EventSink", "GuardEvent"]


@dataclass(frozen=True, slots=True)
class GuardEvent:
    """One event of one guarded session."""

    kind: str
    session: str
    data: dict[str, Any]
    ts: float = field(default_factory=time.time)

    def to_dict(self) -> dict[str, Any]:
        """JSON form: ``{"kind", "session", "ts", "data"}``."""
        return {"kind": self.kind, "session": self.session, "ts": self.ts, "data": self.data}


EventSink = Callable[[GuardEvent], None]


class EventBus:
    """Fan-out of guard events to subscribed sinks (thread-safe; sinks never raise out)."""

    def __init__(self, on_error: Callable[[EventSink, BaseException], None] | None = None) -> None:
        self._sinks: list[tuple[EventSink, frozenset[str] | None]] = []
        self._lock = threading.Lock()
        self._on_error = on_error

    def subscribe(self, sink: EventSink, kinds: Iterable[str] | None = None) -> Callable[[], None]:
        """Add `sink` (for the events of `kinds` only, when given); returns a function that
        removes it again."""
        entry = (sink, frozenset(kinds) if kinds is not None else None)
        with self._lock:
            self._sinks.append(entry)

        def unsubscribe() -> None:
            with self._lock:
                if entry in self._sinks:
                    self._sinks.remove(entry)

        return unsubscribe

    def __contains__(self, sink: object) -> bool:
        """Whether `sink` is subscribed (for any kinds)."""
        with self._lock:
            return any(subscribed is sink for subscribed, _ in self._sinks)

    @property
    def active(self) -> bool:
        """Whether any sink listens (emitters may skip building an event when none does)."""
        return bool(self._sinks)

    def wants(self, kind: str) -> bool:
        """Whether a sink listens for events of `kind` (a ``step`` event costs a redacted copy of
        the step: built only when someone takes it)."""
        return any(kinds is None or kind in kinds for _, kinds in list(self._sinks))

    def emit(self, event: GuardEvent) -> None:
        """Deliver `event` to every sink that takes its kind, in subscription order."""
        with self._lock:
            sinks = [sink for sink, kinds in self._sinks if kinds is None or event.kind in kinds]
        for sink in sinks:
            try:
                sink(event)
            except Exception as exc:  # noqa: BLE001 - a broken listener must not break the step
                if self._on_error is not None:
                    self._on_error(sink, exc)
