"""Under Playwright's sync API the same spans come out (the step's report runs in the agent's
thread, so a span the agent holds open is the steps' parent)."""

from __future__ import annotations

from pagewarden import Guard
from pagewarden.sync_api import launch
from pagewarden.telemetry import METRIC_DECISIONS, SPAN_STEP
from pagewarden.testing import LocalSite

from ._otel import Memory


def test_sync_steps_are_spans_under_the_agents_span(site: LocalSite) -> None:
    memory = Memory.new()
    guard = Guard(goal="Search the project settings.", telemetry=memory.pair)
    tracer = memory.tracer_provider.get_tracer("agent")
    with (
        launch(guard, host_map={"*.test": site.port}) as page,
        tracer.start_as_current_span("agent.run") as run,
    ):
        page.goto("http://app.test/semantic.html")
        page.get_by_label("Search").fill("runner")
    guard.close()
    steps = memory.finished(SPAN_STEP)
    assert [dict(s.attributes or {})["pagewarden.action.kind"] for s in steps] == ["goto", "fill"]
    assert all(s.parent is not None and s.parent.span_id == run.get_span_context().span_id for s in steps)
    assert memory.counts(METRIC_DECISIONS, "pagewarden.decision") == {"allow": 2}
