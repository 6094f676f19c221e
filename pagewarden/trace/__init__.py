"""Traces (one JSON line per step), structured logging, redaction."""

from pagewarden.trace._logging import configure_logging, get_logger, global_secrets
from pagewarden.trace._redact import (
    PASSWORD_MASK,
    password_values,
    redact_tree,
    redacted_step_data,
    redacted_verdict,
    step_redactor,
)
from pagewarden.trace._writer import (
    TraceRecord,
    TraceWriter,
    is_step_line,
    read_trace,
    redact_step_data,
    refusal_record,
    trace_record,
)

__all__ = [
    "PASSWORD_MASK",
    "TraceRecord",
    "TraceWriter",
    "configure_logging",
    "get_logger",
    "global_secrets",
    "is_step_line",
    "password_values",
    "read_trace",
    "redact_step_data",
    "redact_tree",
    "redacted_step_data",
    "redacted_verdict",
    "refusal_record",
    "step_redactor",
    "trace_record",
]
