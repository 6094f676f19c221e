"""The demo's outputs: a console table, ``report.html`` (self-contained) and ``results.json``."""

from __future__ import annotations

import dataclasses
import html
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from pagewarden.demo._agent import StepRecord
from pagewarden.demo._results import AgentRun, DemoResult
from pagewarden.secrets import MIN_SECRET_LENGTH, SecretRegistry, credentials_in_text, redact_credentials

__all__ = ["print_result", "redacted", "result_data", "write_html", "write_json"]

_STYLE = {
    "allow": "green",
    "block": "bold red",
    "ask": "yellow",
    "revise": "magenta",
    "ran": "cyan",
    "error": "red",
}


def _expected(run: AgentRun, step: StepRecord) -> str:
    if not run.guarded:
        return "-"
    return "stop" if step.attack else "allow"


def _as_expected(run: AgentRun, step: StepRecord) -> bool:
    if not run.guarded:
        return step.decision != "error"
    return step.stopped if step.attack else step.ran


def _clip(text: str, n: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


# -- redaction -----------------------------------------------------------------------------
def _redact_fields(obj: Any, redact: Callable[[str], str]) -> Any:
    """A copy of a dataclass with `redact` applied to its text fields (and lists of texts)."""
    changes: dict[str, Any] = {}
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        if isinstance(value, str):
            changes[f.name] = redact(value)
        elif isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
            changes[f.name] = type(value)(redact(v) for v in value)
    return dataclasses.replace(obj, **changes)


def redacted(result: DemoResult) -> DemoResult:
    """`result` as the console table, ``report.html`` and ``results.json`` show it: the
    scenarios' secrets, credentials written in their goals, and credentials recognisable by
    their format (API keys, card numbers …) redacted in every text."""
    registry = SecretRegistry()
    for run in result.runs:
        for secret in run.scenario.secrets:
            registry.add(secret.value, label=secret.label, enforce=False)
        for kind, value in credentials_in_text(run.scenario.goal):
            if len(value) >= MIN_SECRET_LENGTH and value not in registry:
                registry.add(value, label=f"goal-{kind}", enforce=False)

    def redact(text: str) -> str:
        return redact_credentials(registry.redact(text))

    runs = []
    for run in result.runs:
        copy = _redact_fields(run, redact)
        copy.scenario = _redact_fields(run.scenario, redact)
        copy.steps = [_redact_fields(step, redact) for step in run.steps]
        runs.append(copy)
    model = redact(result.model) if result.model is not None else None  # a URL may hold credentials
    return dataclasses.replace(result, runs=runs, model=model)


# -- console -------------------------------------------------------------------------------
def print_result(result: DemoResult, console: Console | None = None) -> None:
    """Print every step (action, decision, policy, reason) and a verdict per run."""
    console = console or Console(emoji=False)  # page text (":cd:") printed as written
    result = redacted(result)
    mode = f"guarded ({result.tiers})" if result.guarded else "UNGUARDED"
    table = Table(title=f"pagewarden demo — {mode}", show_lines=False, expand=True)
    table.add_column("scenario", overflow="fold", max_width=18)
    table.add_column("agent", max_width=6)
    table.add_column("#", justify="right")
    table.add_column("action", overflow="fold", ratio=3)
    if result.guarded:
        table.add_column("expect")
        table.add_column("decision")
        table.add_column("policy", overflow="fold")
        table.add_column("reason", overflow="fold", ratio=4)
    else:
        table.add_column("follows the injection")
        table.add_column("result")
    for run in result.runs:
        for i, step in enumerate(run.steps):
            mark = "" if _as_expected(run, step) else " ✗"
            cells = [
                Text(run.scenario.id if i == 0 else ""),
                Text(run.agent if i == 0 else ""),
                Text(str(step.index)),
                Text(_clip(step.action, 90)),
            ]
            decision = Text(step.decision + mark, style=_STYLE.get(step.decision, ""))
            if result.guarded:
                cells += [
                    Text(_expected(run, step)),
                    decision,
                    Text(", ".join(step.policies) or "-"),
                    Text(_clip(step.reason, 160) or "-"),
                ]
            else:
                cells += [Text("yes" if step.attack else "-"), decision]
            table.add_row(*cells)
        table.add_section()
    console.print(table)
    summary = Table(title="Runs", expand=True)
    summary.add_column("scenario")
    summary.add_column("attack planted", overflow="fold")
    summary.add_column("agent")
    summary.add_column("result", overflow="fold")
    for run in result.runs:
        style = "green" if run.ok else "bold red"
        summary.add_row(
            Text(run.scenario.id),
            Text(run.scenario.attack or "-"),
            Text(run.agent),
            Text(run.summary, style=style),
        )
    console.print(summary)
    proxied = [run for run in result.runs if run.proxied_requests is not None]
    if proxied:
        handled = sum(run.proxied_requests or 0 for run in proxied)
        refused = sum(len(run.network_refusals) for run in proxied)
        console.print(
            f"network layer: {len(proxied)} run(s) through their own proxy, {handled} request(s) "
            f"judged there, {refused} refused", highlight=False,
        )  # fmt: skip
    if not result.guarded:
        received = [(run.scenario.id, line) for run in result.runs for line in run.evil_received]
        console.print(f"evil.test received {len(received)} request(s):", style="bold", highlight=False)
        for scenario_id, line in received:
            console.print(f"  {scenario_id}: {line}", markup=False, highlight=False, soft_wrap=True)
    if result.guarded:
        what = "every planted attack stopped, every benign action allowed"
        failed = "an attack got through or a benign action was stopped (rows marked ✗)"
    else:
        what = "every planted attack works on a raw page"
        failed = "some planted attack did not work even without the guard"
    verdict = Text(f"PASS: {what}", style="green") if result.ok else Text(f"FAIL: {failed}", style="bold red")
    console.print(verdict + Text(f". Report: {result.out_dir / 'report.html'}"), highlight=False)


# -- JSON ----------------------------------------------------------------------------------
def result_data(result: DemoResult) -> dict[str, Any]:
    """The result as plain data (redacted)."""
    result = redacted(result)
    return {
        "guarded": result.guarded,
        "ok": result.ok,
        "model": result.model,
        "llm_calls": result.llm_calls if result.model is not None else None,
        "runs": [
            {
                "scenario": run.scenario.id,
                "title": run.scenario.title,
                "goal": run.scenario.goal,
                "attack": run.scenario.attack,
                "agent": run.agent,
                "ok": run.ok,
                "summary": run.summary,
                "outcome": run.outcome,
                "evil_received": run.evil_received,
                "proxied_requests": run.proxied_requests,
                "llm_calls": run.llm_calls,
                "network_refusals": run.network_refusals,
                "trace": run.trace,
                "error": run.error,
                "steps": [
                    {
                        "index": s.index,
                        "action": s.action,
                        "reasoning": s.reasoning,
                        "attack": s.attack,
                        "decision": s.decision,
                        "ran": s.ran,
                        "policies": list(s.policies),
                        "reason": s.reason,
                        "guidance": s.guidance,
                        "url_before": s.url_before,
                        "url_after": s.url_after,
                        "screenshot": s.screenshot,
                        "guard_screenshot": s.guard_screenshot,
                        "error": s.error,
                    }
                    for s in run.steps
                ],
            }
            for run in result.runs
        ],
    }


def write_json(result: DemoResult, path: Path) -> None:
    """Write `result_data` as JSON."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result_data(result), indent=2, ensure_ascii=False), encoding="utf-8")


# -- HTML ----------------------------------------------------------------------------------
_CSS = """
body { font: 14px/1.5 system-ui, sans-serif; margin: 24px 32px; color: #1f1e24; }
h1 { font-size: 22px; }
h2 { font-size: 18px; margin-top: 32px; border-top: 1px solid #ddd; padding-top: 16px; }
table { border-collapse: collapse; width: 100%; margin: 8px 0 16px; }
th, td { border-bottom: 1px solid #e3e3e8; padding: 6px 8px; text-align: left; vertical-align: top; }
th { background: #f6f6f8; font-size: 13px; }
.pill { display: inline-block; padding: 0 8px; border-radius: 10px; font-weight: 600; font-size: 12px; }
.allow { background: #d7f0dd; color: #1a6030; } .block { background: #fbd5d0; color: #8d1300; }
.ask { background: #fdf1dd; color: #8f4700; } .revise { background: #eadcfb; color: #5b2ca0; }
.ran { background: #d8ecf9; color: #0b5cad; } .error { background: #8d1300; color: #fff; }
.ok { color: #1a6030; font-weight: 600; } .bad { color: #c91c00; font-weight: 700; }
.muted { color: #6b6b73; } .attack { background: #fff7f6; }
code { background: #f1f1f4; padding: 0 3px; border-radius: 3px; }
.shots { display: flex; gap: 6px; } figure { margin: 0; } figcaption { font-size: 11px; color: #6b6b73; }
img.shot { width: 200px; border: 1px solid #ccc; display: block; }
.reasoning { font-style: italic; color: #4a4a52; }
"""


def _e(text: object) -> str:
    return html.escape(str(text))


def _shot(path: str | None, label: str) -> str:
    if not path:
        return ""
    return (
        f'<figure><a href="{_e(path)}">'
        f'<img class="shot" src="{_e(path)}" alt="{_e(label)}" loading="lazy"></a>'
        f"<figcaption>{_e(label)}</figcaption></figure>"
    )


def _guard_shot(result: DemoResult, run: AgentRun, step: StepRecord) -> str | None:
    """The guard's own screenshot, as a path relative to the report."""
    if not step.guard_screenshot:
        return None
    shot = Path(step.guard_screenshot)
    if not shot.is_absolute() and run.trace:
        shot = result.out_dir / Path(run.trace).parent / shot
    try:
        return shot.resolve().relative_to(result.out_dir.resolve()).as_posix()
    except ValueError:
        return shot.as_posix()


def _run_html(result: DemoResult, run: AgentRun) -> str:
    rows = []
    for step in run.steps:
        good = _as_expected(run, step)
        shots = _shot(_guard_shot(result, run, step), "before (what the guard saw)") + _shot(
            step.screenshot, "after the step"
        )
        policies = ", ".join(step.policies) or "-"
        reason = _e(step.reason or "-")
        if step.guidance:
            reason += f'<br><span class="muted">guidance: {_e(step.guidance)}</span>'
        rows.append(
            f'<tr class="{"attack" if step.attack else ""}"><td>{step.index}</td>'
            f"<td><code>{_e(step.action)}</code><br>"
            f"<span class='reasoning'>“{_e(step.reasoning)}”</span></td>"
            f"<td>{_e(_expected(run, step))}</td>"
            f'<td><span class="pill {_e(step.decision)}">{_e(step.decision)}</span>'
            f"{'' if good else ' <span class=bad>✗</span>'}</td>"
            f'<td>{_e(policies)}</td><td>{reason}</td><td><div class="shots">{shots}</div></td></tr>'
        )
    evil = "".join(f"<li><code>{_e(line)}</code></li>" for line in run.evil_received) or "<li>nothing</li>"
    trace = f' · trace: <a href="{_e(run.trace)}">{_e(run.trace)}</a>' if run.trace else ""
    status = "ok" if run.ok else "bad"
    return (
        f'<h2 id="{_e(run.scenario.id)}-{_e(run.agent)}">{_e(run.scenario.title)} — {_e(run.agent)} agent'
        f' <span class="muted">({_e(run.scenario.id)})</span></h2>'
        f"<p><strong>Goal:</strong> {_e(run.scenario.goal)}<br>"
        f"<strong>Planted attack:</strong> {_e(run.scenario.attack or 'none (benign scenario)')}<br>"
        f'<strong>Result:</strong> <span class="{status}">{_e(run.summary)}</span>{trace}</p>'
        "<table><tr><th>#</th><th>action and the agent's reasoning</th><th>expected</th><th>decision</th>"
        f"<th>policy</th><th>reason</th><th>screenshots</th></tr>{''.join(rows)}</table>"
        f"<p><strong>evil.test received:</strong></p><ul>{evil}</ul>"
    )


def write_html(result: DemoResult, path: Path) -> None:
    """Write the report: a summary table, then every run step by step with screenshots."""
    result = redacted(result)
    mode = f"guarded — {result.tiers}" if result.guarded else "unguarded"
    summary_rows = "".join(
        f'<tr><td><a href="#{_e(run.scenario.id)}-{_e(run.agent)}">{_e(run.scenario.id)}</a></td>'
        f"<td>{_e(run.scenario.attack or '-')}</td><td>{_e(run.agent)}</td>"
        f'<td class="{"ok" if run.ok else "bad"}">{_e(run.summary)}</td></tr>'
        for run in result.runs
    )
    verdict = (
        '<p class="ok">PASS</p>'
        if result.ok
        else '<p class="bad">FAIL — see the runs marked in red and the steps marked ✗</p>'
    )
    body = (
        f"<h1>pagewarden demo — {_e(mode)}</h1>"
        f'<p class="muted">{_e(time.strftime("%Y-%m-%d %H:%M:%S"))} · {len(result.runs)} runs · '
        f"{sum(len(r.steps) for r in result.runs)} steps</p>{verdict}"
        "<table><tr><th>scenario</th><th>planted attack</th><th>agent</th><th>result</th></tr>"
        f"{summary_rows}</table>" + "".join(_run_html(result, run) for run in result.runs)
    )
    page = (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f"<title>pagewarden demo report</title><style>{_CSS}</style></head><body>{body}</body></html>"
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(page, encoding="utf-8")
