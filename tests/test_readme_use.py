"""The README's "Use" example runs as written: extracted from README.md and run as a script
(real Chromium, found as `pagewarden.launch` finds it; the demo's sites on 127.0.0.1)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def use_example() -> str:
    """The first Python block of the README's "## Use" section."""
    text = README.read_text(encoding="utf-8")
    section = text.split("\n## Use\n", 1)[1].split("\n## ", 1)[0]
    match = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert match is not None, "README's Use section has no python block"
    return match.group(1)


def test_readme_use_example_runs(tmp_path: Path) -> None:
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
