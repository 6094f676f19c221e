"""Live supervision: a local web console that watches guarded sessions and is their approver.

    async with Console() as console:                 # on the agent's event loop
        print(console.url)                           # http://127.0.0.1:PORT/?token=…
        guard = Guard(goal="…", console=console)     # or Guard(console=URL) from another process

See docs/guides/console.md (the page), docs/explanations/architecture.md (security) and
docs/reference/events.md (the event protocol).
"""

from __future__ import annotations

from typing import Any

from pagewarden.console._access import check_binding, is_loopback, public_origin
from pagewarden.console._channel import ConsoleUnavailable, HttpChannel, LocalChannel
from pagewarden.console._console import Console
from pagewarden.console._link import ConsoleLink
from pagewarden.console._protocol import API_VERSION, ProtocolError

__all__ = [
    "API_VERSION",
    "Console",
    "ConsoleLink",
    "ConsoleUnavailable",
    "ProtocolError",
    "attach",
    "check_binding",
    "is_loopback",
    "public_origin",
]


def attach(guard: Any, console: Console | str) -> ConsoleLink:
    """Put `guard` under the supervision of `console` (a `Console`, or a console's URL with
    its token): the console becomes the guard's approver and its pipeline's gate."""
    if guard.console is not None:
        raise ValueError("this guard is already attached to a console")
    if guard.approver is not None:
        raise ValueError("a supervised guard's approver is the console: pass approver= or console=, not both")
    if isinstance(console, Console):
        if not console.running:
            raise RuntimeError("start the console first (async with Console() / console.start())")
        link = ConsoleLink(guard, LocalChannel(console.hub), url=console.url)
    elif isinstance(console, str):
        link = ConsoleLink(guard, HttpChannel(console))
    else:
        raise TypeError(f"console must be a Console or a console URL, not {type(console).__name__}")
    guard.console = link
    guard.approver = link.approve
    return link
