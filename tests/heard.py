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
