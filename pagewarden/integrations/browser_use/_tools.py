"""`GuardedTools`: browser-use's tools, each browser action judged by the guard first.

browser-use (0.11) runs every action the model chooses through one method,
`Tools.act(action, browser_session, …)` (called by `Agent.multi_act`), which calls the
action's registered function; those dispatch events on the session's bus
(`ClickElementEvent`, `TypeTextEvent`, `NavigateToUrlEvent` …) that its watchdogs carry
out over CDP. `GuardedTools.act` judges the action before that: the target element's facts
from the DOM tree browser-use captured for the model (`_facts.element_facts`), the page's URL
and title, the agent's reasoning. A refused action does not run: the agent gets an
`ActionResult` whose error is the guard's message with the guidance, as after any failed
action, and revises.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from browser_use import ActionResult, Tools

from pagewarden.guard import Action, Decision, Guard
from pagewarden.integrations.browser_use._facts import element_facts
from pagewarden.integrations.browser_use._secrets import SecretValues
from pagewarden.steps import ElementFacts, Observation

__all__ = ["READ_ONLY_ACTIONS", "GuardedTools"]

#: browser-use actions that read the page or the agent's own files, or move the view: not judged
READ_ONLY_ACTIONS = frozenset({
    "done", "wait", "scroll", "extract", "search_page", "find_elements", "find_text", "screenshot",
    "dropdown_options", "read_file", "write_file", "replace_file", "read_long_content", "save_as_pdf",
    "switch", "close",
})  # fmt: skip

#: browser-use action -> the guard's action kind (targets by element index where they have one)
_KINDS = {
    "click": "click", "input": "fill", "navigate": "goto", "search": "goto", "go_back": "go_back",
    "send_keys": "press", "upload_file": "set_input_files", "select_dropdown": "select_option",
    "evaluate": "evaluate",
}  # fmt: skip

_SEARCH = {
    "duckduckgo": "https://duckduckgo.com/?q=",
    "google": "https://www.google.com/search?q=",
    "bing": "https://www.bing.com/search?q=",
}


class GuardedTools(Tools):
    """browser-use `Tools` whose browser actions go through `guard` first (pass it as
    ``Agent(tools=GuardedTools(guard), …)``). Other arguments go to `Tools`.

    ``Agent(register_new_step_callback=tools.on_step)`` gives the guard the model's thinking
    and next goal as the reasoning of the step's actions."""

    def __init__(self, guard: Guard, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.guard = guard
        self._reasoning: str | None = None
        self._secrets = SecretValues(guard)

    def on_step(self, state: Any, model_output: Any, step: int) -> None:
        """browser-use's new-step callback: the model's stated reasoning for this step's
        actions (until the next step)."""
        parts = [getattr(model_output, name, None) for name in ("thinking", "next_goal")]
        text = " ".join(p for p in parts if isinstance(p, str) and p.strip())
        self._reasoning = text or None

    async def act(self, action: Any, browser_session: Any, *args: Any, **kwargs: Any) -> Any:
        """Judge the action, then run it as browser-use does (or return the refusal)."""
        names = self._secrets.register(kwargs.get("sensitive_data"))
        for name, params in action.model_dump(exclude_unset=True).items():
            if params is None:
                continue
            try:
                refusal = await self._judge(
                    name, params if isinstance(params, dict) else {}, browser_session, names
                )
            except Exception as exc:  # noqa: BLE001 - never crash the agent: fail closed
                refusal = f"ActionBlocked: pagewarden could not judge {name} ({type(exc).__name__}): not run"
            if refusal is not None:
                return ActionResult(error=refusal)
            break  # browser-use runs the first action of the model only
        return await super().act(action, browser_session, *args, **kwargs)

    # -- judging ----------------------------------------------------------------------------
    async def _judge(
        self, name: str, params: dict[str, Any], session: Any, secrets: dict[str, str] | None = None
    ) -> str | None:
        """None when the action may run; otherwise the message for the agent."""
        if name in READ_ONLY_ACTIONS:
            return None
        url = await _safe(session.get_current_page_url(), "")
        title = await _safe(session.get_current_page_title(), None)
        target: ElementFacts | None = None
        index = params.get("index")
        if isinstance(index, int) and name in ("click", "input", "upload_file", "select_dropdown"):
            node = await _safe(session.get_element_by_index(index), None)
            if node is None:
                return None  # browser-use answers "element not available" itself; nothing runs
            target = element_facts(node, url)
        elif name == "click":
            point = (params.get("coordinate_x"), params.get("coordinate_y"))
            node = await _node_at(session, point)
            if node is None:
                return (
                    "ActionBlocked: click at a point: pagewarden cannot tell what is there, so it did not run"
                )
            target = element_facts(node, url)
        action = Action(
            kind=_KINDS.get(name, name),
            method=f"browser_use.{name}",
            selector=f"index={index}" if isinstance(index, int) else None,
            value=_value(name, params, secrets or {}),
        )
        observation = Observation(url=url, title=title, target=target)
        reasoning = self._reasoning  # the step's, for each of its actions
        guard = self.guard
        step = guard.make_step(action, observation, reasoning)
        verdict = await guard.aassess(step)
        if verdict.decision is Decision.ASK and await guard.approve(verdict, step):
            verdict = replace(verdict, approved_by="approver")
        ran = verdict.allowed
        guard.commit(step, verdict, ran=ran)
        return None if ran else str(guard.stop(step, verdict))


def _value(name: str, params: dict[str, Any], secrets: dict[str, str]) -> str | None:
    if name == "input":
        return SecretValues.fill_in(str(params.get("text", "")), secrets)
    if name == "navigate":
        return str(params.get("url", ""))
    if name == "search":
        from urllib.parse import quote_plus

        engine = str(params.get("engine", "duckduckgo")).lower()
        return _SEARCH.get(engine, _SEARCH["duckduckgo"]) + quote_plus(str(params.get("query", "")))
    if name == "send_keys":
        return str(params.get("keys", ""))
    if name == "upload_file":
        return str(params.get("path", ""))
    if name == "select_dropdown":
        return str(params.get("text", ""))
    if name == "evaluate":
        return str(params.get("code", ""))
    return None


async def _safe(awaitable: Any, default: Any) -> Any:
    try:
        return await awaitable
    except Exception:  # noqa: BLE001 - what the page state could not give
        return default


async def _node_at(session: Any, point: tuple[Any, Any]) -> Any:
    """The smallest interactive element of browser-use's last capture containing `point`."""
    x, y = point
    if not isinstance(x, (int, float)) or not isinstance(y, (int, float)):
        return None
    selector_map = await _safe(session.get_selector_map(), {}) or {}
    best, best_area = None, float("inf")
    for node in selector_map.values():
        box = getattr(node, "absolute_position", None)
        if box is None:
            continue
        if box.x <= x <= box.x + box.width and box.y <= y <= box.y + box.height:
            area = box.width * box.height
            if area < best_area:
                best, best_area = node, area
    return best
