"""The guarded action, written once for both Playwright APIs.

`guarded_action` is a generator: it yields each Playwright call it needs (observe, take a
screenshot, run the action) and gets the result back. `drive_async` awaits the calls,
`drive_sync` makes them directly; the decision logic is shared.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from pagewarden._calls import Begin, Call, Finish
from pagewarden.guard import GuardError
from pagewarden.interceptors._frames import RefusedMeanwhile, raced, subframe_urls
from pagewarden.interceptors._methods import ActionSpec
from pagewarden.interceptors._request import follow_redirects
from pagewarden.observe import (
    FactsUnavailable,
    Observation,
    mask_boxes,
    paint_masks,
    stopped_navigations,
)
from pagewarden.steps import Action, Decision, Step, Verdict

if TYPE_CHECKING:
    from pagewarden.interceptors._wrappers import Guarded, SharedState
from pagewarden.interceptors._action import (
    EARLIER_STOP,
    Pipeline,
    activation_options,
    build_action,
    exception_for,
)
from pagewarden.interceptors._observing import (
    _observe,
)
from pagewarden.interceptors._verdicts import (
    _destination_changed,
    _fail_closed,
    _observation_failed,
    _report_unavailable,
    _stopped_earlier,
    _with_timings,
    unobserved_note,
)
from pagewarden.interceptors._watch import (
    DocumentWatch,
)

__all__ = ["exception_for", "guarded_action"]


def _tag_tab(network: Any, page: Any, tab: str | None) -> Pipeline:
    """Once per tab, before its first judged action runs: the page sends its tab id to the
    proxy (per-tab grants). A page that cannot be tagged keeps the untagged grants."""
    if page is None or not network.needs_tag(tab):
        return
    watch = getattr(network, "watch_frames", None)
    if watch is not None:
        watch(page)  # which refusals were a frame's (the proxy cannot tell over plain HTTP)
    try:
        yield Call(page.set_extra_http_headers, ({"Accept-Language": network.tab_language(tab)},))
    except Exception:  # noqa: BLE001 - a closed page: its grants stay untagged
        return
    network.tagged(tab, getattr(page, "url", None))


def guarded_action(
    shared: SharedState,
    owner: Guarded,
    name: str,
    spec: ActionSpec,
    method: Any,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    reasoning: str | None,
) -> Pipeline:
    """Observe, judge, then run `method` or raise the guard's exception."""
    guard = shared.guard
    if guard.console is not None:
        # A supervising console may hold the action here (pause, take over) or stop the session.
        yield from guard.console.gate(shared, owner)
    started = time.perf_counter()
    action = build_action(owner, name, spec, args, kwargs)
    reasoning = reasoning if reasoning is not None else shared.take_reasoning()
    network = getattr(guard, "network", None)
    if network is not None and network.has_pending():
        # the network layer refused what the page did after the agent's last action
        raw = owner.page_raw()
        if raw is not None:
            # one round trip to the browser: the request events it sent before (which frame each
            # refused navigation was for) are in before the refusals are judged
            with contextlib.suppress(Exception):
                yield Call(raw.context.cookies, ([_NO_COOKIES],))
        step = guard.make_step(action, Observation(url=getattr(raw, "url", "") or ""), reasoning)
        refused = network.pending_verdict(step, subframe_urls(raw) if raw is not None else frozenset())
        if refused is not None:
            guard.commit(step, refused, ran=False)
            raise guard.stop(step, refused)
    gate = shared.built_gate
    if gate is not None and gate.has_pending():
        # the navigation gate refused a navigation the page started after the last action
        raw = owner.page_raw()
        step = guard.make_step(action, Observation(url=getattr(raw, "url", "") or ""), reasoning)
        refused = gate.pending_verdict(step)
        if refused is not None:
            guard.commit(step, refused, ran=False)
            raise guard.stop(step, refused)
    unobserved: str | None = None
    try:
        observation = yield from _observe(shared, owner, name, spec, action, args, kwargs)
    except Exception as exc:  # noqa: BLE001 - monitor: recorded, and the action runs; enforce: see below
        if guard.mode != "monitor" or isinstance(exc, GuardError):
            error = yield from _observation_failed(shared, owner, name, spec, action, kwargs, reasoning, exc)
            raise error from None
        url, unobserved = unobserved_note(owner, exc)
        observation = Observation(url=url, notes=(unobserved,))
    observed = time.perf_counter()
    step = guard.make_step(action, observation, reasoning)
    unreadable = [n for n in observation.notes if n.startswith("facts-unavailable")]
    earlier = [n[len(EARLIER_STOP) :] for n in observation.notes if n.startswith(EARLIER_STOP)]
    try:
        if unobserved is not None:
            verdict = _fail_closed(step, unobserved, guard.mode)  # (monitor mode: recorded, not enforced)
        elif unreadable and spec.target != "none":
            verdict = _fail_closed(step, unreadable[0], guard.mode)
        elif earlier and guard.mode == "enforce":
            verdict = _stopped_earlier(step, earlier, guard.mode)
        else:
            # The deterministic tiers, then the model where the cascade consults it.
            verdict = yield from guard.judge(step, owner.page_raw())
    except Exception as exc:  # noqa: BLE001 - never crash the agent; fail closed
        verdict = _fail_closed(step, f"guard error: {type(exc).__name__}: {exc}", guard.mode)
    verdict = _with_timings(verdict, {"observe": round((observed - started) * 1000, 3), **verdict.timings_ms})
    if verdict.decision is Decision.ASK and verdict.enforced:
        asked = time.perf_counter()
        approved, problem = yield Call(guard.approval, (verdict, step))
        verdict.timings_ms["approval"] = round((time.perf_counter() - asked) * 1000, 3)
        if problem:
            verdict = guard.approver_problem(verdict, problem)
        if approved:
            verdict = replace(verdict, approved_by="approver")
    screenshot = None
    page = owner.page_raw()
    if guard.screenshots and guard.trace is not None and page is not None:
        path = guard.trace.directory / f"{guard.session_id}-step{step.index:04d}.png"
        try:
            # password fields and fields holding a registered secret are painted over before the
            # picture is written (read before and after the capture; unreadable: no picture)
            engine, reader = shared.reader_engine(page), shared.facts_reader
            before = yield from mask_boxes(page, guard.secrets, engine=engine, lib=reader)
            data = yield Call(page.screenshot, (), {})
            after = yield from mask_boxes(page, guard.secrets, engine=engine, lib=reader)
            path.write_bytes(paint_masks(data, (before, after)))
            screenshot = path.relative_to(guard.trace.path.parent).as_posix()
        except Exception as exc:  # noqa: BLE001 - a failed screenshot must not stop the step
            guard.log.warning("screenshot_failed", error=str(exc))
    if not verdict.allowed:
        guard.commit(step, verdict, ran=False, screenshot=screenshot)
        raise guard.stop(step, verdict)
    call_args = tuple(shared.unwrap(a) for a in args)
    call_kwargs = {k: shared.unwrap(v) for k, v in kwargs.items()}
    guard.open_blocks(step, verdict)  # private addresses it goes to: the gate and proxy let them be
    if network is not None:
        yield from _tag_tab(network, page, step.observation.tab)
        network.grant(step, verdict)  # the proxy lets this action's navigation through
    elif (gate := shared.built_gate) is not None:
        gate.grant(step, verdict)  # a download this action starts may be saved
    frame_actions = _frame_actions(shared, network, step.observation)
    for each in frame_actions:
        each.began()
    executed = time.perf_counter()
    pinned = (
        activation_options(name, spec, action, kwargs) is not None
        and guard.mode == "enforce"
        and observation.target is not None
        and (observation.target.href is not None or observation.target.is_submit)
        and page is not None
    )
    watch = DocumentWatch(page) if pinned else None
    remembered = False
    gate = shared.built_gate
    signals = [getattr(o, "signal", None) for o in (gate, network) if o is not None]
    method = raced(method, [s for s in signals if s is not None])
    failure: Exception | None = None
    try:
        try:
            if action.kind == "request" and owner._pw_type == "APIRequestContext":
                result = yield from follow_redirects(
                    shared, owner, name, method, call_args, call_kwargs, step
                )
            elif pinned:
                result = yield Call(method, call_args, call_kwargs)
            else:
                # Nothing that comes back changes this verdict: the step goes into session memory
                # while the action is on its way (async API), and into the trace once it has run.
                running = yield Begin(method, call_args, call_kwargs)
                try:
                    guard.remember(step, verdict, ran=True)
                    remembered = True
                finally:
                    result = yield Finish(running)
            if watch is not None:
                watch.close()
            if pinned and not (watch is not None and watch.replaced):
                # The judged document is still there: ask it whether it stopped a navigation. (When
                # a new document replaced it, the navigation went through and nothing is asked.)
                try:
                    stopped = yield from stopped_navigations(
                        page, shared.facts_reader, shared.reader_engine(page), shared.direct_readers.get(page)
                    )
                except FactsUnavailable as exc:
                    verdict = _report_unavailable(step, verdict, str(exc))
                    stopped = []
                except Exception:  # noqa: BLE001 - the page navigated away: nothing was stopped
                    stopped = []
                if stopped:
                    verdict = _destination_changed(step, verdict, stopped[0])
        except Exception as exc:  # noqa: BLE001 - raised below unless a refusal explains it
            failure = exc
        if failure is not None:
            # the action failed (a navigation aborted, or ended early because it waited for one
            # the guard refused): when the page tried to leave the allowed sites meanwhile, the
            # agent hears that, not a bare net::ERR_ABORTED or a timeout. (An action that ran
            # hears of such a refusal at its next call, as before.)
            during = yield from _refused_during(shared, network, step, page, action)
            if during is None and isinstance(failure, RefusedMeanwhile) and failure.task is not None:
                # the refusal that ended the wait was a frame's own (an embed loading: the
                # proxy could not tell at once), not the agent's: the action goes on
                result = yield Call(failure.finish)
            elif during is None:
                raise failure
            elif verdict.decision is not Decision.BLOCK:
                verdict = _ended(during, failure)
        else:
            # the action ran, but the page, a popup, a meta refresh or a download it set off was
            # refused while it ran (under the proxy a refused navigation commits the refusal
            # page, so the wait ends normally): the action fails with it now, not the next call
            during = yield from _refused_during(shared, network, step, page, action, kinds=_LED_TO)
            if during is not None and verdict.decision is not Decision.BLOCK:
                verdict = during
    finally:
        for each in frame_actions:
            each.ended()
        if watch is not None:
            watch.close()
        verdict.timings_ms["execute"] = round((time.perf_counter() - executed) * 1000, 3)
        if not remembered:
            guard.remember(step, verdict, ran=True)
        guard.report(step, verdict, ran=True, screenshot=screenshot)
    if verdict.decision is Decision.BLOCK and verdict.enforced and verdict.approved_by is None:
        raise guard.stop(step, verdict)
    if name in _DATA_RESULTS:
        return result  # serialized values only: nothing in them to guard (and nothing to walk)
    return shared.wrap_result(result)


