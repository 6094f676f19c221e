"""The agent hears of a refusal its action set off: the action itself fails with `ActionBlocked`
when the refusal came while it ran (issue 24, "refuse fast"), else its next guarded call does.
Which of the two depends on timing (a script's navigation may start a moment after a click
returned), so tests of the refusals accept both and check what the agent was told."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from pagewarden import ActionBlocked


async def heard(action: Callable[[], Awaitable[Any]], then: Callable[[], Awaitable[Any]]) -> ActionBlocked:
    """The `ActionBlocked` of `action()`, or else of `then()` (the agent's next call)."""
    try:
        await action()
    except ActionBlocked as during:
        return during
    with pytest.raises(ActionBlocked) as caught:
        await then()
    return caught.value


def heard_sync(action: Callable[[], Any], then: Callable[[], Any]) -> ActionBlocked:
    """`heard` under the sync API."""
    try:
        action()
    except ActionBlocked as during:
        return during
    with pytest.raises(ActionBlocked) as caught:
        then()
    return caught.value


def refused_url(page: Any, part: str, count: int = 1, timeout: float = 20.0) -> bool:
    """Whether the network layer of `page`'s guard refused a URL containing `part` (at least
    `count` times), waiting up to `timeout` s: a refused navigation leaves the tab where it was,
    so the refusal itself is what a test awaits."""
    import time

    session = page.guard.network
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if sum(part in r.url for r in list(session.refusals)) >= count:
            return True
        time.sleep(0.05)
    return False


async def refused_url_async(page: Any, part: str, count: int = 1, timeout: float = 20.0) -> bool:
    """`refused_url` without blocking the event loop."""
    import asyncio

    return await asyncio.to_thread(refused_url, page, part, count, timeout)
