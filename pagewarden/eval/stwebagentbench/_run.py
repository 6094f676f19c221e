"""Running the conformance evaluation: every scenario through a fresh `Guard`, labelled
by the independent oracle.

A scenario's sample is its last step. Its label is the set of policies the oracle finds
violated by the trajectory up to and including that step but not before it. Earlier steps
must be clean on both sides: the oracle must not flag them (else the generator built a
bad scenario) and the guard must allow them (else that is a false block, reported).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from pagewarden.eval.stwebagentbench._generate import (
    TaskContext,
    out_of_reach_reason,
    scenarios_for_task,
    violated,
)
from pagewarden.eval.stwebagentbench._scenarios import Scenario, to_action, to_observation
from pagewarden.guard import Decision, Guard
from pagewarden.policies import PolicySet
from pagewarden.policies.importers import BenchmarkPolicy, BenchmarkTask, import_task, load_tasks

__all__ = ["OutOfReach", "RunResult", "Sample", "run_dataset", "run_scenario"]


@dataclass(frozen=True, slots=True)
class Sample:
    """One judged step: what the oracle says it violates and what the guard decided."""

    task_id: int
    policy_id: str  # the policy the scenario was built for
    category: str  # the benchmark's category of that policy
    eval_type: str
    template: str
    intent: str  # "violate" | "comply" (what the generator aimed at)
    variant: str
    label: frozenset[str]  # policies the oracle finds newly violated by this step
    label_categories: frozenset[str]
    decision: str
    guard_policies: tuple[str, ...]
    guard_explanation: str
    prefix_problem: str = ""
    details: str = ""  # the step, shown in reports

    @property
    def violating(self) -> bool:
        """Whether the oracle finds a violation in this step."""
        return bool(self.label)

    @property
    def blocked(self) -> bool:
        """Whether the guard did not let the step run (any decision but ALLOW)."""
        return self.decision != Decision.ALLOW.value

    @property
    def attributed(self) -> bool:
        """For a violating step: whether the guard named a policy the oracle found violated."""
        return bool(self.label & set(self.guard_policies))


@dataclass(frozen=True, slots=True)
class OutOfReach:
    """A policy the evaluation cannot decide from the action trace, and why."""

    task_id: int
    policy_id: str
    category: str
    eval_type: str
    reason: str


@dataclass(frozen=True, slots=True)
class RunResult:
    """Everything one run produced."""

    dataset: str
    tasks: int
    policies: int
    samples: tuple[Sample, ...]
    out_of_reach: tuple[OutOfReach, ...]
    uncovered: tuple[tuple[str, str], ...]  # (policy id, what is missing) for decidable policies
    by_id: dict[str, BenchmarkPolicy] = field(default_factory=dict)  # the policies, for explanations


def _describe(scenario: Scenario) -> str:
    step = scenario.steps[-1]
    what = step.kind
    if step.key is not None:
        element = step.page.element(step.key)
        text = " ".join(element.text_content().split()) or element.get("aria-label") or element.tag
        what += f" <{element.tag}> {text[:60]!r}"
    if step.value is not None:
        what += f" value={step.value[:80]!r}"
    return f"{what} on {step.page.url}"


def run_scenario(
    scenario: Scenario, ctx: TaskContext, policies: PolicySet, categories: dict[str, str]
) -> Sample:
    """Judge one scenario with a fresh guard; label it with the oracle."""
    task = ctx.task
    guard = Guard(policies, goal=task.intent, baseline=True)
    seen = violated(ctx.decidable, [], scenario.steps[0].page)  # "not yet" states, e.g. an exact count
    problem = ""
    label: set[str] = set()
    verdict = None
    last = len(scenario.steps) - 1
    states = [violated(ctx.decidable, scenario.steps[: i + 1]) for i in range(len(scenario.steps))]
    for index, step in enumerate(scenario.steps):
        verdict = guard.check(guard.make_step(to_action(step), to_observation(step)))
        now = states[index]
        new, seen = now - seen, now
        if index == last:
            label = new
            break
        # a violation that later steps cure ("not yet": an exact count not reached) is no fault
        lasting = {p for p in new if all(p in later for later in states[index + 1 :])}
        if lasting and not problem:
            problem = f"step {index + 1} ({step.kind}) already violates {sorted(lasting)} per the oracle"
        elif verdict.decision is not Decision.ALLOW and not problem:
            decision = verdict.decision.value
            problem = f"guard {decision}s compliant step {index + 1} ({step.kind}): {verdict.explanation}"
    assert verdict is not None
    policy = scenario.policy
    return Sample(
        task_id=task.task_id,
        policy_id=policy.id,
        category=policy.category,
        eval_type=policy.eval_type,
        template=policy.template,
        intent=scenario.intent,
        variant=scenario.variant,
        label=frozenset(label),
        label_categories=frozenset(categories[p] for p in label),
        decision=verdict.decision.value,
        guard_policies=tuple(verdict.violated_policy_ids),
        guard_explanation=verdict.explanation,
        prefix_problem=problem,
        details=_describe(scenario),
    )


def _run_task(
    task: BenchmarkTask, document: str
) -> tuple[list[Sample], list[OutOfReach], list[tuple[str, str]]]:
    policies = import_task(task, document)
    categories = {p.id: p.category for p in task.policies}
    ctx, scenarios = scenarios_for_task(task)
    samples = [run_scenario(s, ctx, policies, categories) for s in scenarios]
    unreachable = [
        OutOfReach(task.task_id, p.id, p.category, p.eval_type, reason)
        for p in task.policies
        if (reason := out_of_reach_reason(p)) is not None
    ]
    uncovered = []
    for policy in ctx.decidable:
        own = [s for s in samples if s.policy_id == policy.id and not s.prefix_problem]
        if not any(policy.id in s.label for s in own):
            uncovered.append((policy.id, "no step the oracle finds violating"))
        if not any(not s.label for s in own):
            uncovered.append((policy.id, "no step the oracle finds compliant"))
    return samples, unreachable, uncovered


def run_dataset(
    path: str | Path,
    *,
    tasks: Iterable[int] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> RunResult:
    """Run the conformance evaluation on a task file (optionally only some task ids)."""
    all_tasks = load_tasks(path)
    wanted = set(tasks) if tasks is not None else None
    chosen = [t for t in all_tasks if wanted is None or t.task_id in wanted]
    document = Path(path).name
    samples: list[Sample] = []
    unreachable: list[OutOfReach] = []
    uncovered: list[tuple[str, str]] = []
    for index, task in enumerate(chosen, start=1):
        found, gone, missing = _run_task(task, document)
        samples.extend(found)
        unreachable.extend(gone)
        uncovered.extend(missing)
        if progress is not None:
            progress(index, len(chosen))
    return RunResult(
        dataset=document,
        tasks=len(chosen),
        policies=sum(len(t.policies) for t in chosen),
        samples=tuple(samples),
        out_of_reach=tuple(unreachable),
        uncovered=tuple(uncovered),
        by_id={p.id: p for t in chosen for p in t.policies},
    )
