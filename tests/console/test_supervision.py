"""A person supervises a guarded agent from the console, in a second real Chromium.

One Chromium runs the agent (the `context` fixture), another shows the console (`person`).
Nothing here sleeps: each step waits for the console to show an event, or for the agent.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from playwright.async_api import BrowserContext

from pagewarden import ApprovalRequired, GuardEvent, SessionStopped
from pagewarden.console import Console
from pagewarden.policies import Policy
from tests.console.conftest import SUPERVISED, Person, consent

pytestmark = pytest.mark.browser


async def _agent(context: BrowserContext, make: Any, **options: Any) -> Any:
    guard = make(**options)
    page = guard.wrap(await context.new_page())
    await page.goto(SUPERVISED)
    return guard, page


async def test_step_appears_live(
    context: BrowserContext, supervised: Any, console: Console, person: Person
) -> None:
    guard, page = await _agent(context, supervised, goal="Bump the counter")
    await person.open(console.url, guard.session_id)
    await person.page.locator("#steps li[data-index='1']").wait_for()
    await page.click("#bump")
    step = person.page.locator("#steps li[data-index='2']")
    await step.wait_for()
    assert "click #bump" in await step.inner_text()
    assert await step.get_attribute("data-decision") == "allow"
    row = person.page.locator(f"#session-list li[data-session='{guard.session_id}']")
    assert "2 steps" in await row.inner_text()
    assert "Bump the counter" in await row.inner_text()
    # the live view shows the page
    await person.page.locator("#frame[data-n]").wait_for()
    assert not person.errors


async def test_ask_approved_in_console_runs_the_action(
    context: BrowserContext, supervised: Any, console: Console, person: Person
) -> None:
    guard, page = await _agent(context, supervised, policies=[consent("Publish release")])
    await person.open(console.url, guard.session_id)
    click = asyncio.create_task(page.click("#publish"))
    card = person.page.locator(".approval[data-status='pending']")
    await card.wait_for()
    assert "click #publish" in await card.inner_text()
    assert "Publish release" in await card.inner_text()
    assert not click.done()
    await card.locator("button.approve").click()
    await click
    assert await page.locator("#state").inner_text() == "published"
    await person.page.locator(".approval[data-status='approved']").wait_for()
    step = person.page.locator("#steps li[data-index='2']")
    await step.wait_for()
    assert "approved by approver" in await step.inner_text()


async def test_the_live_view_shows_the_page_while_an_approval_waits(
    context: BrowserContext, supervised: Any, console: Console, person: Person
) -> None:
    """Nobody watched when the agent asked: the person sees the approval under "Waiting for
    approval", opens the session, and the live view shows the page the agent waits on (the
    screencast runs only while someone watches), not "no picture yet"."""
    guard, page = await _agent(context, supervised, policies=[consent("Publish release")])
    await person.open(console.url)  # the list, no session open: nobody watches this one
    click = asyncio.create_task(page.click("#publish"))
    routed = person.page.locator(f"#inbox li[data-session='{guard.session_id}'][data-status='pending']")
    await routed.wait_for()
    await routed.locator("button.open").click()
    await person.page.locator("#frame[data-n]").wait_for()
    assert await person.page.locator("#frame").get_attribute("src")
    card = person.page.locator(".approval[data-status='pending']")
    await card.locator("button.approve").click()
    await click
    # answered: it left "Waiting for approval" for "Recently answered"
    await person.page.locator(f"#answered li[data-session='{guard.session_id}']").wait_for()
    assert await person.page.locator(f"#inbox li[data-session='{guard.session_id}']").count() == 0
    assert not person.errors


async def test_ask_denied_in_console_raises(
    context: BrowserContext, supervised: Any, console: Console, person: Person
) -> None:
    guard, page = await _agent(context, supervised, policies=[consent("Publish release")])
    await person.open(console.url, guard.session_id)
    click = asyncio.create_task(page.click("#publish"))
    card = person.page.locator(".approval[data-status='pending']")
    await card.wait_for()
    await card.locator("button.deny").click()
    with pytest.raises(ApprovalRequired):
        await click
    assert await page.locator("#state").inner_text() == "draft"
    await person.page.locator(".approval[data-status='denied']").wait_for()


async def test_approve_this_kind_for_the_session(
    context: BrowserContext, supervised: Any, console: Console, person: Person
) -> None:
    guard, page = await _agent(context, supervised, policies=[consent("Publish release", "Archive release")])
    await person.open(console.url, guard.session_id)
    click = asyncio.create_task(page.click("#publish"))
    card = person.page.locator(".approval[data-status='pending']")
    await card.wait_for()
    await card.locator("button.approve-kind").click()
    await click
    # the same kind (a click the same policy asks about) no longer waits for a person
    await page.click("#archive")
    assert await page.locator("#state").inner_text() == "archived"
    await person.page.locator(".approval[data-status='approved']").nth(1).wait_for()
    assert await person.page.locator(".approval[data-status='pending']").count() == 0


async def test_approval_timeout_denies(context: BrowserContext, person: Person) -> None:
    async with Console(approval_timeout=1.5) as console:
        guard, page = await _agent(
            context, lambda **o: __import__("pagewarden").Guard(console=console, **o),
            policies=[consent("Publish release")],
        )  # fmt: skip
        try:
            await person.open(console.url, guard.session_id)
            click = asyncio.create_task(page.click("#publish"))
            await person.page.locator(".approval[data-status='pending'] .a-timer").wait_for()
            with pytest.raises(ApprovalRequired):
                await click
            expired = person.page.locator(".approval[data-status='expired']")
            await expired.wait_for()
            assert "timeout" in await expired.inner_text()
            assert await page.locator("#state").inner_text() == "draft"
        finally:
            guard.close()


async def test_pause_holds_the_agent_and_resume_releases_it(
    context: BrowserContext, supervised: Any, console: Console, person: Person
) -> None:
    guard, page = await _agent(context, supervised)
    await person.open(console.url, guard.session_id)
    await person.page.locator("#btn-pause").click()
    await person.status("paused")
    click = asyncio.create_task(page.click("#bump"))
    await person.status("paused", holding=True)  # the agent's click waits at the gate
    assert not click.done()
    assert await page.locator("#count").inner_text() == "0"
    await person.page.locator("#btn-resume").click()
    await click
    assert await page.locator("#count").inner_text() == "1"
    await person.status("running", holding=False)


async def test_stop_makes_the_next_action_raise(
    context: BrowserContext, supervised: Any, console: Console, person: Person
) -> None:
    guard, page = await _agent(context, supervised)
    await person.open(console.url, guard.session_id)
    await person.page.locator("#btn-stop").click()
    await person.status("stopped")
    with pytest.raises(SessionStopped) as stopped:
        await page.click("#bump")
    assert stopped.value.verdict.violated_policy_ids == ["PW-CONSOLE"]
    with pytest.raises(SessionStopped):
        await page.goto(SUPERVISED)
    assert await page.locator("#count").inner_text() == "0"
    assert await person.page.locator("#btn-resume").is_disabled()


async def test_take_over_then_hand_back(
    context: BrowserContext, supervised: Any, console: Console, person: Person
) -> None:
    no_plain = Policy(
        id="P9", category="boundary", risk_level="high", description="no plain pages",
        rules=[{"url_deny": "/plain.html"}],
    )  # fmt: skip
    guard, page = await _agent(context, supervised, policies=[no_plain])
    events: list[GuardEvent] = []
    guard.subscribe(events.append)
    await person.open(console.url, guard.session_id)
    await person.page.locator("#btn-takeover").click()
    await person.status("taken_over")
    fill = asyncio.create_task(page.fill("#note", "written by the agent"))
    await person.status("taken_over", holding=True)
    await person.page.locator("#frame.clickable[data-n]").wait_for()

    # The person clicks the counter button on the live picture of the page.
    bump = await page.locator("#bump").bounding_box()
    viewport = page.viewport_size
    picture = await person.page.locator("#frame").bounding_box()
    assert bump and viewport and picture
    x = picture["x"] + (bump["x"] + bump["width"] / 2) * picture["width"] / viewport["width"]
    y = picture["y"] + (bump["y"] + bump["height"] / 2) * picture["height"] / viewport["height"]
    await person.page.mouse.click(x, y)
    await person.page.locator("#order-result[data-status='done']").wait_for()
    assert await page.locator("#count").inner_text() == "1"
    assert not fill.done()

    # The guard recorded the person's click as a step of the session.
    people = [
        e
        for e in events
        if e.kind == "step" and (e.data["step"].get("reasoning") or "").startswith("[supervisor]")
    ]
    assert [e.data["step"]["action"]["kind"] for e in people] == ["click"]
    await person.page.locator("#steps li .reasoning", has_text="[supervisor]").wait_for()

    # A person's action that breaks a policy is still refused.
    await person.page.locator("#to-url").fill("http://app.test/plain.html")
    await person.page.locator("#to-goto").click()
    refused = person.page.locator("#order-result[data-status='refused']")
    await refused.wait_for()
    assert "P9" in await refused.inner_text()
    assert page.url == SUPERVISED

    await person.page.locator("#btn-handback").click()
    await fill
    assert await page.locator("#note").input_value() == "written by the agent"
    await person.status("running", holding=False)


async def test_goal_edit(context: BrowserContext, supervised: Any, console: Console, person: Person) -> None:
    guard, page = await _agent(context, supervised, goal="Publish the release")
    events: list[GuardEvent] = []
    guard.subscribe(events.append)
    await person.open(console.url, guard.session_id)
    await person.page.locator("#goal-edit").click()
    await person.page.locator("#goal-input").fill("Only bump the counter, publish nothing")
    await person.page.locator("#goal-save").click()
    await person.page.locator("#d-goal", has_text="Only bump the counter").wait_for()
    assert guard.goal == "Only bump the counter, publish nothing"
    await page.click("#bump")
    steps = [e for e in events if e.kind == "step"]
    assert steps[-1].data["step"]["goal"] == "Only bump the counter, publish nothing"


async def test_report_after_the_session(
    context: BrowserContext, supervised: Any, console: Console, person: Person
) -> None:
    guard, page = await _agent(context, supervised, goal="Bump the counter")
    await page.click("#bump")
    guard.close()
    await person.open(console.url, guard.session_id)
    await person.status("closed")
    async with person.page.context.expect_page() as opened:
        await person.page.locator("#d-report").click()
    report = await opened.value
    await report.wait_for_load_state()
    text = await report.locator("body").inner_text()
    assert "Bump the counter" in text and "click #bump" in text and "closed" in text
