"""Over the wire: a guard configured only by ``OTEL_*`` environment variables sends its spans
and metrics over OTLP/HTTP (protobuf) to a receiver this test starts on 127.0.0.1, which decodes
each export request with ``opentelemetry-proto``. Spans arrive by themselves (batched); metrics
on a flush. Real Chromium: two allowed steps and one blocked."""

from __future__ import annotations

import asyncio
import gzip
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from playwright.async_api import Page

from pagewarden import ActionBlocked, Guard, PolicySet
from pagewarden.telemetry import METRIC_DECISIONS, SPAN_STEP
from pagewarden.telemetry._config import shutdown_built

POLICIES = PolicySet.from_dict(
    {
        "version": 1,
        "policies": [
            {"id": "ORG-NET", "category": "boundary", "risk_level": "high",
             "description": "Only the app.", "rules": [{"domain_allow": ["app.test"]}]},
        ],
    }
)  # fmt: skip


class Receiver:
    """An OTLP/HTTP receiver: keeps every decoded export request."""

    def __init__(self) -> None:
        self.traces: list[ExportTraceServiceRequest] = []
        self.metrics: list[ExportMetricsServiceRequest] = []
        self.paths: list[tuple[str, str]] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                receiver.paths.append((self.path, self.headers.get("Content-Type") or ""))
                if self.path == "/v1/traces":
                    receiver.traces.append(ExportTraceServiceRequest.FromString(body))
                    answer = ExportTraceServiceResponse().SerializeToString()
                elif self.path == "/v1/metrics":
                    receiver.metrics.append(ExportMetricsServiceRequest.FromString(body))
                    answer = ExportMetricsServiceResponse().SerializeToString()
                else:
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def spans(self) -> list[tuple[dict[str, Any], Any]]:
        """``(resource attributes, span)`` of every span received."""
        out = []
        for request in list(self.traces):
            for rs in request.resource_spans:
                resource = {a.key: _value(a.value) for a in rs.resource.attributes}
                out += [(resource, span) for ss in rs.scope_spans for span in ss.spans]
        return out

    def metric(self, name: str) -> list[Any]:
        return [
            m for r in self.metrics for rm in r.resource_metrics for sm in rm.scope_metrics
            for m in sm.metrics if m.name == name
        ]  # fmt: skip


def _value(value: Any) -> Any:
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return tuple(_value(v) for v in value.array_value.values)
    return getattr(value, kind) if kind else None


@pytest.fixture
def receiver(monkeypatch: pytest.MonkeyPatch) -> Iterator[Receiver]:
    found = Receiver()
    found.thread.start()
    for name, value in {
        "OTEL_EXPORTER_OTLP_ENDPOINT": found.url,
        "OTEL_SERVICE_NAME": "pagewarden-otlp-test",
        "OTEL_RESOURCE_ATTRIBUTES": "deployment.environment=ci",
        "OTEL_BSP_SCHEDULE_DELAY": "200",  # spans leave within 0.2 s
        "OTEL_METRIC_EXPORT_INTERVAL": "600000",  # metrics on the flush only
    }.items():
        monkeypatch.setenv(name, value)
    yield found
    shutdown_built()
    found.server.shutdown()
    found.server.server_close()


async def _until(predicate: Any, seconds: float = 15.0) -> bool:
    for _ in range(int(seconds / 0.1)):
        if predicate():
            return True
        await asyncio.sleep(0.1)
    return bool(predicate())


async def test_decisions_reach_an_otlp_http_receiver(page: Page, receiver: Receiver) -> None:
    guard = Guard(POLICIES, goal="Search the project settings.")  # configured by OTEL_* only
    assert guard.telemetry is not None
    guarded = guard.wrap(page)
    await guarded.goto("http://app.test/semantic.html")
    await guarded.get_by_label("Search").fill("runner")
    with pytest.raises(ActionBlocked):
        await guarded.goto("http://evil.test/collect")

    def three_steps() -> bool:
        return len([s for _, s in receiver.spans() if s.name == SPAN_STEP]) >= 3

    assert await _until(three_steps), f"spans did not arrive: {receiver.paths}"
    spans = [(resource, s) for resource, s in receiver.spans() if s.name == SPAN_STEP]
    assert len(spans) == 3
    resource = spans[0][0]
    assert resource["service.name"] == "pagewarden-otlp-test"
    assert resource["deployment.environment"] == "ci"
    attrs = [{a.key: _value(a.value) for a in s.attributes} for _, s in spans]
    attrs.sort(key=lambda a: a["pagewarden.step.index"])
    assert [a["pagewarden.decision"] for a in attrs] == ["allow", "allow", "block"]
    assert attrs[2]["pagewarden.policies"] == ("ORG-NET",)
    assert attrs[2]["pagewarden.destination.host"] == "evil.test"
    assert all(s.end_time_unix_nano >= s.start_time_unix_nano > 0 for _, s in spans)

    assert receiver.metrics == []  # not yet: the interval is long
    assert guard.telemetry.flush()
    (decisions,) = receiver.metric(METRIC_DECISIONS)[-1:]
    totals: dict[str, int] = {}
    for point in decisions.sum.data_points:
        decision = {a.key: _value(a.value) for a in point.attributes}["pagewarden.decision"]
        totals[decision] = totals.get(decision, 0) + point.as_int
    assert totals == {"allow": 2, "block": 1}
    assert all(ctype == "application/x-protobuf" for _, ctype in receiver.paths)
    guard.close()
