"""Who answered an approval is a person: a name for each person's own token (`people`), or the
user a reverse proxy forwards (`user_header`, believed only behind one); the shared full token
is "console". A guard attached over HTTP asks, a person answers through the console's API, and
the guard's own approval event, the console's view of the session and the command the guard
fetched all name that person."""

from __future__ import annotations

import asyncio
import http.client
import json
from typing import Any

import pytest

from pagewarden import Action, ElementFacts, Guard, Observation
from pagewarden.console import Console
from tests.console.conftest import consent

ALICE = "alice-token-0123456789abcdef"
BOB = "bob-token-0123456789abcdefgh"


def _post(console: Console, path: str, token: str, body: Any, headers: dict[str, str] | None = None) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", console.port, timeout=30)
    try:
        conn.request(
            "POST", path, body=json.dumps(body),
            headers={"Host": f"127.0.0.1:{console.port}", "Authorization": f"Bearer {token}",
                     "Content-Type": "application/json", **(headers or {})},
        )  # fmt: skip
        response = conn.getresponse()
        response.read()
        return response.status
    finally:
        conn.close()


async def _ask_and_answer(console: Console, token: str, headers: dict[str, str] | None = None) -> dict:
    """A guard in this process attached over HTTP asks; the approval is answered with `token`
    (and `headers`); returns the guard's own final approval event."""
    events: list[Any] = []
    link = f"http://127.0.0.1:{console.port}/?token={console.guard_url.split('token=')[1]}"
    policies = [consent("Publish release")]
    guard = Guard(policies, goal="Publish the release", console=link, agent_name="releaser")
    guard.subscribe(lambda event: events.append(event) if event.kind == "approval" else None)
    try:
        step = guard.make_step(
            Action(kind="click", selector="#publish"),
            Observation(url="http://app.test/supervised.html", title="Release",
                        target=ElementFacts(tag="button", role="button", name="Publish release")),
        )  # fmt: skip
        verdict = guard.check(step)
        assert verdict.decision.value == "ask"
        asked = guard.ask_approver(verdict, step)
        assert not isinstance(asked, bool), "a console approver answers later"
        answer = asyncio.ensure_future(asked)
        for _ in range(600):  # until the console shows the pending approval
            await asyncio.sleep(0.05)
            pending = console.hub.approvals()
            if pending:
                break
        else:
            raise AssertionError("the approval never reached the console")
        session, approval = pending[0]["session"], pending[0]["approval"]["id"]
        path = f"/api/sessions/{session}/approvals/{approval}"
        assert await asyncio.to_thread(_post, console, path, token, {"approved": True}, headers) == 202
        assert await asyncio.wait_for(answer, 60) is True
        shown = console.hub.detail(session)
        assert shown is not None
        final = [e.data for e in events if e.data.get("status") == "approved"]
        assert len(final) == 1, [e.data for e in events]
        assert [a["by"] for a in shown["approvals"] if a["id"] == approval] == [final[0]["by"]]
        return final[0]
    finally:
        guard.close()


async def test_each_person_s_token_names_who_approved() -> None:
    with Console(people={"alice": ALICE, "bob": BOB}, approval_timeout=60) as console:  # its own thread
        assert (await _ask_and_answer(console, ALICE))["by"] == "alice"
        assert (await _ask_and_answer(console, BOB))["by"] == "bob"
        # the shared full token still works, and says only "console"
        shared = console.url.split("token=")[1]
        assert (await _ask_and_answer(console, shared))["by"] == "console"
        # a header naming someone is not believed without a proxy in front
        assert (await _ask_and_answer(console, shared, {"X-Forwarded-User": "mallory"}))["by"] == "console"


async def test_the_user_a_reverse_proxy_forwards_is_who_approved() -> None:
    with Console(
        behind_proxy=True, public_url="https://127.0.0.1", user_header="X-Forwarded-User", approval_timeout=60
    ) as console:
        shared = console.url.split("token=")[1]
        answered = await _ask_and_answer(console, shared, {"X-Forwarded-User": "carol@example.com"})
        assert answered["by"] == "carol@example.com"


def test_bad_people_and_headers_are_refused() -> None:
    with pytest.raises(ValueError, match="only believed behind a reverse proxy"):
        Console(user_header="X-Forwarded-User")
    with pytest.raises(ValueError, match="at least 16"):
        Console(people={"alice": "short"})
    with pytest.raises(ValueError, match="must differ"):
        Console(people={"alice": ALICE, "bob": ALICE})
    with pytest.raises(ValueError, match="printable"):
        Console(people={"al\nice": ALICE})
