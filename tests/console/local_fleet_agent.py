"""An agent of the fleet that deploy/local_fleet.py starts, as the fleet guide attaches one: its
environment is the one the script printed (PAGEWARDEN_STORE, PGPASSWORD, PAGEWARDEN_CONSOLE_CA,
CONSOLE_GUARD_LINK, OTEL_EXPORTER_OTLP_ENDPOINT). Run by test_local_fleet.py:
``python local_fleet_agent.py AGENT_NAME``. It opens a page off the fleet's allowed sites, which
the store's FLEET-001 blocks, prints what it was told, and closes (flushing its telemetry)."""

from __future__ import annotations

import asyncio
import os
import sys

from pagewarden import ActionBlocked, Guard, PolicyStore
from pagewarden._browser import chromium_launch_options
from pagewarden.testing import LocalSite, Response


async def main() -> None:
    from playwright.async_api import async_playwright

    agent = sys.argv[1]
    with LocalSite() as site, PolicyStore(os.environ["PAGEWARDEN_STORE"]) as store:
        site.route("elsewhere.test", "/", lambda request: Response("<p>not the organisation's site</p>"))
        guard = Guard(
            policies=store,
            references=store,
            goal="Check the invoice page.",
            console=os.environ["CONSOLE_GUARD_LINK"],
            agent_name=agent,
        )
        async with async_playwright() as playwright:
            options = chromium_launch_options(host_map={"*.test": site.port})
            browser = await playwright.chromium.launch(**options)
            page = guard.wrap(await browser.new_page())
            try:
                await page.goto("http://elsewhere.test/")
                print("RAN", flush=True)
            except ActionBlocked as stopped:
                print("BLOCKED", guard.session_id, ",".join(stopped.verdict.violated_policy_ids), flush=True)
            await browser.close()
        guard.close()
        print("REACHED", len(site.requests_to("elsewhere.test")), flush=True)


if __name__ == "__main__":
    asyncio.run(main())
