"""Compatibility with a real llama.cpp server (Gemma 3 270M; see DEVELOPERS.md).

Skipped, with the reason, where the server is not installed. The model is a tiny base
model: what is checked is the protocol (structured-output detection, schema-constrained
answers parsed and validated, usage reported), not how wise its answers are.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pydantic import BaseModel

from pagewarden.llm import LLMClient, LLMConfig
from tests.llama_server import MODEL_NAME, llama_base_url


class Danger(BaseModel):
    destructive: bool
    reason: str


@pytest.fixture(scope="module")
def llama() -> Iterator[str]:
    with llama_base_url() as url:
        yield url


@pytest.mark.timeout(900)
def test_structured_answer_from_llama_cpp(llama: str) -> None:
    client = LLMClient(LLMConfig(llama, MODEL_NAME, timeout=300, max_tokens=96, retries=1))
    messages = [
        {"role": "system", "content": "You judge whether a browser action destroys data."},
        {"role": "user", "content": "The agent will click 'Delete repository'. Is it destructive?"},
    ]
    result = client.complete_sync(messages, schema=Danger)
    assert isinstance(result.parsed, Danger)
    # llama.cpp's server refuses json_schema; the client settles on a schema inside json_object.
    assert client.structured_mode == "json_object"
    assert result.usage.prompt_tokens > 0 and not result.usage.estimated
    client.close()
