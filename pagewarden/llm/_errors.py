"""Why a model call failed; the guard turns each into a fail-closed verdict."""

from __future__ import annotations

__all__ = ["LLMError", "LLMOutputError", "LLMRefused", "LLMUnavailable"]


class LLMError(Exception):
    """A model call did not produce a usable answer. `reason` is a short, key-free summary."""

    kind = "error"

    def __init__(self, reason: str, *, attempts: int = 0, text: str | None = None) -> None:
        self.reason = reason
        self.attempts = attempts
        self.text = text  # the last answer, when one came back
        super().__init__(reason)


class LLMUnavailable(LLMError):
    """The endpoint did not answer in time: connection refused or dropped, timeouts, 429 or 5xx
    after the retries, a deadline reached, or a request the endpoint rejects (401, 404 …)."""

    kind = "unavailable"


class LLMRefused(LLMError):
    """The model refused to answer (a refusal message or a content filter)."""

    kind = "refused"


class LLMOutputError(LLMError):
    """The answers, after the format retries, were empty or could not be parsed into the schema."""

    kind = "unparsable"
