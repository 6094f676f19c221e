"""`LLMConfig`: which OpenAI-compatible endpoint to call, and how (validated when built)."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)

__all__ = ["ENV_VARS", "LLMConfig", "LLMConfigError", "StructuredOutput"]

#: How the client asks for structured answers: `auto` tries `json_schema`, then a schema inside
#: `json_object` (llama.cpp's server), then plain text, once per client.
StructuredOutput = Literal["auto", "json_schema", "json_object", "text"]

#: Environment variables read by `LLMConfig.from_env`, with what each sets.
ENV_VARS: dict[str, str] = {
    "PAGEWARDEN_LLM_BASE_URL": "base_url (falls back to OPENAI_BASE_URL, then OpenAI's own)",
    "PAGEWARDEN_LLM_MODEL": "model (required)",
    "PAGEWARDEN_LLM_API_KEY": "api_key (falls back to OPENAI_API_KEY)",
    "PAGEWARDEN_LLM_CONFIG": "a config file (YAML or JSON) read first; the variables override it",
    "PAGEWARDEN_LLM_TIMEOUT": "timeout (seconds per call)",
    "PAGEWARDEN_LLM_STRUCTURED_OUTPUT": "structured_output (auto | json_schema | json_object | text)",
    "PAGEWARDEN_LLM_CACHE_DIR": "cache_dir",
}
_DEFAULT_BASE_URL = "https://api.openai.com/v1"


class LLMConfigError(ValueError):
    """The LLM configuration is missing or invalid; `problems` names every faulty field."""

    def __init__(self, problems: list[str], source: str = "LLM config") -> None:
        self.problems = problems
        self.source = source
        super().__init__(f"{source}: " + "; ".join(problems))


class LLMConfig(BaseModel):
    """An OpenAI-compatible endpoint and how to call it.

    Args:
        base_url: the API root, e.g. ``https://api.openai.com/v1``, ``http://127.0.0.1:8080/v1``.
        model: the model name the endpoint expects.
        api_key: the key (kept as a `SecretStr`: never shown in repr, logs or errors);
            None for local servers that need none.
        temperature: sampling temperature (0 = as deterministic as the server allows).
        max_tokens: upper bound on the answer's length.
        timeout: seconds one HTTP call may take (the guard also has a per-step deadline).
        retries: retries of one call on connection errors, timeouts, 429 and 5xx.
        format_retries: extra attempts when the answer cannot be parsed into the schema.
        backoff: first retry delay in seconds (doubles per retry, with jitter).
        backoff_max: longest delay between two retries (a Retry-After header may ask for
            more, up to the caller's deadline).
        requests_per_minute: client-side rate limit (asyncio-throttle); None for none.
        concurrency: calls in flight at once.
        structured_output: see `StructuredOutput`.
        cache_dir: a directory for the on-disk answer cache (key: model, exact prompt,
            schema); None for no cache.
        headers: extra HTTP headers for every call.
        prompt_price / completion_price: USD per 1,000 tokens, for cost accounting.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, validate_default=True)

    base_url: str
    model: str
    api_key: SecretStr | None = None
    temperature: float = Field(0.0, ge=0.0, le=2.0)
    max_tokens: int = Field(1024, ge=16, le=65_536)
    timeout: float = Field(30.0, gt=0.0, le=3600.0)
    retries: int = Field(3, ge=0, le=20)
    format_retries: int = Field(2, ge=0, le=10)
    backoff: float = Field(0.5, ge=0.0, le=60.0)
    backoff_max: float = Field(8.0, ge=0.0, le=600.0)
    requests_per_minute: int | None = Field(None, ge=1)
    concurrency: int = Field(4, ge=1, le=1024)
    structured_output: StructuredOutput = "auto"
    cache_dir: Path | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    prompt_price: float | None = Field(None, ge=0.0)
    completion_price: float | None = Field(None, ge=0.0)

    @field_validator("base_url")
    @classmethod
    def _base_url(cls, value: str) -> str:
        value = value.strip()
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("must be an http(s) URL with a host, e.g. http://127.0.0.1:8080/v1")
        if parts.query or parts.fragment:
            raise ValueError("must not have a query or a fragment")
        return value.rstrip("/")

    @field_validator("model")
    @classmethod
    def _model(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be blank")
        return value.strip()

    @field_validator("api_key", mode="before")
    @classmethod
    def _api_key(cls, value: Any) -> Any:
        if isinstance(value, str) and not value.strip():
            return None
        return value

    @model_validator(mode="after")
    def _backoff_order(self) -> LLMConfig:
        if self.backoff > self.backoff_max:
            raise ValueError("backoff must not exceed backoff_max")
        return self

    def __init__(self, base_url: str | None = None, model: str | None = None, /, **data: Any) -> None:
        if base_url is not None:
            data.setdefault("base_url", base_url)
        if model is not None:
            data.setdefault("model", model)
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise LLMConfigError(_problems(exc)) from None

    # -- construction from outside ----------------------------------------------------------
    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], *, source: str = "LLM config", base: Path | None = None):
        """A config from a mapping (a parsed config file). ``api_key_env: NAME`` reads the key
        from that environment variable; a relative `cache_dir` is relative to `base`."""
        if not isinstance(data, Mapping):
            raise LLMConfigError([f"expected a mapping of settings, got {type(data).__name__}"], source)
        values = dict(data)
        key_env = values.pop("api_key_env", None)
        if key_env is not None:
            if "api_key" in values:
                raise LLMConfigError(["give api_key or api_key_env, not both"], source)
            if not isinstance(key_env, str) or not key_env:
                raise LLMConfigError(["api_key_env must name an environment variable"], source)
            values["api_key"] = os.environ.get(key_env)
            if not values["api_key"]:
                raise LLMConfigError([f"api_key_env: environment variable {key_env} is not set"], source)
        cache_dir = values.get("cache_dir")
        if isinstance(cache_dir, str) and base is not None and not Path(cache_dir).is_absolute():
            values["cache_dir"] = base / cache_dir
        try:
            return cls(**values)
        except LLMConfigError as exc:
            raise LLMConfigError(exc.problems, source) from None

    @classmethod
    def from_file(cls, path: str | Path) -> LLMConfig:
        """A config from a YAML or JSON file of settings (the field names of `LLMConfig`)."""
        import yaml

        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise LLMConfigError([f"cannot read: {exc}"], str(path)) from None
        try:
            data = json.loads(text) if path.suffix.lower() == ".json" else yaml.safe_load(text)
        except (json.JSONDecodeError, yaml.YAMLError) as exc:
            kind = "JSON" if path.suffix.lower() == ".json" else "YAML"
            raise LLMConfigError([f"not valid {kind}: {exc}"], str(path)) from None
        data = data.get("llm", data) if isinstance(data, dict) else data
        return cls.from_mapping(data, source=str(path), base=path.parent)

    @staticmethod
    def env_configured(environ: Mapping[str, str] | None = None) -> bool:
        """Whether the environment names a model (or a config file) for the LLM tier."""
        env = os.environ if environ is None else environ
        return bool(env.get("PAGEWARDEN_LLM_MODEL") or env.get("PAGEWARDEN_LLM_CONFIG"))

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> LLMConfig:
        """A config from the environment (see `ENV_VARS`); `LLMConfigError` if incomplete."""
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        base: Path | None = None
        source = "environment"
        if env.get("PAGEWARDEN_LLM_CONFIG"):
            file_config = cls.from_file(env["PAGEWARDEN_LLM_CONFIG"])
            values = file_config.model_dump(exclude_unset=True)
            source = f"environment (PAGEWARDEN_LLM_CONFIG={env['PAGEWARDEN_LLM_CONFIG']})"
        base_url = env.get("PAGEWARDEN_LLM_BASE_URL") or env.get("OPENAI_BASE_URL")
        if base_url:
            values["base_url"] = base_url
        values.setdefault("base_url", _DEFAULT_BASE_URL)
        if env.get("PAGEWARDEN_LLM_MODEL"):
            values["model"] = env["PAGEWARDEN_LLM_MODEL"]
        if "model" not in values:
            raise LLMConfigError(
                ["no model configured: set PAGEWARDEN_LLM_MODEL (and PAGEWARDEN_LLM_BASE_URL for a "
                 "server other than OpenAI's), or PAGEWARDEN_LLM_CONFIG to a config file"],
                source,
            )  # fmt: skip
        api_key = env.get("PAGEWARDEN_LLM_API_KEY") or env.get("OPENAI_API_KEY")
        if api_key:
            values["api_key"] = api_key
        for name, field in (
            ("PAGEWARDEN_LLM_TIMEOUT", "timeout"),
            ("PAGEWARDEN_LLM_STRUCTURED_OUTPUT", "structured_output"),
            ("PAGEWARDEN_LLM_CACHE_DIR", "cache_dir"),
        ):
            if env.get(name):
                values[field] = env[name]
        return cls.from_mapping(values, source=source, base=base)

    # -- helpers ------------------------------------------------------------------------------
    def secret_key(self) -> str | None:
        """The API key in clear (for the HTTP client only)."""
        return self.api_key.get_secret_value() if self.api_key is not None else None

    def describe(self) -> str:
        """``model @ base_url`` (no key), for logs and reports."""
        return f"{self.model} @ {self.base_url}"

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float | None:
        """USD for a call, when prices are configured."""
        if self.prompt_price is None and self.completion_price is None:
            return None
        return round(
            prompt_tokens / 1000 * (self.prompt_price or 0.0)
            + completion_tokens / 1000 * (self.completion_price or 0.0),
            6,
        )


def _problems(exc: ValidationError) -> list[str]:
    """Field-named problems without the offending input (it may be a key)."""
    out = []
    for error in exc.errors(include_input=False, include_url=False):
        where = ".".join(str(part) for part in error["loc"]) or "config"
        message = error["msg"].removeprefix("Value error, ")
        if error["type"] == "missing":
            message = "is required"
        elif error["type"] == "extra_forbidden":
            message = "is not a known setting"
        out.append(f"{where}: {message}")
    return out
