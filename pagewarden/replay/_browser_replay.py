"""`replay --browser`: perform a recorded session's actions again in Chromium, against the
recorded network (the network layer's `Replay` addon; no origin server), through today's guard.

Each recorded step is performed again on the replayed page with its recorded reasoning and
goal; today's guard observes the page as it is now and judges it with today's tiers. The run
follows the recording, so later steps see the page they saw then: a step runs again when it
ran in the recording, whatever today's decision (a step that today's guard would stop is
reported as changed, then performed as recorded), and a step that did not run then is judged
but not performed. Session memory follows the same rule as the offline replay (what ran in the
recording), with today's decisions.

A step that cannot be performed again is reported with why, not raised: a kind whose inputs
are not recorded, a redacted value, the element not found on the replayed page, a request the
recording does not hold (the replay's ``502``), a page that could not be observed.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import replace
from typing import Any

from pagewarden.guard import Guard
from pagewarden.replay._replay import (
    ReplayedStep,
    ReplayReport,
    _reason,
    browser_replay_problems,
    recorded_ran,
    replay_guard_options,
    replay_report_details,
)
from pagewarden.steps import Action, Decision, Step, Verdict
from pagewarden.trace import SessionFormatError

__all__ = ["replay_in_browser"]

#: recorded options passed on when the action is performed again (the timeout is the replay's)
_PASSED_OPTIONS = ("button", "modifiers", "click_count", "force", "position", "strict", "trial")
#: page/frame methods taking (selector, value)
_WITH_VALUE = {"fill", "type", "press", "select_option", "dispatch_event", "press_sequentially"}
_NAVIGATIONS = {"goto", "go_back", "go_forward", "reload"}
_HELD = "held by the replay: this step did not run in the recording"


class _ReplayGuard(Guard):
    """A `Guard` whose pipeline follows the recording: today's verdict is kept (and committed
    to memory) while the action runs exactly when it ran in the recording."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.expect_ran: bool | None = None
        self.last_reasoning: str | None = None  # the recorded reasoning of the step being performed
        self._real: Verdict | None = None
        self.commits: list[tuple[Step, Verdict, bool]] = []
        self._kept: tuple[Step, Verdict, Verdict] | None = None  # (step, followed, real) of `remember`

    def judge(self, step: Step, page: Any = None, *, page_text: str | None = None):  # type: ignore[override]
        verdict = yield from super().judge(step, page, page_text=page_text)
        self._real = verdict
        if self.expect_ran is None or verdict.allowed == self.expect_ran:
            return verdict
        if self.expect_ran:  # today's guard stops it; the recording ran it: run it to follow
            return replace(verdict, enforced=False)
        return replace(verdict, decision=Decision.BLOCK, enforced=True, approved_by=None, explanation=_HELD)

    # The guarded page records a step in two halves (`remember` while the action is on its way,
    # `report` once it has run; `commit` is both): today's real verdict replaces the followed
    # one in each.
    def remember(self, step: Step, verdict: Verdict, *, ran: bool) -> None:
        real, self._real = self._real, None
        pinned = any(f.rule == "destination_pinning" for f in verdict.findings)
        kept = replace(real, timings_ms=verdict.timings_ms) if real is not None and not pinned else verdict
        self._kept = (step, verdict, kept)
        self.commits.append((step, kept, ran))
        super().remember(step, kept, ran=ran)

    def report(self, step: Step, verdict: Verdict, *, ran: bool, screenshot: str | None = None) -> None:
        kept = self._kept
        self._kept = None
        if kept is not None and kept[0] is step and kept[1] is verdict:
            verdict = kept[2]
        super().report(step, verdict, ran=ran, screenshot=screenshot)


def _same_url(a: str, b: str) -> bool:
    return a.split("#", 1)[0] == b.split("#", 1)[0]


async def _page_for(page: Any, url: str) -> Any:
    """The tab the step acted in: the open page at the recorded URL, else the newest page."""
    pages = [p for p in page.context.pages if not p.is_closed()] or [page]
    for candidate in reversed(pages):
        if url and _same_url(candidate.url, url):
            return candidate
    return pages[-1]


