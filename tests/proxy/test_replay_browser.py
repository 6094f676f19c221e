"""`pagewarden replay --browser`: a session recorded through the proxy against a 127.0.0.1
server is performed again in Chromium against its recorded flows, with the server stopped,
through today's guard; decisions are compared with the recorded ones."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from mitmproxy import io

from pagewarden import ActionBlocked, Secret, launch
from pagewarden.testing import LocalSite, Response

pytestmark = [pytest.mark.browser, pytest.mark.timeout(900)]

EXE = str(Path(sys.executable).parent / "pagewarden")
SECRET = "tok-Br0wserR3play-Walrus-2718"
FORM = """<!doctype html><html><head><title>Shop</title></head><body>
<a id=next href="/two.html">Next</a> <a id=admin href="/admin.html">Admin</a>
<form action="/submit" method=post>
<label>Name <input id=name name=name></label>
<label>Colour <select id=color name=color><option>red</option><option>blue</option></select></label>
<input type=checkbox id=agree name=agree><label for=agree>Agree</label>
<label>Token <input id=token name=token></label>
<button id=go>Send</button></form></body></html>"""
POLICIES = """\
version: 1
policies:
  - id: ORG-ADMIN
    category: boundary
    risk_level: high
    description: Stay out of the admin pages.
    rules:
      - url_deny: "/admin"
"""
STRICTER = (
    POLICIES
    + """\
  - id: ORG-NO-TWO
    category: boundary
    risk_level: high
    description: Page two is out of bounds.
    rules:
      - url_deny: "/two.html"
