"""Reading an ST-WebAgentBench task file (the 2024 release and the current one).

The file is a JSON list of tasks; each task has an ``intent``, ``sites`` and a
``policies`` list. In the 2024 release some tasks wrap their policies in an inner list
(``"policies": [[{...}, ...]]``); those are flattened, so policy ``n`` of a task is the
n-th policy dict in reading order in both releases.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["BenchmarkPolicy", "BenchmarkTask", "DatasetError", "load_tasks", "split_terms"]


class DatasetError(ValueError):
    """The task file is missing, unreadable or not in the expected shape."""


@dataclass(frozen=True, slots=True)
class BenchmarkPolicy:
    """One policy of a task, as the benchmark wrote it (``raw``), with its place."""

    task_id: int
    number: int  # 1-based, in reading order within the task
    raw: dict[str, Any]

    @property
    def id(self) -> str:
        """pagewarden's id for it: ``T{task_id}-P{number}``."""
        return f"T{self.task_id}-P{self.number}"

    @property
    def eval(self) -> dict[str, Any]:
        """The policy's ``eval`` block."""
        return self.raw["eval"]

    @property
    def eval_type(self) -> str:
        """The first (and in practice only) entry of ``eval_types``."""
        return str(self.eval["eval_types"][0])

    @property
    def category(self) -> str:
        """The benchmark's category name (``user_consent``, ``boundary``, …)."""
        return str(self.raw.get("policy_category") or "unknown")

    @property
    def template(self) -> str:
        """The benchmark's template id (``ask_the_user``, ``jailbreaking``, …)."""
        return str(self.raw.get("policy_template_id") or "")


@dataclass(frozen=True, slots=True)
class BenchmarkTask:
    """One task: its intent, sites and policies."""

    task_id: int
    intent: str
    sites: tuple[str, ...]
    start_url: str
    policies: tuple[BenchmarkPolicy, ...] = field(default=())


def split_terms(text: str | None) -> list[str]:
    """Alternatives of a ``"a |OR| b"`` field (either case of OR), trimmed, empties dropped."""
    if not text:
        return []
    return [part.strip() for part in re.split(r" \|or\| ", text, flags=re.IGNORECASE) if part.strip()]


def _flatten(items: list[Any], where: str) -> Iterator[tuple[Any, str]]:
    for index, item in enumerate(items):
        if isinstance(item, list):
            yield from _flatten(item, f"{where}[{index}]")
        else:
            yield item, f"{where}[{index}]"


def _policy(raw: Any, where: str) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise DatasetError(f"{where}: a policy must be an object, not {type(raw).__name__}")
    evaluation = raw.get("eval")
    if not isinstance(evaluation, dict):
        raise DatasetError(f"{where}: the policy has no 'eval' object")
    types = evaluation.get("eval_types")
    if not isinstance(types, list) or not types or not isinstance(types[0], str):
        raise DatasetError(f"{where}.eval: 'eval_types' must be a non-empty list of names")
    return raw


def _task(raw: Any, index: int) -> BenchmarkTask:
    where = f"task[{index}]"
    if not isinstance(raw, dict):
        raise DatasetError(f"{where}: a task must be an object, not {type(raw).__name__}")
    task_id = raw.get("task_id")
    if not isinstance(task_id, int) or isinstance(task_id, bool):
        raise DatasetError(f"{where}: 'task_id' must be an integer")
    where = f"task {task_id}"
    intent = raw.get("intent")
    if not isinstance(intent, str):
        raise DatasetError(f"{where}: 'intent' must be a string")
    policies = raw.get("policies", [])
    if not isinstance(policies, list):
        raise DatasetError(f"{where}: 'policies' must be a list")
    sites = raw.get("sites") or []
    if not isinstance(sites, list) or not all(isinstance(s, str) for s in sites):
        raise DatasetError(f"{where}: 'sites' must be a list of names")
    parsed = tuple(
        BenchmarkPolicy(task_id, number, _policy(item, f"{where}.policies{path}"))
        for number, (item, path) in enumerate(_flatten(policies, ""), start=1)
    )
    return BenchmarkTask(task_id, intent, tuple(sites), str(raw.get("start_url") or ""), parsed)


def load_tasks(path: str | Path) -> list[BenchmarkTask]:
    """Read and check a task file; `DatasetError` says what is wrong and where."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DatasetError(f"{path}: file not found") from None
    except IsADirectoryError:
        raise DatasetError(f"{path}: is a directory, not a task file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise DatasetError(f"{path}: cannot read: {exc}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DatasetError(f"{path}: not JSON ({exc.msg} at line {exc.lineno})") from None
    if not isinstance(data, list):
        raise DatasetError(f"{path}: expected a JSON list of tasks, found {type(data).__name__}")
    try:
        tasks = [_task(raw, index) for index, raw in enumerate(data)]
    except DatasetError as exc:
        raise DatasetError(f"{path}: {exc}") from None
    seen: set[int] = set()
    for task in tasks:
        if task.task_id in seen:
            raise DatasetError(f"{path}: task {task.task_id} appears twice")
        seen.add(task.task_id)
    return tasks
