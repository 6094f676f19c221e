"""Playwright's own tests on the guarded page: is the drop-in indistinguishable from a raw page?

Playwright's source distribution on PyPI carries its test suite (``tests/async``,
``tests/sync``, the test server and assets). This script takes the sdist of exactly the version
``constraints.txt`` pins (checked against its SHA-256), unpacks its ``tests/`` into a directory
outside the repository, and writes a ``conftest.py`` beside the chosen test modules that swaps
Playwright's ``page`` and ``context`` fixtures for the ones in
``benchmarks/_playwright_suite/pagewarden_suite_plugin.py``. Every test that uses ``page`` or
``context`` then runs once per mode in one pytest session on one Chromium:

* ``raw``: Playwright's own fixtures;
* ``monitor``: ``Guard(mode="monitor").wrap(await context.new_page())``;
* ``enforce``: ``Guard(mode="enforce", baseline=False, approver=approve_all)``: enforce mode
  with permissive policies.

It reports, per API (async, sync) and mode, how many tests pass, and every test that passes raw
but fails guarded, with its reason when it is one of the known differences (`KNOWN`). The
modules are those for pages, locators, frames, clicks, typing, input, focus, navigation and
element handles (`MODULES`); ``--quick`` runs the small selection CI runs (`QUICK`).

The test dependencies (Twisted, autobahn, pyee, pixelmatch) are in the ``dev`` extra. A test
that hangs past Playwright's own 30 s timeout ends its pytest process (pytest-timeout's thread
method); the run goes on with the tests left, and the one that hung is reported as ``crashed``.

    .venv/bin/python benchmarks/playwright_suite.py                  # all modules, async and sync
    .venv/bin/python benchmarks/playwright_suite.py --quick          # the CI selection
    .venv/bin/python benchmarks/playwright_suite.py --api async --modules test_page_basic.py
    .venv/bin/python benchmarks/playwright_suite.py --fetch-only     # download the sdist (scripts/setup)
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import tomllib
import urllib.request
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PLUGIN_DIR = Path(__file__).resolve().parent / "_playwright_suite"
sys.path.insert(0, str(PLUGIN_DIR))

from pagewarden_suite_plugin import MODES, split_id  # noqa: E402

#: The sdists this script runs, by version: their SHA-256 (the test code is run: it is checked).
SDIST_SHA256 = {
    "1.65.2": "8b031f81de9cdbe8550d8fe8b58dba47d96239e53177ee4cd47dab0fff07a87e",
}

#: The test modules, by what they test (the same file names under tests/async/page and tests/sync/page).
MODULES: dict[str, list[str]] = {
    "pages": ["test_page_basic.py", "test_page_evaluate.py", "test_page_expose_function.py",
              "test_page_event_popup.py"],
    "locators": ["test_locator_*.py"],
    "frames": ["test_frame_*.py"],
    "clicks": ["test_page_click*.py", "test_page_dispatchevent.py"],
    "typing": ["test_page_keyboard.py"],
    "input": ["test_page_fill.py", "test_page_check.py", "test_page_select_option.py",
              "test_page_set_input_files.py"],
    "focus": ["test_page_focus.py"],
    "navigation": ["test_page_navigation.py", "test_page_goto.py", "test_page_history.py",
                   "test_page_wait_for_navigation.py"],
    "element handles": ["test_elementhandle_*.py"],
}  # fmt: skip

#: The CI selection: tests that fail on a guarded page when a result, a callback, an error or
#: the wrapper's face stops passing through exactly (module, test function).
QUICK: list[tuple[str, str]] = [
    ("test_page_basic.py", "test_PA_002_async_stacks_should_work"),
    ("test_page_basic.py", "test_PA_003_should_provide_access_to_the_opener_page"),
    ("test_page_focus.py", "test_FO_002_should_emit_focus_event"),
    ("test_locator_convenience.py", "test_LO_057_should_have_a_nice_preview"),
    ("test_locator_any_frame.py", "test_LO_003_should_fail_click_when_elements_match_in_multiple_frames"),
]

#: Tests that cannot pass on a guarded page, by test function, with the modes and the reason.
KNOWN: dict[str, tuple[tuple[str, ...], str]] = {
    "test_DE_009_should_be_atomic": (
        ("monitor", "enforce"),
        "the test registers a selector engine that changes the element it finds (it clears the "
        "element's onclick once queried): the guard resolves the selector to observe the target "
        "before the action, so the action meets the element already changed",
    ),
    "test_NA_039_should_succeed_on_url_bar_navigation_when_there_is_pending_navigation": (
        ("enforce",),
        "a goto while the page's own navigation is pending: enforce mode reads the page before "
        "judging the goto, and Chromium holds that read until the page's navigation ends, so the "
        "goto starts after it (monitor mode does not read the page then and passes)",
    ),
}

#: Refusals that are the guard's purpose, whichever test meets them: the guard's exception
#: naming this policy rule, in these modes (a test opening a local file with page.goto).
KNOWN_REFUSALS: dict[str, tuple[tuple[str, ...], str]] = {
    "[PW-NAVIGATION/file_url]": (
        ("enforce",),
        "the test opens a file: URL; the guard refuses it in enforce mode (PW-NAVIGATION/file_url, "
        "a boundary of the browser tier, not a policy that permissive policies turn off: a page "
        "must not lead the agent to this machine's files); monitor mode records it and runs it",
    ),
}


@dataclass
class Outcome:
    """One test in one mode."""

    outcome: str  # passed | failed | skipped | error | crashed
    duration: float = 0.0
    message: str = ""


@dataclass
class ApiRun:
    """The outcomes of one API's run, by test id (without the mode) and mode."""

    api: str
    results: dict[str, dict[str, Outcome]] = field(default_factory=dict)
    seconds: float = 0.0
    restarts: int = 0


