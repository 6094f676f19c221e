"""The semantic tier on a real guarded page (async and sync API): the model call is one more
call of the shared action pipeline; a failing model never lets a consulted action run."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.async_api import Page
from playwright.sync_api import sync_playwright

from pagewarden import ActionBlocked, Guard, GuardError, Policy, RevisionRequired
from pagewarden._browser import chromium_launch_options
from pagewarden.testing import LocalSite, Reply, ScriptedLLM

URL = "http://app.test/semantic.html"
ARCHIVE = Policy(
    id="ORG-ARCHIVE", category="boundary", risk_level="high",
    description="Never archive or transfer a project without the owner's written request.",
)  # fmt: skip
FINE = {"policy_violation": False, "violated_policy_ids": [], "goal_deviation": False}
GOAL = "Find the search box on the project settings page and search for 'runner'."


@pytest.fixture
def llm() -> Iterator[ScriptedLLM]:
    with ScriptedLLM() as server:
        yield server


async def events(page: Page) -> list[str]:
    return await page.evaluate("window.events")


async def test_model_blocks_and_allows_on_a_real_page(page: Page, llm: ScriptedLLM) -> None:
    violation = {**FINE, "policy_violation": True, "violated_policy_ids": ["ORG-ARCHIVE"]}
    llm.on("target name: Archive project", {**violation, "risk_explanation": "archives the project"})
    llm.on(
        "target name: Transfer ownership",
        {**FINE, "goal_deviation": True, "goal_explanation": "not the search"},
    )
    guard = Guard([ARCHIVE], goal=GOAL, llm=llm.config(timeout=20), snapshot=False)
    guarded = guard.wrap(page)
    await guarded.goto(URL)
    with pytest.raises(ActionBlocked) as blocked:
        await guarded.get_by_role("button", name="Archive project").click()
    assert blocked.value.verdict.violated_policy_ids == ["ORG-ARCHIVE"]
    with pytest.raises(RevisionRequired):
        await guarded.get_by_role("button", name="Transfer ownership").click()
    await guarded.get_by_label("Search").fill("runner")  # harmless: no model call
    assert await events(page) == ["search"]
    assert len(llm.chat_requests) == 2
    # The model saw the pruned tree of the real page, fenced.
    prompt = llm.chat_requests[0].content("user")
    assert 'button "Archive project"' in prompt and "<<<BEGIN UNTRUSTED PAGE" in prompt
    verdict = blocked.value.verdict
    assert verdict.llm["tree_tokens"] <= verdict.llm["tree_whole_tokens"]
    assert verdict.timings_ms["semantic"] >= verdict.timings_ms["model"]


@pytest.mark.parametrize(
    "fault", [Reply.hang_forever(), Reply.error(503), Reply.text("not json"), Reply.empty_choices()]
)
async def test_failing_model_never_lets_a_consulted_action_run(
    page: Page, llm: ScriptedLLM, fault: Reply
) -> None:
    llm.on(None, fault)
    guard = Guard([ARCHIVE], goal=GOAL, llm=llm.config(timeout=1.5, retries=1, format_retries=1))
    guarded = guard.wrap(page)
    await guarded.goto(URL)
    with pytest.raises(GuardError) as info:
        await guarded.get_by_role("button", name="Archive project").click()
    assert isinstance(info.value, ActionBlocked)
    assert "could not judge" in info.value.verdict.explanation
    assert await events(page) == []


def test_sync_api_consults_the_model_on_the_background_loop(site: LocalSite, llm: ScriptedLLM) -> None:
    llm.on(
        "target name: Archive project",
        {**FINE, "policy_violation": True, "violated_policy_ids": ["ORG-ARCHIVE"]},
    )
    llm.on("target name: Transfer ownership", FINE)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(**chromium_launch_options(host_map={"*.test": site.port}))
        try:
            page = Guard([ARCHIVE], goal=GOAL, llm=llm.config(timeout=20)).wrap(browser.new_page())
            page.goto(URL)
            with pytest.raises(ActionBlocked):
                page.get_by_role("button", name="Archive project").click()
            page.get_by_role("button", name="Transfer ownership").click()
            assert page.unwrap().evaluate("window.events") == ["transfer"]
        finally:
            browser.close()
