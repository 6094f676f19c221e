"""`launch` gives a guarded page in one call; the terminal approver asks and defaults to no."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from pagewarden import (
    Action,
    ActionBlocked,
    ElementFacts,
    Guard,
    Observation,
    Step,
    Verdict,
    launch,
    terminal_approver,
)
from pagewarden.guard import Decision
from pagewarden.sync_api import launch as launch_sync
from pagewarden.testing import LocalSite


async def test_launch_async_guards_and_traces(site: LocalSite, tmp_path: Path) -> None:
    async with launch(trace_dir=tmp_path, host_map={"*.test": site.port}, goal="Open the plain page") as page:
        await page.goto("http://app.test/injection.html")
        with pytest.raises(ActionBlocked):
            await page.get_by_role("link", name="this link").click()
        assert page.url == "http://app.test/injection.html"
    records = [json.loads(line) for line in (tmp_path / "trace.jsonl").read_text().splitlines()]
    assert [r["verdict"]["decision"] for r in records] == ["allow", "block"]


def test_launch_sync(site: LocalSite, tmp_path: Path) -> None:
    with launch_sync(trace_dir=tmp_path, host_map={"*.test": site.port}) as page:
        page.goto("http://app.test/plain.html")
        assert page.title() == "Plain"
    assert (tmp_path / "trace.jsonl").read_text().count("\n") == 1


def test_launch_rejects_guard_and_options_together() -> None:
    with pytest.raises(TypeError), launch_sync(Guard(), goal="x"):
        pass


def _ask_step() -> tuple[Verdict, Step]:
    step = Step(
        action=Action(kind="click", selector="#b"),
        observation=Observation(
            url="http://app.test/", target=ElementFacts(tag="button", name="Delete repo")
        ),
    )
    return Verdict(decision=Decision.ASK, explanation="needs consent"), step


@pytest.mark.parametrize(
    ("answer", "approved"), [("y\n", True), ("yes\n", True), ("\n", False), ("n\n", False)]
)
def test_terminal_approver(answer: str, approved: bool) -> None:
    out = io.StringIO()
    approver = terminal_approver(stdin=io.StringIO(answer), stdout=out)
    assert approver(*_ask_step()) is approved
    assert "Delete repo" in out.getvalue() and "needs consent" in out.getvalue()
