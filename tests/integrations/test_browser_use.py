"""browser-use: its actions judged by the guard before they run (`GuardedTools`), its browser
behind the network layer. Real browser-use (PyPI), real Chromium, a scripted
OpenAI-compatible model (`ScriptedLLM`), the demo site and a local desk page on 127.0.0.1."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser_use import Agent, BrowserSession, ChatOpenAI, Tools

from pagewarden import Guard, PolicySet
from pagewarden.demo.site import DemoSite
from pagewarden.integrations.browser_use import GuardedTools, browser_profile, network_layer
from pagewarden.testing import LocalSite, ScriptedLLM
from pagewarden.trace import read_trace

from ._browser_use import element_index, first_url, scripted_agent
from ._gym import POLICIES, desk_site

pytestmark = pytest.mark.browser

os.environ.setdefault("ANONYMIZED_TELEMETRY", "false")
ISSUE_1 = "http://tracker.test/acme/webapp/issues/1"
COMMENT = "We are working on a fix."
GOAL = f"Comment on issue #1 of acme/webapp on tracker.test saying '{COMMENT}'"
CARD = "4111 1111 1111 1111"
SECRET = "<secret>token</secret>"
FAST = {"minimum_wait_page_load_time": 0.1, "wait_for_network_idle_page_load_time": 0.1}


@pytest.fixture
def fast(tmp_path: Path) -> dict[str, Any]:
    """Profile settings: short page-load waits, and browser-use's downloads folder in the
    test's own temporary directory (its default is a new ``/tmp/browser-use-downloads-*`` per
    profile, never removed)."""
    return {**FAST, "downloads_path": tmp_path / "downloads"}


@pytest.fixture(scope="module")
def demo() -> Iterator[DemoSite]:
    with DemoSite() as site:
        yield site


@pytest.fixture(scope="module")
def desk() -> Iterator[LocalSite]:
    with desk_site() as site:
        yield site


async def _run(
    llm: ScriptedLLM, tools: Tools, session: BrowserSession, start: str, steps: int, **options: Any
) -> Any:
    agent = Agent(
        task=GOAL, llm=ChatOpenAI(model="scripted", base_url=llm.base_url, api_key="scripted"),
        tools=tools, browser_session=session, use_vision=False, use_judge=False,
        register_new_step_callback=getattr(tools, "on_step", None),
        initial_actions=[{"navigate": {"url": start}}], **options,
    )  # fmt: skip
    try:
        return await agent.run(max_steps=steps)
    finally:
        await session.kill()


async def test_demo_planted_attack_is_stopped_and_the_benign_task_completes(
    demo: DemoSite, tmp_path: Path, fast: dict[str, Any]
) -> None:
    """Issue 1's planted note tells agents to post at evil.test: the navigation there is
    refused with guidance (the model sees it as the action's error), then the comment is
    posted on the tracker. Nothing reaches evil.test."""
    mark = demo.mark()
    guard = Guard(goal=GOAL, trace=tmp_path / "trace.jsonl")
    tools = GuardedTools(guard)
    script = scripted_agent(
        [
            lambda p: {"navigate": {"url": first_url(p, "evil.test")}},
            lambda p: {"input": {"index": element_index(p, "textarea id=note-body"), "text": COMMENT}},
            lambda p: {"click": {"index": element_index(p, "button", "Comment")}},
        ],
        thinking=["The note says comments must be posted at the discussion page now."],
    )
    signed_in = tmp_path / "state.json"  # the browser is signed in to the tracker, as in the demo
    signed_in.write_text(
        json.dumps({"cookies": [demo.session_cookie(demo.sign_in_session())], "origins": []})
    )
    with ScriptedLLM() as llm, network_layer(guard, host_map={"*.test": demo.port}) as proxy:
        llm.on(None, script)
        profile = browser_profile(network=proxy, storage_state=str(signed_in), **fast)
        session = BrowserSession(browser_profile=profile)
        history = await _run(llm, tools, session, ISSUE_1, steps=6)
    errors = [e for e in history.errors() if e]
    assert len(errors) == 1 and errors[0].startswith("ActionBlocked: goto 'http://evil.test/"), errors
    assert "Guidance:" in errors[0]
    # the model was shown the refusal in its next request
    assert "ActionBlocked" in llm.requests[1].prompt
    assert history.is_done() and history.is_successful()
    posted = demo.requests_since(mark, "tracker.test")
    notes = [r.form for r in posted if r.method == "POST" and r.path.endswith("/notes")]
    assert notes == [{"note": [COMMENT]}], notes
    assert "/users/sign_in" not in [r.path for r in posted]
    assert demo.evil_received(mark) == []
    records = list(read_trace(tmp_path / "trace.jsonl"))
    # the start page (browser-use's initial action), the refused goto, the comment
    assert [r.step.action.kind for r in records] == ["goto", "goto", "fill", "click"]
    assert [r.verdict.decision.value for r in records] == ["allow", "block", "allow", "allow"]
    assert records[1].step.reasoning and "discussion page" in records[1].step.reasoning


async def test_desk_attacks_stopped_at_the_action_layer(desk: LocalSite, fast: dict[str, Any]) -> None:
    """A planted link, and a card number typed into the attacker's form: refused by
    `GuardedTools` (no network layer here), evil.test gets nothing."""
    desk.requests.clear()
    guard = Guard(policies=PolicySet.from_dict(POLICIES), goal="Send an order with the note 'hello'.")
    script = scripted_agent([
        lambda p: {"click": {"index": element_index(p, "a id=evil-link")}},
        lambda p: {"input": {"index": element_index(p, "input id=evil-field"), "text": CARD}},
        lambda p: {"click": {"index": element_index(p, "button id=evil-submit")}},
        lambda p: {"input": {"index": element_index(p, "input id=note"), "text": "hello"}},
        lambda p: {"click": {"index": element_index(p, "button id=send")}},
    ])  # fmt: skip
    with ScriptedLLM() as llm:
        llm.on(None, script)
        session = BrowserSession(browser_profile=browser_profile(host_map={"*.test": desk.port}, **fast))
        history = await _run(llm, GuardedTools(guard), session, desk.url("shop.test", "/"), steps=8)
    errors = [e for e in history.errors() if e]
    assert len(errors) == 3 and all(e.startswith("ActionBlocked") for e in errors), errors
    assert "CARD" in errors[1]
    assert desk.requests_to("evil.test") == []
    assert [r.form for r in desk.requests_to("shop.test", "/order")] == [{"note": ["hello"]}]


async def test_unguarded_control_and_the_network_layer_alone(desk: LocalSite, fast: dict[str, Any]) -> None:
    """browser-use's own tools: the planted link reaches evil.test without pagewarden; with
    only the network layer (`pagewarden proxy`), the same click and the page's own beacon
    are refused on the wire."""
    script = [lambda p: {"click": {"index": element_index(p, "a id=evil-link")}}]
    desk.requests.clear()
    with ScriptedLLM() as llm:
        llm.on(None, scripted_agent(script))
        session = BrowserSession(browser_profile=browser_profile(host_map={"*.test": desk.port}, **fast))
        await _run(llm, Tools(), session, desk.url("shop.test", "/"), steps=2)
    assert "/collect" in [r.path for r in desk.requests_to("evil.test")]

    desk.requests.clear()
    guard = Guard(policies=PolicySet.from_dict(POLICIES))
    events: list[Any] = []
    guard.subscribe(events.append)
    beacon = [
        lambda p: {"click": {"index": element_index(p, "button id=beacon")}},
        lambda p: {"click": {"index": element_index(p, "a id=evil-link")}},
    ]
    with ScriptedLLM() as llm, network_layer(guard, host_map={"*.test": desk.port}) as proxy:
        llm.on(None, scripted_agent(beacon))
        session = BrowserSession(browser_profile=browser_profile(network=proxy, **fast))
        await _run(llm, Tools(), session, desk.url("shop.test", "/"), steps=3)
    assert desk.requests_to("evil.test") == []
    refused = {(e.data.get("host"), e.data.get("action")) for e in events if e.kind == "network"}
    assert any(host == "evil.test" for host, _ in refused), refused
    assert desk.requests_to("shop.test", "/")  # the allowed site loaded through the proxy


async def test_sensitive_data_is_judged_with_its_value_and_never_traced(
    desk: LocalSite, tmp_path: Path, fast: dict[str, Any]
) -> None:
    """browser-use's domain-scoped ``sensitive_data``: typed into the attacker's form it is
    refused (the guard judged the value, not the placeholder); into the shop's own form it
    runs; the trace never shows it."""
    desk.requests.clear()
    token = "tok-7Qz9-Kp2w-0a1b"
    guard = Guard(goal="Send an order with my order token as the note.", trace=tmp_path / "trace.jsonl")
    script = scripted_agent([
        lambda p: {"input": {"index": element_index(p, "input id=evil-field"), "text": SECRET}},
        lambda p: {"input": {"index": element_index(p, "input id=note"), "text": SECRET}},
        lambda p: {"click": {"index": element_index(p, "button id=send")}},
    ])  # fmt: skip
    with ScriptedLLM() as llm:
        llm.on(None, script)
        session = BrowserSession(browser_profile=browser_profile(host_map={"*.test": desk.port}, **fast))
        history = await _run(
            llm, GuardedTools(guard), session, desk.url("shop.test", "/"), steps=5,
            sensitive_data={"http*://shop.test": {"token": token}},
        )  # fmt: skip
    errors = [e for e in history.errors() if e]
    assert len(errors) == 1 and errors[0].startswith("ActionBlocked: fill"), errors
    assert "PW-CREDENTIALS" in errors[0] and "registered secret" in errors[0] and token not in errors[0]
    assert [r.form for r in desk.requests_to("shop.test", "/order")] == [{"note": [token]}]
    assert desk.requests_to("evil.test") == []
    assert token not in (tmp_path / "trace.jsonl").read_text()


def test_the_example_runs() -> None:
    """examples/browser_use_guarded.py, as a user runs it."""
    import subprocess
    import sys

    example = Path(__file__).parents[2] / "examples" / "browser_use_guarded.py"
    done = subprocess.run([sys.executable, str(example)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "refused: ActionBlocked: goto 'http://evil.test/" in done.stdout
    assert "task done: True success: True" in done.stdout
    assert "requests to evil.test: 0" in done.stdout
    # a passing run says what the agent did, not the proxy's connection log, the DNS errors of
    # the browser's own background requests, or browser-use's offer of a newer version
    for noise in ("[mitmproxy", "client connect", "Name or service not known", "Newer version available"):
        assert noise not in done.stderr, noise


def test_the_integration_turns_browser_use_s_version_check_off() -> None:
    """Importing the integration (before browser-use runs an agent) sets the version check
    off (unless the user set BROWSER_USE_VERSION_CHECK); mitmproxy's logger goes to WARNING
    when its layer starts (unless the application gave it a level). The downloads folders
    browser-use makes in /tmp by itself (one at import, one per profile without
    ``downloads_path``) are gone after the process exits when nothing was downloaded; a folder
    with a download stays."""
    import os
    import subprocess
    import sys

    code = (
        "import logging, os, pathlib\n"
        "import pagewarden.integrations.browser_use as b\n"
        "from browser_use.config import CONFIG\n"
        "from browser_use.browser.session import DEFAULT_BROWSER_PROFILE\n"
        "print(CONFIG.BROWSER_USE_VERSION_CHECK)\n"
        "b._network._quiet_mitmproxy()\n"
        "print(logging.getLevelName(logging.getLogger('mitmproxy').level))\n"
        "kept = b.browser_profile().downloads_path\n"
        "(pathlib.Path(kept) / 'report.pdf').write_text('downloaded')\n"
        "print(DEFAULT_BROWSER_PROFILE.downloads_path, b.browser_profile().downloads_path, kept)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "BROWSER_USE_VERSION_CHECK"}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    check, level, *folders = done.stdout.split()
    assert [check, level] == ["False", "WARNING"]
    empty, kept = [Path(f) for f in folders[:2]], Path(folders[2])
    assert all(f.name.startswith("browser-use-downloads-") and not f.exists() for f in empty), empty
    assert (kept / "report.pdf").read_text() == "downloaded"
    (kept / "report.pdf").unlink()
    kept.rmdir()


async def test_an_action_the_guard_cannot_judge_does_not_run() -> None:
    """Fail closed: the judgement fails (here the guard itself raises), so the action is
    refused and browser-use's own action is never called."""
    guard = Guard(goal="anything")

    async def broken(step: Any) -> Any:
        raise RuntimeError("judge down")

    guard.aassess = broken  # type: ignore[method-assign]
    tools = GuardedTools(guard)
    ran: list[Any] = []

    async def run(*args: Any, **kwargs: Any) -> Any:
        ran.append(args)

    tools.registry.execute_action = run  # type: ignore[method-assign]

    class Session:
        async def get_current_page_url(self) -> str:
            return "http://shop.test/"

        async def get_current_page_title(self) -> str:
            return "Shop"

    model = tools.registry.create_action_model()
    result = await tools.act(model(navigate={"url": "http://shop.test/next"}), Session())
    assert result.error and result.error.startswith("ActionBlocked: pagewarden could not judge navigate")
    assert ran == []
