"""A scripted browser-use agent: `ScriptedLLM` answers browser-use's requests with the
actions of a model that reads browser-use's element list from the prompt (``[12]<a id=… />``
then the element's text on the next line)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from pagewarden.testing import Reply, ScriptedRequest

_ELEMENT = re.compile(r"^\s*(?:\|[A-Z]+\([a-z]+\)\|)?\[(\d+)\]<(.*)$")


def element_index(prompt: str, markup: str = "", text: str = "") -> int:
    """The index browser-use gave the first element whose tag line contains `markup` and
    whose text (the next line) contains `text`."""
    lines = prompt.splitlines()
    for number, line in enumerate(lines):
        match = _ELEMENT.match(line)
        if match is None or markup not in match.group(2):
            continue
        following = lines[number + 1] if number + 1 < len(lines) else ""
        if text in match.group(2) or text in following:
            return int(match.group(1))
    raise AssertionError(f"no element {markup!r} {text!r} in the page state the agent was shown")


def first_url(prompt: str, host: str) -> str:
    """The first URL on `host` the page state shows."""
    match = re.search(rf"https?://{re.escape(host)}[^\s<>\"'`]*", prompt)
    assert match, f"no {host} URL in the page state"
    return match.group(0)


def scripted_agent(
    steps: list[Callable[[str], dict[str, Any]]], *, thinking: list[str] | None = None
) -> Reply:
    """A `Reply` answering the n-th request with ``steps[n](prompt)`` (browser-use's
    AgentOutput), then ``done``. `thinking` is the model's stated reasoning per step."""
    calls: list[str] = []

    def answer(request: ScriptedRequest) -> dict[str, Any]:
        prompt = request.prompt
        calls.append(prompt)
        n = len(calls) - 1
        action = steps[n](prompt) if n < len(steps) else {"done": {"text": "finished", "success": True}}
        reason = thinking[n] if thinking and n < len(thinking) else ""
        return {"thinking": reason, "evaluation_previous_goal": "", "memory": "", "next_goal": reason,
                "action": [action]}  # fmt: skip

    return Reply.computed(answer)
