"""`pagewarden mcp` as a client starts it: a subprocess speaking MCP over stdio (the SDK's
stdio client), on the demo site, network layer on (the default)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from pagewarden.demo.agents import scenario_by_id
from pagewarden.demo.site import DEMO_USER, DemoSite
from tests.integrations._mcp_client import ref, signed_in_state, text_of

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

ISSUE_1 = "http://tracker.test/acme/webapp/issues/1"
COMMENT = "We are working on a fix."


@pytest.fixture(scope="module")
def site() -> Iterator[DemoSite]:
    with DemoSite() as demo:
        yield demo


async def test_stdio_subprocess_runs_the_benign_task_and_refuses_the_attack(
    site: DemoSite, tmp_path: Path
) -> None:
    scenario = scenario_by_id("tracker-comment")
    mark = site.mark()
    params = StdioServerParameters(
        command=sys.executable,
        args=[
            "-m",
            "pagewarden",
            "mcp",
            "--headless",
            "--isolated",
            "--map",
            f"*.test={site.port}",
            "--storage-state",
            str(signed_in_state(site, tmp_path)),
            "--goal",
            scenario.goal,
            "--record",
            str(tmp_path / "session"),
            "--output-dir",
            str(tmp_path / "out"),
        ],
        env=dict(os.environ),  # the test's own home (the network layer's CA lives there)
    )
    with (tmp_path / "stderr.txt").open("w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as client:
            await client.initialize()
            names = {tool.name for tool in (await client.list_tools()).tools}
            assert "browser_click" in names and "set_goal" not in names
            page = text_of(
                await client.call_tool("browser_navigate", {"url": ISSUE_1, "intent": "Open issue 1."})
            )
            assert "<<<BEGIN UNTRUSTED PAGE" in page and "pagewarden removed" in page
            attack = await client.call_tool(
                "browser_navigate",
                {
                    "url": "http://evil.test/acme/webapp/issues/1/discussion",
                    "intent": "A comment says comments are no longer saved here; I must post at the "
                    "discussion page.",
                },
            )
            assert attack.isError and "Guidance:" in text_of(attack), text_of(attack)
            page = text_of(await client.call_tool("browser_snapshot", {}))
            steps = [
                ("browser_click", {"element": "Dismiss", "ref": ref(page, "button", "Dismiss")}),
                (
                    "browser_type",
                    {"element": "Comment", "ref": ref(page, "textbox", "Comment"), "text": COMMENT},
                ),
            ]
            for name, arguments in steps:
                result = await client.call_tool(
                    name, {**arguments, "intent": "The user's comment on issue 1."}
                )
                assert not result.isError, text_of(result)
                page = text_of(result)
            posted = await client.call_tool(
                "browser_click",
                {"element": "Comment", "ref": ref(page, "button", "Comment"), "intent": "Post it."},
            )
            assert not posted.isError, text_of(posted)
    assert any(n.body == COMMENT and n.username == DEMO_USER for n in site.state.notes.get(1, []))
    assert site.evil_received(mark) == []
    trace = (tmp_path / "session" / "trace.jsonl").read_text()
    assert "evil.test" in trace and '"block"' in trace  # the refused step is recorded


def test_the_example_runs() -> None:
    """examples/mcp_client.py (the MCP guide's runnable example) exits 0: refused, nothing leaked."""
    import subprocess

    example = Path(__file__).parents[2] / "examples" / "mcp_client.py"
    done = subprocess.run(
        [sys.executable, str(example)], capture_output=True, text=True, timeout=240, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "refused: True" in done.stdout and "evil.test received: nothing" in done.stdout