# -- the sdist -------------------------------------------------------------------------------
def pinned_version() -> str:
    """The Playwright version constraints.txt pins."""
    for line in (ROOT / "constraints.txt").read_text(encoding="utf-8").splitlines():
        found = re.fullmatch(r"\s*playwright==([^\s;#]+).*", line)
        if found:
            return found.group(1)
    raise SystemExit("constraints.txt pins no playwright version")


def sdist_cache() -> Path:
    """Where scripts/setup keeps the sdist (inside .venv: made by setup, never committed)."""
    return ROOT / ".venv" / "share" / "pagewarden" / "playwright-sdist"


def sha256(path: Path) -> str:
    """The file's SHA-256, hex."""
    with path.open("rb") as file:
        return hashlib.file_digest(file, "sha256").hexdigest()


def fetch_sdist(version: str, given: Path | None = None, *, download: bool = True) -> Path:
    """The sdist of `version`: `given`, or the cached one, or downloaded; checked."""
    path = given
    if path is None:
        cache = sdist_cache()
        path = cache / f"playwright-{version}.tar.gz"
        if not path.exists() and not download:
            raise SystemExit(f"{path} is missing: scripts/setup fetches it")
        if not path.exists():
            cache.mkdir(parents=True, exist_ok=True)
            with tempfile.TemporaryDirectory() as tmp:
                shutil.move(str(download_sdist(version, Path(tmp))), path)
    expected = SDIST_SHA256.get(version)
    actual = sha256(path)
    if expected and actual != expected:
        raise SystemExit(f"{path}: SHA-256 {actual}, expected {expected} for playwright {version}")
    return path


