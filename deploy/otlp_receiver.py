"""A small OpenTelemetry receiver for a fleet on one host without a collector (docs/guides/fleet.md):
OTLP over HTTP, what pagewarden's guards send (``OTEL_EXPORTER_OTLP_ENDPOINT=http://HOST:PORT``).

    python deploy/otlp_receiver.py [--host 127.0.0.1] [--port 4318] [--out otlp.jsonl]

It takes ``POST /v1/traces``, ``/v1/metrics`` and ``/v1/logs`` (protobuf or JSON, gzip or not),
appends each export request to OUT as one JSON line (``{"signal": "traces", "received": …,
"request": {…OTLP JSON…}}``) and prints one line per request, like the collector's ``debug``
exporter at ``basic`` verbosity. It is for trying a fleet out; a fleet in production sends to
an OpenTelemetry Collector (``deploy/otel-collector.yaml``) or a vendor's endpoint.

It needs ``opentelemetry-proto`` (installed with pagewarden's ``otel`` extra).
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

try:
    from google.protobuf import json_format
    from opentelemetry.proto.collector.logs.v1 import logs_service_pb2
    from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2
    from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
except ImportError:  # pragma: no cover - said at start
    json_format = None  # type: ignore[assignment]

#: path -> (signal, request type, response type)
SIGNALS: dict[str, tuple[str, Any, Any]] = (
    {
        "/v1/traces": ("traces", trace_service_pb2.ExportTraceServiceRequest,
                       trace_service_pb2.ExportTraceServiceResponse),
        "/v1/metrics": ("metrics", metrics_service_pb2.ExportMetricsServiceRequest,
                        metrics_service_pb2.ExportMetricsServiceResponse),
        "/v1/logs": ("logs", logs_service_pb2.ExportLogsServiceRequest,
                     logs_service_pb2.ExportLogsServiceResponse),
    }
    if json_format is not None
    else {}
)  # fmt: skip
MAX_BODY = 32 * 1024 * 1024
#: signal -> the OTLP JSON keys of its resources, scopes and items, and what an item is called
_SHAPE = {
    "traces": ("resourceSpans", "scopeSpans", "spans", "span(s)"),
    "metrics": ("resourceMetrics", "scopeMetrics", "metrics", "metric(s)"),
    "logs": ("resourceLogs", "scopeLogs", "logRecords", "log record(s)"),
}


def summary(signal: str, request: dict[str, Any]) -> str:
    """One line about an export request: what it holds, from which services."""
    resources_key, scopes_key, items_key, what = _SHAPE[signal]
    services, names, count = set(), [], 0
    for resource in request.get(resources_key, []):
        for attribute in resource.get("resource", {}).get("attributes", []):
            if attribute.get("key") == "service.name":
                services.add(str(attribute.get("value", {}).get("stringValue", "")))
        for scope in resource.get(scopes_key, []):
            items = scope.get(items_key, [])
            count += len(items)
            names += [str(item.get("name", "")) for item in items if item.get("name")]
    shown = ", ".join(sorted(set(names))[:8])
    line = f"{signal}: {count} {what} from {', '.join(sorted(services)) or '?'}"
    return line + (f": {shown}" if shown else "")


class Receiver:
    """The receiver: an HTTP server on a thread, writing what arrives to `out`."""

    def __init__(self, host: str, port: int, out: Path, *, echo: bool = True) -> None:
        self.out = out
        self.echo = echo
        self.counts = {"traces": 0, "metrics": 0, "logs": 0}
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def _answer(self, status: int, body: bytes, kind: str) -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self) -> None:
                route = SIGNALS.get(self.path.split("?", 1)[0])
                if route is None:
                    self._answer(404, b"not an OTLP path", "text/plain")
                    return
                length = int(self.headers.get("Content-Length") or 0)
                if length > MAX_BODY:
                    self.close_connection = True
                    self._answer(413, b"too large", "text/plain")
                    return
                body = self.rfile.read(length)
                try:
                    if self.headers.get("Content-Encoding", "").lower() == "gzip":
                        body = gzip.decompress(body)
                    signal, request_type, response_type = route
                    is_json = "json" in (self.headers.get("Content-Type") or "").lower()
                    if is_json:
                        request = json_format.Parse(body.decode("utf-8"), request_type())
                    else:
                        request = request_type.FromString(body)
                except Exception as exc:  # noqa: BLE001 - a bad request is answered 400, never a crash
                    self._answer(400, f"cannot decode: {type(exc).__name__}".encode(), "text/plain")
                    return
                receiver.record(signal, json_format.MessageToDict(request))
                if is_json:
                    self._answer(200, b"{}", "application/json")
                else:
                    self._answer(200, response_type().SerializeToString(), "application/x-protobuf")

        self.server = ThreadingHTTPServer((host, port), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]

    def record(self, signal: str, request: dict[str, Any]) -> None:
        """Append one export request to the output file and say what it held."""
        line = json.dumps({"signal": signal, "received": time.time(), "request": request}, ensure_ascii=False)
        with self._lock:
            self.counts[signal] += 1
            with self.out.open("a", encoding="utf-8") as handle:
                handle.write(line + "\n")
        if self.echo:
            print(summary(signal, request), flush=True)

    def serve_forever(self) -> None:
        self.server.serve_forever(poll_interval=0.2)

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=4318, help="default 4318, OTLP/HTTP's (0: any free)")
    parser.add_argument("--out", type=Path, default=Path("otlp.jsonl"), help="JSON lines file (appended)")
    parser.add_argument("--quiet", action="store_true", help="no line per export request")
    args = parser.parse_args(argv)
    if json_format is None:
        print("otlp_receiver: needs opentelemetry-proto (pagewarden's otel extra)", file=sys.stderr)
        return 1
    args.out.parent.mkdir(parents=True, exist_ok=True)
    try:
        receiver = Receiver(args.host, args.port, args.out, echo=not args.quiet)
    except OSError as exc:
        where = f"{args.host}:{args.port}"
        print(f"otlp_receiver: cannot listen on {where}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    print(f"OTLP/HTTP receiver on http://{args.host}:{receiver.port} writing {args.out}", flush=True)
    try:
        receiver.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        receiver.server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
