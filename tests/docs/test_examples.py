"""Every Python example in the README and the docs runs as written (real Chromium, the demo's
sites on 127.0.0.1, a fresh working directory), or is marked not runnable with its reason."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.docs._examples import ROOT, Example, all_examples, examples

EXAMPLES = all_examples()
# run, with its trace checked line by line, by test_first_page.py
COVERED = {"docs/getting-started/first-page.md#0"}
RUNNABLE = [e for e in EXAMPLES if e.not_runnable is None and e.id not in COVERED]


def test_examples_are_found() -> None:
    assert len(RUNNABLE) >= 5, [e.id for e in RUNNABLE]
    assert any(e.path == ROOT / "README.md" for e in RUNNABLE), "the README's quick start must run"


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: e.id)
def test_every_example_runs_or_says_why_not(example: Example) -> None:
    if example.not_runnable is not None:
        assert len(example.not_runnable) >= 10, f"{example.id}: give the reason it cannot run"
    else:
        ast.parse(example.code, filename=example.id)  # a runnable example is a whole program


def test_marks_are_read(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "<!-- not-runnable: needs a model server -->\n```python\nx = 1\n```\n\n"
        "<!-- prints: 2 -->\n```python\nprint(1 + 1)\n```\n\n```python\npass\n```\n",
        encoding="utf-8",
    )
    found = examples(page)
    assert [e.not_runnable for e in found] == ["needs a model server", None, None]
    assert [e.prints for e in found] == [(), ("2",), ()]


@pytest.mark.browser
@pytest.mark.timeout(600)
@pytest.mark.parametrize("example", RUNNABLE, ids=lambda e: e.id)
def test_example_runs(example: Example, tmp_path: Path) -> None:
    script = tmp_path / "example.py"
    script.write_text(example.code, encoding="utf-8")
    # as a user runs it: `python example.py` without the virtual environment activated, so an
    # example that calls the `pagewarden` command by name (not `sys.executable -m pagewarden`) fails
    venv_bin = str(Path(sys.executable).parent)
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if p and p != venv_bin)
    env.pop("VIRTUAL_ENV", None)
    result = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True,
        timeout=540, check=False,
    )
    assert result.returncode == 0, f"{example.id} (line {example.line}) failed:\n{result.stderr[-3000:]}"
    assert result.stdout.strip(), f"{example.id} printed nothing"
    for text in example.prints:
        assert text in result.stdout, f"{example.id} should print {text!r}; printed:\n{result.stdout}"
