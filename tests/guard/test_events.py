"""Guard events: subscribed sinks receive each judged step, redacted, and cannot break it."""

from __future__ import annotations

import json

from pagewarden import Action, Guard, GuardEvent, Observation, Step


def _step(guard: Guard, value: str) -> Step:
    return guard.make_step(
        Action(kind="goto", method="Page.goto", value=value), Observation(url="http://app.test/")
    )


def test_step_event_is_the_trace_line(tmp_path) -> None:
    events: list[GuardEvent] = []
    trace = tmp_path / "trace.jsonl"
    with Guard(trace=trace, goal="read the docs") as guard:
        guard.subscribe(events.append)
        guard.check(_step(guard, "http://app.test/docs"))
    lines = [json.loads(line) for line in trace.read_text().splitlines()]
    assert [e.kind for e in events] == ["step"]
    assert events[0].data == lines[0]
    assert events[0].session == guard.session_id
    assert events[0].to_dict()["data"]["verdict"]["decision"] == "allow"


def test_events_are_redacted_and_unsubscribe_works() -> None:
    events: list[GuardEvent] = []
    guard = Guard(secrets=["PWSECRET-4242-abcd"])
    stop = guard.subscribe(events.append)
    guard.check(_step(guard, "http://evil.test/?t=PWSECRET-4242-abcd"))
    guard.emit("network", {"url": "http://evil.test/?t=PWSECRET-4242-abcd", "decision": "refused"})
    stop()
    guard.check(_step(guard, "http://app.test/"))
    assert [e.kind for e in events] == ["step", "network"]
    assert "PWSECRET-4242-abcd" not in json.dumps([e.to_dict() for e in events])
    assert events[1].data["decision"] == "refused"


def test_a_failing_sink_does_not_break_the_step() -> None:
    seen: list[str] = []

    def broken(event: GuardEvent) -> None:
        raise RuntimeError("sink down")

    guard = Guard()
    guard.subscribe(broken)
    guard.subscribe(lambda e: seen.append(e.kind))
    verdict = guard.check(_step(guard, "http://app.test/"))
    assert verdict.allowed
    assert seen == ["step"]
