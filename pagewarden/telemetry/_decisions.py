"""`DecisionTelemetry`: a guard's decisions as OpenTelemetry spans and metrics.

A subscriber of the guard's event stream (`Guard.subscribe`): each ``step`` event (a trace
line, redacted) becomes one ``pagewarden.step`` span, placed from the step's own timings (it
ends when the guard reported it), with one GenAI ``chat {model}`` child span per model call
(world model and utility agent, in one call or two), and the ``network`` events (refusals of
the navigation gate or the proxy) since the previous step as ``pagewarden.network.refusal``
span events — the same step that tells the agent of them. The counters and histograms are
recorded at the same time. Runs on the thread that reported the step; the providers batch
and export on their own threads, so the step pays only for building the span (see
``benchmarks/telemetry.py``). A step's span is a child of whatever span is current where the
agent acted (an agent framework's own span), or a root.
"""

from __future__ import annotations

import threading
from collections import deque
from typing import Any
from weakref import WeakKeyDictionary

from opentelemetry import trace
from opentelemetry.trace import SpanKind, Status, StatusCode

from pagewarden._version import __version__
from pagewarden.steps import GuardEvent
from pagewarden.telemetry._attributes import (
    TypedValues,
    added_ms,
    llm_requests,
    refusal_attributes,
    step_attributes,
    step_duration_ms,
)
from pagewarden.telemetry._config import TelemetryConfig
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

__all__ = ["DecisionTelemetry"]

_SECONDS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)
_TOKENS = (1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576)
_CALLS = (0, 1, 2, 3, 4, 6, 8)
#: refusals kept for the next step's span at most (the counter counts them all)
_REFUSALS_KEPT = 256


class _Instruments:
    """The counters and histograms of one meter provider (created once per provider)."""

    def __init__(self, meter_provider: Any) -> None:
        meter = meter_provider.get_meter(SCOPE, __version__)
        self.decisions = meter.create_counter(
            METRIC_DECISIONS, "{step}", "Judged steps, by decision, action kind and mode"
        )
        self.policy_decisions = meter.create_counter(
            METRIC_POLICY_DECISIONS,
            "{step}",
            "Judged steps with a finding of a policy, by policy and decision",
        )
        self.added = meter.create_histogram(
            METRIC_ADDED, "s", "The guard's added time per action: reading the page and judging it",
            explicit_bucket_boundaries_advisory=_SECONDS,
        )  # fmt: skip
        self.llm_calls = meter.create_histogram(
            METRIC_LLM_CALLS, "{call}", "Model calls per judged step (0: the deterministic tiers decided)",
            explicit_bucket_boundaries_advisory=_CALLS,
        )  # fmt: skip
        self.refusals = meter.create_counter(
            METRIC_REFUSALS, "{request}", "Requests the network layer refused, by action, rule and layer"
        )
        self.tokens = meter.create_histogram(
            GEN_AI_TOKENS, "{token}", "Number of input and output tokens used",
            explicit_bucket_boundaries_advisory=_TOKENS,
        )  # fmt: skip
        self.duration = meter.create_histogram(
            GEN_AI_DURATION, "s", "GenAI operation duration", explicit_bucket_boundaries_advisory=_SECONDS
        )


_instruments: WeakKeyDictionary[Any, _Instruments] = WeakKeyDictionary()
_instruments_lock = threading.Lock()


def _instruments_for(meter_provider: Any) -> _Instruments:
    with _instruments_lock:
        found = _instruments.get(meter_provider)
        if found is None:
            found = _instruments[meter_provider] = _Instruments(meter_provider)
        return found


def _ns(seconds: float) -> int:
    return int(seconds * 1e9)