def download_sdist(version: str, into: Path) -> Path:
    """Playwright's sdist from PyPI, into `into`. With uv (scripts/setup installs it next to this
    Python): the file's address and SHA-256 as uv's resolver lists them (``uv pip compile --format
    pylock.toml``), then the one file, checked. Without it, ``pip download --no-binary``, which
    also builds the sdist's metadata (its build tools from source first: minutes of CPU)."""
    uv = Path(sys.executable).with_name("uv")
    if not uv.is_file():
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check",
             "--no-binary", ":all:", "--no-deps", f"playwright=={version}", "-d", str(into)],
            check=True,
        )  # fmt: skip
        found = list(into.glob("playwright-*.tar.gz"))
        if len(found) != 1:
            raise SystemExit(f"pip download gave {found}, not one playwright sdist")
        return found[0]
    (into / "requirements.in").write_text(f"playwright=={version}\n")
    command = [str(uv), "pip", "compile", "--quiet", "--no-deps", "--python", sys.executable]
    command += ["--format", "pylock.toml", "--output-file", str(into / "pylock.toml")]
    subprocess.run([*command, str(into / "requirements.in")], check=True)
    lock = tomllib.loads((into / "pylock.toml").read_text(encoding="utf-8"))
    sdists = [package.get("sdist") for package in lock["packages"] if package["name"] == "playwright"]
    if len(sdists) != 1 or not sdists[0]:
        raise SystemExit(f"uv lists no sdist of playwright {version}")
    path = into / f"playwright-{version}.tar.gz"
    with urllib.request.urlopen(sdists[0]["url"], timeout=600) as response, path.open("wb") as out:
        shutil.copyfileobj(response, out)
    if sha256(path) != sdists[0]["hashes"]["sha256"]:
        raise SystemExit(f"{sdists[0]['url']}: not the SHA-256 PyPI lists")
    return path


def unpack(sdist: Path, into: Path, api_dirs: list[str]) -> Path:
    """Playwright's ``tests/`` and its pytest settings (pyproject.toml) from `sdist` into `into`,
    with the conftest files that swap the fixtures. Returns `into`."""
    top = None
    with tarfile.open(sdist) as archive:
        members = []
        for member in archive.getmembers():
            parts = Path(member.name).parts
            top = top or parts[0]
            if len(parts) >= 2 and (parts[1] == "tests" or parts[1:] == ("pyproject.toml",)):
                if member.issym() or member.islnk() or ".." in parts:
                    continue
                member.name = str(Path(*parts[1:]))
                members.append(member)
        archive.extractall(into, members=members, filter="data")
    if not (into / "tests" / "conftest.py").exists():
        raise SystemExit(f"{sdist} carries no tests/ (looked for tests/conftest.py)")
    for api in api_dirs:
        directory = into / "tests" / api / "page"
        conftest = directory / "conftest.py"
        if conftest.exists():
            raise SystemExit(f"{conftest} exists: Playwright's layout changed, check the fixtures swap")
        conftest.write_text(_CONFTEST.format(api=api), encoding="utf-8")
    return into


_CONFTEST = '''"""Written by pagewarden's benchmarks/playwright_suite.py: the page and context fixtures of
these tests, guarded (see pagewarden_suite_plugin)."""

import pytest

from pagewarden_suite_plugin import launch_arguments  # noqa: F401 - replaces tests/conftest.py's


@pytest.fixture
def context({api}_context):
    return {api}_context


@pytest.fixture
def page({api}_page):
    return {api}_page
'''


# -- running -----------------------------------------------------------------------------------
def module_paths(work: Path, api: str, patterns: list[str]) -> list[str]:
    """The test module paths (relative to `work`) matching `patterns`, sorted, each once."""
    base = work / "tests" / api / "page"
    found: list[str] = []
    for pattern in patterns:
        matches = sorted(base.glob(pattern))
        if not matches:
            raise SystemExit(f"no module {pattern} under {base}")
        found.extend(str(p.relative_to(work)) for p in matches if str(p.relative_to(work)) not in found)
    return found


def _pytest(work: Path, args: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    paths = [str(PLUGIN_DIR), str(work)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])
    env["PYTHONPATH"] = os.pathsep.join(paths)
    for name in [n for n in env if n.startswith(("PYTEST_ADDOPTS", "PYTEST_XDIST", "PYTEST_CURRENT"))]:
        del env[name]  # (run from a test, under xdist: this pytest is a new session of its own)
    command = [sys.executable, "-m", "pytest", "-p", "pagewarden_suite_plugin", "-p", "no:cacheprovider",
               "--browser", "chromium", "-o", "addopts=", "-q", "-rN", *args]  # fmt: skip
    return subprocess.run(command, cwd=work, env=env, capture_output=True, text=True, timeout=timeout)


