"""Traces (one JSON line per step), structured logging, redaction."""

from pagewarden.trace._logging import configure_logging, get_logger, global_secrets
from pagewarden.trace._writer import TraceRecord, TraceWriter, read_trace, redact_step_data, trace_record

__all__ = [
    "TraceRecord",
    "TraceWriter",
    "configure_logging",
    "get_logger",
    "global_secrets",
    "read_trace",
    "redact_step_data",
    "trace_record",
]