async def _frame_for(page: Any, selector: str) -> Any:
    """The frame holding `selector` (a `Frame.*` call): the main frame first, then the others."""
    for frame in page.frames:
        try:
            if await frame.locator(selector).count():
                return frame
        except Exception:  # noqa: BLE001 - a detached frame
            continue
    return page.main_frame


def _options(action: Action, timeout_ms: float) -> dict[str, Any]:
    options = {k: v for k, v in (action.options or {}).items() if k in _PASSED_OPTIONS}
    options["timeout"] = timeout_ms
    return options


async def _perform(page: Any, action: Action, timeout_ms: float, guard: Any = None) -> None:
    """Perform `action` on `page` (a guarded page) as it was called; raises what Playwright
    or the guard raises; `LookupError` when the recording does not say how to perform it."""
    owner, _, name = action.method.partition(".")
    value = action.value
    selector = action.selector
    if action.method == "Guard.message_user" and guard is not None and value is not None:
        from pagewarden.observe import Observation

        await guard.acheck(guard.make_step(action, Observation(url=page.url), guard.last_reasoning))
        return
    if owner == "APIRequestContext":
        raise LookupError(
            "an API request (page.request …) does not go through the browser's proxy, so the "
            "recorded flows cannot answer it; its body is not recorded either"
        )
    if owner in ("Page", "Frame") and name in _NAVIGATIONS:
        if name == "goto":
            await page.goto(value or "", timeout=timeout_ms)
        else:
            await getattr(page, name)(timeout=timeout_ms)
        return
    if owner == "Keyboard" and value is not None and name in ("press", "down", "up", "type", "insert_text"):
        await getattr(page.keyboard, name)(value)
        return
    if owner == "BrowserContext" and name == "new_page":
        await page.context.new_page()
        return
    if owner in ("Page", "Frame") and name in ("evaluate", "evaluate_handle") and value:
        await getattr(page, name)(value)
        return
    if not selector or owner not in ("Page", "Frame", "Locator"):
        raise LookupError(f"the recording does not say how to perform {action.method or action.kind} again")
    options = _options(action, timeout_ms)
    if owner == "Locator":
        target: Any = page.locator(selector)
        lead: tuple[Any, ...] = ()
    else:
        target = page if owner == "Page" else await _frame_for(page, selector)
        lead = (selector,)
    if name == "set_checked":
        await target.set_checked(*lead, action.kind == "check", **options)
        return
    method = getattr(target, name, None)
    if method is None:
        raise LookupError(f"{action.method} is not a method of a {owner}")
    if name in _WITH_VALUE:
        if value is None:
            raise LookupError(f"{action.method}: no recorded value")
        await method(*lead, value, **options)
        return
    await method(*lead, **options)


def _why_not(exc: BaseException, misses: list[str]) -> str:
    """Why a step could not be performed again, in one line."""
    first = (str(exc).strip().splitlines() or [""])[0][:240]
    names = {k.__name__ for k in type(exc).__mro__}
    if "TimeoutError" in names:
        reason = f"not found on the replayed page (timed out): {first}"
    elif isinstance(exc, LookupError):
        reason = str(exc)
    else:
        reason = f"{type(exc).__name__}: {first}"
    if misses:
        reason += f"; requests not in the recording: {', '.join(misses[:3])}"
    return reason


async def _wait_for(page: Any, url: str, timeout_ms: float) -> None:
    """Let a navigation the previous step started reach the URL this step was recorded at."""
    if not url or url == "about:blank" or _same_url(page.url, url):
        return
    try:
        await page.wait_for_url(lambda now: _same_url(now, url), timeout=timeout_ms)
    except Exception:  # noqa: BLE001 - the page is elsewhere: the step says so if it fails
        return


def _status(raw: dict[str, Any], recorded: str | None, now: str, has_model: bool) -> tuple[str, str]:
    if recorded is None:
        return "unrecorded", ""
    if recorded == now:
        return "same", ""
    verdict = raw.get("verdict") if isinstance(raw.get("verdict"), dict) else {}
    for finding in verdict.get("findings") or ():
        if isinstance(finding, dict) and finding.get("policy_id") == "PW-CONSOLE":
            return "unverifiable", "a supervising console stopped the session"
    if "llm" in (verdict.get("tiers") or ()) and not has_model:
        return "unverifiable", "the recording consulted a model; this replay has none (give --llm-…)"
    return "changed", ""


