"""Offline replay: judge recorded steps again through today's tiers and diff the decisions.

No browser, no network (a model only when the guard has one). Each session of a recording
is replayed with a fresh session memory; a step's memory effect follows what happened in
the recording (its ``ran`` flag, else its recorded verdict: allowed, approved, or monitor
mode), not today's decision, so budgets and sequences count what really ran.

A step whose decision differs is *changed*, unless the difference cannot be attributed to
today's policies or tiers; then it is *unverifiable*, with the reason: a value the decision
depends on was redacted in the recording, the recorded decision came from the browser layer
(destination pinning, an unreadable page) or a supervising console, or the recording
consulted a model that the replay does not have.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from pagewarden._serde import DataFormatError
from pagewarden.steps import Step
from pagewarden.trace import SessionFormatError

__all__ = [
    "REPLAY_FORMAT_VERSION",
    "ReplayReport",
    "ReplayedStep",
    "browser_replay_problems",
    "recorded_ran",
    "replay_guard_options",
    "replay_records",
    "replay_report_details",
    "replay_session",
]

REPLAY_FORMAT_VERSION = 1
_REDACTED = "[REDACTED:"
#: findings of the browser side or of a console, which an offline replay cannot reproduce
_UNREPLAYABLE_RULES = {
    "tier:guard": "the page could not be read when recorded",
    "destination_pinning": "the page changed a destination while the action ran",
}
_UNREPLAYABLE_POLICIES = {"PW-CONSOLE": "a supervising console stopped the session"}


@dataclass
class ReplayedStep:
    """One recorded step, judged again."""

    session: str
    index: int
    line: int
    action: str
    url: str
    ran: bool
    recorded: str | None
    now: str
    status: str  # "same" | "changed" | "unverifiable" | "unrecorded" | "not_rerun" (--browser)
    recorded_policies: list[str] = field(default_factory=list)
    now_policies: list[str] = field(default_factory=list)
    recorded_reason: str = ""
    now_reason: str = ""
    note: str = ""
    redacted: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class ReplayReport:
    """The outcome of one replay."""

    source: str
    steps: list[ReplayedStep]
    sessions: list[str]
    elapsed_ms: float
    policies: str = "recorded"
    llm: str | None = None
    recording: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    llm_requests: int = 0  # requests sent to the endpoint
    llm_cached: int = 0  # answers taken from the cache
    browser: bool = False  # performed again in Chromium (`replay --browser`)
    misses: list[str] = field(default_factory=list)  # requests the recording could not answer

    @property
    def not_rerun(self) -> list[ReplayedStep]:
        """Steps `replay --browser` could not perform again (each with why in `note`)."""
        return [s for s in self.steps if s.status == "not_rerun"]

    @property
    def changed(self) -> list[ReplayedStep]:
        return [s for s in self.steps if s.status == "changed"]

    @property
    def unverifiable(self) -> list[ReplayedStep]:
        return [s for s in self.steps if s.status == "unverifiable"]

    @property
    def exit_code(self) -> int:
        """0 when no decision changed, 1 when one did."""
        return 1 if self.changed else 0

    def to_dict(self) -> dict[str, Any]:
        """The JSON report (``format: pagewarden.replay``, versioned)."""
        return {
            "format": "pagewarden.replay",
            "format_version": REPLAY_FORMAT_VERSION,
            "source": self.source,
            "recording": self.recording,
            "policies": self.policies,
            "llm": self.llm,
            "sessions": self.sessions,
            "steps": len(self.steps),
            "changed": len(self.changed),
            "unverifiable": len(self.unverifiable),
            "browser": self.browser,
            "not_rerun": len(self.not_rerun),
            "misses": self.misses,
            "elapsed_ms": round(self.elapsed_ms, 3),
            "llm_requests": self.llm_requests,
            "llm_cached": self.llm_cached,
            "notes": self.notes,
            "results": [s.to_dict() for s in self.steps],
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False)


def recorded_ran(raw: dict[str, Any]) -> bool:
    """Whether a recorded step executed: its ``ran`` flag, else what its verdict implies
    (ALLOW, an approved ASK, or monitor mode — traces written before the flag existed)."""
    ran = raw.get("ran")
    if isinstance(ran, bool):
        return ran
    verdict = raw.get("verdict") if isinstance(raw.get("verdict"), dict) else {}
    return (
        verdict.get("decision") == "allow"
        or verdict.get("enforced") is False
        or bool(verdict.get("approved_by"))
    )


def _redacted_paths(value: Any, path: str = "") -> list[str]:
    if isinstance(value, str):
        return [path] if _REDACTED in value else []
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _redacted_paths(v, f"{path}.{k}" if path else k)]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in _redacted_paths(v, f"{path}[{i}]")]
    return []


def _unreplayable(verdict: dict[str, Any]) -> str:
    for finding in verdict.get("findings") or ():
        if not isinstance(finding, dict):
            continue
        if finding.get("rule") in _UNREPLAYABLE_RULES:
            return (
                f"the recorded decision came from the browser layer: {_UNREPLAYABLE_RULES[finding['rule']]}"
            )
        if finding.get("policy_id") in _UNREPLAYABLE_POLICIES:
            return _UNREPLAYABLE_POLICIES[finding["policy_id"]]
    return ""


def _group(records: Iterable[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    sessions: dict[str, list[dict[str, Any]]] = {}
    for raw in records:
        session = raw.get("session") or (raw.get("step") or {}).get("session") or "(no session id)"
        sessions.setdefault(str(session), []).append(raw)
    return sessions


def _reason(verdict: dict[str, Any]) -> str:
    if verdict.get("decision") in (None, "allow"):
        return ""
    return str(verdict.get("explanation") or "")[:300]


def replay_records(
    records: Iterable[dict[str, Any]],
    guard: Any,
    *,
    goal: str | None = None,
    source: str = "",
    progress: Callable[[int], None] | None = None,
) -> ReplayReport:
    """Judge `records` (raw trace lines, in file order) again with `guard`, one session at a
    time, and compare each decision with the recorded one.

    A malformed step raises `SessionFormatError` naming its line.
    """
    started = time.perf_counter()
    grouped = _group(records)
    has_model = guard.semantic is not None
    stats_before = _llm_stats(guard)
    out: list[ReplayedStep] = []
    for session, lines in grouped.items():
        guard.reset()
        for raw in lines:
            line = int(raw.get("_line", 0))
            try:
                step = Step.from_dict(raw["step"])
            except (DataFormatError, ValueError, TypeError, KeyError) as exc:
                raise SessionFormatError(f"line {line}: not a recorded step: {exc}") from None
            step_goal = goal if goal is not None else step.goal
            guard.goal = step_goal
            step = replace(step, previous=guard.session.previous, goal=step_goal)
            verdict = guard.assess(step)
            ran = recorded_ran(raw)
            guard.commit(step, verdict, ran=ran)
            recorded_verdict = raw.get("verdict") if isinstance(raw.get("verdict"), dict) else {}
            recorded = recorded_verdict.get("decision")
            recorded = recorded if isinstance(recorded, str) else None
            now = verdict.decision.value
            redacted = _redacted_paths(raw["step"])
            note = ""
            if recorded is None:
                status = "unrecorded"
            elif recorded == now:
                status = "same"
            else:
                status = "changed"
                browser_side = _unreplayable(recorded_verdict)
                if browser_side:
                    status, note = "unverifiable", browser_side
                elif redacted:
                    status = "unverifiable"
                    note = "value(s) redacted in the recording (" + ", ".join(redacted[:4]) + "): the " \
                        "recorded decision may rest on a secret the replay cannot see"  # fmt: skip
                elif "llm" in (recorded_verdict.get("tiers") or ()) and not has_model:
                    status = "unverifiable"
                    note = "the recording consulted a model; this replay has none (give --llm-…)"
            out.append(
                ReplayedStep(
                    session=session,
                    index=step.index,
                    line=line,
                    action=guard.describe(step)[:200],
                    url=step.observation.url,
                    ran=ran,
                    recorded=recorded,
                    now=now,
                    status=status,
                    recorded_policies=list(recorded_verdict.get("violated_policy_ids") or []),
                    now_policies=verdict.violated_policy_ids,
                    recorded_reason=_reason(recorded_verdict),
                    now_reason=_reason(verdict.to_dict()),
                    note=note,
                    redacted=redacted,
                )
            )
            if progress is not None:
                progress(len(out))
    calls, cached = (a - b for a, b in zip(_llm_stats(guard), stats_before, strict=True))
    return ReplayReport(
        source=source,
        steps=out,
        sessions=list(grouped),
        elapsed_ms=(time.perf_counter() - started) * 1000,
        llm=guard.semantic.client.config.describe() if has_model else None,
        llm_requests=calls,
        llm_cached=cached,
    )


def _llm_stats(guard: Any) -> tuple[int, int]:
    if guard.semantic is None:
        return 0, 0
    stats = guard.semantic.client.stats
    return int(stats.requests), int(stats.cache_hits)


def replay_session(
    session: Any,
    *,
    policies: Any = None,
    policies_label: str | None = None,
    llm: Any = None,
    goal: str | None = None,
    consult: str | None = None,
    progress: Callable[[int], None] | None = None,
) -> ReplayReport:
    """Replay a `RecordedSession` through today's tiers with its recorded configuration.

    `policies` (a `PolicySet`) replaces the recorded user policies; `llm` (an `LLMConfig` …)
    adds the semantic tier with the recorded cascade options. `SessionFormatError` when the
    recorded configuration or a step cannot be read.
    """
    from pagewarden.guard import Guard

    guard = Guard(**replay_guard_options(session, policies, llm, consult))
    try:
        report = replay_records(
            session.records, guard, goal=goal, source=str(session.path), progress=progress
        )
    finally:
        guard.close()
    replay_report_details(report, session, policies_label, llm)
    return report


def replay_guard_options(session: Any, policies: Any, llm: Any, consult: str | None) -> dict[str, Any]:
    """`Guard` keyword arguments for replaying `session` with its recorded configuration
    (`policies` replaces the recorded user policies; `llm` adds a model with the recorded
    cascade options). `SessionFormatError` when the recorded configuration is unreadable."""
    from pagewarden.guard import CascadeOptions, Thresholds
    from pagewarden.policies import PolicySet

    config = session.config
    try:
        thresholds = (
            Thresholds(**config["thresholds"]) if isinstance(config.get("thresholds"), dict) else None
        )
        recorded_llm = config.get("llm") if isinstance(config.get("llm"), dict) else {}
        cascade = recorded_llm.get("cascade") if llm is not None else None
        options = CascadeOptions(**cascade) if isinstance(cascade, dict) else None
    except (TypeError, ValueError) as exc:
        raise SessionFormatError(f"{session.path}: recorded configuration unreadable: {exc}") from None
    return {
        "policies": policies if policies is not None else (session.policies or PolicySet([])),
        "baseline": config.get("baseline", True) is not False,
        "mode": session.mode,
        "thresholds": thresholds,
        "llm": llm,
        "cascade": options,
        "consult": consult if llm is not None else None,
    }


def replay_report_details(report: ReplayReport, session: Any, policies_label: str | None, llm: Any) -> None:
    """Fill in what `report` says about the recording it replays (policies, notes, versions)."""
    config = session.config
    report.policies = policies_label or ("recorded" if session.policies is not None else "none recorded")
    report.notes = list(session.notes)
    manifest = session.manifest
    report.recording = {
        key: manifest.get(key)
        for key in ("format_version", "pagewarden", "created", "closed", "goal", "mode", "steps")
        if key in manifest
    }
    report.recording["format_version"] = session.format_version
    if isinstance(config.get("llm"), dict) and llm is None:
        report.notes.append(
            f"recorded with a model ({config['llm'].get('model')}); replayed without one: "
            "steps it decided are marked unverifiable (give --llm-… to replay them)"
        )


#: action kinds whose recorded form is not enough to perform them again
_NOT_RERUNNABLE_KINDS = {
    "set_input_files": "the uploaded files are not part of the recording",
    "unclassified": "a Playwright method pagewarden does not know: its arguments are not recorded",
    "route": "a request route installs page-side code that is not recorded",
    "new_cdp_session": "a CDP session's commands are not recorded",
}


def browser_replay_problems(records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The recorded steps that `replay --browser` could not perform again, each with why:
    a redacted typed value (a secret or password cannot be typed again), a kind whose inputs
    are not recorded (file uploads, unknown methods, routes, CDP), an element action without a
    selector, a pointer action at page coordinates, a person's take-over action."""
    problems: list[dict[str, Any]] = []
    for raw in records:
        step = raw.get("step") or {}
        action = step.get("action") or {}
        kind = str(action.get("kind") or "")
        method = str(action.get("method") or "")
        reason = ""
        if kind in _NOT_RERUNNABLE_KINDS:
            reason = _NOT_RERUNNABLE_KINDS[kind]
        elif _REDACTED in str(action.get("value") or ""):
            reason = "its value was redacted in the recording (a secret or password cannot be typed again)"
        elif method.startswith(("Mouse.", "Touchscreen.")):
            reason = "a pointer action at page coordinates: the replayed page's layout decides what it hits"
        elif str(step.get("reasoning") or "").startswith("[supervisor]"):
            reason = "a person's action during a console take-over, not the agent's"
        elif (
            (step.get("observation") or {}).get("target")
            and not action.get("selector")
            and not method.startswith(("Page.", "Frame."))
        ):
            reason = "an element action without a recorded selector"
        if reason:
            problems.append(
                {
                    "session": str(raw.get("session") or step.get("session") or ""),
                    "index": step.get("index", raw.get("index")),
                    "line": raw.get("_line"),
                    "action": f"{kind} {action.get('selector') or ''}".strip()[:120],
                    "reason": reason,
                }
            )
    return problems
