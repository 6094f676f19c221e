"""One client for every OpenAI-compatible model endpoint (OpenAI, vLLM, Ollama, llama.cpp's
server, DashScope, DeepSeek, LiteLLM …).

Configure, then call with chat messages and, for a structured answer, a pydantic model::

    from pydantic import BaseModel
    from pagewarden.llm import LLMClient, LLMConfig, LLMError

    class Answer(BaseModel):
        verdict: bool
        reason: str

    config = LLMConfig("http://127.0.0.1:8080/v1", "qwen2.5-7b-instruct")  # or LLMConfig.from_env()
    client = LLMClient(config)

    result = await client.complete(                      # async code
        [{"role": "system", "content": "…"}, {"role": "user", "content": "…"}], schema=Answer
    )
    result = client.complete_sync("…", schema=Answer)    # sync code (a background loop thread)
    result.parsed        # an Answer, validated
    result.text          # the raw answer
    result.usage         # Usage(prompt_tokens, completion_tokens, estimated)
    result.latency_ms, result.cached, result.attempts, result.mode, result.cost_usd

A failed call raises an `LLMError` and nothing else: `LLMUnavailable` (connection refused or
dropped, timeouts, 429 / 5xx after `retries`, the `deadline` passed, a request the endpoint
rejects), `LLMRefused` (a refusal or content filter), `LLMOutputError` (empty or unparsable
answers after `format_retries`). ``str(error)`` never contains the API key.

What the client does for each call:

* rate limit (``requests_per_minute``, asyncio-throttle) and ``concurrency`` limit, shared
  by every call of the client whatever thread or loop it comes from;
* a ``timeout`` per HTTP request and an optional ``deadline`` for the whole call;
* retries with exponential back-off and jitter on connection errors, timeouts, 429
  (honouring ``Retry-After``) and 5xx;
* structured output: ``json_schema`` where the server supports it, a schema inside
  ``json_object`` where it does not (llama.cpp), plain text otherwise — set by
  ``structured_output`` or detected once (``auto``);
* parsing: JSON (fenced, bare, repaired), then XML, then ``field: value`` text, validated
  by the schema, with format retries that tell the model what was wrong;
* an optional on-disk cache (``cache_dir``) keyed by model + exact prompt + schema; pass the
  prompt's fence token as ``boundary=`` so a random fence does not defeat it;
* token, latency and cost accounting per call (`LLMResult`) and per client (`stats`).

Prompts: `PromptTemplate` renders package files with `string.Template`; `Fence` wraps
untrusted text in markers with a random per-call token the text cannot contain.
"""

from typing import TYPE_CHECKING, Any

from pagewarden.llm._cache import ResponseCache, cache_key
from pagewarden.llm._config import ENV_VARS, LLMConfig, LLMConfigError, StructuredOutput
from pagewarden.llm._errors import LLMError, LLMOutputError, LLMRefused, LLMUnavailable
from pagewarden.llm._parse import OutputParseError, parse_output, repair_json
from pagewarden.llm._prompt import Fence, PromptError, PromptTemplate, block
from pagewarden.llm._tokens import estimate_tokens

if TYPE_CHECKING:
    from pagewarden.llm._client import LLMClient, LLMResult, LLMStats, Message, Usage, json_schema_of

#: Names from `_client`, imported on first use: it imports `openai`, which a guard without a
#: model never needs (importing pagewarden stays as fast as before).
_CLIENT_NAMES = frozenset({"LLMClient", "LLMResult", "LLMStats", "Message", "Usage", "json_schema_of"})


def __getattr__(name: str) -> Any:
    if name in _CLIENT_NAMES:
        from pagewarden.llm import _client

        return getattr(_client, name)
    raise AttributeError(f"module 'pagewarden.llm' has no attribute {name!r}")


__all__ = [
    "ENV_VARS",
    "Fence",
    "LLMClient",
    "LLMConfig",
    "LLMConfigError",
    "LLMError",
    "LLMOutputError",
    "LLMRefused",
    "LLMResult",
    "LLMStats",
    "LLMUnavailable",
    "Message",
    "OutputParseError",
    "PromptError",
    "PromptTemplate",
    "ResponseCache",
    "StructuredOutput",
    "Usage",
    "block",
    "cache_key",
    "estimate_tokens",
    "json_schema_of",
    "parse_output",
    "repair_json",
]