async def _replay_steps(
    guard: _ReplayGuard, page: Any, records: list[dict[str, Any]], misses: list[str], *,
    goal: str | None, session: str, timeout_ms: float,
) -> list[ReplayedStep]:  # fmt: skip
    unplayable = {id(r): p["reason"] for r in records for p in browser_replay_problems([r])}
    out: list[ReplayedStep] = []
    stalled = False  # the previous step could not be performed: the page may be elsewhere
    missed_before = 0
    for raw in records:
        line = int(raw.get("_line", 0))
        try:
            recorded_step = Step.from_dict(raw["step"])
        except (ValueError, TypeError, KeyError) as exc:
            raise SessionFormatError(f"line {line}: not a recorded step: {exc}") from None
        action = recorded_step.action
        verdict_raw = raw.get("verdict") if isinstance(raw.get("verdict"), dict) else {}
        recorded = verdict_raw.get("decision") if isinstance(verdict_raw.get("decision"), str) else None
        ran = recorded_ran(raw)
        base = ReplayedStep(
            session=session, index=recorded_step.index, line=line, action=guard.describe(recorded_step)[:200],
            url=recorded_step.observation.url, ran=ran, recorded=recorded, now="", status="not_rerun",
            recorded_policies=list(verdict_raw.get("violated_policy_ids") or []),
            recorded_reason=_reason(verdict_raw),
        )  # fmt: skip
        if id(raw) in unplayable:
            out.append(replace(base, note=f"not performed again: {unplayable[id(raw)]}"))
            stalled = True
            continue
        guard.goal = goal if goal is not None else recorded_step.goal
        url = recorded_step.observation.url
        target = await _page_for(page, url)
        await _wait_for(target, url, timeout_ms)
        reopened = ""
        if stalled and url.startswith(("http:", "https:")) and not _same_url(target.url, url):
            # a step before could not be performed: open the page this one was recorded on
            # (the replay's own navigation, not judged: the agent did not ask for it)
            try:
                await target.page_raw().goto(url, timeout=timeout_ms)
                reopened = f"the replay opened {url[:160]} to go on"
            except Exception as exc:  # noqa: BLE001 - the step then fails and says why
                reopened = f"the replay could not open {url[:160]}: {type(exc).__name__}"
        guard.last_reasoning = recorded_step.reasoning
        if recorded_step.reasoning and action.method != "Guard.message_user":
            target.reasoning(recorded_step.reasoning)
        before, missed = len(guard.commits), len(misses)
        missed_earlier, missed_before = misses[missed_before:missed], missed
        problem = await _attempt(guard, target, action, ran, timeout_ms)
        commits = guard.commits[before:]
        retried = ""
        if ran and commits and problem is not None and _network_stop(commits[-1][1]):
            # the network layer refused what an earlier step loaded; the guard reports that at
            # the agent's next call (this one), which then does not run: run it to follow
            again = await _attempt(guard, target, action, ran, timeout_ms)
            retried = "the network layer refused a request of an earlier step (reported here)"
            if again is not None and not _is_guard_stop(again):
                retried += f"; performing this step then failed: {_why_not(again, misses[missed:])}"
                stalled = True
            commits = commits[:1]
        new_misses = misses[missed:]
        if not commits or (problem is not None and _failed_to_observe(commits[-1][1])):
            why = _why_not(problem, missed_earlier + new_misses) if problem is not None else "not judged"
            note = "; ".join(filter(None, (f"could not be performed again: {why}", reopened)))
            out.append(replace(base, note=note))
            stalled = True
            continue
        stalled = bool(retried) and stalled
        _step, verdict, _ran = commits[-1]
        now = verdict.decision.value
        status, note = _status(raw, recorded, now, guard.semantic is not None)
        notes = [note, reopened, retried]
        if problem is not None and not _is_guard_stop(problem) and ran:
            notes.append(f"performed, but it failed: {_why_not(problem, [])}")
        elif new_misses:
            notes.append("requests not in the recording: " + ", ".join(new_misses[:3]))
        if ran and not verdict.allowed and not retried:
            notes.append("performed as recorded to follow the session")
        note = "; ".join(n for n in notes if n)
        out.append(
            replace(
                base, now=now, status=status, note=note, now_policies=verdict.violated_policy_ids,
                now_reason=_reason(verdict.to_dict()),
            )
        )  # fmt: skip
    return out