#: methods whose results are JavaScript values Playwright deserialized: never a Playwright object
_DATA_RESULTS = frozenset({"evaluate", "evaluate_all", "eval_on_selector", "eval_on_selector_all"})


#: a URL no cookie is set for: asking its cookies is a round trip that returns nothing
_NO_COOKIES = "http://round-trip.pagewarden.invalid/"


#: the refusals an action that ran fails with at once: where it led the page (a navigation, a
#: redirect hop, a popup, a meta refresh, a download); the others (data the page sent, a
#: websocket) are told at the next call, as before
_LED_TO = frozenset({"navigation", "redirect", "download"})


def _refused_during(
    shared: SharedState,
    network: Any,
    step: Step,
    page: Any,
    action: Action,
    kinds: frozenset[str] | None = None,
) -> Pipeline:
    """The BLOCK for refusals the agent must hear of that happened while its action ran (the
    page, a popup or a redirect tried to leave the allowed sites), naming where the action
    started from; None when there were none. `kinds` (for an action that ran): only refusals
    of these actions, and only those known to be a tab's (the others stay for the next call)."""
    start = action.value if action.kind in ("goto", "new_page") and action.value else step.observation.url
    verdicts: list[Verdict] = []
    if network is not None and network.has_pending(kinds):
        if page is not None:
            with contextlib.suppress(Exception):  # see the check before the action
                yield Call(page.context.cookies, ([_NO_COOKIES],))
        frames = subframe_urls(page) if page is not None else frozenset()
        tabs_only = kinds is not None
        verdicts.append(network.pending_verdict(step, frames, during=start, kinds=kinds, tabs_only=tabs_only))
    gate = shared.built_gate
    if gate is not None and gate.has_pending(kinds):
        verdicts.append(gate.pending_verdict(step, during=start, kinds=kinds))
    found = [v for v in verdicts if v is not None]
    if not found:
        return None
    first = found[0]
    if len(found) > 1:
        first = replace(first, findings=tuple(f for v in found for f in v.findings))
    return first


