"""The HTML report of any recorded session (a recorded session directory or a bare trace).

Static HTML with no script: every recorded text escaped (and passed once more through the
credential redactor), the page fits a 1024 px window (fixed table layout, long values wrap),
each step shows its action, decision, score, policies, explanation, the world model's
prediction, the timings and its screenshot; a checkbox (CSS only) filters the table to the
steps the guard stopped, and runs of more than three allowed steps fold into one row.
"""

from __future__ import annotations

import html
import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

from pagewarden.secrets import redact_credentials

__all__ = ["render_session_report"]

_CSS = """
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,sans-serif;margin:0 auto;padding:1rem;max-width:1000px;color:#222}
h1{font-size:1.3rem}table{border-collapse:collapse;width:100%;table-layout:fixed}
th,td{border-bottom:1px solid #ddd;padding:.35rem .4rem;text-align:left;vertical-align:top;
overflow-wrap:anywhere;word-break:break-word}th{background:#f4f4f4}
.allow{color:#176b1c}.block{color:#b00020;font-weight:600}.ask{color:#8a5a00;font-weight:600}
.revise{color:#5a3d99;font-weight:600}.muted{color:#666;font-size:12px}
code{font-size:12px;white-space:pre-wrap}img{max-width:100%;border:1px solid #ccc}
details summary{cursor:pointer;color:#555}.fold td{background:#fafafa}
#stops:checked~table tr.r-allow,#stops:checked~table tr.fold{display:none}
dl{margin:.2rem 0}dt{font-weight:600;font-size:12px}dd{margin:0 0 .2rem 0}
"""


def _e(value: Any) -> str:
    if value is None:
        return ""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return html.escape(redact_credentials(text), quote=True)


def _action(step: dict[str, Any]) -> str:
    action = step.get("action") or {}
    parts = [str(action.get("kind") or "?")]
    if action.get("selector"):
        parts.append(str(action["selector"]))
    if action.get("value") is not None and action.get("kind") not in ("evaluate", "add_script_tag"):
        value = str(action["value"])
        parts.append(repr(value if len(value) <= 120 else value[:117] + "..."))
    target = (step.get("observation") or {}).get("target") or {}
    label = target.get("name") or target.get("text")
    if label:
        parts.append(f"on “{str(label)[:80]}”")
    return " ".join(parts)


