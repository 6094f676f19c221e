"""The first example of the docs ("Your first guarded page") runs as written: extracted from
docs/getting-started/first-page.md and run as a script (real Chromium, found as
`pagewarden.launch` finds it; the demo's sites on 127.0.0.1), with its trace checked step by step.
`test_examples.py` runs every other example."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

FIRST_PAGE = Path(__file__).resolve().parents[2] / "docs" / "getting-started" / "first-page.md"


def use_example() -> str:
    """The first Python block of the "first guarded page" page."""
    match = re.search(r"```python\n(.*?)```", FIRST_PAGE.read_text(encoding="utf-8"), re.DOTALL)
    assert match is not None, "first-page.md has no python block"
    return match.group(1)


def test_first_page_example_runs(tmp_path: Path) -> None:
    script = tmp_path / "use.py"
    script.write_text(use_example(), encoding="utf-8")
    result = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=600, check=False
    )
    assert result.returncode == 0, result.stderr[-3000:]
    lines = result.stdout.strip().splitlines()
    assert lines[0].startswith("block ['STAY-ON-TRACKER'"), result.stdout
    assert lines[-1] == "http://tracker.test/acme/webapp/issues/1", result.stdout
    records = [json.loads(line) for line in (tmp_path / "out" / "trace.jsonl").read_text().splitlines()]
    steps = [(r["step"]["action"]["kind"], r["verdict"]["decision"]) for r in records]
    assert steps == [("goto", "allow"), ("fill", "allow"), ("goto", "block")]
    assert records[2]["step"]["action"]["value"].startswith("http://evil.test/")
