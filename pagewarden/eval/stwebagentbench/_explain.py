"""Known reasons why the guard and ST-WebAgentBench's evaluators disagree on a step.

Each reason is a documented property of the benchmark's evaluators (or of a task whose
policies contradict each other), recognised from the sample and the policies involved:

``seq-input-text``
    A required sequence names a *fill* step by ``element_text``. The evaluator compares
    that text with the element's ``textContent``, which is empty for an ``<input>``: the
    step can never match, so every trajectory that answers violates the policy, however
    it was done. The guard sees the labelled field filled and lets the agent finish.
``seq-conflict``
    Two contiguous sequences of the task require different steps directly before the same
    step (``choose file → import`` and ``choose file → next → import``): no order satisfies
    both. The guard's order check stops the step that breaks one of them; the benchmark
    only looks when the agent answers.
``seq-order``
    The guard enforces a sequence's order at its last step ("fill the date before adding
    participants"); the benchmark only checks, when the agent answers, that the sequence
    occurred somewhere.
``dominated-budget``
    Reaching this budget's limit needs more actions than a smaller budget of the same kind
    in the same task allows: the smaller one is violated first, so no clean trajectory
    reaches this step.
``task-conflict``
    The task's policies leave no clean path to this step (for example a sequence requires
    clicking Add and another requires Save, while a count allows one click on Add or Save).
"""

from __future__ import annotations

from pagewarden.eval.stwebagentbench._run import Sample
from pagewarden.policies.importers import BenchmarkPolicy

__all__ = ["CODES", "explain", "explain_invalid"]

CODES = {
    "seq-input-text": "the sequence names a fill step by element_text, which the benchmark compares with the "
    "input's textContent (always empty): no trajectory can satisfy it",
    "seq-conflict": "two contiguous sequences of the task require different steps directly before the same "
    "step; no order satisfies both, and the guard stops the step that breaks one",
    "seq-order": "the guard enforces the sequence's order before its last step; the benchmark only checks "
    "when the agent answers",
    "dominated-budget": "a smaller action budget of the same task runs out before this one can be reached",
    "task-conflict": "the task's policies contradict each other: no clean trajectory reaches this step",
    "unexplained": "no documented reason",
}


def _items(policy: BenchmarkPolicy) -> list[dict]:
    return [i for i in policy.eval.get("action_sequence") or [] if isinstance(i, dict)]


def _unsatisfiable(policy: BenchmarkPolicy) -> bool:
    return any(
        str(i.get("action_type", "")).lower() == "fill"
        and i.get("element_text")
        and not (i.get("element_selector") or i.get("action_selector"))
        for i in _items(policy)
    )


def _contiguous(policy: BenchmarkPolicy) -> bool:
    return str(policy.eval.get("matching_type") or "contiguous").lower() == "contiguous"


def _last(policy: BenchmarkPolicy) -> tuple[str, str]:
    item = _items(policy)[-1]
    selector = item.get("element_selector") or item.get("action_selector") or ""
    return str(item.get("action_type", "")).lower(), str(item.get("element_text") or selector).lower()


def _conflicting(policy: BenchmarkPolicy, task_policies: list[BenchmarkPolicy]) -> bool:
    if not _contiguous(policy) or len(_items(policy)) < 2:
        return False
    for other in task_policies:
        if other.id == policy.id or other.eval_type != "is_sequence_match" or not _contiguous(other):
            continue
        if (
            len(_items(other)) >= 2
            and _last(other) == _last(policy)
            and _items(other)[:-1] != _items(policy)[:-1]
        ):
            return True
    return False


def _task_policies(sample: Sample, policies: dict[str, BenchmarkPolicy]) -> list[BenchmarkPolicy]:
    return [p for p in policies.values() if p.task_id == sample.task_id]


def explain(sample: Sample, kind: str, policies: dict[str, BenchmarkPolicy]) -> tuple[str, str]:
    """(code, explanation) for a miss; ("unexplained", …) when no known reason applies."""
    task = _task_policies(sample, policies)
    if kind == "missed violation":
        sequences = [policies[p] for p in sample.label if policies[p].eval_type == "is_sequence_match"]
        if sequences and all(_unsatisfiable(p) for p in sequences) and len(sequences) == len(sample.label):
            return "seq-input-text", CODES["seq-input-text"]
        return "unexplained", CODES["unexplained"]
    # a false block: which rules stopped the step (or an earlier, clean step)?
    text = sample.prefix_problem if sample.prefix_problem.startswith("guard ") else sample.guard_explanation
    blockers = {p for p in policies if f"[{p}/" in text}
    if blockers and all(policies[p].eval_type == "is_sequence_match" for p in blockers):
        if any(_conflicting(policies[p], task) for p in blockers):
            return "seq-conflict", CODES["seq-conflict"]
        return "seq-order", CODES["seq-order"]
    return "unexplained", CODES["unexplained"]


def explain_invalid(sample: Sample, policies: dict[str, BenchmarkPolicy]) -> tuple[str, str]:
    """Why a scenario had no clean path to its last step."""
    own = policies.get(sample.policy_id)
    flagged = [policies[p] for p in policies if f"'{p}'" in sample.prefix_problem]
    if (
        own is not None
        and own.eval_type == "is_action_count"
        and any(p.eval_type == "is_action_count" and p.id != own.id for p in flagged)
    ):
        return "dominated-budget", CODES["dominated-budget"]
    if flagged:
        return "task-conflict", CODES["task-conflict"]
    return "unexplained", CODES["unexplained"]
