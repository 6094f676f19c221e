"""The sync API in this process: the console on its own thread, the agent on Playwright's sync
API in a worker thread; `launch(console=…)`; the CLI; attaching errors."""

from __future__ import annotations

import asyncio
import os
import queue
import subprocess
import sys
import threading
import urllib.request
from typing import Any

import pytest

from pagewarden import Guard, approve_all
from pagewarden.console import Console, ConsoleUnavailable
from pagewarden.sync_api import launch as launch_sync
from pagewarden.testing import LocalSite
from tests.console.conftest import SUPERVISED, Person, consent

pytestmark = pytest.mark.browser


def _sync_agent(console: Console, port: int, said: queue.Queue, go: threading.Event) -> None:
    with launch_sync(
        host_map={"*.test": port}, console=console, policies=[consent("Publish release")]
    ) as page:
        page.goto(SUPERVISED)
        said.put(("ready", page.guard.session_id))
        page.click("#publish")  # ASK: waits for the person
        said.put(("published", page.locator("#state").inner_text()))
        go.wait(60)
        page.click("#bump")  # paused: held until resumed
        said.put(("bumped", page.locator("#count").inner_text()))


async def test_sync_agent_with_a_console_on_its_own_thread(site: LocalSite, person: Person) -> None:
    said: queue.Queue = queue.Queue()
    go = threading.Event()
    with Console() as console:
        agent = asyncio.create_task(asyncio.to_thread(_sync_agent, console, site.port, said, go))
        try:
            kind, session = await asyncio.to_thread(said.get, True, 60)
            assert kind == "ready"
            await person.open(console.url, session)
            card = person.page.locator(".approval[data-status='pending']")
            await card.wait_for()
            await card.locator("button.approve").click()
            assert await asyncio.to_thread(said.get, True, 60) == ("published", "published")
            await person.page.locator("#btn-pause").click()
            await person.status("paused")
            go.set()
            await person.status("paused", holding=True)
            assert said.empty()
            await person.page.locator("#btn-resume").click()
            assert await asyncio.to_thread(said.get, True, 60) == ("bumped", "1")
            await agent
            await person.status("closed")
        finally:
            go.set()
            if not agent.done():
                agent.cancel()


def _read(url: str) -> str:
    with urllib.request.urlopen(url) as answer:
        return answer.read().decode()


async def test_launch_with_its_own_console(site: LocalSite, capsys: pytest.CaptureFixture[str]) -> None:
    from pagewarden import launch

    async with launch(host_map={"*.test": site.port}, console=True, goal="Look") as page:
        link = page.guard.console
        assert link is not None and link.url
        await page.goto(SUPERVISED)
        listed = await asyncio.to_thread(_read, link.url.replace("/?", "/api/sessions?"))
        assert page.guard.session_id in listed
    assert link.url in capsys.readouterr().err


def test_attach_errors() -> None:
    console = Console()
    with pytest.raises(RuntimeError, match="start the console"):
        Guard(console=console)
    with console:
        with pytest.raises(ValueError, match="approver"):
            Guard(console=console, approver=approve_all)
        with pytest.raises(TypeError):
            Guard(console=42)
        with pytest.raises(ValueError, match="token"):
            Guard(console=console.url.split("?")[0])
    # a console that is not there: a clear error, without the token
    with pytest.raises(ConsoleUnavailable) as failed:
        Guard(console="http://127.0.0.1:9/?token=secret-token-value")
    assert "secret-token-value" not in str(failed.value)


def test_cli_serves_and_prints_the_links(tmp_path: Any) -> None:
    """A token set from the environment is never printed, on loopback too (its link shows the
    variable's name, for a shell to fill in); the random ones are printed, and work."""
    token = "cli-test-token-0123456789"
    env = {**os.environ, "PAGEWARDEN_CONSOLE_TOKEN": token}
    env.pop("PAGEWARDEN_CONSOLE_READ_ONLY_TOKEN", None)
    env.pop("PAGEWARDEN_CONSOLE_GUARD_TOKEN", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "pagewarden", "console", "--port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        lines = [proc.stdout.readline() for _ in range(3)]
        assert lines[0].startswith("pagewarden console: http://127.0.0.1:")
        url = lines[0].split(": ", 1)[1].strip()
        assert url.endswith("?token=$PAGEWARDEN_CONSOLE_TOKEN") and token not in "".join(lines)
        with urllib.request.urlopen(url.replace("$PAGEWARDEN_CONSOLE_TOKEN", token)) as answer:
            assert answer.status == 200
        assert lines[1].startswith("read-only link:")
        read_only = lines[1].split(": ", 1)[1].strip()
        assert "$" not in read_only  # random: printed
        with urllib.request.urlopen(read_only) as answer:
            assert answer.status == 200
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    assert token not in err
