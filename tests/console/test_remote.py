"""A guard in another process attaches to a running console over its local API (sync API)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from pagewarden.console import Console
from pagewarden.testing import LocalSite
from tests.console.conftest import Person

pytestmark = pytest.mark.browser

AGENT = Path(__file__).with_name("remote_agent.py")


async def _line(proc: asyncio.subprocess.Process, prefix: str) -> str:
    assert proc.stdout is not None
    while True:
        raw = await asyncio.wait_for(proc.stdout.readline(), 90)
        if not raw:
            err = await proc.stderr.read() if proc.stderr else b""
            raise AssertionError(f"the agent ended before {prefix!r}: {err.decode()[-2000:]}")
        line = raw.decode().strip()
        if line.startswith(prefix):
            return line


async def test_guard_in_another_process_is_supervised(
    console: Console, person: Person, site: LocalSite
) -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, str(AGENT), console.url, str(site.port),
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    try:
        session = (await _line(proc, "READY")).split()[1]
        await person.open(console.url, session)
        row = person.page.locator(f"#session-list li[data-session='{session}']")
        assert "remote agent" in await row.inner_text()
        assert f"pid {proc.pid}" in await row.inner_text()

        # its ASK reaches the console, the person approves, the action runs over there
        card = person.page.locator(".approval[data-status='pending']")
        await card.wait_for()
        await card.locator("button.approve").click()
        assert await _line(proc, "PUBLISH") == "PUBLISH published"
        await person.page.locator("#steps li[data-index='2'][data-decision='ask']").wait_for()

        # pause holds its next action; resume releases it
        await person.page.locator("#btn-pause").click()
        await person.status("paused")
        assert proc.stdin is not None
        proc.stdin.write(b"go\n")
        await proc.stdin.drain()
        await person.status("paused", holding=True)
        await person.page.locator("#frame[data-n]").wait_for()  # a picture of the held page
        await person.page.locator("#btn-resume").click()
        assert await _line(proc, "BUMP") == "BUMP 1"
        await person.status("closed")
        await _line(proc, "DONE")
        assert await asyncio.wait_for(proc.wait(), 60) == 0
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