def _ended(verdict: Verdict, failure: Exception) -> Verdict:
    """`verdict` (the refusals heard while the action ran), its findings saying how the action
    ended (``evidence["ended"]``): ``"refused"`` (the guard ended the wait when the refusal came),
    ``"timed out"`` (Playwright's timeout came first: the refusal was heard only then), or
    ``"failed"`` (the action failed by itself, e.g. a navigation aborted)."""
    from playwright.async_api import TimeoutError as PlaywrightTimeoutError  # (loaded: an action ran)

    if isinstance(failure, RefusedMeanwhile):
        how = "refused"
    elif isinstance(failure, PlaywrightTimeoutError):
        how = "timed out"
    else:
        how = "failed"
    findings = tuple(replace(f, evidence={**f.evidence, "ended": how}) for f in verdict.findings)
    return replace(verdict, findings=findings)


def _frame_actions(shared: SharedState, network: Any, observation: Observation) -> list[Any]:
    """The `FrameActions` to tell of an action inside a frame (none for an action on a tab's
    top document): a refused frame navigation while it runs is the agent's, not the page's."""
    target = observation.target
    if target is None:
        return []
    if not (target.frame_content or (target.frame_url and target.frame_url != observation.url)):
        return []
    found = (getattr(o, "frame_actions", None) for o in (shared.built_gate, network) if o is not None)
    return [f for f in found if f is not None]
