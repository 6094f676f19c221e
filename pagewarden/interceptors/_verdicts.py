"""Verdicts the pipeline makes itself: destination pinning, an earlier stopped navigation,
failing closed when the page cannot be read, and the timings."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from pagewarden.guard import GuardError
from pagewarden.observe import (
    Observation,
)
from pagewarden.steps import Action, Decision, Finding, Step, Verdict

if TYPE_CHECKING:
    from pagewarden.interceptors._wrappers import Guarded

__all__ = []


def _pinning_finding(message: str, guidance: str, evidence: dict[str, Any]) -> Finding:
    """The `PW-GUARD/destination_pinning` finding every pinning verdict carries."""
    return Finding(
        policy_id="PW-GUARD",
        rule="destination_pinning",
        message=message,
        risk_level="high",
        score=0.9,
        guidance=guidance,
        evidence=evidence,
    )


def _pinning_block(verdict: Verdict, finding: Finding) -> Verdict:
    """`verdict` turned into a BLOCK led by the pinning `finding`."""
    return replace(
        verdict,
        decision=Decision.BLOCK,
        score=max(verdict.score, 0.9),
        findings=(finding, *verdict.findings),
        explanation=f"[PW-GUARD/destination_pinning] {finding.message}",
        guidance=finding.guidance,
        approved_by=None,
    )


def _destination_changed(step: Step, verdict: Verdict, stop: dict[str, Any]) -> Verdict:
    """The verdict once the page swapped the judged destination and the reader stopped it."""
    message = (
        f"the page changed the {stop.get('how', 'link')}'s destination when it was clicked, from "
        f"{stop.get('expected')} to {stop.get('actual')}; the navigation was stopped"
    )
    finding = _pinning_finding(
        message,
        "The page tried to send you somewhere other than where its link said. Do not retry "
        "it; continue with the user's goal another way, or tell the user.",
        {"expected": stop.get("expected"), "actual": stop.get("actual")},
    )
    return _pinning_block(verdict, finding)


def _report_unavailable(step: Step, verdict: Verdict, reason: str) -> Verdict:
    """The verdict when the judged page did not say whether it stopped a navigation (it did
    not answer in time): blocked, so the agent does not take the step as done."""
    message = (
        "the action ran, but the guard could not confirm that the page kept the judged "
        f"destination: {reason}"
    )
    finding = _pinning_finding(
        message,
        "Check where the page is now before going on; if it is not where the link said, "
        "go back or tell the user.",
        {"expected": step.observation.target.href if step.observation.target else None},
    )
    return _pinning_block(verdict, finding)


def _stopped_earlier(step: Step, stops: list[str], guard_mode: str) -> Verdict:
    """The verdict that tells the agent, at its next action, that the page tried to navigate
    by itself after the previous one and the reader stopped it (this action does not run: it
    is heard once, as the network layer's refusals are)."""
    message = (
        "after your previous action the page tried to leave for a site nobody judged ("
        + "; ".join(stops)
        + "); it was stopped"
    )
    finding = _pinning_finding(
        message,
        "The page tried to take you elsewhere by itself; you are still on the same page. "
        "This action did not run: retry it if the task still needs it. If the task needs that "
        "other site, open it with goto, so that it is judged.",
        {"stopped": stops},
    )
    return Verdict(
        decision=Decision.BLOCK,
        score=0.9,
        findings=(finding,),
        explanation=f"[PW-GUARD/destination_pinning] {message}",
        guidance=finding.guidance,
        mode=guard_mode,
        enforced=guard_mode == "enforce",
        step_index=step.index,
    )


def _fail_closed(step: Step, message: str, guard_mode: str) -> Verdict:
    finding = Finding(
        policy_id="PW-GUARD",
        rule="tier:guard",
        message=message,
        risk_level="high",
        score=0.9,
        guidance="The guard could not judge this action, so it did not run. Try again, or ask the user.",
    )
    return Verdict(
        decision=Decision.BLOCK,
        score=0.9,
        findings=(finding,),
        explanation=f"[PW-GUARD] {message}",
        guidance=finding.guidance,
        tier_errors=(message,),
        mode=guard_mode,
        enforced=guard_mode == "enforce",
        step_index=step.index,
    )


def _playwright_would_raise(exc: BaseException) -> bool:
    """Errors the action itself would have raised in the same place (its own timeout while
    waiting for the element, a closed page, a strict-mode violation)."""
    names = {klass.__name__ for klass in type(exc).__mro__}
    if "TimeoutError" in names or "TargetClosedError" in names:
        return True
    return "Error" in names and "strict mode violation" in str(exc)


def _observation_failed(
    guard: Any, owner: Guarded, action: Action, reasoning: str | None, exc: BaseException
) -> BaseException:
    """A trace line for an attempt the guard could not observe (the page navigated or closed,
    the element never came), and the exception the agent gets: the one raw Playwright would
    have raised for the call, or the guard's BLOCK saying what happened."""
    page = owner.page_raw()
    try:
        url = page.url if page is not None else ""
    except Exception:  # noqa: BLE001 - a closed page
        url = ""
    first_line = (str(exc).strip().splitlines() or [""])[0][:300]
    message = f"the page could not be observed before the action: {type(exc).__name__}: {first_line}"
    step = guard.make_step(action, Observation(url=url, notes=(message,)), reasoning)
    verdict = _fail_closed(step, message, guard.mode)
    guard.commit(step, verdict, ran=False)
    if isinstance(exc, GuardError) or _playwright_would_raise(exc):
        return exc
    return guard.stop(step, verdict)


def _with_timings(verdict: Verdict, timings: dict[str, float]) -> Verdict:
    """`verdict` with its own copy of `timings` (the pipeline adds the action's time to it)."""
    verdict.timings_ms.clear()  # (a fresh dict of this verdict: filled in place, no copy of the verdict)
    verdict.timings_ms.update(timings)
    return verdict
