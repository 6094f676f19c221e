"""A ScriptedLLM per test (the stand-in for a model endpoint)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from pagewarden.testing import ScriptedLLM


@pytest.fixture
def scripted() -> Iterator[ScriptedLLM]:
    with ScriptedLLM() as server:
        yield server
