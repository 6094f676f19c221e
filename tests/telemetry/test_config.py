"""When telemetry is on, and what it needs: off unless configured (``OTEL_*`` or
``Guard(telemetry=...)``), ``OTEL_SDK_DISABLED`` wins over the environment, a clear error for a
bad argument, and pagewarden without the ``otel`` extra works (a warning when only the
environment asks for telemetry, an `ImportError` with the install hint when the code does)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from pagewarden import Guard
from pagewarden.telemetry import INSTALL_HINT, TelemetryConfig, enabled_by_env

from ._otel import Memory


@pytest.mark.parametrize(
    ("env", "on"),
    [
        ({}, False),
        ({"OTEL_SERVICE_NAME": "agents"}, False),  # a name alone exports nothing
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, True),
        ({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://collector:4318/v1/traces"}, True),
        ({"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "http://collector:4318/v1/metrics"}, True),
        ({"OTEL_TRACES_EXPORTER": "console"}, True),
        ({"OTEL_TRACES_EXPORTER": "none", "OTEL_METRICS_EXPORTER": "none"}, False),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318", "OTEL_SDK_DISABLED": "true"}, False),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318", "OTEL_SDK_DISABLED": "TRUE"}, False),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318", "OTEL_SDK_DISABLED": "false"}, True),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "  "}, False),
    ],
)
def test_off_unless_the_environment_asks(env: dict[str, str], on: bool) -> None:
    assert enabled_by_env(env) is on


def test_guard_without_configuration_has_no_telemetry(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_TRACES_EXPORTER", "OTEL_METRICS_EXPORTER"):
        monkeypatch.delenv(name, raising=False)
    guard = Guard()
    assert guard.telemetry is None
    assert len(guard.events._sinks) == 0  # nothing listens: steps build no event at all


def test_false_wins_over_the_environment_and_sdk_disabled_over_true(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9")
    assert Guard(telemetry=False).telemetry is None
    monkeypatch.setenv("OTEL_SDK_DISABLED", "true")
    assert Guard().telemetry is None and Guard(telemetry=True).telemetry is None


def test_providers_as_a_pair_or_a_config_and_bad_arguments() -> None:
    memory = Memory.new()
    pair = Guard(telemetry=memory.pair)
    config = Guard(telemetry=TelemetryConfig(tracer_provider=memory.tracer_provider))
    assert pair.telemetry is not None and config.telemetry is not None
    assert config.telemetry.config.meter_provider is None
    assert Guard(telemetry=TelemetryConfig()).telemetry is None  # no provider: nothing to report to
    with pytest.raises(TypeError, match="telemetry must be"):
        Guard(telemetry="yes")
    pair.close()
    config.close()


def test_close_unsubscribes() -> None:
    memory = Memory.new()
    guard = Guard(telemetry=memory.pair)
    assert guard.telemetry in guard.events
    guard.close()
    assert guard.telemetry not in guard.events


_WITHOUT_OTEL = """
import json, sys, warnings
sys.modules["opentelemetry"] = None  # as if the otel extra were not installed
from pagewarden import Guard, Action, Observation
from pagewarden.trace import configure_logging
configure_logging()  # to stderr
out = {}
guard = Guard(goal="Read the docs.")
step = guard.make_step(Action(kind="goto", value="http://docs.test/"), Observation(url="http://docs.test/"))
out["decision"] = guard.check(step).decision.value
out["telemetry"] = guard.telemetry is not None
try:
    Guard(telemetry=True)
except ImportError as exc:
    out["error"] = str(exc)
print(json.dumps(out))
"""


@pytest.mark.parametrize("endpoint", [None, "http://127.0.0.1:9"])
def test_pagewarden_works_without_the_extra(endpoint: str | None) -> None:
    env = {"PATH": "/usr/bin:/bin", "HOME": "/tmp"}
    if endpoint:
        env["OTEL_EXPORTER_OTLP_ENDPOINT"] = endpoint
    done = subprocess.run(
        [sys.executable, "-c", _WITHOUT_OTEL],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out == {"decision": "allow", "telemetry": False, "error": INSTALL_HINT}
    if endpoint:  # the environment asked for it: a warning says why there is none
        assert "telemetry_unavailable" in done.stdout + done.stderr
