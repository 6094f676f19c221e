"""The names pagewarden's telemetry uses (the reference in docs/reference/telemetry.md)."""

from __future__ import annotations

__all__ = [
    "GEN_AI_DURATION",
    "GEN_AI_TOKENS",
    "METRIC_ADDED",
    "METRIC_DECISIONS",
    "METRIC_LLM_CALLS",
    "METRIC_POLICY_DECISIONS",
    "METRIC_REFUSALS",
    "SCOPE",
    "SPAN_NETWORK",
    "SPAN_REFUSAL_EVENT",
    "SPAN_STEP",
]

#: the instrumentation scope of every span and instrument
SCOPE = "pagewarden"
#: one span per judged step
SPAN_STEP = "pagewarden.step"
#: a span for refusals that no step followed (written when the guard closes)
SPAN_NETWORK = "pagewarden.network"
#: a span event per request the network layer (gate or proxy) refused
SPAN_REFUSAL_EVENT = "pagewarden.network.refusal"

METRIC_DECISIONS = "pagewarden.decisions"
METRIC_POLICY_DECISIONS = "pagewarden.policy.decisions"
METRIC_ADDED = "pagewarden.guard.duration"
METRIC_LLM_CALLS = "pagewarden.llm.calls"
METRIC_REFUSALS = "pagewarden.network.refusals"
#: the GenAI semantic conventions' client metrics
GEN_AI_TOKENS = "gen_ai.client.token.usage"
GEN_AI_DURATION = "gen_ai.client.operation.duration"
