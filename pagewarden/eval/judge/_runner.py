"""Running labelled items through the semantic tier, one at a time, and measuring each.

Each item gets a fresh `Guard` sharing one model client: the item's policies (and the
built-in baseline unless the item says ``"baseline": false``), the item's goal, its prior
steps remembered as having run (the rules' memory and the judge's previous step), then the
item's step judged with `Guard.aassess` — the same pipeline a guarded page runs, with the
item's page text standing in for the page.

``tiers="semantic"`` (default) measures the model: the policies' machine-checkable rules are
left out and the model is consulted on every item (``consult="always"``). ``tiers="all"``
measures the guard as deployed: rules tier, static world model, and the model only where the
cascade consults it. Either way a model that fails (timeout, endpoint down, refusal, garbage
after format retries) leaves the item with the guard's safe decision (block), counted as a
failure; nothing an item or a model does stops the run.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from pagewarden.eval.judge._items import LabelledItem
from pagewarden.guard import CascadeOptions, Guard, Verdict
from pagewarden.policies import Policy, baseline_policies
from pagewarden.secrets import MIN_SECRET_LENGTH, Secret
from pagewarden.trace import redact_value

if TYPE_CHECKING:
    from pagewarden.llm import LLMClient

__all__ = ["ItemResult", "JudgeOptions", "Tiers", "judge_item", "run_items"]

Tiers = Literal["semantic", "all"]


@dataclass(frozen=True, slots=True)
class JudgeOptions:
    """How the items are judged.

    Args:
        tiers: ``semantic`` (the model alone, on every item) or ``all`` (the guard as deployed).
        deadline: seconds one item's consultation may take, retries included.
        split: world model and utility agent as two calls instead of one.
        policies: policies added to every item's own.
    """

    tiers: Tiers = "semantic"
    deadline: float = 60.0
    split: bool = False
    policies: tuple[Policy, ...] = ()

    def __post_init__(self) -> None:
        if self.tiers not in ("semantic", "all"):
            raise ValueError(f"tiers must be 'semantic' or 'all', not {self.tiers!r}")
        if self.deadline <= 0:
            raise ValueError("deadline must be positive")


@dataclass(frozen=True, slots=True)
class ItemResult:
    """What the guard decided on one item, and what it cost."""

    id: str
    label: str
    decision: str  # allow | ask | block | revise
    latency_ms: float
    model_ms: float = 0.0
    consulted: bool = False
    failed: bool = False  # the model could not judge: the decision is the guard's safe default
    error: str = ""
    calls: int = 0  # HTTP requests to the model (retries and format retries included)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    policies: tuple[str, ...] = ()  # the policies the verdict names
    explanation: str = ""
    reason: str = ""  # why the item has its label
    tags: tuple[str, ...] = ()

    @property
    def correct(self) -> bool:
        """Whether the decision is the label."""
        return self.decision == self.label


def _policies(item: LabelledItem, options: JudgeOptions) -> tuple[list[Policy], bool]:
    """The item's policies for its guard, and whether the guard adds the baseline itself."""
    policies = [*item.policies, *(p for p in options.policies if p.id not in {q.id for q in item.policies})]
    if options.tiers == "all":
        return policies, item.baseline
    if item.baseline:
        own = {p.id for p in policies}
        policies += [p for p in baseline_policies() if p.id not in own]
    return [p.model_copy(update={"rules": []}) for p in policies], False


def _listed_values(item: LabelledItem, options: JudgeOptions) -> list[Secret]:
    """Values the policies' `sensitive_data` rules list: the guard redacts them from prompts,
    so they stay redacted when the rules themselves are left out."""
    out = []
    for policy in (*item.policies, *options.policies):
        for rule in policy.rules:
            if rule.kind == "sensitive_data":
                values = [v for v in rule.values if len(v) >= MIN_SECRET_LENGTH]  # type: ignore[union-attr]
                out += [Secret(v, tuple(rule.allow_domains)) for v in values]  # type: ignore[union-attr]
    return out


def _guard(item: LabelledItem, client: LLMClient, options: JudgeOptions) -> Guard:
    policies, baseline = _policies(item, options)
    secrets = _listed_values(item, options) if options.tiers == "semantic" else []
    cascade = CascadeOptions(
        consult="always" if options.tiers == "semantic" else "consequential",
        on_failure="block",
        harmless_on_failure="block",  # a model that fails never counts as an allow
        split=options.split,
        step_deadline=options.deadline,
    )
    return Guard(
        policies, goal=item.step.goal, llm=client, cascade=cascade, baseline=baseline, secrets=secrets
    )


def _failure(verdict: Verdict) -> str:
    for error in verdict.tier_errors:
        if error.startswith(("llm:", "semantic tier error")):
            return error
    return ""


async def judge_item(item: LabelledItem, client: LLMClient, options: JudgeOptions) -> ItemResult:
    """Judge one item; never raises (an error is a failed item with the safe decision)."""
    before = client.stats
    started = time.perf_counter()
    guard = None
    try:
        guard = _guard(item, client, options)
        for prior in item.prior:
            step = guard.make_step(prior.action, prior.observation, prior.reasoning)
            guard.remember(step, guard.evaluate(step), ran=True)
        step = guard.make_step(item.step.action, item.step.observation, item.step.reasoning)
        verdict = await guard.aassess(step, page_text=item.page or None)
    except Exception as exc:  # noqa: BLE001 - one bad item or model never stops the run
        error = redact_value(f"{type(exc).__name__}: {exc}"[:300], guard.secrets) if guard else str(exc)[:300]
        return ItemResult(
            id=item.id, label=item.label, decision="block",
            latency_ms=(time.perf_counter() - started) * 1000, failed=True, error=str(error),
            reason=item.reason, tags=item.tags, **_usage(client, before),
        )  # fmt: skip
    finally:
        if guard is not None:
            guard.close()  # the client is the run's, not the guard's: it stays open
    elapsed = (time.perf_counter() - started) * 1000
    error = _failure(verdict)
    return ItemResult(
        id=item.id,
        label=item.label,
        decision=verdict.decision.value,
        latency_ms=round(elapsed, 3),
        model_ms=float(verdict.timings_ms.get("model", 0.0)),
        consulted="llm" in verdict.tiers,
        failed=bool(error),
        error=error[:300],
        policies=tuple(verdict.violated_policy_ids),
        explanation=verdict.explanation[:500],
        reason=item.reason,
        tags=item.tags,
        **_usage(client, before),
    )


def _usage(client: LLMClient, before: object) -> dict[str, int]:
    after = client.stats
    return {
        "calls": after.requests - before.requests,  # type: ignore[attr-defined]
        "prompt_tokens": after.prompt_tokens - before.prompt_tokens,  # type: ignore[attr-defined]
        "completion_tokens": after.completion_tokens - before.completion_tokens,  # type: ignore[attr-defined]
    }


async def run_items(
    items: Sequence[LabelledItem],
    client: LLMClient,
    options: JudgeOptions | None = None,
    *,
    progress: Callable[[int, int, ItemResult], None] | None = None,
) -> list[ItemResult]:
    """Judge `items` one after the other (latency is measured per item, unshared)."""
    options = options or JudgeOptions()
    results = []
    for index, item in enumerate(items, 1):
        result = await judge_item(item, client, options)
        results.append(result)
        if progress is not None:
            progress(index, len(items), result)
    return results