def _prediction(verdict: dict[str, Any]) -> str:
    prediction = verdict.get("prediction") or {}
    items: list[tuple[str, Any]] = []
    if prediction.get("semantic_delta"):
        items.append(("predicted", prediction["semantic_delta"]))
    navigation = prediction.get("navigation") or {}
    if navigation.get("url"):
        items.append(
            ("goes to", navigation["url"] + (" (another site)" if navigation.get("cross_site") else ""))
        )
    submission = prediction.get("submission") or {}
    if submission.get("action"):
        fields = ", ".join(str(f) for f in submission.get("fields") or [])[:200]
        items.append(("submits", f"{submission.get('method', '')} {submission['action']} {fields}".strip()))
    if prediction.get("consequence") not in (None, "", "none"):
        items.append(("consequence", prediction["consequence"]))
    if prediction.get("long_term_impact"):
        items.append(("impact", prediction["long_term_impact"]))
    return "".join(f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>" for k, v in items)


def _timings(verdict: dict[str, Any]) -> str:
    timings = verdict.get("timings_ms") or {}
    return " · ".join(f"{_e(k)} {float(v):.1f} ms" for k, v in timings.items() if isinstance(v, (int, float)))


def _row(record: dict[str, Any], shots: Path | None, link_from: Path | None) -> str:
    step = record.get("step") or {}
    verdict = record.get("verdict") or {}
    decision = str(verdict.get("decision") or "?")
    ran = record.get("ran")
    status = decision
    if verdict.get("approved_by"):
        status += f" (approved by {verdict['approved_by']})"
    if verdict.get("enforced") is False:
        status += " (monitor: not enforced)"
    if ran is False and decision == "allow":
        status += " (did not run)"
    policies = ", ".join(verdict.get("violated_policy_ids") or [])
    detail = ""
    if decision != "allow" or verdict.get("explanation") not in (None, "", "no policy concern found"):
        detail += f"<div>{_e(verdict.get('explanation'))}</div>"
    if verdict.get("guidance"):
        detail += f"<div class='muted'>guidance: {_e(verdict['guidance'])}</div>"
    prediction = _prediction(verdict)
    if prediction:
        detail += f"<dl>{prediction}</dl>"
    if step.get("reasoning"):
        detail += f"<div class='muted'>agent: {_e(step['reasoning'])}</div>"
    shot = record.get("screenshot")
    if shot and shots is not None and (shots / str(shot)).is_file():
        where = shots / str(shot)
        link = html.escape(
            os.path.relpath(where, link_from) if link_from is not None else str(where), quote=True
        )
        detail += (
            f"<details><summary>screenshot</summary><img loading='lazy' src='{link}' alt='step'></details>"
        )
    score = verdict.get("score")
    return (
        f"<tr class='r-{_e(decision)}'><td>{_e(record.get('index', step.get('index')))}</td>"
        f"<td><code>{_e(_action(step))}</code>"
        f"<div class='muted'>{_e((step.get('observation') or {}).get('url'))}</div></td>"
        f"<td class='{_e(decision)}'>{_e(status)}<div class='muted'>score "
        f"{float(score or 0):.2f}</div></td><td>{_e(policies or '-')}</td><td>{detail}"
        f"<div class='muted'>{_timings(verdict)}</div></td></tr>"
    )


def _fold(rows: list[tuple[str, str]]) -> list[str]:
    """Rows with runs of more than three allowed steps folded into one row that opens."""
    out: list[str] = []
    run: list[str] = []

    def flush() -> None:
        if len(run) > 3:
            inner = "<table>" + "".join(run) + "</table>"
            out.append(
                f"<tr class='fold'><td colspan='5'><details><summary>{len(run)} allowed steps</summary>"
                f"{inner}</details></td></tr>"
            )
        else:
            out.extend(run)
        run.clear()

    for decision, row in rows:
        if decision == "allow":
            run.append(row)
            continue
        flush()
        out.append(row)
    flush()
    return out


def render_session_report(
    records: list[dict[str, Any]],
    *,
    title: str,
    manifest: dict[str, Any] | None = None,
    base: Path | None = None,
    out_dir: Path | None = None,
) -> str:
    """The report page for the trace `records` (raw trace lines); `manifest` adds the
    recording's header; screenshot paths are resolved in `base` and linked relative to
    `out_dir`, where the page will be."""
    manifest = manifest or {}
    counts = Counter(str((r.get("verdict") or {}).get("decision")) for r in records)
    sessions = list(dict.fromkeys(str(r.get("session")) for r in records))
    header = []
    for key, label in (
        ("goal", "goal"),
        ("mode", "mode"),
        ("pagewarden", "pagewarden"),
        ("created", "recorded"),
    ):
        if manifest.get(key):
            header.append(f"<dt>{label}</dt><dd>{_e(manifest[key])}</dd>")
    goals = list(
        dict.fromkeys(
            str((r.get("step") or {}).get("goal")) for r in records if (r.get("step") or {}).get("goal")
        )
    )
    if not manifest.get("goal") and goals:
        header.append(f"<dt>goal</dt><dd>{_e(goals[0])}</dd>")
    summary = ", ".join(f"{counts[d]} {d}" for d in ("allow", "block", "ask", "revise") if counts[d])
    body = []
    for session in sessions:
        rows = [
            (str((r.get("verdict") or {}).get("decision")), _row(r, base, out_dir))
            for r in records
            if str(r.get("session")) == session
        ]
        body.append(
            f"<h2>Session {_e(session)}</h2><table><tr><th style='width:6%'>#</th>"
            "<th style='width:34%'>action</th><th style='width:14%'>decision</th>"
            "<th style='width:12%'>policies</th><th>why</th></tr>"
            + "".join(_fold(rows))
            + "</table>"
        )
    return (
        "<!doctype html><html><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        "<meta http-equiv='Content-Security-Policy' content=\"default-src 'none'; img-src 'self' data:; "
        "style-src 'unsafe-inline'\">"
        f"<title>pagewarden report: {_e(title)}</title><style>{_CSS}</style></head><body>"
        f"<h1>pagewarden report: {_e(title)}</h1><dl>{''.join(header)}</dl>"
        f"<p>{len(records)} steps in {len(sessions)} session(s): {_e(summary)}.</p>"
        "<input type='checkbox' id='stops'><label for='stops'> only the steps the guard stopped</label>"
        + "".join(body)
        + "</body></html>\n"
    )
