"""Traces (one JSON line per step), recorded-session directories, structured logging,
redaction."""

from pagewarden.trace._logging import configure_logging, get_logger, global_secrets, redact_value
from pagewarden.trace._redact import (
    PASSWORD_MASK,
    mask_password_fields,
    password_values,
    redact_tree,
    redacted_step_data,
    redacted_verdict,
    step_redactor,
)
from pagewarden.trace._report import render_session_report
from pagewarden.trace._session import (
    EVENTS,
    FLOWS,
    MANIFEST,
    POLICIES,
    READABLE_SESSION_VERSIONS,
    SCREENSHOTS,
    SESSION_FORMAT,
    SESSION_FORMAT_VERSION,
    TRACE,
    SessionFormatError,
    SessionRecorder,
)
from pagewarden.trace._writer import (
    TRACE_FORMAT_VERSION,
    TraceRecord,
    TraceWriter,
    read_trace,
    redact_step_data,
    trace_record,
)

__all__ = [
    "EVENTS",
    "FLOWS",
    "MANIFEST",
    "PASSWORD_MASK",
    "POLICIES",
    "READABLE_SESSION_VERSIONS",
    "SCREENSHOTS",
    "SESSION_FORMAT",
    "SESSION_FORMAT_VERSION",
    "TRACE",
    "TRACE_FORMAT_VERSION",
    "SessionFormatError",
    "SessionRecorder",
    "TraceRecord",
    "TraceWriter",
    "configure_logging",
    "get_logger",
    "global_secrets",
    "mask_password_fields",
    "password_values",
    "read_trace",
    "redact_step_data",
    "redact_tree",
    "redact_value",
    "redacted_step_data",
    "redacted_verdict",
    "render_session_report",
    "step_redactor",
    "trace_record",
]
