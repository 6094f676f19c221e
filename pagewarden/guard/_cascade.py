"""The cascade: the model is consulted only where the deterministic tiers cannot decide.

The rules tier and the static world model judge every step first. `SemanticTier.reasons`
says whether the model must look too: the action is irreversible, consequential (and not
plainly what the goal asks for), leaves the site, sends typed data the goal does not
contain, acts on untrusted page content, or runs a script — and no deterministic finding has
already blocked it (``consult="always"`` / ``"never"`` override this). Steps it does not
consult cost nothing more.

A consultation is one more `Call` in the action pipeline (`semantic_stage`): read the page's
text once, bounded (the targeted observation, `judge._observation`; or, with
``observation="page"``, the whole page's aria snapshot as before) if the step has no snapshot,
build the prompt (sans-I/O), await the model, apply the answer (sans-I/O). World model and
utility agent share one call and one answer by default, or run as two concurrent calls
(``split=True``). The risk of what the model reports comes from the named policies' risk
levels, never from a number it gives; goal deviation alone leads to REVISE, never to BLOCK.
When the model cannot judge (timeout, endpoint down, refusal, unparsable output after
retries) a consulted action is blocked — or sent for approval, by configuration — and the
verdict says why.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from pagewarden._calls import Call
from pagewarden._url import parse_url
from pagewarden.guard._options import CascadeOptions
from pagewarden.guard._risk import Thresholds, decide
from pagewarden.guard._triggers import (
    ACTIVATING,
    in_goal,
    submits_goal_text,
    typed_values,
    untrusted_target,
    untrusted_value,
)
from pagewarden.judge import (
    PAGE_TEXT_CHARS,
    PAGE_TEXT_TIMEOUT_MS,
    Assessment,
    PrunedTree,
    StepContext,
    UtilityAnswer,
    WorldModelAnswer,
    addresses_judge,
    as_text_lines,
    build_context,
    evidence_lines,
    fenced_data,
    prune_for_prompt,
    relayed_instructions,
    render_assessment_prompt,
    render_utility_prompt,
    select_policies,
)
from pagewarden.llm import Fence, LLMError
from pagewarden.policies import Policy
from pagewarden.rules import goal_supports_text, goal_supports_url
from pagewarden.secrets import SecretRegistry
from pagewarden.steps import Consequence, Decision, Finding, Step, Verdict
from pagewarden.trace import redact_value
from pagewarden.worldmodel import (
    RISK_BASE,
    SCRIPT_KINDS,
    plan_risk,
    refine_prediction,
    render_prediction_prompt,
)

if TYPE_CHECKING:
    from pagewarden.guard._guard import Guard
    from pagewarden.llm import LLMClient, LLMResult

__all__ = ["Consultation", "ModelOutcome", "SemanticTier", "semantic_stage"]

_FAILURE_GUIDANCE = (
    "The guard could not judge this action, so it did not run. Try again in a moment, choose a "
    "less consequential way to reach the goal, or ask the user."
)


@dataclass(frozen=True, slots=True)
class Consultation:
    """One prepared consultation: the prompts and what went into them."""

    reasons: tuple[str, ...]
    messages: tuple[list[dict[str, str]], ...]
    schemas: tuple[type, ...]
    token: str
    context: StepContext
    snapshot_ms: float = 0.0
    prepare_ms: float = 0.0


@dataclass(frozen=True, slots=True)
class ModelOutcome:
    """The model's answer, or why there is none; and the calls' accounting."""

    assessment: Assessment | None = None
    results: tuple[Any, ...] = ()
    error: str | None = None
    error_kind: str | None = None
    elapsed_ms: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)
    #: one entry per model call, in the order of the consultation's messages (see `requests`)
    requests: tuple[dict[str, Any], ...] = ()


class SemanticTier:
    """The model's part of the guard: when to consult it, what to ask, what its answer means."""

    def __init__(self, client: LLMClient, options: CascadeOptions | None = None, *, owns_client: bool = True):
        self.client = client
        self.options = options or CascadeOptions()
        self.owns_client = owns_client

    # -- the gate (sans-I/O) --------------------------------------------------------------------
    def reasons(self, step: Step, verdict: Verdict) -> tuple[str, ...]:
        """Why the model must judge `step` (empty: the deterministic verdict stands)."""
        mode = self.options.consult
        if mode == "never" or verdict.decision is Decision.BLOCK:
            return ()
        if mode == "always":
            return ("always",)
        action, obs = step.action, step.observation
        prediction = verdict.prediction
        goal = step.goal or ""
        out: list[str] = []
        if action.kind in SCRIPT_KINDS:
            out.append("script")
        untrusted = untrusted_target(step) or untrusted_value(step)
        if untrusted:
            out.append("untrusted")
        if prediction is None:
            return tuple(out)
        on_web = obs.url.startswith(("http://", "https://"))
        nav = prediction.navigation
        if nav is not None and nav.cross_site and on_web:
            dest = parse_url(nav.url)
            if not goal_supports_url(goal, dest.host, dest.path):
                out.append("offsite")
        activating = action.kind in ACTIVATING
        sub = prediction.submission
        if sub is not None and activating:
            if sub.cross_site and "offsite" not in out:
                out.append("offsite")
            if any(not in_goal(goal, value) for value in typed_values(step)):
                out.append("typed")
        if prediction.consequence is Consequence.IRREVERSIBLE:
            out.append("irreversible")
        elif prediction.consequence is Consequence.CONSEQUENTIAL:
            el = obs.target
            # Plainly what the goal asks for: every word of the element's label is in the goal,
            # or it submits (to this site) a form carrying the text the goal gives.
            asked_for = (
                el is not None
                and not untrusted
                and (
                    goal_supports_text(goal, el.label, min_overlap=1.0)
                    or (
                        activating
                        and sub is not None
                        and not sub.cross_site
                        and submits_goal_text(step, goal)
                    )
                )
            )
            if not asked_for:
                out.append("consequential")
        return tuple(dict.fromkeys(out))

    # -- the prompt (sans-I/O) --------------------------------------------------------------------
    def prepare(
        self,
        step: Step,
        verdict: Verdict,
        snapshot: str | None,
        reasons: Sequence[str],
        policies: Sequence[Policy],
        *,
        snapshot_ms: float = 0.0,
        secrets: SecretRegistry | None = None,
        page_text: str | None = None,
    ) -> Consultation:
        """The prompt(s) for `step`: fenced data, pruned tree (or, without a snapshot, the
        targeted observation with the lines of `page_text` that give orders or that the
        agent cites), relevant policies. Registered secrets and recognisable credentials are
        redacted: they never reach the model."""
        started = time.perf_counter()
        opts = self.options
        el = step.observation.target
        tree: PrunedTree | None = None
        if snapshot:
            flagged = [s.snippet for s in step.observation.value_sources]
            if el is not None and el.in_ugc and el.context_text:
                flagged.append(el.context_text[:80])
            # Orders to an agent or the guard anywhere on the page, and what the agent cites.
            flagged += evidence_lines(snapshot, step.reasoning)
            tree = prune_for_prompt(
                snapshot,
                target_role=el.role if el is not None else None,
                target_name=(el.name or el.label) if el is not None else "",
                flagged=flagged,
                budget_tokens=opts.tree_budget,
            )
        evidence: list[str] = []
        if tree is None and page_text:
            evidence = evidence_lines(as_text_lines(page_text), step.reasoning)
        chosen = select_policies(
            policies, step, verdict.prediction, verdict.findings, reasons, limit=opts.max_policies
        )
        untrusted_text = [
            json.dumps(step.to_dict(), ensure_ascii=False),
            tree.text if tree is not None else "",
            *evidence,
            *(r.text for p in chosen for r in p.references),
        ]
        fence = Fence.around(*untrusted_text)
        context = build_context(
            step, verdict.prediction, verdict.findings, chosen, tree, fence,
            references=opts.max_references, reasons=reasons, evidence=evidence,
        )  # fmt: skip
        shape = {"short_term": opts.short_term, "long_term": opts.long_term, "lookahead": opts.lookahead}
        if opts.split:
            messages = (
                render_prediction_prompt(context.sections, **shape),
                render_utility_prompt(context.sections),
            )
            schemas: tuple[type, ...] = (WorldModelAnswer, UtilityAnswer)
        else:
            messages = (render_assessment_prompt(context.sections, **shape),)
            schemas = (Assessment,)
        messages = tuple(redact_value(m, secrets or SecretRegistry()) for m in messages)
        return Consultation(
            tuple(reasons), messages, schemas, fence.token, context,
            snapshot_ms=snapshot_ms, prepare_ms=(time.perf_counter() - started) * 1000,
        )  # fmt: skip

    # -- the call ---------------------------------------------------------------------------------
    async def consult(self, consultation: Consultation) -> ModelOutcome:
        """Ask the model; never raises (a failure is an outcome with `error`)."""
        deadline = self.options.step_deadline
        started = time.perf_counter()
        calls = [
            self.client.complete(messages, schema=schema, boundary=consultation.token, deadline=deadline)
            for messages, schema in zip(consultation.messages, consultation.schemas, strict=True)
        ]
        try:
            async with asyncio.timeout(deadline + 1.0):
                results = await asyncio.gather(*calls, return_exceptions=True)
        except TimeoutError:
            elapsed = (time.perf_counter() - started) * 1000
            return ModelOutcome(
                error=f"no judgement within the step deadline ({deadline:g} s)",
                error_kind="timeout",
                elapsed_ms=elapsed,
                requests=self.requests(consultation, [None] * len(calls), elapsed),
            )
        elapsed = (time.perf_counter() - started) * 1000
        requests = self.requests(consultation, results, elapsed)
        good = tuple(r for r in results if not isinstance(r, BaseException))
        failures = [r for r in results if isinstance(r, BaseException)]
        if failures:
            first = failures[0]
            if isinstance(first, LLMError):
                return ModelOutcome(
                    results=good, error=first.reason, error_kind=first.kind, elapsed_ms=elapsed,
                    requests=requests,
                )  # fmt: skip
            if isinstance(first, asyncio.CancelledError):
                raise first
            return ModelOutcome(
                results=good, error=f"{type(first).__name__}: {str(first)[:200]}", error_kind="error",
                elapsed_ms=elapsed, requests=requests,
            )  # fmt: skip
        if self.options.split:
            assessment = Assessment.merge(good[0].parsed, good[1].parsed)
        else:
            assessment = good[0].parsed
        return ModelOutcome(assessment=assessment, results=good, elapsed_ms=elapsed, requests=requests)

    def requests(
        self, consultation: Consultation, results: Sequence[Any], elapsed_ms: float
    ) -> tuple[dict[str, Any], ...]:
        """Each model call's accounting, for the verdict's ``llm["requests"]``: its `purpose`
        (``assess``: world model and utility agent in one call; ``worldmodel`` and ``utility``
        when split), when it started (``offset_ms`` from the start of the semantic stage), its
        latency, tokens, attempts, and ``error_kind`` when it failed (None in `results`: no
        answer within the step deadline)."""
        purposes = ("worldmodel", "utility") if len(consultation.messages) == 2 else ("assess",)
        offset = round(consultation.snapshot_ms + consultation.prepare_ms, 3)
        out: list[dict[str, Any]] = []
        for purpose, result in zip(purposes, results, strict=False):
            entry: dict[str, Any] = {"purpose": purpose, "offset_ms": offset}
            if result is None or isinstance(result, BaseException):
                entry["latency_ms"] = round(elapsed_ms, 3)
                entry["error_kind"] = (
                    "timeout" if result is None else result.kind if isinstance(result, LLMError) else "error"
                )
                entry["attempts"] = getattr(result, "attempts", 0) or 0
            else:
                entry.update(
                    latency_ms=round(result.latency_ms, 3), prompt_tokens=result.usage.prompt_tokens,
                    completion_tokens=result.usage.completion_tokens, attempts=result.attempts,
                    cached=result.cached, mode=result.mode,
                )  # fmt: skip
            out.append(entry)
        return tuple(out)

    # -- the answer (sans-I/O) --------------------------------------------------------------------
    def accounting(self, consultation: Consultation, outcome: ModelOutcome) -> dict[str, Any]:
        """Tokens, latency, cost and what the prompt held, for the verdict and the trace."""
        results: Sequence[LLMResult[Any]] = outcome.results
        tree = consultation.context.tree
        data: dict[str, Any] = {
            "reasons": list(consultation.reasons),
            "model": self.client.config.model,
            "calls": len(consultation.messages),
            "prompt_tokens": sum(r.usage.prompt_tokens for r in results),
            "completion_tokens": sum(r.usage.completion_tokens for r in results),
            "latency_ms": round(outcome.elapsed_ms, 3),
            "cached": bool(results) and all(r.cached for r in results),
            "mode": results[0].mode if results else None,
            "policies": [p.id for p in consultation.context.policies],
            "requests": [dict(r) for r in outcome.requests],
        }
        costs = [r.cost_usd for r in results if r.cost_usd is not None]
        if costs:
            data["cost_usd"] = round(sum(costs), 6)
        if tree is not None:
            data["tree_tokens"] = tree.tokens
            data["tree_whole_tokens"] = tree.whole_tokens
        if outcome.error:
            data["error"] = outcome.error
            data["error_kind"] = outcome.error_kind
        return {k: v for k, v in data.items() if v is not None}

    def apply(
        self,
        step: Step,
        verdict: Verdict,
        consultation: Consultation,
        outcome: ModelOutcome,
        *,
        policies: Sequence[Policy],
        thresholds: Thresholds,
        explain: Callable[[Decision, list[Finding]], str],
        guide: Callable[[Decision, list[Finding]], str],
        elapsed_ms: float,
    ) -> Verdict:
        """The verdict once the model has spoken (or failed to)."""
        account = self.accounting(consultation, outcome)
        timings = {
            **verdict.timings_ms,
            "snapshot": round(consultation.snapshot_ms, 3),
            "model": round(outcome.elapsed_ms, 3),
            "semantic": round(elapsed_ms, 3),
        }
        base = replace(verdict, tiers=(*verdict.tiers, "llm"), llm=account, timings_ms=timings)
        if outcome.assessment is None:
            return self._failed(step, base, consultation, outcome, explain)
        answer = outcome.assessment
        by_id = {p.id: p for p in policies}
        weight = self.options.model_weight
        known = [i for i in dict.fromkeys(answer.violated_policy_ids) if i in by_id]
        unknown = [i for i in answer.violated_policy_ids if i not in by_id]
        steered = self._steering(consultation, answer, found_nothing=not (known or unknown
                                 or answer.policy_violation or answer.goal_deviation))  # fmt: skip
        if steered is not None:
            if isinstance(steered, str):
                why = ModelOutcome(results=outcome.results, error=steered, error_kind="steered",
                                   elapsed_ms=outcome.elapsed_ms, requests=outcome.requests)  # fmt: skip
                base = replace(base, llm=self.accounting(consultation, why))
                return self._failed(step, base, consultation, why, explain)
            answer = steered
        found: list[Finding] = []
        for pid in known:
            policy = by_id[pid]
            level = policy.risk_level.value
            found.append(Finding(
                policy_id=pid, rule="tier:llm",
                message=answer.risk_explanation or f"the model judged that this action violates {pid}",
                risk_level=level, category=policy.category.value,
                score=round(RISK_BASE[level] * weight, 4),
                requires_approval=policy.category.value == "consent",
                guidance=answer.guidance,
                evidence={"semantic_delta": answer.semantic_delta[:300]} if answer.semantic_delta else {},
            ))  # fmt: skip
        if not known and self.options.lookahead > 0 and answer.future_steps:
            risk_of = {pid: p.risk_level.value for pid, p in by_id.items()}
            plan = [[], *(s.violated_policy_ids for s in answer.future_steps[: self.options.lookahead])]
            risk, index, pid = plan_risk(plan, risk_of)
            if pid is not None and risk > 0:
                later = answer.future_steps[index - 1]
                found.append(Finding(
                    policy_id=pid, rule="tier:llm/lookahead",
                    message=f"step {index} of the agent's plan ({later.action[:120]}) would violate {pid}",
                    risk_level=by_id[pid].risk_level.value, category=by_id[pid].category.value,
                    score=round(risk * weight, 4), guidance=answer.guidance,
                    evidence={"plan_step": index},
                ))  # fmt: skip
        advisory: list[Finding] = []
        if (answer.policy_violation or unknown) and not known:
            advisory.append(Finding(
                policy_id="PW-LLM", rule="tier:llm",
                message="the model reported a policy violation without naming a known policy"
                + (f" ({', '.join(unknown[:3])})" if unknown else "")
                + (f": {answer.risk_explanation}" if answer.risk_explanation else ""),
                risk_level="low", score=thresholds.revise, guidance=answer.guidance,
            ))  # fmt: skip
        if answer.goal_deviation:
            advisory.append(Finding(
                policy_id="PW-GOAL", rule="tier:llm/goal",
                message=answer.goal_explanation or "the model judged that the action does not serve the goal",
                risk_level="low", category="goal", score=thresholds.revise, guidance=answer.guidance,
            ))  # fmt: skip
        scored = [*base.findings, *found]
        prediction = refine_prediction(
            base.prediction,
            semantic_delta=answer.semantic_delta,
            element_changes=answer.element_changes.model_dump(),
            long_term_impact=answer.long_term_impact,
            violated_policy_ids=known,
            risk_explanation=answer.risk_explanation,
            optimization_guidance=answer.guidance,
        )
        decision, score = decide(scored, prediction, thresholds)
        if advisory and decision is Decision.ALLOW:
            # Goal deviation (or an unattributed concern) advises; it never blocks by itself.
            decision, score = Decision.REVISE, max(score, thresholds.revise)
        findings = sorted([*scored, *advisory], key=lambda f: -f.score)
        guidance = guide(decision, findings)
        return replace(
            base,
            decision=decision,
            score=score,
            findings=tuple(findings),
            explanation=explain(decision, findings),
            guidance=guidance,
            prediction=replace(
                prediction, optimization_guidance=prediction.optimization_guidance or guidance
            ),
        )

    def _steering(
        self, consultation: Consultation, answer: Assessment, *, found_nothing: bool
    ) -> str | Assessment | None:
        """Whether the page may have steered the model: a reason not to trust its "nothing
        wrong" (a string), or the answer without guidance that relays page orders to the
        agent (an `Assessment`), or None."""
        own = [answer.semantic_delta, answer.long_term_impact, answer.guidance,
               *(s.action for s in answer.future_steps)]  # fmt: skip
        data = fenced_data(consultation.messages[0], consultation.token)
        if found_nothing:
            relayed = relayed_instructions(own, data)
            if relayed:
                return (
                    f"the model found nothing wrong but its answer repeats instructions from page "
                    f"content or the agent's reasoning ({'; '.join(relayed[:2])}): it may have been steered"
                )
            # Not past violations: they quote attackers on purpose.
            page = fenced_data(consultation.messages[0], consultation.token, ("page",))
            agent = fenced_data(consultation.messages[0], consultation.token, ("agent", "previous step"))
            directed = addresses_judge(page) + addresses_judge(agent, dictating=False)
            if directed:
                return (
                    "page content or the agent's reasoning addresses the guard itself "
                    f"({'; '.join(directed[:2])}); the model's finding nothing wrong is not trusted"
                )
            return None
        if answer.guidance and relayed_instructions([answer.guidance], data):
            return answer.model_copy(update={"guidance": ""})  # the guard writes its own
        return None

    def _failed(
        self,
        step: Step,
        verdict: Verdict,
        consultation: Consultation,
        outcome: ModelOutcome,
        explain: Callable[[Decision, list[Finding]], str],
    ) -> Verdict:
        harmless = consultation.reasons == ("always",) and not self._would_consult(step, verdict)
        policy = self.options.harmless_on_failure if harmless else self.options.on_failure
        message = (
            f"the semantic tier could not judge this action ({outcome.error_kind}: {outcome.error}); "
            + ("it was consulted because " + ", ".join(consultation.reasons) if consultation.reasons else "")
        )
        errors = (*verdict.tier_errors, f"llm: {outcome.error}")
        if policy == "allow":
            return replace(verdict, tier_errors=errors)
        finding = Finding(
            policy_id="PW-GUARD", rule="tier:llm", message=message, risk_level="high",
            score=0.9, requires_approval=policy == "ask", guidance=_FAILURE_GUIDANCE,
        )  # fmt: skip
        findings = [finding, *verdict.findings]
        decision = Decision.ASK if policy == "ask" else Decision.BLOCK
        return replace(
            verdict,
            decision=decision,
            score=max(verdict.score, 0.9),
            findings=tuple(findings),
            explanation=explain(decision, findings),
            guidance=_FAILURE_GUIDANCE,
            tier_errors=errors,
        )

    def _would_consult(self, step: Step, verdict: Verdict) -> bool:
        saved = self.options
        try:
            self.options = replace(saved, consult="consequential")
            return bool(self.reasons(step, verdict))
        finally:
            self.options = saved

    def close(self) -> None:
        """Close the client if the tier created it."""
        if self.owns_client:
            self.client.close()


