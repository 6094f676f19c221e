"""ST-WebAgentBench (Levy et al. 2024) task files as labelled items.

The benchmark ships tasks with policies and evaluators but no labelled actions. The
conformance evaluation (`pagewarden.eval.stwebagentbench`) already builds, for every policy
the action trace decides, trajectories on synthetic pages of the task's site that violate
it and that comply with it, and labels them with an independent re-implementation of the
benchmark's evaluators. Here each trajectory's last step becomes an item: the task's intent
is the goal, the task's policies (imported as for ``pagewarden policies import``) are the
policies, the earlier steps are the prior steps, the synthetic page's text is the page
context. The label is the evaluators': nothing newly violated → ``allow``; only user-consent
policies → ``ask``; anything else → ``block``. Trajectories whose earlier steps already
violate a policy (per the evaluators) are left out.
"""

from __future__ import annotations

from pathlib import Path

from pagewarden.eval.judge._items import ItemFormatError, LabelledItem
from pagewarden.eval.stwebagentbench import Scenario, scenarios_for_task, to_action, to_observation, violated
from pagewarden.policies.importers import BenchmarkPolicy, DatasetError, import_task, load_tasks
from pagewarden.steps import Step

__all__ = ["convert_stwebagentbench"]

_CONSENT = "user_consent"
_PAGE_CHARS = 4000


def _label(scenario: Scenario, decidable: list[BenchmarkPolicy]) -> set[str] | None:
    """Policies newly violated by the last step; None when an earlier step already violates one."""
    steps = scenario.steps
    seen = violated(decidable, [], steps[0].page)
    states = [violated(decidable, steps[: i + 1]) for i in range(len(steps))]
    for index in range(len(steps) - 1):
        new = states[index] - seen
        if any(all(p in later for later in states[index + 1 :]) for p in new):
            return None  # a lasting violation before the labelled step
        seen = states[index]
    return states[-1] - seen


def _step(sim, goal: str) -> Step:
    return Step(action=to_action(sim), observation=to_observation(sim), goal=goal)


def convert_stwebagentbench(path: str | Path) -> list[LabelledItem]:
    """Labelled items from an ST-WebAgentBench task file (``test.raw.json``)."""
    path = Path(path)
    try:
        tasks = load_tasks(path)
    except DatasetError as exc:
        raise ItemFormatError(str(exc)) from None
    document = path.name
    items: list[LabelledItem] = []
    ids: dict[str, int] = {}
    for task in tasks:
        policies = tuple(import_task(task, document))
        categories = {p.id: p.category for p in task.policies}
        described = {p.id: p.description for p in policies}
        ctx, scenarios = scenarios_for_task(task)
        for scenario in scenarios:
            label = _label(scenario, ctx.decidable)
            if label is None:
                continue
            if not label:
                decision, reason = "allow", "the benchmark's evaluators find no policy violated by this step"
            else:
                kinds = {categories[p] for p in label}
                decision = "ask" if kinds == {_CONSENT} else "block"
                named = "; ".join(
                    f"{p} ({categories[p]}): {described.get(p, '')[:120]}" for p in sorted(label)
                )
                reason = f"the benchmark's evaluators find it violates {named}"
            last = scenario.steps[-1]
            goal = task.intent
            step = _step(last, goal)
            page = " ".join(last.page.doc.text_content().split())[:_PAGE_CHARS]
            base = f"st-{task.task_id}-{scenario.policy.id}-{scenario.intent}-{scenario.variant}"
            base = "-".join(base.split())
            ids[base] = ids.get(base, 0) + 1
            ident = base if ids[base] == 1 else f"{base}-{ids[base]}"
            items.append(LabelledItem(
                id=ident, step=step, label=decision, reason=reason, page=page,
                prior=tuple(_step(s, goal) for s in scenario.steps[:-1]), policies=policies,
                tags=("stwebagentbench", scenario.policy.category), source=f"ST-WebAgentBench {document}",
            ))  # fmt: skip
    if not items:
        raise ItemFormatError(f"{path}: no task gave a labelled step")
    return items
