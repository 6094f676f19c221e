"""pytest plugin for Playwright's own tests: each test that uses the `page` or `context`
fixture runs once per mode, raw and guarded, in one session on one browser.

`benchmarks/playwright_suite.py` loads it (``-p pagewarden_suite_plugin``) into a copy of
Playwright's test suite unpacked outside the repository, and writes a ``conftest.py`` next to
the test modules that re-exports `page`, `context` and `launch_arguments` from here, so that
they replace Playwright's own fixtures. The modes:

* ``raw``: Playwright's fixtures as they are;
* ``monitor``: ``Guard(mode="monitor")`` (the default policies: judged and recorded, nothing
  blocked);
* ``enforce``: ``Guard(mode="enforce", baseline=False, approver=approve_all)`` (permissive
  policies: any refusal left is the guard's own, such as a page it could not read).

The `page` is ``guard.wrap(await context.new_page())`` and the `context` the same guard's
stand-in for the browser context, as an agent would set them up.

Options: ``--pagewarden-modes raw,monitor,enforce``; ``--pagewarden-report FILE`` (a JSON line
when each test starts and one per outcome, for the runner); ``--pagewarden-only FILE`` (run
only the test ids listed there, one a line, with the mode in brackets as reported).
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncGenerator, Generator
from typing import Any

import pytest

from pagewarden import Guard, approve_all
from pagewarden._browser import chromium_launch_options

MODES = ("raw", "monitor", "enforce")
_REPORT: list[Any] = []


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("pagewarden", "pagewarden drop-in")
    group.addoption("--pagewarden-modes", default="raw", help="comma-separated: raw, monitor, enforce")
    group.addoption("--pagewarden-report", default=None, help="write a JSON line per test event here")
    group.addoption("--pagewarden-only", default=None, help="a file of the test ids to run")


def _modes(config: pytest.Config) -> list[str]:
    modes = [m.strip() for m in str(config.getoption("--pagewarden-modes")).split(",") if m.strip()]
    unknown = [m for m in modes if m not in MODES]
    if unknown or not modes:
        raise pytest.UsageError(f"--pagewarden-modes: {unknown or modes} (choose from {', '.join(MODES)})")
    return modes


def make_guard(mode: str) -> Guard:
    """The guard of one test: monitor mode with the defaults, or enforce with permissive policies."""
    if mode == "monitor":
        return Guard(mode="monitor")
    return Guard(mode="enforce", baseline=False, approver=approve_all)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "pagewarden_mode" in metafunc.fixturenames:
        modes = _modes(metafunc.config)
        metafunc.parametrize("pagewarden_mode", modes, indirect=True, ids=[f"pw-{m}" for m in modes])


@pytest.fixture
def pagewarden_mode(request: pytest.FixtureRequest) -> str:
    """raw, monitor or enforce (parametrized for each test that uses `page` or `context`)."""
    return str(getattr(request, "param", "raw"))


@pytest.fixture
def pagewarden_guard(pagewarden_mode: str) -> Guard | None:
    """The guard of this test (None when it runs raw)."""
    return None if pagewarden_mode == "raw" else make_guard(pagewarden_mode)


@pytest.fixture(scope="session")
def launch_arguments(headless: bool) -> dict[str, Any]:
    """Playwright's launch arguments with the project's Chromium and its flags."""
    return chromium_launch_options(headless=headless)


# -- async ---------------------------------------------------------------------------------
@pytest.fixture
async def async_raw_context(context_factory: Any) -> AsyncGenerator[Any, None]:
    """A new browser context, as Playwright's `context` fixture makes it."""
    raw = await context_factory()
    yield raw
    await raw.close()


@pytest.fixture
def async_context(async_raw_context: Any, pagewarden_guard: Guard | None) -> Any:
    """Playwright's `context`, guarded unless the mode is raw."""
    return async_raw_context if pagewarden_guard is None else pagewarden_guard.wrap(async_raw_context)


@pytest.fixture
async def async_page(async_raw_context: Any, async_context: Any, pagewarden_guard: Guard | None) -> Any:
    """Playwright's `page`: ``guard.wrap(await context.new_page())`` unless the mode is raw."""
    page = await async_raw_context.new_page()
    return page if pagewarden_guard is None else pagewarden_guard.wrap(page)


# -- sync ----------------------------------------------------------------------------------
@pytest.fixture
def sync_raw_context(context_factory: Any) -> Generator[Any, None, None]:
    """A new browser context (sync API), as Playwright's `context` fixture makes it."""
    raw = context_factory()
    yield raw
    raw.close()


@pytest.fixture
def sync_context(sync_raw_context: Any, pagewarden_guard: Guard | None) -> Any:
    """Playwright's `context` (sync API), guarded unless the mode is raw."""
    return sync_raw_context if pagewarden_guard is None else pagewarden_guard.wrap(sync_raw_context)


@pytest.fixture
def sync_page(sync_raw_context: Any, sync_context: Any, pagewarden_guard: Guard | None) -> Any:
    """Playwright's `page` (sync API): ``guard.wrap(context.new_page())`` unless the mode is raw."""
    page = sync_raw_context.new_page()
    return page if pagewarden_guard is None else pagewarden_guard.wrap(page)


# -- selection and report ---------------------------------------------------------------------
def pytest_configure(config: pytest.Config) -> None:
    path = config.getoption("--pagewarden-report")
    if path:
        _REPORT.append(open(path, "a", encoding="utf-8"))  # noqa: SIM115 - closed at unconfigure


def pytest_unconfigure(config: pytest.Config) -> None:
    while _REPORT:
        _REPORT.pop().close()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    only = config.getoption("--pagewarden-only")
    if not only:
        return
    with open(only, encoding="utf-8") as listed:
        wanted = {line.strip() for line in listed if line.strip()}
    keep = [item for item in items if item.nodeid in wanted]
    dropped = [item for item in items if item.nodeid not in wanted]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
    items[:] = keep


def _write(line: dict[str, Any]) -> None:
    if _REPORT:
        _REPORT[0].write(json.dumps(line) + "\n")
        _REPORT[0].flush()


_MODE_ID = re.compile(r"-?pw-(raw|monitor|enforce)(?=[-\]])")


def split_id(nodeid: str) -> tuple[str, str]:
    """(the test's id without the mode, the mode) of a reported test id."""
    found = _MODE_ID.search(nodeid)
    if found is None:
        return nodeid, "raw"
    return (nodeid[: found.start()] + nodeid[found.end() :]).replace("[-", "["), found.group(1)


def pytest_runtest_logstart(nodeid: str, location: Any) -> None:
    _write({"event": "start", "nodeid": nodeid})


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """One JSON line per test phase that is not a passing setup or teardown."""
    if report.when != "call" and report.outcome == "passed":
        return
    message = ""
    if report.outcome != "passed" and report.longrepr is not None:
        crash = getattr(report.longrepr, "reprcrash", None)
        message = crash.message if crash is not None else str(report.longrepr)
    _write({
        "event": "report", "nodeid": report.nodeid, "when": report.when, "outcome": report.outcome,
        "duration": round(report.duration, 3), "message": message[-3000:],
    })  # fmt: skip