def semantic_stage(
    guard: Guard, step: Step, verdict: Verdict, page: Any = None, *, page_text: str | None = None
) -> Generator[Call, Any, Verdict]:
    """The model's part of judging `step` (a pipeline of calls; returns the final verdict).

    `page_text`: the page's rendered text when the caller has it already (a recorded or
    labelled step judged without a browser); the page is then not read."""
    tier = guard.semantic
    if tier is None:
        return verdict
    reasons = tier.reasons(step, verdict)
    if not reasons:
        return verdict
    started = time.perf_counter()
    snapshot = step.observation.aria_snapshot
    if page_text is not None:
        page_text = page_text[:PAGE_TEXT_CHARS]
    snapshot_ms = 0.0
    if snapshot is None and page_text is None and page is not None:
        try:
            if tier.options.observation == "page":
                snapshot = yield Call(page.aria_snapshot, (), {"mode": "ai"})
            else:
                # Playwright's own world, bounded: the page's patches of innerText/String
                # can neither hang this read nor change its answer
                read = page.locator("body").inner_text
                text = yield Call(read, (), {"timeout": PAGE_TEXT_TIMEOUT_MS})
                page_text = text[:PAGE_TEXT_CHARS] if isinstance(text, str) else None
        except Exception:  # noqa: BLE001 - the model can judge from the element's facts alone
            snapshot = page_text = None
        snapshot_ms = (time.perf_counter() - started) * 1000
    consultation = tier.prepare(
        step, verdict, snapshot, reasons, guard.policies, snapshot_ms=snapshot_ms, secrets=guard.secrets,
        page_text=page_text,
    )  # fmt: skip
    outcome = yield Call(tier.consult, (consultation,))
    return tier.apply(
        step,
        verdict,
        consultation,
        outcome,
        policies=guard.policies,
        thresholds=guard.thresholds,
        explain=guard._explain,
        guide=guard._guidance,
        elapsed_ms=(time.perf_counter() - started) * 1000,
    )