"""
)


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([EXE, *args], capture_output=True, text=True, timeout=600, check=False)


@pytest.fixture(scope="module")
def recording(tmp_path_factory: pytest.TempPathFactory, proxy_config_dir: Path) -> Iterator[Path]:
    """One guarded session recorded through the proxy; the server is stopped afterwards."""
    root = tmp_path_factory.mktemp("browser-replay")
    policies = root / "policies.yaml"
    policies.write_text(POLICIES)
    run_dir = root / "run"
    site = LocalSite()
    site.route("shop.test", "/", lambda r: Response(FORM))
    site.route("shop.test", "/two.html", lambda r: Response("<title>Two</title><a href='/'>Back</a>"))
    site.route("shop.test", "/admin.html", lambda r: Response("<title>Admin</title>"))
    site.route("shop.test", "/submit", lambda r: Response("<title>Done</title><p>done</p>"))

    async def record() -> None:
        async with launch(
            proxy=True, host_map={"*.test": site.port}, record=run_dir, goal="Order a blue one",
            policies=policies, secrets=[Secret(SECRET, allow_domains=["shop.test"])],
        ) as page:  # fmt: skip
            await page.goto("http://shop.test/")  # 1
            await page.click("#next")  # 2
            await page.wait_for_url("http://shop.test/two.html")
            await page.get_by_role("link", name="Back").click()  # 3
            await page.wait_for_url("http://shop.test/")
            with pytest.raises(ActionBlocked):
                await page.click("#admin")  # 4: blocked by ORG-ADMIN, did not run
            await page.fill("#name", "Ann")  # 5
            await page.locator("#color").select_option("blue")  # 6
            await page.check("#agree")  # 7
            await page.fill("#token", SECRET)  # 8: recorded redacted
            await page.press("#name", "Tab")  # 9
            await page.click("#go")  # 10
            await page.wait_for_url("http://shop.test/submit")
            page.guard.message_user("Ordered a blue one for Ann.")  # 11

    with site:
        asyncio.run(record())
    # the server is stopped: nothing listens on its port any more
    yield run_dir


def _results(path: Path) -> dict:
    return json.loads(path.read_text())


def test_replay_in_the_browser_gives_the_recorded_decisions(recording: Path, tmp_path: Path) -> None:
    out, html = tmp_path / "diff.json", tmp_path / "diff.html"
    result = run("replay", str(recording), "--browser", "--json", str(out), "--html", str(html))
    assert result.returncode == 0, result.stdout + result.stderr
    report = _results(out)
    assert report["browser"] is True and report["steps"] == 11 and report["changed"] == 0
    recorded = [json.loads(line)["verdict"]["decision"] for line in (recording / "trace.jsonl").open()]
    assert recorded == ["allow"] * 3 + ["block"] + ["allow"] * 7
    results = report["results"]
    statuses = [r["status"] for r in results]
    # every step was performed (or, for the blocked one, judged) again with the same decision,
    # except the typed secret: its value is redacted in the recording, so it cannot be typed again
    assert statuses == ["same"] * 7 + ["not_rerun"] + ["same"] * 3, statuses
    assert [r["now"] for r in results if r["status"] == "same"] == ["allow"] * 3 + ["block"] + ["allow"] * 6
    assert "Ordered a blue one" in results[10]["action"]  # the message to the user, judged again
    assert results[3]["now_policies"] == ["ORG-ADMIN"] and results[3]["ran"] is False
    assert "redacted" in results[7]["note"] and report["not_rerun"] == 1
    assert report["misses"] == []
    assert "1 not performed again" in result.stdout and "(not re-run)" in result.stdout
    everything = result.stdout + result.stderr + out.read_text() + html.read_text()
    assert SECRET not in everything


def test_a_changed_policy_shows_the_changed_step_and_exits_1(recording: Path, tmp_path: Path) -> None:
    stricter = tmp_path / "stricter.yaml"
    stricter.write_text(STRICTER)
    out, html = tmp_path / "diff.json", tmp_path / "diff.html"
    result = run(
        "replay", str(recording), "--browser", "-p", str(stricter), "--json", str(out), "--html", str(html)
    )
    assert result.returncode == 1, result.stdout + result.stderr
    report = _results(out)
    changed = [r for r in report["results"] if r["status"] == "changed"]
    # the click that goes to page two: today's policy denies it
    assert [r["index"] for r in changed] == [2] and "#next" in changed[0]["action"]
    assert (changed[0]["recorded"], changed[0]["now"]) == ("allow", "block")
    assert changed[0]["now_policies"] == ["ORG-NO-TWO"]
    # the run followed the recording: the click to page two ran, and today's network layer
    # refused page two while it ran (a refusal is reported on the action that led there, issue
    # 24), so the page never loaded: the click made on page two cannot be performed again
    assert "performed as recorded" in changed[0]["note"]
    on_two = report["results"][2]
    assert on_two["url"].endswith("/two.html") and on_two["status"] == "not_rerun"
    assert "could not be performed again" in on_two["note"]
    # ... and the session went on from the page the next step was recorded on: the refused
    # navigation left the tab there (no refusal page), so the replay had nothing to reopen
    assert report["results"][3]["now"] == "block" and "replay opened" not in report["results"][3]["note"]
    assert report["results"][3]["url"] == "http://shop.test/"
    assert "ORG-NO-TWO" in result.stdout and "1 decision(s) changed" in result.stdout
    assert "ORG-NO-TWO" in html.read_text()
    # the same diff as the offline replay, for every step performed again ...
    offline_out = tmp_path / "offline.json"
    offline = run("replay", str(recording), "-p", str(stricter), "--json", str(offline_out))
    assert offline.returncode == 1, offline.stdout + offline.stderr

    def decisions(results: list[dict], keep: set[int]) -> list[tuple]:
        return [(r["index"], r["recorded"], r["now"], r["status"], r["now_policies"])
                for r in results if r["index"] in keep]  # fmt: skip

    performed = {r["index"] for r in report["results"] if r["status"] != "not_rerun"}
    assert len(performed) == 9  # all but the typed secret (redacted) and the click on page two
    assert decisions(report["results"], performed) == decisions(_results(offline_out)["results"], performed)


def test_a_missing_flow_names_the_step_and_why(recording: Path, tmp_path: Path) -> None:
    broken = tmp_path / "run"
    shutil.copytree(recording, broken)
    with (recording / "flows.mitm").open("rb") as handle:
        flows = list(io.FlowReader(handle).stream())
    kept = [f for f in flows if not f.request.url.endswith("/two.html")]
    assert len(kept) < len(flows)
    with (broken / "flows.mitm").open("wb") as handle:
        writer = io.FlowWriter(handle)
        for flow in kept:
            writer.add(flow)
    out = tmp_path / "diff.json"
    result = run("replay", str(broken), "--browser", "--json", str(out))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    report = _results(out)
    results = report["results"]
    assert "GET http://shop.test/two.html" in report["misses"]
    assert "not in the recording" in results[1]["note"]  # the click that led there
    step = results[2]  # the link on page two: page two was never served
    assert step["status"] == "not_rerun" and "not found on the replayed page" in step["note"]
    assert "shop.test/two.html" in step["note"]
    # the session goes on: later steps on the first page are performed again
    assert [r["status"] for r in results[3:]] == ["same"] * 4 + ["not_rerun"] + ["same"] * 3
    assert "not performed again" in result.stdout
