"""Verdicts the pipeline makes itself: destination pinning, an earlier stopped navigation,
failing closed when the page cannot be read, and the timings."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from pagewarden._calls import Call
from pagewarden.guard import GuardError
from pagewarden.interceptors._errors import as_call_error, is_playwright_error
from pagewarden.interceptors._methods import ActionSpec
from pagewarden.observe import (
    Observation,
)
from pagewarden.steps import Action, Decision, Finding, Step, Verdict

if TYPE_CHECKING:
    from pagewarden.interceptors._action import Pipeline
    from pagewarden.interceptors._wrappers import Guarded, SharedState

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


def unobserved_note(owner: Guarded, exc: BaseException) -> tuple[str, str]:
    """The page's URL and the note for an action the guard could not observe because `exc`."""
    page = owner.page_raw()
    try:
        url = page.url if page is not None else ""
    except Exception:  # noqa: BLE001 - a closed page
        url = ""
    first_line = (str(exc).strip().splitlines() or [""])[0][:300]
    return url, f"the page could not be observed before the action: {type(exc).__name__}: {first_line}"


def _observation_failed(
    shared: SharedState,
    owner: Guarded,
    name: str,
    spec: ActionSpec,
    action: Action,
    kwargs: dict[str, Any],
    reasoning: str | None,
    exc: BaseException,
) -> Pipeline:
    """In enforce mode, for an action the guard could not observe: a trace line, and the
    exception the agent gets (returned): the one Playwright itself raises for the call where
    the action would have failed the same way (its element never came within its timeout, a
    strict-mode violation, a closed page, a selector Playwright rejects), else the guard's BLOCK
    saying what happened: an action nobody could judge does not run."""
    guard = shared.guard
    url, message = unobserved_note(owner, exc)
    step = guard.make_step(action, Observation(url=url, notes=(message,)), reasoning)
    verdict = _fail_closed(step, message, guard.mode)
    guard.commit(step, verdict, ran=False)
    if isinstance(exc, GuardError):
        return exc
    api = f"{owner._pw_type}.{name}"
    engine = shared.facts_reader
    names = {klass.__name__ for klass in type(exc).__mro__}
    error: BaseException | None = None
    if is_playwright_error(exc):
        if "TargetClosedError" in names or "strict mode violation" in str(exc):
            error = as_call_error(exc, api, engine=engine)
        elif "TimeoutError" in names:
            added_first = spec.target == "selector" and not bool(kwargs.get("strict", False))
            timeout = call_timeout(kwargs.get("timeout"))
            error = as_call_error(exc, api, engine=engine, timeout_ms=timeout, added_first=added_first)
        else:
            # a selector Playwright rejects: asked of Playwright itself (counting acts on nothing)
            probe = _locator_of(owner, spec, action)
            if probe is not None:
                try:
                    yield Call(probe.count)
                except Exception as rejected:  # noqa: BLE001 - Playwright's own answer for the call
                    if not any(k.__name__ == "TimeoutError" for k in type(rejected).__mro__):
                        # the lookup's error has the call log the call's would have
                        added_first = spec.target == "selector" and not bool(kwargs.get("strict", False))
                        error = as_call_error(exc, api, engine=engine, added_first=added_first)
                        if error is None:
                            error = as_call_error(rejected, api, engine=engine)
    return error if error is not None else guard.stop(step, verdict)


def _locator_of(owner: Guarded, spec: ActionSpec, action: Action) -> Any:
    """The agent's locator for an action on one (None for other targets)."""
    if spec.target == "self" and owner._pw_type == "Locator":
        return owner._pw_obj
    if spec.target == "selector" and action.selector is not None and hasattr(owner._pw_obj, "locator"):
        try:
            return owner._pw_obj.locator(action.selector)
        except Exception:  # noqa: BLE001 - no locator: no probe
            return None
    return None


def call_timeout(value: Any) -> float | None:
    """An action's ``timeout`` in milliseconds, as Playwright reads it (a number, or a
    `timedelta`); None (the page's default) for anything else, which Playwright itself judges."""
    if isinstance(value, timedelta):
        return value / timedelta(milliseconds=1)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return None


def _with_timings(verdict: Verdict, timings: dict[str, float]) -> Verdict:
    """`verdict` with its own copy of `timings` (the pipeline adds the action's time to it)."""
    verdict.timings_ms.clear()  # (a fresh dict of this verdict: filled in place, no copy of the verdict)
    verdict.timings_ms.update(timings)
    return verdict
