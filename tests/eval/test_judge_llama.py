"""`pagewarden eval judge` against a real llama.cpp server (Gemma 3 270M; see DEVELOPERS.md).

Skipped, with the reason, where the server is not installed. A 270M base model is far too
small to judge: what is checked is that the evaluation runs end to end on a real endpoint
(structured-output detection, usage reported by the server, latency measured) and that every
item ends with a decision — the model's, or the guard's safe one when it fails.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from pagewarden.cli import main
from pagewarden.eval.judge import DECISIONS
from tests.llama_server import MODEL_NAME, llama_base_url


@pytest.fixture(scope="module")
def llama() -> Iterator[str]:
    with llama_base_url() as url:
        yield url


@pytest.mark.timeout(1800)
def test_eval_judge_against_llama_cpp(llama: str, tmp_path: Path) -> None:
    config = tmp_path / "llm.yaml"
    config.write_text(f"base_url: {llama}\nmodel: {MODEL_NAME}\ntimeout: 600\nmax_tokens: 384\nretries: 0\n")
    out = tmp_path / "report.json"
    result = CliRunner().invoke(
        main,
        ["eval", "judge", "--llm-config", str(config), "--limit", "2", "--deadline", "900",
         "--json", str(out), "-q"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    assert report["items"] == 2 and report["consulted"] == 2 and report["model"] == MODEL_NAME
    for item in report["per_item"]:
        assert item["decision"] in DECISIONS and item["calls"] >= 1 and item["latency_ms"] > 0
        if item["failed"]:
            assert item["decision"] == "block" and item["error"]  # the safe decision
        else:
            assert item["prompt_tokens"] > 200 and item["completion_tokens"] > 0
    assert report["latency_ms"]["p50"] <= report["latency_ms"]["p95"]
