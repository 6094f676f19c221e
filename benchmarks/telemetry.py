"""What OpenTelemetry export adds to a guarded action: telemetry on versus off, side by side.

One Chromium, the 500-element settings page of `overhead.py` opened in two contexts: one wrapped
by ``Guard(goal=…, telemetry=False)``, one by the same guard exporting every decision
(``telemetry=(tracer_provider, meter_provider)``: a ``BatchSpanProcessor`` and a
``PeriodicExportingMetricReader`` (1 s) sending OTLP/HTTP to a receiver on 127.0.0.1 that
decodes each request, as a collector next to the agent would). For each action (click, fill,
press) the two sides are timed in the same iteration, alternating which goes first; the result
is the difference and the ratio of medians. Two more numbers isolate the cost:

* ``sink``: the time spent in the telemetry subscriber per step (building the span, its events
  and children, recording the metrics), measured around the subscriber on the agent's thread;
* ``check``: ``Guard.check`` on a recorded step without a browser, off versus on, per step (it
  includes building the redacted trace line that the event carries, which a guard with no
  subscriber skips).

    .venv/bin/python benchmarks/telemetry.py [--iterations 40] [--checks 3000] [--out FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import statistics
import sys
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from playwright.async_api import async_playwright
from rich.console import Console
from rich.table import Table

from pagewarden import Action, Guard, Observation, __version__
from pagewarden._browser import chromium_launch_options
from pagewarden.testing import LocalSite, Response

sys.path.insert(0, str(Path(__file__).parent))
from overhead import settings_page  # the same page as the overhead benchmark

HOST = "app.bench.test"
DEFAULT_OUT = Path(__file__).parent / "results" / "telemetry.json"


class Receiver:
    """An OTLP/HTTP receiver on 127.0.0.1 counting the spans and metric requests it decodes."""

    def __init__(self) -> None:
        self.spans = 0
        self.metric_requests = 0
        me = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.path == "/v1/traces":
                    request = ExportTraceServiceRequest.FromString(body)
                    me.spans += sum(len(ss.spans) for rs in request.resource_spans for ss in rs.scope_spans)
                else:
                    ExportMetricsServiceRequest.FromString(body)
                    me.metric_requests += 1
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"


def providers(receiver: Receiver) -> tuple[TracerProvider, MeterProvider]:
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(
        BatchSpanProcessor(OTLPSpanExporter(endpoint=f"{receiver.url}/v1/traces"))
    )
    reader = PeriodicExportingMetricReader(
        OTLPMetricExporter(endpoint=f"{receiver.url}/v1/metrics"), export_interval_millis=1000
    )
    return tracer_provider, MeterProvider(metric_readers=[reader])


def timed_sink(guard: Guard) -> list[float]:
    """Replace the guard's telemetry subscriber by the same one, timed (ms per step event)."""
    telemetry = guard.telemetry
    assert telemetry is not None
    telemetry._unsubscribe()
    times: list[float] = []

    def sink(event: Any) -> None:
        started = time.perf_counter()
        telemetry(event)
        if event.kind == "step":
            times.append((time.perf_counter() - started) * 1000)

    telemetry._unsubscribe = guard.subscribe(sink)
    return times


def summary(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {
        "median": round(statistics.median(ordered), 3),
        "p95": round(ordered[int(0.95 * (len(ordered) - 1))], 3),
        "mean": round(statistics.fmean(ordered), 3),
        "n": len(ordered),
    }


async def browser_rows(iterations: int, receiver: Receiver) -> tuple[dict[str, Any], list[float]]:
    site = LocalSite()
    html = settings_page(500)
    site.route(HOST, "/page", lambda _r: Response(html))
    rows: dict[str, Any] = {}
    with site:
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(**chromium_launch_options(host_map={"*.test": site.port}))
            guards = {
                "off": Guard(goal="Change the settings.", telemetry=False),
                "on": Guard(goal="Change the settings.", telemetry=providers(receiver)),
            }
            sink_times = timed_sink(guards["on"])
            pages = {}
            for side, guard in guards.items():
                context = await browser.new_context()
                pages[side] = guard.wrap(await context.new_page())
                await pages[side].goto(f"http://{HOST}/page")
            actions: dict[str, Callable[[Any, int], Any]] = {
                "click": lambda p, i: p.click(f"#button-{i % 200}"),
                "fill": lambda p, i: p.fill(f"#field-{i % 150}", f"value {i}"),
                "press": lambda p, i: p.press(f"#field-{i % 150}", "End"),
            }
            for name, op in actions.items():
                times: dict[str, list[float]] = {"off": [], "on": []}
                for i in range(iterations + 3):
                    order = ("off", "on") if i % 2 == 0 else ("on", "off")
                    for side in order:
                        started = time.perf_counter()
                        await op(pages[side], i)
                        if i >= 3:  # warm-up
                            times[side].append((time.perf_counter() - started) * 1000)
                off, on = statistics.median(times["off"]), statistics.median(times["on"])
                rows[name] = {
                    "off_ms": summary(times["off"]),
                    "on_ms": summary(times["on"]),
                    "added_ms": round(on - off, 3),
                    "ratio": round(on / off, 3),
                }
            await browser.close()
            for guard in guards.values():
                guard.close()
    return rows, sink_times


def check_rows(checks: int, receiver: Receiver) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for side, telemetry in (("off", False), ("on", providers(receiver))):
        guard = Guard(goal="Read the docs.", telemetry=telemetry)
        action = Action(kind="click", method="Locator.click", selector="text=Docs")
        observation = Observation(url="http://docs.test/")
        times = []
        for _ in range(checks):
            step = guard.make_step(action, observation)
            started = time.perf_counter()
            guard.check(step)
            times.append((time.perf_counter() - started) * 1000)
        out[side] = summary(times[100:])
        guard.close()
    out["added_ms"] = round(out["on"]["median"] - out["off"]["median"], 3)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=40)
    parser.add_argument("--checks", type=int, default=3000)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    receiver = Receiver()
    rows, sink_times = asyncio.run(browser_rows(args.iterations, receiver))
    checks = check_rows(args.checks, receiver)
    time.sleep(2.5)  # the last batch and metric export
    data = {
        "benchmark": "telemetry",
        "pagewarden": __version__,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "command": "benchmarks/telemetry.py " + " ".join(argv if argv is not None else sys.argv[1:]),
        "iterations": args.iterations,
        "actions": rows,
        "sink_ms_per_step": summary(sink_times),
        "check_ms_per_step": checks,
        "received": {"spans": receiver.spans, "metric_requests": receiver.metric_requests},
    }
    table = Table(title="Telemetry on vs off (500-element page, medians)")
    for column in ("action", "off ms", "on ms", "added ms", "on/off"):
        table.add_column(column)
    for name, row in rows.items():
        table.add_row(name, str(row["off_ms"]["median"]), str(row["on_ms"]["median"]),
                      str(row["added_ms"]), str(row["ratio"]))  # fmt: skip
    console = Console()
    console.print(table)
    console.print(f"subscriber per step: {data['sink_ms_per_step']}")
    console.print(f"Guard.check per step: {checks}")
    console.print(f"received: {data['received']}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
