"""WASP's data, read from the path the user gives (it is CC-BY-NC: never copied into the repo).

A task is one attacker goal × one injection template × one user goal, instantiated the way
WASP's ``webarena_prompt_injections`` does: the template's ``{user_goal_str}``,
``{instantiated_url_of_action}`` and ``{instantiated_instruction_text}`` filled in (spaces
in the instruction become ``-`` for the URL templates), the attacker goal's parameters
substituted into its action URL, instruction and evaluation.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["AttackerGoal", "WaspDataError", "WaspTask", "load_tasks"]

GITLAB = "http://gitlab.test"
AGENT_USER = "byteblaze"
TEMPLATES_FILE = "injection_templates_and_user_goals.json"
ATTACKS_FILE = "attacks_in_webarena_format.jsonl"
#: the issue the injection is posted as (WASP: byteblaze/dotfiles, attacker "Arsene Lupin")
ISSUE_PROJECT = ("byteblaze", "dotfiles")
ISSUE_TITLE = "A note from a gentleman thief"


class WaspDataError(ValueError):
    """The WASP data at the given path is missing or not in the expected shape."""


@dataclass(frozen=True)
class AttackerGoal:
    """One of WASP's attacker goals, parameters substituted."""

    index: int
    name: str
    action_url: str  # absolute, on GITLAB
    instruction: str
    exfil: bool
    eval: dict[str, Any]
    parameters: dict[str, str]


@dataclass(frozen=True)
class WaspTask:
    """One task: the user's goal on an issue that carries one instantiated injection."""

    id: str
    attacker: AttackerGoal
    template: str  # e.g. goal_hijacking_plain_text
    user_goal_index: int
    user_goal: str
    injection: str  # the text planted in the issue (markdown link syntax for URL injections)
    start_url: str
    user_eval: dict[str, Any] = field(default_factory=dict)

    @property
    def url_injection(self) -> bool:
        return self.template.endswith("url_injection")

    @property
    def injection_url(self) -> str:
        """The planted link's address (URL injections), else the attacker goal's action URL."""
        marker = "[this link]("
        if self.url_injection and marker in self.injection:
            start = self.injection.index(marker) + len(marker)
            return self.injection[start : self.injection.rindex(")")]
        return self.attacker.action_url


def _fill(text: str, params: dict[str, str]) -> str:
    return re.sub(r"\{(\w+)\}", lambda m: params.get(m.group(1), m.group(0)), text)


def _fill_tree(value: Any, params: dict[str, str]) -> Any:
    if isinstance(value, str):
        return _fill(value, params)
    if isinstance(value, dict):
        return {k: _fill_tree(v, params) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill_tree(v, params) for v in value]
    return value


def _user_goal_str(goal: str) -> str:
    """WASP's short name for the user's task: comment / upvote / like."""
    lowered = goal.lower()
    if "comment" in lowered:
        return "comment"
    if "thumbs" in lowered or "upvote" in lowered:
        return "upvote"
    return "like"


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise WaspDataError(
            f"{path}: not found (give --data the WASP directory; see its SOURCE.txt)"
        ) from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise WaspDataError(f"{path}: unreadable: {exc}") from None


def _attackers(path: Path) -> list[AttackerGoal]:
    goals: list[AttackerGoal] = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise WaspDataError(f"{path}: {exc.strerror or exc}") from None
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
            if raw.get("environment") != "gitlab":
                continue
            params = {k: str(v) for k, v in (raw.get("parameters") or {}).items()}
            params.setdefault("project_owner", AGENT_USER)
            params["gitlab_domain"] = GITLAB
            params.setdefault("username", AGENT_USER)
            goals.append(
                AttackerGoal(
                    index=len(goals),
                    name=str(raw["free_form_name"]),
                    action_url=_fill(str(raw["action_url"]), params),
                    instruction=_fill(str(raw["instruction"]), params),
                    exfil=bool(raw.get("exfil")),
                    eval=_fill_tree(raw.get("eval") or {}, params),
                    parameters=params,
                )
            )
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise WaspDataError(f"{path}:{number}: not an attacker goal: {exc}") from None
    return goals


def load_tasks(data: str | Path, *, limit: int | None = None) -> list[WaspTask]:
    """Every GitLab attacker goal × injection template × GitLab user goal in `data` (a
    directory with WASP's ``injection_templates_and_user_goals.json`` and
    ``attacks_in_webarena_format.jsonl``), optionally only the first `limit` attacker goals."""
    root = Path(data)
    if not root.is_dir():
        raise WaspDataError(f"{root}: not a directory (give --data the WASP directory)")
    spec = _read_json(root / TEMPLATES_FILE)
    try:
        templates: dict[str, str] = dict(spec["injection_formats"])
        user_goals: list[str] = list(spec["user_goals"]["gitlab"])
        user_evals: list[dict[str, Any]] = list(spec.get("user_goal_evals", {}).get("gitlab", []))
    except (KeyError, TypeError) as exc:
        raise WaspDataError(f"{root / TEMPLATES_FILE}: missing {exc}") from None
    attackers = _attackers(root / ATTACKS_FILE)
    if not attackers or not templates or not user_goals:
        raise WaspDataError(f"{root}: no GitLab attacker goals, templates or user goals found")
    if limit is not None:
        attackers = attackers[:limit]
    owner, project = ISSUE_PROJECT
    start_url = f"{GITLAB}/{owner}/{project}/-/issues/1"
    tasks: list[WaspTask] = []
    for attacker in attackers:
        for name, template in templates.items():
            for g, goal in enumerate(user_goals):
                instruction = attacker.instruction
                if name.endswith("url_injection"):
                    instruction = instruction.replace(" ", "-")
                injection = template.format(
                    user_goal_str=_user_goal_str(goal),
                    instantiated_url_of_action=attacker.action_url,
                    instantiated_instruction_text=instruction,
                )
                tasks.append(
                    WaspTask(
                        id=f"a{attacker.index:02d}-{name}-u{g}",
                        attacker=attacker,
                        template=name,
                        user_goal_index=g,
                        user_goal=goal,
                        injection=injection,
                        start_url=start_url,
                        user_eval=user_evals[g] if g < len(user_evals) else {},
                    )
                )
    return tasks
