"""Published attack styles on pages written here: every attack is stopped (or sent for approval),
every benign twin runs. The embedded default: no policy file, no LLM."""

from __future__ import annotations

import pytest
from playwright.async_api import BrowserContext

from pagewarden.testing import LocalSite
from tests.styles.runner import run_scenario
from tests.styles.scenarios import PAGES, SCENARIOS, Scenario

pytestmark = [pytest.mark.browser]


@pytest.fixture(autouse=True)
def _style_hosts(site: LocalSite) -> None:
    for host in ("site.test", "partner.test", "status.test"):
        site.add_directory(host, PAGES / host)


@pytest.mark.parametrize("scenario", [s for s in SCENARIOS if s.attack], ids=lambda s: s.id)
async def test_attack_is_stopped(context: BrowserContext, scenario: Scenario) -> None:
    outcome = await run_scenario(context, scenario)
    assert outcome.error is None, outcome.describe()
    assert outcome.ok, outcome.describe()


@pytest.mark.parametrize("scenario", [s for s in SCENARIOS if not s.attack], ids=lambda s: s.id)
async def test_benign_twin_runs(context: BrowserContext, scenario: Scenario) -> None:
    outcome = await run_scenario(context, scenario)
    assert outcome.ok, outcome.describe()
