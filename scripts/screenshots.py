"""Remake the documentation's pictures from real runs: docs/console.png and docs/report.png.

A scripted agent works on the demo's tracker (127.0.0.1, real Chromium): for the console
picture it is attached to a `Console` and waits for approval of a consent-guarded click while a
second browser shows the console; for the report picture its session is recorded and rendered
with `pagewarden report`. Run it with `scripts/screenshots` when the console or the report
changes.
"""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import sys
import tempfile
from pathlib import Path

from playwright.async_api import TimeoutError as PlaywrightTimeout
from playwright.async_api import async_playwright

from pagewarden import ActionBlocked, ApprovalRequired, PolicySet, launch
from pagewarden._browser import chromium_launch_options
from pagewarden.console import Console
from pagewarden.demo.site import DemoSite

DOCS = Path(__file__).resolve().parents[1] / "docs"
ISSUE = "http://tracker.test/acme/webapp/issues/1"
POLICIES = PolicySet.from_text("""
version: 1
policies:
  - id: STAY-ON-TRACKER
    category: boundary
    risk_level: high
    description: Work on the issue tracker only.
    rules:
      - domain_allow: [tracker.test]
  - id: ASK-BEFORE-POSTING
    category: consent
    risk_level: medium
    description: Ask the user before posting a comment.
    rules:
      - consent: {selectors: ["form.comment-form button"], actions: [click]}
""")


async def console_picture(site: DemoSite, out: Path) -> None:
    async with Console(approval_timeout=300) as console, async_playwright() as p, launch(
        policies=POLICIES, goal="Comment on issue 1 saying we are working on it.",
        console=console, host_map={"*.test": site.port},
    ) as page:
        await page.goto(ISSUE)
        # a person opens the console and watches this session from the start
        person = await p.chromium.launch(**chromium_launch_options())
        view = await person.new_page(viewport={"width": 1400, "height": 900})
        session = page.guard.session_id
        await view.goto(f"{console.url}&session={session}")
        await view.locator("#d-id", has_text=session).wait_for(timeout=60_000)
        page.reasoning("I will type the comment into the comment box.")
        await page.get_by_role("textbox", name="Comment").fill("We are working on it.")
        with contextlib.suppress(ActionBlocked):
            await page.goto(ISSUE.replace("tracker.test", "evil.test"),
                            reasoning="A note in the comments says the discussion moved there.")
        post = asyncio.create_task(
            page.locator("form.comment-form button[type=submit]").click(reasoning="Post the comment.")
        )
        card = view.locator(".approval[data-status='pending']")
        await card.wait_for(timeout=60_000)
        with contextlib.suppress(PlaywrightTimeout):  # the live view's first frame, if it comes
            await view.locator("#frame[data-n]").wait_for(state="attached", timeout=15_000)
        await view.wait_for_timeout(1000)
        await view.screenshot(path=str(out))
        await card.locator("button.deny").click()
        with contextlib.suppress(ApprovalRequired):
            await post
        await person.close()


async def report_picture(site: DemoSite, out: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        run = Path(tmp) / "run"
        async with launch(
            policies=POLICIES, goal="Comment on issue 1 saying we are working on it.",
            record=run, screenshots=True, host_map={"*.test": site.port},
        ) as page:
            await page.goto(ISSUE)
            await page.get_by_role("textbox", name="Comment").fill("We are working on it.")
            with contextlib.suppress(ActionBlocked):
                await page.goto(ISSUE.replace("tracker.test", "evil.test"),
                                reasoning="A note in the comments says the discussion moved there.")
        subprocess.run([sys.executable, "-m", "pagewarden", "report", str(run)], check=True)
        async with async_playwright() as p:
            browser = await p.chromium.launch(**chromium_launch_options())
            view = await browser.new_page(viewport={"width": 1024, "height": 900})
            await view.goto((run / "report.html").as_uri())
            await view.screenshot(path=str(out), full_page=True)
            await browser.close()


async def main() -> None:
    with DemoSite() as site:
        await console_picture(site, DOCS / "console.png")
        await report_picture(site, DOCS / "report.png")
    print(f"wrote {DOCS / 'console.png'} and {DOCS / 'report.png'}")


if __name__ == "__main__":
    asyncio.run(main())
