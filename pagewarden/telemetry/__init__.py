"""A guard's decisions as OpenTelemetry spans and metrics (the ``otel`` extra).

Off unless configured: ``Guard(telemetry=...)`` or the standard ``OTEL_*`` environment (see
`TelemetryConfig` and docs/guides/telemetry.md). An adapter of the guard: it follows the
guard's event stream (`Guard.subscribe`), so the decision core imports no OpenTelemetry, and
OpenTelemetry itself is imported only when telemetry is on (pagewarden works without the
extra).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pagewarden.telemetry._config import INSTALL_HINT, TelemetryConfig, enabled_by_env, resolve
from pagewarden.telemetry._names import (
    GEN_AI_DURATION,
    GEN_AI_TOKENS,
    METRIC_ADDED,
    METRIC_DECISIONS,
    METRIC_LLM_CALLS,
    METRIC_POLICY_DECISIONS,
    METRIC_REFUSALS,
    SCOPE,
    SPAN_NETWORK,
    SPAN_REFUSAL_EVENT,
    SPAN_STEP,
)

if TYPE_CHECKING:
    from pagewarden.telemetry._decisions import DecisionTelemetry

__all__ = [
    "GEN_AI_DURATION",
    "GEN_AI_TOKENS",
    "INSTALL_HINT",
    "METRIC_ADDED",
    "METRIC_DECISIONS",
    "METRIC_LLM_CALLS",
    "METRIC_POLICY_DECISIONS",
    "METRIC_REFUSALS",
    "SCOPE",
    "SPAN_NETWORK",
    "SPAN_REFUSAL_EVENT",
    "SPAN_STEP",
    "TelemetryConfig",
    "attach",
    "enabled_by_env",
]


def attach(guard: Any, telemetry: Any) -> DecisionTelemetry | None:
    """The exporter of `guard`'s decisions for the ``Guard(telemetry=...)`` argument (None:
    off). Imports OpenTelemetry only when telemetry is on."""
    config = resolve(telemetry)
    if config is None:
        return None
    from pagewarden.telemetry._decisions import DecisionTelemetry

    return DecisionTelemetry(guard, config)
