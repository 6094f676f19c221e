"""Installing pagewarden as the install guide says, outside the checkout (pagewarden is on no
package index): a wheel built from this tree by the documented command, installed with an
extra into a fresh virtual environment in a temporary directory, and its `pagewarden` command
run from there, in an empty home: `pagewarden mcp --help` and `pagewarden demo` (one scenario,
through the network layer, so the wheel's package data — the demo site, the observer's
scripts, the baseline policies, the prompts — and mitmproxy are exercised).

What makes it cheap, and what it does not cover: the dependencies' wheels come from
``.venv/wheelhouse`` (filled by scripts/setup from constraints.txt), so pip installs offline
(``--no-index``) and resolves the wheel's requirements with the extra against them; a user's pip
downloads the same versions from PyPI instead. The new environment has no pip of its own: the
checkout's pip installs into it (``pip --python``), which is the same pip doing the same
install."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
WHEELHOUSE = ROOT / ".venv" / "wheelhouse"

pytestmark = [pytest.mark.browser, pytest.mark.timeout(900)]


def _run(args: list[str], **kwargs) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(args, capture_output=True, text=True, timeout=600, **kwargs)
    assert done.returncode == 0, f"{args}:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    return done


def _source_copy(into: Path) -> Path:
    """The tree as a wheel is built from it (the project's files, no caches or build leftovers):
    building in a copy leaves nothing in the checkout and lets tests run side by side."""
    into.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, into / name)
    shutil.copytree(
        ROOT / "pagewarden", into / "pagewarden", ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
    )
    return into


@pytest.mark.skipif(
    not WHEELHOUSE.is_dir(), reason="no .venv/wheelhouse: run scripts/setup (it fills the wheelhouse)"
)
def test_a_wheel_installs_with_an_extra_into_a_fresh_environment_and_runs(tmp_path: Path) -> None:
    # The source copy, the wheel and the environment are copies of the project's own files (its
    # sample data included), not artefacts of a run: they live outside the test's temporary
    # directory, which the session's secrets check reads, and are removed afterwards. What the
    # installed command writes (its home, the demo's report) stays in tmp_path and is checked.
    with tempfile.TemporaryDirectory(prefix="pagewarden-install-") as build:
        _install_and_run(Path(build), tmp_path)


def _install_and_run(build: Path, tmp_path: Path) -> None:
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check"]
    offline = ["--no-index", "--find-links", str(WHEELHOUSE)]
    # the documented command: python -m pip wheel --no-deps -w dist /path/to/pagewarden
    source = _source_copy(build / "src")
    _run([*pip, "wheel", "--no-deps", *offline, "-w", str(build / "dist"), str(source)])
    (wheel,) = (build / "dist").glob("pagewarden-*-py3-none-any.whl")

    venv = build / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    python = venv / "bin" / "python"
    _run([*pip, "--python", str(python), "install", "--quiet", *offline,
          "-c", str(ROOT / "constraints.txt"), f"{wheel}[mcp]"])  # fmt: skip

    home = tmp_path / "home"
    home.mkdir()
    run_dir = tmp_path / "work"
    run_dir.mkdir()
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        **{k: v for k, v in os.environ.items() if k in ("PAGEWARDEN_CHROMIUM", "PLAYWRIGHT_BROWSERS_PATH")},
    }
    code = "import mcp, pagewarden; print(pagewarden.__file__)"
    where = _run([str(python), "-c", code], cwd=run_dir, env=env)
    assert Path(where.stdout.strip()).is_relative_to(venv), where.stdout  # the wheel's, not the checkout's
    command = venv / "bin" / "pagewarden"
    assert command.is_file()

    helped = _run([str(command), "mcp", "--help"], cwd=run_dir, env=env)
    assert "Usage: pagewarden mcp" in helped.stdout

    demo = _run([str(command), "demo", "--scenario", "tracker-token", "--no-ask", "--out", "out"],
                cwd=run_dir, env={**env, "COLUMNS": "200"})  # fmt: skip
    assert "PASS: every planted attack stopped, every benign action allowed" in demo.stdout, demo.stdout
    assert "network layer: 2 run(s) through their own proxy" in demo.stdout
    assert (run_dir / "out" / "report.html").is_file()