def run_api(
    work: Path, api: str, modules: list[str], modes: list[str], *, keyword: str | None, timeout: float,
    log: Path | None = None,
) -> ApiRun:  # fmt: skip
    """Run `modules` of `api` in `modes`; restarts with the tests left when a test ends the process."""
    run = ApiRun(api)
    started = time.perf_counter()
    base_args = ["--pagewarden-modes", ",".join(modes), *modules] + (["-k", keyword] if keyword else [])
    remaining: list[str] | None = None  # None: all of them (the first run collects them itself)
    listed = work / f"only-{api}.txt"
    while True:
        report = work / f"report-{api}-{run.restarts}.jsonl"  # one per process (follow with tail -f)
        report.write_text("", encoding="utf-8")
        args = ["--pagewarden-report", str(report), *base_args]
        if remaining is not None:
            listed.write_text("\n".join(remaining) + "\n", encoding="utf-8")
            args = ["--pagewarden-only", str(listed), *args]
        try:
            done = _pytest(work, args, timeout)
            output, code = done.stdout + done.stderr, done.returncode
        except subprocess.TimeoutExpired as expired:
            output, code = f"{expired.stdout or ''}{expired.stderr or ''}\n(over {timeout:g} s)", -1
        if log is not None:
            with log.open("a", encoding="utf-8") as out:
                count = "all" if remaining is None else len(remaining)
                out.write(f"\n===== {api} ({count} tests)\n{output}")
        hung = _read_report(report, run)
        for nodeid in hung:
            test, mode = split_id(nodeid)
            crashed = Outcome("crashed", message="the test ended its process")
            run.results.setdefault(test, {})[mode] = crashed
        if code in (0, 1, 5) and not hung:
            break  # the process ran to its end (5: nothing collected)
        if not hung:
            raise SystemExit(f"{api}: pytest ended with {code} and no test running:\n{output[-3000:]}")
        if remaining is None:
            collected = _pytest(work, ["--collect-only", *base_args], timeout)
            remaining = [line.strip() for line in collected.stdout.splitlines() if "::" in line]
        remaining = [i for i in remaining if _outcome_of(run, i) is None]
        if not remaining:
            break
        run.restarts += 1
    if not run.results:
        raise SystemExit(f"{api}: no test ran")
    run.seconds = round(time.perf_counter() - started, 1)
    return run


def _outcome_of(run: ApiRun, nodeid: str) -> Outcome | None:
    test, mode = split_id(nodeid)
    return run.results.get(test, {}).get(mode)


def _read_report(report: Path, run: ApiRun) -> list[str]:
    """Fold the report's lines into `run`; returns the tests that started and never reported."""
    started: list[str] = []
    reported: set[str] = set()
    for line in report.read_text(encoding="utf-8").splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        nodeid = event["nodeid"]
        if event["event"] == "start":
            started.append(nodeid)
            continue
        reported.add(nodeid)
        test, mode = split_id(nodeid)
        mine = run.results.setdefault(test, {})
        previous = mine.get(mode)
        outcome = event["outcome"]
        if event["when"] != "call" and outcome == "failed":
            outcome = "error"
        if previous is None or (previous.outcome in ("passed", "skipped") and outcome == "error"):
            mine[mode] = Outcome(outcome, float(event.get("duration", 0.0)), event.get("message", ""))
        elif event["when"] == "call":
            previous.duration = float(event.get("duration", 0.0))
    return [nodeid for nodeid in started if nodeid not in reported]


# -- the comparison ------------------------------------------------------------------------------
def function_of(test: str) -> str:
    """The test function's name in a test id (``…::test_x[chromium]`` → ``test_x``)."""
    return test.split("::")[-1].split("[")[0]


