"""A guard of a fleet, in a process of its own and without a browser, supervised by a console
over HTTPS. Run by test_fleet.py: ``python fleet_agent.py CONSOLE_URL AGENT_NAME HOST``.

It judges one click on "Publish release" (a consent policy makes it an ASK), asks the console,
prints the answer, and waits for a line on stdin before it closes the session."""

from __future__ import annotations

import asyncio
import inspect
import sys

from pagewarden import Action, ElementFacts, Guard, Observation
from pagewarden.policies import Policy


async def main() -> None:
    url, agent, host = sys.argv[1:4]
    policy = Policy(
        id="P1",
        category="consent",
        risk_level="high",
        description="releases are published by a person",
        rules=[{"consent": {"match": ["Publish release"], "actions": ["click"]}}],
    )
    guard = Guard(
        [policy], goal=f"Publish the release ({agent})", console=url, agent_name=agent, agent_host=host
    )
    step = guard.make_step(
        Action(kind="click", selector="#publish"),
        Observation(
            url="http://app.test/supervised.html",
            title="Release 2.4",
            target=ElementFacts(tag="button", role="button", name="Publish release", text="Publish release"),
        ),
    )
    verdict = guard.check(step)
    print("ASKED", guard.session_id, verdict.decision.value, flush=True)
    answer = guard.ask_approver(verdict, step)
    if inspect.isawaitable(answer):
        answer = await answer
    print("ANSWER", answer, flush=True)
    await asyncio.to_thread(sys.stdin.readline)
    guard.close()
    print("DONE", flush=True)


if __name__ == "__main__":
    asyncio.run(main())
