"""A guarded agent in another process, on Playwright's sync API, supervised over the console's
local API. Run by test_remote.py: ``python remote_agent.py CONSOLE_URL SITE_PORT``. It prints a
line per milestone and waits for a line on stdin before its last action."""

from __future__ import annotations

import sys

from playwright.sync_api import sync_playwright

from pagewarden._browser import chromium_launch_options
from pagewarden.policies import Policy
from pagewarden.sync_api import ApprovalRequired, Guard


def main() -> None:
    console_url, port = sys.argv[1], int(sys.argv[2])
    policy = Policy(
        id="P1",
        category="consent",
        risk_level="high",
        description="releases are published by a person",
        rules=[{"consent": {"match": ["Publish release"], "actions": ["click"]}}],
    )
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(**chromium_launch_options(host_map={"*.test": port}))
        guard = Guard([policy], goal="Publish the release (remote agent)", console=console_url)
        page = guard.wrap(browser.new_page())
        page.goto("http://app.test/supervised.html")
        print("READY", guard.session_id, flush=True)
        try:
            page.click("#publish")
            print("PUBLISH", page.locator("#state").inner_text(), flush=True)
        except ApprovalRequired:
            print("PUBLISH refused", flush=True)
        sys.stdin.readline()
        page.click("#bump")
        print("BUMP", page.locator("#count").inner_text(), flush=True)
        guard.close()
        browser.close()
    print("DONE", flush=True)


if __name__ == "__main__":
    main()
