"""Which sessions a watcher sees: filters by agent, host and status.

A filter is read from a request's query (``?agent=a&agent=b&host=h&status=running``): values
of one name are alternatives, different names must all hold, and no value means any. The
same filter decides the session list, the JSON API and which approvals reach a watcher's
stream (an approval goes to every watcher whose filter shows its session).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pagewarden.console._protocol import STATUSES, ProtocolError

__all__ = ["FILTER_STATUSES", "SessionFilter"]

#: Statuses a filter may name: a session's status, or ``waiting`` (an approval is pending).
FILTER_STATUSES = (*STATUSES, "waiting")
_MAX_VALUES = 50
_MAX_LEN = 120


def _values(raw: list[str], name: str) -> frozenset[str]:
    values = [v for v in raw if v != ""]
    if len(values) > _MAX_VALUES:
        raise ProtocolError(f"at most {_MAX_VALUES} values of {name}")
    if any(len(v) > _MAX_LEN for v in values):
        raise ProtocolError(f"a {name} is at most {_MAX_LEN} characters")
    return frozenset(values)


@dataclass(frozen=True)
class SessionFilter:
    """Agents, hosts and statuses a watcher wants to see (empty: all)."""

    agents: frozenset[str] = frozenset()
    hosts: frozenset[str] = frozenset()
    statuses: frozenset[str] = frozenset()

    @classmethod
    def from_query(cls, values: Callable[[str], list[str]]) -> SessionFilter:
        """Read ``agent``, ``host`` and ``status`` (each repeatable) with `values(name)`;
        a `ProtocolError` for an unknown status or an oversized value."""
        statuses = _values(values("status"), "status")
        unknown = statuses - set(FILTER_STATUSES)
        if unknown:
            raise ProtocolError(f"status must be one of {', '.join(FILTER_STATUSES)}")
        return cls(_values(values("agent"), "agent"), _values(values("host"), "host"), statuses)

    @property
    def everything(self) -> bool:
        """Whether the filter lets every session through."""
        return not (self.agents or self.hosts or self.statuses)

    def matches(self, summary: Mapping[str, Any]) -> bool:
        """Whether a session (its summary row) passes."""
        if self.agents and summary.get("agent") not in self.agents:
            return False
        if self.hosts and summary.get("host") not in self.hosts:
            return False
        if self.statuses:
            waiting = "waiting" in self.statuses and bool(summary.get("pending"))
            if not waiting and summary.get("status") not in self.statuses:
                return False
        return True

    def to_dict(self) -> dict[str, list[str]]:
        """The filter as JSON (sorted lists)."""
        return {
            "agent": sorted(self.agents),
            "host": sorted(self.hosts),
            "status": sorted(self.statuses),
        }
