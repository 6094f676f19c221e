"""The guard's side without a browser: approvals fail closed, secrets stay out of events."""

from __future__ import annotations

import asyncio
import inspect

from pagewarden import Action, Decision, ElementFacts, Guard, GuardEvent, Observation, Step, Verdict
from pagewarden.console import Console


def _ask(guard: Guard, **target: str) -> tuple[Verdict, Step]:
    step = guard.make_step(
        Action(kind="fill", selector="#pw", value="hunter2-secret"),
        Observation(url="http://app.test/login", target=ElementFacts(tag="input", **target)),
    )
    return Verdict(decision=Decision.ASK, explanation="needs a person"), step


async def test_an_approval_is_denied_when_the_console_goes_away() -> None:
    console = Console().start()
    guard = Guard(console=console.url)  # attached over HTTP, as from another process
    try:
        answer = guard.ask_approver(*_ask(guard))
        assert inspect.isawaitable(answer)
        waiting = asyncio.ensure_future(answer)
        console.close()  # the console dies while a person was being asked
        assert await asyncio.wait_for(waiting, 60) is False
        assert guard.ask_approver(*_ask(guard)) is False  # and later ones are refused at once
    finally:
        guard.close()
        console.close()


async def test_approval_events_mask_password_values(console: Console) -> None:
    guard = Guard(console=console)
    events: list[GuardEvent] = []
    guard.subscribe(events.append)
    try:
        answer = guard.ask_approver(*_ask(guard, input_type="password"))
        approval = next(e for e in events if e.kind == "approval")
        assert approval.data["status"] == "pending"
        assert "hunter2-secret" not in str(approval.data)
        assert approval.data["step"]["action"]["value"] == "[REDACTED:password]"
        guard.console.receive({"type": "stop"})  # stopping denies what waits
        assert await asyncio.wait_for(answer, 30) is False
        assert [e.data["status"] for e in events if e.kind == "approval"] == ["pending", "denied"]
    finally:
        guard.close()
