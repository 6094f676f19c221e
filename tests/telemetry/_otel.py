"""Helpers for the telemetry tests: in-memory providers and what they hold, flattened."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter


@dataclass
class Memory:
    """A tracer provider and a meter provider that keep everything in memory."""

    spans: InMemorySpanExporter
    reader: InMemoryMetricReader
    tracer_provider: TracerProvider
    meter_provider: MeterProvider

    @classmethod
    def new(cls) -> Memory:
        spans = InMemorySpanExporter()
        tracer_provider = TracerProvider()
        tracer_provider.add_span_processor(SimpleSpanProcessor(spans))
        reader = InMemoryMetricReader()
        return cls(spans, reader, tracer_provider, MeterProvider(metric_readers=[reader]))

    @property
    def pair(self) -> tuple[TracerProvider, MeterProvider]:
        return self.tracer_provider, self.meter_provider

    def finished(self, name: str | None = None) -> list[ReadableSpan]:
        return [s for s in self.spans.get_finished_spans() if name is None or s.name == name]

    def points(self, metric: str) -> list[tuple[dict[str, Any], Any]]:
        """``(attributes, point)`` of every data point of `metric`."""
        data = self.reader.get_metrics_data()
        out: list[tuple[dict[str, Any], Any]] = []
        for rm in data.resource_metrics if data is not None else ():
            for sm in rm.scope_metrics:
                for m in sm.metrics:
                    if m.name == metric:
                        out += [(dict(p.attributes or {}), p) for p in m.data.data_points]
        return out

    def counts(self, metric: str, key: str) -> dict[Any, int]:
        """A counter's totals by the value of one attribute."""
        totals: dict[Any, int] = {}
        for attrs, point in self.points(metric):
            totals[attrs.get(key)] = totals.get(attrs.get(key), 0) + int(point.value)
        return totals


def attribute_strings(memory: Memory) -> Iterator[str]:
    """Every attribute value (of spans, span events, resources and metric points) as text."""
    for span in memory.finished():
        yield span.name
        for value in (span.attributes or {}).values():
            yield str(value)
        for event in span.events:
            yield event.name
            yield from (str(v) for v in (event.attributes or {}).values())
    data = memory.reader.get_metrics_data()
    for rm in data.resource_metrics if data is not None else ():
        for sm in rm.scope_metrics:
            for m in sm.metrics:
                for p in m.data.data_points:
                    yield from (str(v) for v in (p.attributes or {}).values())
