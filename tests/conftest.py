"""Shared fixtures: one local multi-origin site and one real Chromium per test session."""

from __future__ import annotations

import itertools
import os
import warnings
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Browser, BrowserContext, Page, async_playwright

from pagewarden._browser import chromium_launch_options
from pagewarden.secrets import SecretRegistry
from pagewarden.testing import LocalSite
from pagewarden.trace import global_secrets
from tests.artefacts import artefacts, leaks
from tests.postgres_server import PostgresServer

pytest_plugins = ["tests.cpu_durations"]  # --cpu-durations=N

PAGES = Path(__file__).parent / "pages"

#: The variables that say where a user's home and pagewarden's per-user directory are.
HOME_VARIABLES = ("HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "PAGEWARDEN_CONFIG_DIR")


def _snapshot(path: Path) -> list[tuple[str, int, float]]:
    if not path.exists():
        return []
    return sorted((str(p), p.stat().st_size, p.stat().st_mtime) for p in [path, *path.rglob("*")])


@pytest.fixture(scope="session", autouse=True)
def test_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """No test reads or writes the real home: for the whole session ``HOME``, the XDG
    directories and ``PAGEWARDEN_CONFIG_DIR`` point into a temporary directory (subprocesses
    inherit them). Afterwards, the real home's pagewarden directory must be as it was (an
    error under CI, a warning elsewhere)."""
    real = Path(os.environ.get("PAGEWARDEN_CONFIG_DIR") or Path.home() / ".config" / "pagewarden")
    before = _snapshot(real)
    home = tmp_path_factory.mktemp("home")
    saved = {name: os.environ.get(name) for name in HOME_VARIABLES}
    os.environ.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_CACHE_HOME=str(home / ".cache"),
        XDG_DATA_HOME=str(home / ".local" / "share"),
        PAGEWARDEN_CONFIG_DIR=str(home / ".config" / "pagewarden"),
    )
    yield home
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    if _snapshot(real) != before:
        message = f"the real per-user directory {real} changed during the test session"
        # Under CI (.ci/run) that home is new and private to the run: a change is a test's.
        # On a developer's machine another process (a benchmark, a demo) may have written it.
        assert not os.environ.get("CI"), message
        warnings.warn(f"{message} (a test, or another process of yours?)", stacklevel=1)


@pytest.fixture
def empty_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A first run: a new empty home, no XDG variables, no ``PAGEWARDEN_CONFIG_DIR`` (so the
    default ``~/.config/pagewarden`` is used, and nothing exists there yet)."""
    home = tmp_path_factory.mktemp("empty-home")
    monkeypatch.setenv("HOME", str(home))
    for name in HOME_VARIABLES[1:]:
        monkeypatch.delenv(name, raising=False)
    return home


@pytest.fixture(scope="session", autouse=True)
def no_secret_in_artefacts(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """After the whole session: no trace, log, report or results file any test wrote holds a
    value that was marked secret in this process — registered with a guard, listed in a
    policy's `sensitive_data.values`, written as a credential in a goal, typed into a
    password field, or given to `configure_logging(secrets=…)` — in clear.

    Under pytest-xdist this checks the worker's own artefacts (its basetemp) against the
    worker's own secrets; `pytest_sessionfinish` below then checks every worker's artefacts
    against every worker's secrets, as one serial session would."""
    yield
    root = tmp_path_factory.getbasetemp()
    files = artefacts(root)
    found = leaks(files, global_secrets())
    assert not found, "secrets in clear in test artefacts:\n" + "\n".join(found)


# -- the browser-free core: `pytest -m "not browser"` --------------------------------------------
#: Fixtures that bring up a Chromium (directly or through what they depend on).
BROWSER_FIXTURES = frozenset(
    {"browser", "context", "page", "demo_browser", "plain_browser", "person_browser", "person",
     "guarded_result", "unguarded_result"}
)  # fmt: skip
#: Words in a test module's source that mean some of its tests drive a browser or a process that does.
BROWSER_WORDS = ("playwright", "chromium", "pagewarden.sync_api", "launch(", "scripts/demo", "run_demo",
                 "pagewarden.integrations", "_mcp_client", "browser_use", "browsergym")  # fmt: skip


