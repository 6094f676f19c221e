"""Structured logging: one structlog pipeline, secrets redacted before any handler sees them.

pagewarden logs through the stdlib logger ``pagewarden`` (a `NullHandler` by default, so a
library user sees nothing unless they ask). `configure_logging` adds readable lines on the
console and/or JSON lines in a file. Redaction happens in the processor chain, before the
event reaches any handler, so no handler, the user's included, receives a secret in clear.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import structlog

from pagewarden.secrets import SecretRegistry, redact_credentials

__all__ = ["configure_logging", "get_logger", "global_secrets", "redact_value"]

_LOGGER_NAME = "pagewarden"
_SECRETS = SecretRegistry()
_stdlib = logging.getLogger(_LOGGER_NAME)
_stdlib.addHandler(logging.NullHandler())


def global_secrets() -> SecretRegistry:
    """The process-wide registry the log redactor uses (guards add their secrets to it)."""
    return _SECRETS


def redact_value(value: Any, secrets: SecretRegistry) -> Any:
    """`value` with registered secrets and recognisable credentials (API keys, private keys,
    JWTs, card numbers) redacted in every string, recursively through dicts and lists."""
    if isinstance(value, str):
        return redact_credentials(secrets.redact(value))
    if isinstance(value, dict):
        return {k: redact_value(v, secrets) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(redact_value(v, secrets) for v in value)
    return value


def _redact_processor(_logger: Any, _name: str, event: dict[str, Any]) -> dict[str, Any]:
    return {k: redact_value(v, _SECRETS) for k, v in event.items()}


_PRE_CHAIN: list[Any] = [
    structlog.stdlib.add_log_level,
    structlog.processors.TimeStamper(fmt="iso", utc=True),
    structlog.processors.format_exc_info,
    _redact_processor,
]


def get_logger(**context: Any) -> structlog.stdlib.BoundLogger:
    """A bound logger for pagewarden events (redacted, rendered by configured handlers)."""
    logger = structlog.wrap_logger(
        _stdlib,
        processors=[
            structlog.stdlib.filter_by_level,
            *_PRE_CHAIN,
            structlog.stdlib.ProcessorFormatter.wrap_for_formatter,
        ],
        wrapper_class=structlog.stdlib.BoundLogger,
    )
    return logger.bind(**context) if context else logger


def configure_logging(
    *,
    console: bool = True,
    json_file: str | Path | None = None,
    level: int | str = logging.INFO,
    secrets: Iterable[str] = (),
) -> None:
    """Send pagewarden's events to the console (readable) and/or a file (JSON lines).

    Calling it again replaces the handlers it added before.
    """
    for value in secrets:
        _SECRETS.add(value)
    for handler in list(_stdlib.handlers):
        if getattr(handler, "_pagewarden", False):
            _stdlib.removeHandler(handler)
            handler.close()
    _stdlib.setLevel(level)
    if console:
        handler: logging.Handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(
            structlog.stdlib.ProcessorFormatter(
                processor=structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty()),
                foreign_pre_chain=_PRE_CHAIN,
            )
        )
        handler._pagewarden = True  # type: ignore[attr-defined]
        _stdlib.addHandler(handler)
    if json_file is not None:
        path = Path(json_file)
        path.parent.mkdir(parents=True, exist_ok=True)
        handler = logging.FileHandler(path, encoding="utf-8")
        handler.setFormatter(
            structlog.stdlib.ProcessorFormatter(
                processor=structlog.processors.JSONRenderer(), foreign_pre_chain=_PRE_CHAIN
            )
        )
        handler._pagewarden = True  # type: ignore[attr-defined]
        _stdlib.addHandler(handler)