class DecisionTelemetry:
    """Exports one guard's decisions (`guard.telemetry`); made by ``Guard(telemetry=...)``."""

    def __init__(self, guard: Any, config: TelemetryConfig) -> None:
        self.config = config
        self._tracer = (
            config.tracer_provider.get_tracer(SCOPE, __version__) if config.tracer_provider else None
        )
        self._metrics = _instruments_for(config.meter_provider) if config.meter_provider else None
        self._typed = TypedValues()
        self._refusals: deque[tuple[float, dict[str, Any]]] = deque(maxlen=_REFUSALS_KEPT)
        self._lock = threading.Lock()
        self._model = self._model_attributes(guard)
        self._guard = guard
        self._agent: dict[str, str] | None = None
        self._unsubscribe = guard.subscribe(self)

    def _agent_attributes(self) -> dict[str, str]:
        """Which agent and machine the steps are of (`Guard(agent_name=, agent_host=)`), read at
        the first step: the guard sets them after its event bus (and this subscriber) exist."""
        if self._agent is None:
            import socket

            name = getattr(self._guard, "agent_name", None)
            host = getattr(self._guard, "agent_host", None) or socket.gethostname()
            agent = {"pagewarden.agent.host": self._typed.scrub(str(host))}
            if name:
                agent["pagewarden.agent.name"] = self._typed.scrub(str(name))
            self._agent = agent
        return self._agent

    @staticmethod
    def _model_attributes(guard: Any) -> dict[str, Any]:
        """The GenAI attributes every model call of this guard shares (no key, no path)."""
        semantic = getattr(guard, "semantic", None)
        config = getattr(getattr(semantic, "client", None), "config", None)
        if config is None:
            return {}
        attrs: dict[str, Any] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": "openai",  # the API flavour: any OpenAI-compatible server
            "gen_ai.request.model": str(config.model),
            "gen_ai.output.type": "json",
        }
        from urllib.parse import urlsplit

        try:
            parts = urlsplit(str(config.base_url))
            if parts.hostname:
                attrs["server.address"] = parts.hostname
                attrs["server.port"] = parts.port or (443 if parts.scheme == "https" else 80)
        except ValueError:
            pass
        if isinstance(getattr(config, "temperature", None), (int, float)):
            attrs["gen_ai.request.temperature"] = float(config.temperature)
        if isinstance(getattr(config, "max_tokens", None), int):
            attrs["gen_ai.request.max_tokens"] = config.max_tokens
        return attrs

    # -- the event sink ---------------------------------------------------------------------------
    def __call__(self, event: GuardEvent) -> None:
        if event.kind == "step":
            self._step(event)
        elif event.kind == "network":
            self._refusal(event)

    def _refusal(self, event: GuardEvent) -> None:
        attrs = refusal_attributes(event.data, self._typed)
        if self._metrics is not None:
            self._metrics.refusals.add(1, {k: attrs[k] for k in _REFUSAL_METRIC_KEYS})
        if self._tracer is not None:
            ts = event.data.get("ts")
            with self._lock:
                self._refusals.append((float(ts) if isinstance(ts, (int, float)) else event.ts, attrs))

    def _step(self, event: GuardEvent) -> None:
        record = event.data
        self._typed.note(record.get("step") or {})
        attrs = step_attributes(record, self._typed)
        attrs.update(self._agent_attributes())
        timings = (record.get("verdict") or {}).get("timings_ms") or {}
        end = event.ts
        start = end - step_duration_ms(timings) / 1000
        if self._tracer is not None:
            self._span(record, attrs, timings, start, end)
        if self._metrics is not None:
            self._record(record, attrs, timings)

    def _span(
        self, record: dict[str, Any], attrs: dict[str, Any], timings: dict[str, Any], start: float, end: float
    ) -> None:
        assert self._tracer is not None
        with self._lock:
            refusals, self._refusals = list(self._refusals), deque(maxlen=_REFUSALS_KEPT)
        if refusals:
            attrs["pagewarden.network.refusals"] = len(refusals)
        span = self._tracer.start_span(
            SPAN_STEP, kind=SpanKind.INTERNAL, attributes=attrs, start_time=_ns(start)
        )
        for ts, refusal in refusals:
            span.add_event(SPAN_REFUSAL_EVENT, refusal, timestamp=_ns(ts))
        semantic_start = start + sum(float(timings.get(k) or 0.0) for k in ("observe", "total")) / 1000
        parent = trace.set_span_in_context(span)
        for request in llm_requests(record):
            self._model_span(request, parent, semantic_start, end)
        span.end(end_time=_ns(max(end, start)))

    def _model_span(
        self, request: dict[str, Any], parent: Any, semantic_start: float, step_end: float
    ) -> None:
        assert self._tracer is not None
        attrs = dict(self._model)
        model = attrs.get("gen_ai.request.model", "")
        attrs["pagewarden.llm.purpose"] = str(request.get("purpose") or "assess")
        if isinstance(request.get("prompt_tokens"), int):
            attrs["gen_ai.usage.input_tokens"] = request["prompt_tokens"]
        if isinstance(request.get("completion_tokens"), int):
            attrs["gen_ai.usage.output_tokens"] = request["completion_tokens"]
        for key in ("attempts", "cached", "mode"):
            if isinstance(request.get(key), (int, bool, str)):
                attrs[f"pagewarden.llm.{key}"] = request[key]
        error = request.get("error_kind")
        if error:
            attrs["error.type"] = str(error)
        begin = semantic_start + float(request.get("offset_ms") or 0.0) / 1000
        finish = min(begin + float(request.get("latency_ms") or 0.0) / 1000, step_end)
        span = self._tracer.start_span(
            f"chat {model}".strip(), context=parent, kind=SpanKind.CLIENT, attributes=attrs,
            start_time=_ns(begin),
        )  # fmt: skip
        if error:
            span.set_status(Status(StatusCode.ERROR, str(error)))
        span.end(end_time=_ns(max(finish, begin)))
        if self._metrics is not None:
            base = {k: attrs[k] for k in ("gen_ai.operation.name", "gen_ai.provider.name",
                                          "gen_ai.request.model") if k in attrs}  # fmt: skip
            self._metrics.duration.record(
                max(finish - begin, 0.0), {**base, **({"error.type": str(error)} if error else {})}
            )
            for kind, key in (
                ("input", "gen_ai.usage.input_tokens"),
                ("output", "gen_ai.usage.output_tokens"),
            ):
                if key in attrs:
                    self._metrics.tokens.record(attrs[key], {**base, "gen_ai.token.type": kind})

    def _record(self, record: dict[str, Any], attrs: dict[str, Any], timings: dict[str, Any]) -> None:
        assert self._metrics is not None
        m = self._metrics
        decision, kind = attrs["pagewarden.decision"], attrs["pagewarden.action.kind"]
        m.decisions.add(1, {"pagewarden.decision": decision, "pagewarden.action.kind": kind,
                            "pagewarden.enforced": attrs["pagewarden.enforced"]})  # fmt: skip
        for policy in attrs["pagewarden.policies"]:
            m.policy_decisions.add(1, {"pagewarden.policy.id": policy, "pagewarden.decision": decision})
        added = added_ms(timings)
        if added is None:
            return  # not judged by the tiers (a refusal reported at the agent's next call)
        consulted = attrs["pagewarden.llm.calls"] > 0
        m.added.record(added / 1000, {"pagewarden.decision": decision, "pagewarden.action.kind": kind,
                                      "pagewarden.llm.consulted": consulted})  # fmt: skip
        m.llm_calls.record(attrs["pagewarden.llm.calls"], {"pagewarden.action.kind": kind})

    # -- the end ------------------------------------------------------------------------------------
    def flush(self, timeout_millis: int = 10_000) -> bool:
        """Export what the providers hold now (for tests, and before a process exits on purpose)."""
        self._flush_refusals()
        done = True
        for provider in (self.config.tracer_provider, self.config.meter_provider):
            force = getattr(provider, "force_flush", None)
            if force is not None:
                done = bool(force(timeout_millis)) and done
        return done

    def _flush_refusals(self) -> None:
        """Refusals no step followed: one ``pagewarden.network`` span carries them."""
        with self._lock:
            refusals, self._refusals = list(self._refusals), deque(maxlen=_REFUSALS_KEPT)
        if not refusals or self._tracer is None:
            return
        first, last = refusals[0][0], max(ts for ts, _ in refusals)
        span = self._tracer.start_span(
            SPAN_NETWORK, attributes={"pagewarden.network.refusals": len(refusals)}, start_time=_ns(first)
        )
        for ts, attrs in refusals:
            span.add_event(SPAN_REFUSAL_EVENT, attrs, timestamp=_ns(ts))
        span.end(end_time=_ns(last))

    def close(self) -> None:
        """Stop listening; refusals no step followed go out in a ``pagewarden.network`` span.
        The providers are the application's (or the process's): they are not shut down."""
        self._unsubscribe()
        self._flush_refusals()


_REFUSAL_METRIC_KEYS = (
    "pagewarden.network.action",
    "pagewarden.network.rule",
    "pagewarden.network.policy_id",
    "pagewarden.network.layer",
)