def _module_drives_browser(path: Path, cache: dict[Path, bool] = {}) -> bool:  # noqa: B006 - a cache
    if path not in cache:
        text = path.read_text(encoding="utf-8", errors="replace") if path.suffix == ".py" else ""
        cache[path] = any(word in text for word in BROWSER_WORDS)
    return cache[path]


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--reverse-order", action="store_true",
        help="run the tests in reverse order (a test that leans on an earlier one's leftovers fails)",
    )  # fmt: skip


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every test that may drive a real Chromium `browser` (by the fixtures it uses, or
    because its module drives one), so `-m "not browser"` is the fast, browser-free core. A
    module counts whole: the marker may over-include, never leave a browser test out of it.
    ``--reverse-order`` then runs the tests last to first."""
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        if fixtures & BROWSER_FIXTURES or _module_drives_browser(Path(item.path)):
            item.add_marker(pytest.mark.browser)
    if config.getoption("reverse_order"):
        items.reverse()


# -- parallel runs (pytest-xdist): each worker is its own process with its own home, basetemp,
# site, browser and servers (the session fixtures above); the controller joins the secrets. --
_WORKER_SECRETS = "pagewarden_secrets"
_secrets_of_workers: list[tuple[str, str, bool]] = []


def pytest_sessionfinish(session: pytest.Session) -> None:
    """On a worker: hand the secrets this process registered to the controller (in memory,
    over xdist's channel). On the controller of a parallel run: the session-wide check for
    secrets in artefacts, across workers."""
    config = session.config
    workeroutput = getattr(config, "workeroutput", None)
    if workeroutput is not None:
        registry = global_secrets()
        workeroutput[_WORKER_SECRETS] = [(s.value, s.label, registry.enforced(s.value)) for s in registry]
        return
    if not _secrets_of_workers:
        return
    registry = SecretRegistry()
    for value, label, enforce in _secrets_of_workers:
        registry.add(value, label=label, enforce=enforce)
    found = leaks(artefacts(config._tmp_path_factory.getbasetemp()), registry)
    if found:
        report = pytest.TestReport(
            nodeid="tests/conftest.py::no_secret_in_artefacts[every worker]",
            location=("tests/conftest.py", 0, "no_secret_in_artefacts[every worker]"),
            keywords={}, outcome="failed", when="teardown", sections=[], duration=0.0,
            longrepr="secrets in clear in test artefacts (any worker's secret, any worker's files):\n"
            + "\n".join(found),
        )  # fmt: skip
        config.hook.pytest_runtest_logreport(report=report)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    """xdist (controller): a worker finished; keep the secrets it registered."""
    _secrets_of_workers.extend(getattr(node, "workeroutput", {}).get(_WORKER_SECRETS, []))


@pytest.fixture(scope="session")
def site() -> Iterator[LocalSite]:
    """`app.test` and `other.test` serve tests/pages; `evil.test` answers everything with 200."""
    server = LocalSite()
    server.add_directory("app.test", PAGES)
    server.add_directory("other.test", PAGES)
    server.add_directory("evil.test", PAGES)
    with server:
        yield server


@pytest.fixture(scope="session")
async def browser(site: LocalSite) -> AsyncIterator[Browser]:
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(**chromium_launch_options(host_map={"*.test": site.port}))
        yield browser
        await browser.close()


@pytest.fixture
async def context(browser: Browser) -> AsyncIterator[BrowserContext]:
    context = await browser.new_context(has_touch=True)
    yield context
    await context.close()


@pytest.fixture
async def page(context: BrowserContext) -> Page:
    return await context.new_page()


# -- the policy store's backends -----------------------------------------------------------------
@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """One real PostgreSQL server for the session (started on first use, removed at the end);
    its password is a registered secret, so no artefact may hold it in clear."""
    server = PostgresServer()
    try:
        server.start()
        global_secrets().add(server.password, label="postgres-password", enforce=False)
        yield server
    finally:
        server.stop()


_databases = itertools.count(1)


@pytest.fixture
def postgres_url(postgres_server: PostgresServer) -> str:
    """The URL of a new, empty database on the session's server."""
    return postgres_server.create_database(f"test_{os.getpid()}_{next(_databases)}")


@pytest.fixture(params=["sqlite", "postgresql"])
def store_target(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Where a new policy store goes, once per backend: a SQLite file, a PostgreSQL database."""
    if request.param == "sqlite":
        return str(tmp_path / "policies.db")
    return request.getfixturevalue("postgres_url")


@pytest.fixture
def another_store_target(store_target: str, request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A second new store of the same backend as `store_target`."""
    if store_target.startswith("postgresql://"):
        return request.getfixturevalue("postgres_server").create_database(
            f"test_{os.getpid()}_{next(_databases)}"
        )
    return str(tmp_path / "another.db")
