"""Playwright's own tests on the guarded page: the quick selection CI runs (the whole set, the
modules for pages, locators, frames, clicks, typing, input, focus, navigation and element
handles, is `benchmarks/playwright_suite.py`'s; its results are in docs/explanations/benchmarks.md).

The script unpacks the sdist scripts/setup fetched into a temporary directory, swaps the `page`
and `context` fixtures, and runs each selected test in monitor mode and in enforce mode with
permissive policies, under the async and the sync API, in one pytest process."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "playwright_suite.py"
QUICK = 5  # tests in playwright_suite.QUICK


@pytest.mark.timeout(900)  # one pytest process, two browsers: 14 s of CPU, 112 s wall at load 50
def test_playwrights_own_tests_cannot_tell_the_guarded_page_from_a_raw_one(tmp_path: Path) -> None:
    out = tmp_path / "result.json"
    # guarded only: the selection passes raw (benchmarks/results/playwright_suite.json); a test
    # of it that fails on the guarded page is the guard's doing
    command = [sys.executable, str(SCRIPT), "--quick", "--modes", "monitor,enforce", "--no-download",
               "--workdir", str(tmp_path / "suite"), "--out", str(out)]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=900)
    assert out.exists(), done.stdout[-4000:] + done.stderr[-4000:]
    result = json.loads(out.read_text())
    assert set(result["apis"]) == {"async", "sync"}
    selected = QUICK
    for api, data in result["apis"].items():
        assert data["tests"] == selected, (api, data["tests"])  # the whole selection ran
        for mode in ("monitor", "enforce"):
            assert data["counts"][mode] == {"passed": selected}, (
                api, mode, data["passing_raw_failing_guarded"][mode])  # fmt: skip
    assert done.returncode == 0, done.stdout[-4000:]