async def _attempt(guard: _ReplayGuard, page: Any, action: Action, ran: bool, timeout_ms: float) -> Any:
    """Perform `action` once through the guard, following the recording (`ran`); the
    exception it raised, or None."""
    guard.expect_ran = ran
    try:
        await _perform(page, action, timeout_ms, guard)
    except Exception as exc:  # noqa: BLE001 - the guard's stop, or the step cannot be performed
        return exc
    finally:
        guard.expect_ran = None
    return None


def _network_stop(verdict: Verdict) -> bool:
    """A verdict of the network layer's refusals (given at the agent's next call)."""
    return bool(verdict.findings) and all(f.rule.startswith("network:") for f in verdict.findings)


def _failed_to_observe(verdict: Verdict) -> bool:
    return any(f.rule == "tier:guard" and "could not be observed" in f.message for f in verdict.findings)


def _is_guard_stop(exc: BaseException) -> bool:
    from pagewarden.guard import GuardError

    return isinstance(exc, GuardError)


def _guard_for(session: Any, policies: Any, llm: Any, consult: str | None) -> _ReplayGuard:
    options = replay_guard_options(session, policies, llm, consult)
    return _ReplayGuard(options.pop("policies"), **options)


def _misses_listener(misses: list[str]) -> Any:
    """A browser-context listener noting the requests the recording could not answer (the
    replay's ``502`` marked ``X-Pagewarden-Replay: miss``)."""
    from pagewarden.proxy import REPLAY_HEADER

    header = REPLAY_HEADER.lower()

    def on_response(response: Any) -> None:
        if response.headers.get(header) == "miss":
            misses.append(f"{response.request.method} {response.url[:160]}")

    return on_response


async def replay_in_browser(
    session: Any,
    *,
    policies: Any = None,
    policies_label: str | None = None,
    llm: Any = None,
    goal: str | None = None,
    consult: str | None = None,
    headless: bool = True,
    timeout_ms: float = 5000,
) -> ReplayReport:
    """Perform a `RecordedSession`'s steps again in Chromium against its recorded flows,
    through today's guard (the recorded configuration; `policies` replaces the recorded user
    policies, `llm` adds a model), and diff today's decisions with the recorded ones.

    `SessionFormatError` when the recording has no flows (recorded without the network layer)
    or a step cannot be read.
    """
    from pagewarden._launch import launch
    from pagewarden.proxy import flows_file

    flows = session.file("flows") or flows_file(session.path)
    if not flows.is_file():
        raise SessionFormatError(
            f"{session.path}: no recorded network flows (flows.mitm): --browser needs a session recorded "
            "through the network layer (launch(record=DIR, proxy=True)); replay without --browser "
            "re-judges it offline"
        )
    started = time.perf_counter()
    grouped: dict[str, list[dict[str, Any]]] = {}
    for raw in session.records:
        name = raw.get("session") or (raw.get("step") or {}).get("session") or "(no session id)"
        grouped.setdefault(str(name), []).append(raw)
    steps: list[ReplayedStep] = []
    misses: list[str] = []
    llm_name = None
    for name, records in grouped.items():
        guard = _guard_for(session, policies, llm, consult)
        if guard.semantic is not None:
            llm_name = guard.semantic.client.config.describe()
        async with launch(
            guard, headless=headless, proxy=True,
            proxy_options={"pagewarden_replay": str(flows)},
        ) as page:  # fmt: skip
            page.context.on("response", _misses_listener(misses))
            steps += await _replay_steps(
                guard, page, records, misses, goal=goal, session=name, timeout_ms=timeout_ms
            )
    report = ReplayReport(
        source=str(session.path),
        steps=steps,
        sessions=list(grouped),
        elapsed_ms=(time.perf_counter() - started) * 1000,
        llm=llm_name,
    )
    replay_report_details(report, session, policies_label, llm)
    report.browser = True
    report.misses = list(dict.fromkeys(misses))
    return report


def run(coro: Any) -> Any:
    """Run the browser replay from synchronous code (the CLI)."""
    return asyncio.run(coro)
