"""The guard's adapter slots. The guard is the decision core: it imports no Playwright
wrapper and no console. The composition root (`pagewarden/__init__.py`) plugs in the
adapters that `Guard.wrap` and `Guard(console=...)` hand over to: the page wrapper
(`pagewarden.interceptors.wrap_page`) and the console attachment
(`pagewarden.console.attach`, which subscribes to the guard's events and becomes its
approver), and the telemetry attachment (`pagewarden.telemetry.attach`, which subscribes to
the guard's events and exports them to OpenTelemetry)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["ADAPTERS", "Adapters", "plug_adapters"]

#: ``(guard, page) -> guarded page``
PageWrapper = Callable[[Any, Any], Any]
#: ``(guard, console or console URL) -> console link``
ConsoleAttacher = Callable[[Any, Any], Any]
#: ``(guard, telemetry argument) -> telemetry exporter or None (off)``
TelemetryAttacher = Callable[[Any, Any], Any]


@dataclass
class Adapters:
    """What the composition root plugged in (None: not available in this process)."""

    wrap_page: PageWrapper | None = None
    attach_console: ConsoleAttacher | None = None
    attach_telemetry: TelemetryAttacher | None = None

    def wrapper(self) -> PageWrapper:
        if self.wrap_page is None:
            raise RuntimeError("no page wrapper is plugged in: import pagewarden (its __init__ does)")
        return self.wrap_page

    def attacher(self) -> ConsoleAttacher:
        if self.attach_console is None:
            raise RuntimeError(
                "no console adapter is plugged in: import pagewarden (its __init__ plugs it in)"
            )
        return self.attach_console


ADAPTERS = Adapters()


def plug_adapters(
    *,
    wrap_page: PageWrapper | None = None,
    attach_console: ConsoleAttacher | None = None,
    attach_telemetry: TelemetryAttacher | None = None,
) -> None:
    """Plug adapters into every guard of this process (the composition root calls this once)."""
    if wrap_page is not None:
        ADAPTERS.wrap_page = wrap_page
    if attach_console is not None:
        ADAPTERS.attach_console = attach_console
    if attach_telemetry is not None:
        ADAPTERS.attach_telemetry = attach_telemetry
