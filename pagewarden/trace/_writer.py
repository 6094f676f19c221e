"""Session traces: one JSON line per step, secrets and password values never in clear."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pagewarden.secrets import SecretRegistry
from pagewarden.steps import Step, Verdict
from pagewarden.trace._redact import mask_password_fields, redact_tree, redacted_step_data, step_redactor

__all__ = [
    "TRACE_FORMAT_VERSION",
    "TraceRecord",
    "TraceWriter",
    "read_trace",
    "redact_step_data",
    "trace_record",
]

TRACE_FORMAT_VERSION = 1


def redact_step_data(data: dict[str, Any], secrets: SecretRegistry) -> dict[str, Any]:
    """A step's JSON form with password-field values masked and secrets redacted (a copy)."""
    data = json.loads(json.dumps(data))  # a deep copy we may edit
    mask_password_fields(data)
    return redact_tree(data, step_redactor(None, secrets))


def trace_record(
    step: Step,
    verdict: Verdict,
    secrets: SecretRegistry,
    *,
    screenshot: str | None = None,
    ran: bool | None = None,
) -> dict[str, Any]:
    """The trace line for one judged step, redacted (the ``step`` event carries the same).

    `ran` (recorded as ``"ran"``) says whether the action executed: replay needs it, since
    monitor mode, approved ASKs and actions stopped after running are not told by the
    decision alone.

    Built once per step from fresh dicts: the step and verdict are converted once and
    redacted once; the trace writer only serialises the result.
    """
    redact = step_redactor(step, secrets)
    record: dict[str, Any] = {
        "v": TRACE_FORMAT_VERSION,
        "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime()) + f".{int(time.time() * 1000) % 1000:03d}Z",
        "session": step.session,
        "index": step.index,
        "step": redacted_step_data(step, secrets, redact),
        "verdict": redact_tree(verdict.to_dict(), redact),
    }
    if ran is not None:
        record["ran"] = ran
    if screenshot:
        record["screenshot"] = screenshot
    return record


@dataclass(frozen=True, slots=True)
class TraceRecord:
    """One line of a trace, parsed."""

    step: Step
    verdict: Verdict
    ts: str
    screenshot: str | None = None
    raw: dict[str, Any] | None = None


class TraceWriter:
    """Appends one JSON line per judged step to `path` (thread-safe, flushed per line)."""

    def __init__(
        self, path: str | Path, secrets: SecretRegistry | None = None, *, artefacts: str | Path | None = None
    ) -> None:
        self.path = Path(path)
        self._artefacts = Path(artefacts) if artefacts is not None else None
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.secrets = secrets if secrets is not None else SecretRegistry()
        self._lock = threading.Lock()
        self._file = self.path.open("a", encoding="utf-8")

    @property
    def directory(self) -> Path:
        """Where screenshots and other artefacts of this trace go (the trace's own directory
        unless `artefacts` was given); trace lines name them relative to the trace's directory."""
        return self._artefacts if self._artefacts is not None else self.path.parent

    def write(
        self, step: Step, verdict: Verdict, *, screenshot: str | None = None, ran: bool | None = None
    ) -> dict[str, Any]:
        """Append the record for one step and return it (as written)."""
        record = trace_record(step, verdict, self.secrets, screenshot=screenshot, ran=ran)
        self.write_record(record)
        return record

    def write_record(self, record: dict[str, Any]) -> None:
        """Append an already built (and redacted) record as one line."""
        line = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
        with self._lock:
            self._file.write(line + "\n")
            self._file.flush()

    def close(self) -> None:
        """Close the file (idempotent)."""
        with self._lock:
            if not self._file.closed:
                self._file.close()

    def __enter__(self) -> TraceWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def read_trace(path: str | Path) -> Iterator[TraceRecord]:
    """Parse a trace file line by line; a malformed line raises ValueError with its number."""
    with Path(path).open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                raw = json.loads(line)
                yield TraceRecord(
                    step=Step.from_dict(raw["step"]),
                    verdict=Verdict.from_dict(raw["verdict"]),
                    ts=raw.get("ts", ""),
                    screenshot=raw.get("screenshot"),
                    raw=raw,
                )
            except (ValueError, KeyError, TypeError) as exc:
                raise ValueError(f"{path}:{number}: not a trace record: {exc}") from None