def compare(run: ApiRun, modes: list[str]) -> dict[str, Any]:
    """Counts per mode, and each test that passes raw but not guarded, with its known reason."""
    every = list(run.results.values())
    counts = {mode: Counter(o[mode].outcome if mode in o else "missing" for o in every) for mode in modes}
    durations = {mode: round(sum(o[mode].duration for o in every if mode in o), 1) for mode in modes}
    differences: dict[str, list[dict[str, Any]]] = {}
    for mode in modes:
        if mode == "raw":
            continue
        rows = []
        for test, outcomes in sorted(run.results.items()):
            raw = outcomes.get("raw")
            guarded = outcomes.get(mode)
            if raw is None and "raw" not in modes:
                raw = Outcome("passed")  # not run raw (--quick): the selection passes raw
            if raw is None or raw.outcome != "passed" or guarded is None or guarded.outcome == "passed":
                continue
            known = KNOWN.get(function_of(test))
            reason = known[1] if known is not None and mode in known[0] else None
            if reason is None and "ActionBlocked" in guarded.message:
                for marker, (modes_, why) in KNOWN_REFUSALS.items():
                    if mode in modes_ and marker in guarded.message:
                        reason = why
            rows.append({"test": test, "outcome": guarded.outcome, "known_reason": reason,
                         "message": guarded.message[:1500]})  # fmt: skip
        differences[mode] = rows
    return {
        "tests": len(run.results),
        "counts": {mode: dict(counts[mode]) for mode in modes},
        "test_seconds": durations,
        "run_seconds": run.seconds,
        "restarts": run.restarts,
        "passing_raw_failing_guarded": differences,
    }


def _table(summary: dict[str, Any], modes: list[str]) -> str:
    lines = [f"{'api':<6} {'mode':<8} {'tests':>5} {'passed':>6} {'failed':>6} {'skipped':>7} "
             f"{'raw-pass→fail':>13} {'unexplained':>11} {'test s':>7}"]  # fmt: skip
    for api, data in summary.items():
        for mode in modes:
            counts = data["counts"][mode]
            diff = data["passing_raw_failing_guarded"].get(mode, [])
            unexplained = sum(1 for d in diff if d["known_reason"] is None)
            failed = counts.get("failed", 0) + counts.get("error", 0) + counts.get("crashed", 0)
            lines.append(
                f"{api:<6} {mode:<8} {data['tests']:>5} {counts.get('passed', 0):>6} {failed:>6} "
                f"{counts.get('skipped', 0):>7} {'-' if mode == 'raw' else len(diff):>13} "
                f"{'-' if mode == 'raw' else unexplained:>11} {data['test_seconds'][mode]:>7}"
            )
    return "\n".join(lines)


