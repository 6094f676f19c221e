"""The layer map (`[tool.importlinter]` in pyproject.toml) holds on the code, and each of its
contracts fails when the shape it protects is broken: a copy of the package with one bad
import added is linted with the project's own configuration."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINT = Path(sys.executable).with_name("lint-imports")

pytestmark = pytest.mark.skipif(not LINT.exists(), reason="import-linter is not installed (the dev extra)")


def _lint(tree: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(LINT), "--no-cache", "--config", str(tree / "pyproject.toml")],
        cwd=tree,
        env={"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=300,
    )


def _modules_only(folder: str, names: list[str]) -> list[str]:
    """What the copy leaves out: caches and every file that is not a module (the linter reads
    modules only; data files such as the eval's labelled set would be test artefacts)."""
    data = [n for n in names if not (Path(folder) / n).is_dir() and not n.endswith(".py")]
    return [*data, *(n for n in names if n == "__pycache__")]


def _copy(tmp_path: Path) -> Path:
    tree = tmp_path / "tree"
    shutil.copytree(ROOT / "pagewarden", tree / "pagewarden", ignore=_modules_only)
    shutil.copy(ROOT / "pyproject.toml", tree / "pyproject.toml")
    return tree


def _add_import(tree: Path, module: str, line: str) -> None:
    path = tree / (module.replace(".", "/") + ".py")
    if not path.exists():
        path = tree / module.replace(".", "/") / "__init__.py"
    text = path.read_text(encoding="utf-8")
    anchor = "from __future__ import annotations\n"
    assert anchor in text, path
    path.write_text(text.replace(anchor, f"{anchor}\n{line}\n", 1), encoding="utf-8")


def test_the_code_keeps_every_contract() -> None:
    result = _lint(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


@pytest.mark.parametrize(
    ("module", "line", "broken"),
    [
        # the core importing an adapter (an upward import)
        ("pagewarden.steps._step", "import pagewarden.interceptors", "Layers"),
        # the decision core reaching Playwright through a module of its own
        ("pagewarden.guard._risk", "import playwright.async_api", "decision core imports no"),
        # the decision core exporting telemetry itself instead of through its event stream
        ("pagewarden.steps._events", "from opentelemetry import trace", "decision core imports no"),
        # another package's private module
        ("pagewarden.judge._context", "from pagewarden.policies._loader import PolicySet", "private module"),
        # a circle inside one package
        ("pagewarden.guard._risk", "import pagewarden.guard._cascade", "circles"),
    ],
    ids=["upward", "core-imports-playwright", "core-imports-opentelemetry", "private-reach-in", "circle"],
)
def test_a_broken_shape_fails_the_lint(tmp_path: Path, module: str, line: str, broken: str) -> None:
    tree = _copy(tmp_path)
    _add_import(tree, module, line)
    result = _lint(tree)
    assert result.returncode != 0, result.stdout
    broken_section = result.stdout.split("Broken contracts", 1)[-1]
    assert broken.lower() in broken_section.lower(), result.stdout
