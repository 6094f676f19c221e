"""Whether a guard exports telemetry, and to which OpenTelemetry providers.

Off unless configured. ``Guard(telemetry=...)``:

* ``None`` (default): the standard ``OTEL_*`` environment decides. Telemetry is on when an
  OTLP endpoint is named (``OTEL_EXPORTER_OTLP_ENDPOINT``, or the ``_TRACES_`` / ``_METRICS_``
  one) or an exporter is (``OTEL_TRACES_EXPORTER`` / ``OTEL_METRICS_EXPORTER`` other than
  ``none``), and ``OTEL_SDK_DISABLED`` is not ``true``.
* ``False``: off, whatever the environment says.
* ``True``: on, configured by the ``OTEL_*`` environment (OTLP over HTTP to
  ``http://localhost:4318`` when nothing is named).
* ``(tracer_provider, meter_provider)`` or `TelemetryConfig`: the application's own providers
  (either may be None: that signal is off).

Configured from the environment, a process shares one pair of providers among its guards: the
application's global ones when it has set SDK providers (``opentelemetry-instrument`` does),
else ones pagewarden builds once, batching spans (``BatchSpanProcessor``) and exporting metrics
periodically (``PeriodicExportingMetricReader``), with the resource from ``OTEL_SERVICE_NAME``
and ``OTEL_RESOURCE_ATTRIBUTES`` and the exporters' own ``OTEL_EXPORTER_OTLP_*`` settings
(endpoint, headers, timeout, compression).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pagewarden.trace import get_logger

__all__ = [
    "INSTALL_HINT",
    "TelemetryConfig",
    "enabled_by_env",
    "providers_from_env",
    "resolve",
    "shutdown_built",
]

INSTALL_HINT = (
    "OpenTelemetry export needs pagewarden's otel extra: "
    "pip install -c constraints.txt '/path/to/pagewarden[otel]' (docs: getting-started/install)"
)
_ENDPOINTS = (
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
)
_EXPORTERS = {"traces": "OTEL_TRACES_EXPORTER", "metrics": "OTEL_METRICS_EXPORTER"}
_log = get_logger(component="telemetry")


@dataclass(frozen=True, slots=True)
class TelemetryConfig:
    """The OpenTelemetry providers a guard reports to (``Guard(telemetry=TelemetryConfig(...))``).

    Args:
        tracer_provider: receives one ``pagewarden.step`` span per judged step (None: no spans).
        meter_provider: receives the decision counters and histograms (None: no metrics).
    """

    tracer_provider: Any = None
    meter_provider: Any = None


def _flag(value: str | None) -> bool:
    return (value or "").strip().lower() == "true"


def enabled_by_env(environ: Mapping[str, str] | None = None) -> bool:
    """Whether the ``OTEL_*`` environment asks for telemetry (see the module's docstring)."""
    env = os.environ if environ is None else environ
    if _flag(env.get("OTEL_SDK_DISABLED")):
        return False
    if any((env.get(name) or "").strip() for name in _ENDPOINTS):
        return True
    return any((env.get(name) or "none").strip().lower() != "none" for name in _EXPORTERS.values())


def resolve(telemetry: Any, environ: Mapping[str, str] | None = None) -> TelemetryConfig | None:
    """The providers for `telemetry` (the ``Guard`` argument), or None when telemetry is off.

    Raises `TypeError` for an argument of another type, and `ImportError` (with the install
    hint) when telemetry is asked for explicitly and the ``otel`` extra is missing; when only
    the environment asks for it, a missing extra is a warning and telemetry stays off."""
    if telemetry is False:
        return None
    if isinstance(telemetry, TelemetryConfig):
        return telemetry if telemetry.tracer_provider or telemetry.meter_provider else None
    if isinstance(telemetry, tuple) and len(telemetry) == 2:
        return resolve(TelemetryConfig(*telemetry), environ)
    if telemetry is None:
        if not enabled_by_env(environ):
            return None
        try:
            return providers_from_env(environ)
        except ImportError:
            _log.warning("telemetry_unavailable", reason=INSTALL_HINT)
            return None
    if telemetry is True:
        env = os.environ if environ is None else environ
        if _flag(env.get("OTEL_SDK_DISABLED")):
            return None
        return providers_from_env(environ)
    raise TypeError(
        "telemetry must be None (the OTEL_* environment decides), True, False, a "
        f"(tracer_provider, meter_provider) pair or a TelemetryConfig, not {type(telemetry).__name__}"
    )


_lock = threading.Lock()
_built: dict[str, TelemetryConfig] = {}


def providers_from_env(environ: Mapping[str, str] | None = None) -> TelemetryConfig:
    """The process's providers for environment-configured guards (built once): the global SDK
    providers when the application set them, else OTLP/HTTP exporters per ``OTEL_*``."""
    try:
        from opentelemetry import metrics, trace
    except ImportError as exc:
        raise ImportError(INSTALL_HINT) from exc
    env = dict(os.environ if environ is None else environ)
    with _lock:
        key = repr(sorted((k, v) for k, v in env.items() if k.startswith("OTEL_")))
        if key in _built:
            return _built[key]
        tracer_provider = trace.get_tracer_provider()
        meter_provider = metrics.get_meter_provider()
        own = _own_providers(env)
        if not _is_sdk(tracer_provider):
            tracer_provider = own.tracer_provider
        if not _is_sdk(meter_provider):
            meter_provider = own.meter_provider
        built = TelemetryConfig(tracer_provider, meter_provider)
        _built[key] = built
        return built


def _is_sdk(provider: Any) -> bool:
    """Whether `provider` is one the application configured (not the API's proxy or no-op)."""
    name = type(provider).__name__
    return not (name.startswith("_Proxy") or name.startswith("Proxy") or name.startswith("NoOp"))


def _exporter_choice(env: Mapping[str, str], signal: str) -> str:
    choice = (env.get(_EXPORTERS[signal]) or "otlp").strip().lower()
    if choice == "otlp":
        protocol = (
            env.get(f"OTEL_EXPORTER_OTLP_{signal.upper()}_PROTOCOL")
            or env.get("OTEL_EXPORTER_OTLP_PROTOCOL")
            or "http/protobuf"
        )
        if protocol.strip().lower() != "http/protobuf":
            _log.warning(
                "telemetry_protocol_unsupported", signal=signal, protocol=protocol,
                reason="pagewarden exports OTLP over HTTP (http/protobuf) only: this signal is off",
            )  # fmt: skip
            return "none"
    elif choice not in ("console", "none"):
        _log.warning("telemetry_exporter_unsupported", signal=signal, exporter=choice,
                     reason="supported: otlp, console, none; this signal is off")  # fmt: skip
        return "none"
    return choice


def _own_providers(env: Mapping[str, str]) -> TelemetryConfig:
    """Providers pagewarden builds from the ``OTEL_*`` environment (batched, periodic)."""
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import ConsoleMetricExporter, PeriodicExportingMetricReader
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter

    resource = Resource.create()  # OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES
    if str(resource.attributes.get("service.name", "")).startswith("unknown_service"):
        resource = resource.merge(Resource({"service.name": "pagewarden"}))
    tracer_provider = meter_provider = None
    traces = _exporter_choice(env, "traces")
    if traces != "none":
        if traces == "otlp":
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

            span_exporter: Any = OTLPSpanExporter()
        else:
            span_exporter = ConsoleSpanExporter()
        tracer_provider = TracerProvider(resource=resource)
        tracer_provider.add_span_processor(BatchSpanProcessor(span_exporter))
    metrics_choice = _exporter_choice(env, "metrics")
    if metrics_choice != "none":
        if metrics_choice == "otlp":
            from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter

            metric_exporter: Any = OTLPMetricExporter()
        else:
            metric_exporter = ConsoleMetricExporter()
        meter_provider = MeterProvider(
            resource=resource, metric_readers=[PeriodicExportingMetricReader(metric_exporter)]
        )
    for provider in (tracer_provider, meter_provider):
        if provider is not None:
            provider._pagewarden_built = True  # type: ignore[attr-defined] # (shutdown_built stops these only)
    return TelemetryConfig(tracer_provider, meter_provider)


def shutdown_built(timeout_millis: int = 5_000) -> None:
    """Export what the providers pagewarden built from the environment hold, and stop them
    (they also stop by themselves when the process exits). The application's own are left."""
    with _lock:
        built = list(_built.values())
        _built.clear()
    for config in built:
        for provider in (config.tracer_provider, config.meter_provider):
            if provider is None or not getattr(provider, "_pagewarden_built", False):
                continue
            if hasattr(provider, "force_flush"):
                provider.force_flush(timeout_millis)
            provider.shutdown()