def _load() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def _commit() -> str | None:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                              text=True, check=True).stdout.strip()  # fmt: skip
    except (OSError, subprocess.CalledProcessError):
        return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--api", choices=("async", "sync"), action="append", help="default: both")
    parser.add_argument(
        "--modes",
        default=",".join(MODES),
        help="comma-separated: raw,monitor,enforce (raw is always run, except with --quick)",
    )
    parser.add_argument("--modules", nargs="*", help="module file names or patterns (default: MODULES)")
    parser.add_argument("--quick", action="store_true", help="the CI selection (QUICK)")
    parser.add_argument("-k", dest="keyword", help="pytest -k expression")
    parser.add_argument("--sdist", type=Path, help="the playwright sdist (default: cached, or pip download)")
    parser.add_argument("--workdir", type=Path, help="unpack here (default: a temporary directory)")
    parser.add_argument("--timeout", type=float, default=7200.0, help="seconds for one pytest process")
    parser.add_argument("--out", type=Path, help="the JSON result (default: results/playwright_suite.json)")
    parser.add_argument("--log", type=Path, help="append pytest's output here")
    parser.add_argument("--fetch-only", action="store_true", help="download and check the sdist, then stop")
    parser.add_argument("--no-download", action="store_true", help="use the cached sdist only (tests)")
    parser.add_argument("--parallel", action="store_true", help="the async and sync APIs at once")
    parser.add_argument("--together", action="store_true",
                        help="the APIs in one pytest process (the default with --quick)")  # fmt: skip
    args = parser.parse_args(argv)

    version = pinned_version()
    sdist = fetch_sdist(version, args.sdist, download=not args.no_download)
    if args.fetch_only:
        print(f"{sdist} (sha256 {sha256(sdist)})")
        return 0
    apis = args.api or ["async", "sync"]
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    if "raw" not in modes and not args.quick:
        modes.insert(0, "raw")  # (the quick selection is chosen from tests that pass raw)
    patterns = args.modules or [m for group in MODULES.values() for m in group]
    keyword = args.keyword
    if args.quick:
        patterns = sorted({module for module, _ in QUICK})
        keyword = " or ".join(test for _, test in QUICK)
        args.together = True
    summary: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="pagewarden-playwright-suite-") as tmp:
        work = args.workdir or Path(tmp)
        if work.resolve().is_relative_to(ROOT):
            raise SystemExit(f"--workdir {work} is inside the repository: unpack it elsewhere")
        work.mkdir(parents=True, exist_ok=True)
        unpack(sdist, work, apis)

        def one(api: str) -> None:
            modules = module_paths(work, api, patterns)
            run = run_api(work, api, modules, modes, keyword=keyword, timeout=args.timeout, log=args.log)
            summary[api] = {**compare(run, modes), "modules": [Path(m).name for m in modules]}

        if args.together:  # one pytest process (one Python, one test server) for every API
            modules = {api: module_paths(work, api, patterns) for api in apis}
            run = run_api(work, "+".join(apis), [m for api in apis for m in modules[api]], modes,
                          keyword=keyword, timeout=args.timeout, log=args.log)  # fmt: skip
            for api in apis:
                part = ApiRun(api, {t: o for t, o in run.results.items() if t.startswith(f"tests/{api}/")},
                              run.seconds, run.restarts)  # fmt: skip
                summary[api] = {**compare(part, modes), "modules": [Path(m).name for m in modules[api]]}
        else:  # the APIs side by side (--parallel) or one after the other, each in its own process
            with ThreadPoolExecutor(max_workers=len(apis) if args.parallel else 1) as pool:
                for done in [pool.submit(one, api) for api in apis]:
                    done.result()
        summary = {api: summary[api] for api in apis}
    table = _table(summary, modes)
    print(table)
    for api, data in summary.items():
        for mode, rows in data["passing_raw_failing_guarded"].items():
            for row in rows:
                first = (row["message"].splitlines() or [""])[0][:200]
                reason = row["known_reason"] or f"UNEXPLAINED: {first}"
                print(f"  {api} {mode}: {row['test']} ({row['outcome']}): {reason}")
    result = {
        "benchmark": "playwright_suite",
        "command": "benchmarks/playwright_suite.py " + " ".join(argv if argv is not None else sys.argv[1:]),
        "commit": _commit(),
        "load_before": _load(),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "playwright": version,
        "sdist_sha256": sha256(sdist),
        "modes": {
            "raw": "Playwright's own page and context fixtures",
            "monitor": 'Guard(mode="monitor").wrap(await context.new_page())',
            "enforce": 'Guard(mode="enforce", baseline=False, approver=approve_all): permissive policies',
        },
        "known": {name: {"modes": list(m), "reason": r} for name, (m, r) in KNOWN.items()},
        "known_refusals": {rule: {"modes": list(m), "reason": r} for rule, (m, r) in KNOWN_REFUSALS.items()},
        "apis": summary,
        "table": table,
    }
    if not args.quick or args.out:
        out = args.out or ROOT / "benchmarks" / "results" / "playwright_suite.json"
        out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
        print(f"wrote {out}")
    unexplained = sum(
        1 for data in summary.values() for rows in data["passing_raw_failing_guarded"].values()
        for row in rows if row["known_reason"] is None
    )  # fmt: skip
    return 1 if unexplained else 0


if __name__ == "__main__":
    sys.exit(main())
