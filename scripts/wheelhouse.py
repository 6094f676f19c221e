"""Fill a wheelhouse: the wheels of pagewarden's dependencies with the ``mcp`` extra and of what
building pagewarden's wheel needs, at the versions of constraints.txt, for this interpreter.

scripts/setup runs it with ``.venv/bin/python`` after the install; tests/test_install.py installs a
wheel of the tree with ``[mcp]`` from that directory offline (``pip --no-index --find-links``).

How, cheaply: uv resolves the requirements against constraints.txt (``uv pip compile --format
pylock.toml``: the exact files on PyPI with their SHA-256, from uv's cache after the install);
for each package the wheel pip would choose for this interpreter is picked (the best-ranked tag
of ``packaging.tags.sys_tags()``) and pip downloads those files by URL, checking each hash, with
no index look-ups and no resolution of its own. A package with no wheel on PyPI (pyperclip) is
built into one by ``uv build`` from its sdist, checked against its SHA-256 (pip's ``pip wheel``
would do the same build at three times the CPU time).
Files already in the wheelhouse with the right hash are kept, so a second run downloads nothing.

    .venv/bin/python scripts/wheelhouse.py .venv/wheelhouse
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import tomllib
import urllib.request
from pathlib import Path

from packaging.tags import sys_tags
from packaging.utils import canonicalize_name, parse_wheel_filename

ROOT = Path(__file__).resolve().parents[1]


def wanted_requirements(pyproject: Path) -> list[str]:
    """The dependencies, the ``mcp`` extra's, and the build system's requirements."""
    project = tomllib.loads(pyproject.read_text())
    return [
        *project["project"]["dependencies"],
        *project["project"]["optional-dependencies"]["mcp"],
        *project["build-system"]["requires"],
    ]


def resolve(requirements: list[str], constraints: Path, uv: Path) -> list[dict]:
    """The packages `requirements` resolve to under `constraints`, as pylock.toml entries."""
    with tempfile.TemporaryDirectory(prefix="pagewarden-wheelhouse-") as work:
        requested = Path(work) / "requirements.in"
        requested.write_text("".join(f"{line}\n" for line in requirements))
        lock = Path(work) / "pylock.toml"
        command = [str(uv), "pip", "compile", "--quiet", "--python", sys.executable]
        command += ["--constraints", str(constraints), "--format", "pylock.toml"]
        subprocess.run([*command, "--output-file", str(lock), str(requested)], check=True)
        return tomllib.loads(lock.read_text())["packages"]


def best_wheel(wheels: list[dict]) -> dict | None:
    """The wheel pip would install here: the one whose best tag ranks first in sys_tags()."""
    rank = {tag: position for position, tag in enumerate(sys_tags())}
    ranked = []
    for wheel in wheels:
        _, _, _, tags = parse_wheel_filename(wheel["url"].rsplit("/", 1)[1])
        positions = [rank[tag] for tag in tags if tag in rank]
        if positions:
            ranked.append((min(positions), wheel))
    return min(ranked, key=lambda item: item[0])[1] if ranked else None


def sha256(path: Path) -> str:
    """The file's SHA-256, hex."""
    with path.open("rb") as file:
        return hashlib.file_digest(file, "sha256").hexdigest()


def has_wheel_of(wheelhouse: Path, name: str, version: str) -> bool:
    for path in wheelhouse.glob("*.whl"):
        found, found_version, _, _ = parse_wheel_filename(path.name)
        if found == canonicalize_name(name) and str(found_version) == version:
            return True
    return False


def build(sdist: dict, uv: Path, wheelhouse: Path) -> None:
    """A wheel of a package PyPI has no wheel of: its sdist (`sdist`: url and hashes), downloaded
    and checked against its SHA-256, built by ``uv build`` (isolated, as pip builds it)."""
    url, expected = sdist["url"], sdist["hashes"]["sha256"]
    with tempfile.TemporaryDirectory(prefix="pagewarden-sdist-") as work:
        path = Path(work) / url.rsplit("/", 1)[1]
        with urllib.request.urlopen(url, timeout=600) as response, path.open("wb") as out:
            shutil.copyfileobj(response, out)
        if sha256(path) != expected:
            raise SystemExit(f"wheelhouse: {url} is not the file PyPI lists")
        command = [str(uv), "build", "--quiet", "--wheel", "--out-dir", str(wheelhouse)]
        subprocess.run([*command, "--python", sys.executable, str(path)], check=True)


def fill(wheelhouse: Path, packages: list[dict], uv: Path) -> None:
    """Download the chosen wheels that are missing, then build the sdist-only packages."""
    wheelhouse.mkdir(parents=True, exist_ok=True)
    downloads = []
    for package in packages:
        wheel = best_wheel(package.get("wheels", []))
        if wheel is None:
            if "sdist" not in package:
                name, version = package["name"], package["version"]
                raise SystemExit(f"wheelhouse: {name} {version} has neither a wheel for here nor an sdist")
            if not has_wheel_of(wheelhouse, package["name"], package["version"]):
                build(package["sdist"], uv, wheelhouse)
            continue
        target = wheelhouse / wheel["url"].rsplit("/", 1)[1]
        if not (target.is_file() and sha256(target) == wheel["hashes"]["sha256"]):
            downloads.append(f"{wheel['url']}#sha256={wheel['hashes']['sha256']}")
    if downloads:
        pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "download", "--quiet"]
        subprocess.run([*pip, "--no-deps", "--no-index", "--dest", str(wheelhouse), *downloads], check=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("wheelhouse", type=Path)
    parser.add_argument("--uv", type=Path, default=Path(sys.executable).with_name("uv"))
    args = parser.parse_args()
    wheelhouse = args.wheelhouse.resolve()
    os.chdir(ROOT)
    packages = resolve(wanted_requirements(ROOT / "pyproject.toml"), ROOT / "constraints.txt", args.uv)
    fill(wheelhouse, packages, args.uv)


if __name__ == "__main__":
    main()
