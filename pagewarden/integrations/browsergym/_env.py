"""`GuardedBrowserEnv`: a BrowserGym environment whose agent acts through the guard."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from typing import Any

import gymnasium

from pagewarden._launch import browser_options
from pagewarden.guard import Guard
from pagewarden.integrations.browsergym._bridge import prelude, register
from pagewarden.integrations.browsergym._plumbing import approving_plumbing

__all__ = ["GuardedBrowserEnv"]

#: what makes an environment a BrowserGym `BrowserEnv` for the wrapper
_BROWSER_ENV_ATTRIBUTES = ("action_mapping", "pw_chromium_kwargs", "pw_context_kwargs")


class GuardedBrowserEnv(gymnasium.Wrapper):
    """Wrap a BrowserGym environment (``gym.make("browsergym/…")``) so that every action the
    agent's code takes on the page runs through `guard` (or a `Guard` made from
    `guard_options`: ``policies=``, ``goal=`` …).

    A refused action does not run; BrowserGym reports the guard's exception (with the
    violated policies and the guidance) as the observation's ``last_action_error``, so the
    agent reads it and revises like after any failed action. Tabs the agent opens or
    switches to are guarded too. The browser BrowserGym launches gets pagewarden's launch
    options (a system Chromium, quiet flags, the navigation gate, `host_map`); with
    ``proxy=True`` its traffic also goes through the network layer (`pagewarden.proxy`,
    started here, stopped by `close`). Without a ``goal=``, each episode's task goal becomes
    the guard's goal. `step` takes the agent's reasoning for the action (optional)."""

    def __init__(
        self,
        env: gymnasium.Env,
        guard: Guard | None = None,
        *,
        proxy: bool = False,
        proxy_options: Mapping[str, Any] | None = None,
        host_map: dict[str, int] | None = None,
        browser_args: tuple[str, ...] = (),
        **guard_options: Any,
    ) -> None:
        super().__init__(env)
        base = env.unwrapped
        if not all(hasattr(base, name) for name in _BROWSER_ENV_ATTRIBUTES):
            raise TypeError(f"GuardedBrowserEnv wraps a BrowserGym BrowserEnv, not {type(base).__name__}")
        if guard is not None and guard_options:
            raise TypeError("pass either a Guard or Guard options, not both")
        self._own_guard = guard is None
        self.guard: Guard = guard if guard is not None else Guard(**guard_options)
        self.guard_closed = False
        self._goal_given = self.guard.goal is not None
        self._reasoning: str | None = None
        self._network: Any = None
        if proxy:
            from pagewarden.proxy import session_proxy, verify_enforcing

            self._network = session_proxy(self.guard, host_map=host_map, options=proxy_options)
            self._network.start()
            try:
                verify_enforcing(self._network)
            except BaseException:
                self._network.stop()
                raise
        launch, context = browser_options(
            self.guard, network=self._network, host_map=host_map, browser_args=tuple(browser_args)
        )
        launch.pop("headless", None)  # BrowserGym's own `headless` decides
        self._launch = launch
        self._base = base
        self._their_context = dict(base.pw_context_kwargs)
        base.pw_context_kwargs = _merged_context(self._their_context, context)
        self._their_mapping = base.action_mapping
        self._key = register(self)
        base.action_mapping = self._map

    # -- the agent's side -------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict]:
        """A new episode (a new browser, as in BrowserGym), with a new guard session."""
        self._check_open()
        self.guard.reset()
        self._reasoning = None
        with _launching(self._launch):
            obs, info = self.env.reset(seed=seed, options=options)
        if not self._goal_given:
            self.guard.goal = _goal_text(getattr(self._base, "goal_object", None)) or None
        # the facts reader and the navigation gate go into the episode's context now
        self.guard.wrap(self._base.page)
        return obs, info

    def step(self, action: Any, reasoning: str | None = None) -> tuple[Any, float, bool, bool, dict]:
        """Run `action` (BrowserGym's action string) through the guard; `reasoning` is the
        agent's stated reason for it, judged with it."""
        self._check_open()
        if reasoning is not None:
            self._reasoning = reasoning
        theirs = self.guard.approver
        self.guard.approver = approving_plumbing(self.guard)
        try:
            obs, reward, terminated, truncated, info = self.env.step(action)
        finally:
            self.guard.approver = theirs
            self._reasoning = None
        if isinstance(obs, dict) and isinstance(obs.get("last_action_error"), str):
            obs["last_action_error"] = _named_once(obs["last_action_error"])
        return obs, reward, terminated, truncated, info

    def reasoning(self, text: str) -> None:
        """State the agent's reasoning for the next `step`."""
        self._reasoning = text

    def take_reasoning(self) -> str | None:
        """The reasoning for the action being run, consumed by it."""
        text, self._reasoning = self._reasoning, None
        return text

    @property
    def page(self) -> Any:
        """The active page, guarded (what the agent's action code gets as ``page``)."""
        return self.guard.wrap(self._base.page)

    def close(self) -> None:
        """Close the environment, the network layer and (if made here) the guard."""
        try:
            self.env.close()
        finally:
            self._base.action_mapping = self._their_mapping
            self._base.pw_context_kwargs = self._their_context
            self.guard_closed = True
            if self._network is not None:
                self._network.stop()
                self._network = None
            if self._own_guard:
                self.guard.close()

    # -- plumbing ---------------------------------------------------------------------------
    def _map(self, action: Any) -> str:
        code = self._their_mapping(action) if self._their_mapping else action
        if not isinstance(code, str):
            raise TypeError(f"an action maps to Python code (a string), not {type(code).__name__}")
        return prelude(self._key) + code

    def _check_open(self) -> None:
        if self.guard_closed:
            raise RuntimeError("this GuardedBrowserEnv is closed")


_GUARD_ERRORS = ("ActionBlocked", "ApprovalRequired", "RevisionRequired", "SessionStopped", "GuardError")


def _named_once(error: str) -> str:
    """BrowserGym writes an action's error as ``f"{type(e).__name__}: {e}"``, and a guard's
    refusal already starts with its class name: ``ActionBlocked: ActionBlocked: …`` becomes
    ``ActionBlocked: …``."""
    for name in _GUARD_ERRORS:
        if error.startswith(f"{name}: {name}: "):
            return error[len(name) + 2 :]
    return error


def _merged_context(theirs: Mapping[str, Any], ours: Mapping[str, Any]) -> dict[str, Any]:
    """The context options: the user's, with the guard's on top (its proxy, its service
    worker setting, its headers joined to the user's)."""
    merged = {**theirs, **ours}
    if "extra_http_headers" in theirs and "extra_http_headers" in ours:
        merged["extra_http_headers"] = {**theirs["extra_http_headers"], **ours["extra_http_headers"]}
    return merged


def _goal_text(goal_object: Any) -> str:
    """The text parts of BrowserGym's goal (a list of OpenAI-style content parts)."""
    if not isinstance(goal_object, list):
        return ""
    parts = [p.get("text", "") for p in goal_object if isinstance(p, dict) and p.get("type") == "text"]
    return "\n".join(p for p in parts if isinstance(p, str) and p)


@contextlib.contextmanager
def _launching(options: Mapping[str, Any]) -> Iterator[None]:
    """While BrowserGym's `reset` starts its browsers (the task's and the chat's): launched
    with pagewarden's options. BrowserGym calls ``chromium.launch`` of its process-wide
    Playwright with fixed keywords (``args`` among them, so they cannot be passed through its
    ``pw_chromium_kwargs``); the call is wrapped on that Playwright object for the duration."""
    from browsergym.core import _get_global_playwright

    chromium = _get_global_playwright().chromium
    original = chromium.launch

    def launch(**kwargs: Any) -> Any:
        merged = {**options, **{k: v for k, v in kwargs.items() if v is not None}}
        merged["args"] = [*options.get("args", ()), *(kwargs.get("args") or ())]
        return original(**merged)

    chromium.launch = launch
    try:
        yield
    finally:
        with contextlib.suppress(AttributeError):
            del chromium.launch
