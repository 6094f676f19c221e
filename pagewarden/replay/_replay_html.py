"""The replay diff as one static HTML page (no script; every recorded text escaped)."""

from __future__ import annotations

from html import escape

from pagewarden.replay._replay import ReplayedStep, ReplayReport

__all__ = ["render_replay_html"]

_CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:1.5rem;max-width:1000px;color:#222;overflow-wrap:anywhere}
table{border-collapse:collapse;width:100%;table-layout:fixed}
th,td{border-bottom:1px solid #ddd;padding:.35rem .4rem;text-align:left;vertical-align:top;
overflow-wrap:anywhere;word-break:break-word}
th{background:#f4f4f4}.changed{background:#fff4e0}.unverifiable{background:#eef2ff}
.not_rerun{background:#f3f3f3}
.d-allow{color:#176b1c}.d-block{color:#b00020;font-weight:600}.d-ask{color:#8a5a00;font-weight:600}
.d-revise{color:#5a3d99}.muted{color:#777}code{font-size:12px}
"""


_STATUS = {"not_rerun": "not re-run"}


def _decision(value: str | None) -> str:
    if value is None:
        return '<span class="muted">-</span>'
    return f'<span class="d-{escape(value)}">{escape(value)}</span>'


def _row(step: ReplayedStep) -> str:
    reasons = ""
    if step.recorded_reason:
        reasons += f"<div><b>recorded:</b> {escape(step.recorded_reason)}</div>"
    if step.now_reason:
        reasons += f"<div><b>now:</b> {escape(step.now_reason)}</div>"
    if step.note:
        reasons += f'<div class="muted">{escape(step.note)}</div>'
    return (
        f'<tr class="{escape(step.status)}"><td>{escape(step.session)}<br>#{step.index}</td>'
        f"<td><code>{escape(step.action)}</code><br><span class=muted>{escape(step.url)}</span></td>"
        f"<td>{_decision(step.recorded)} → {_decision(step.now or None)}<br>"
        f"<span class=muted>{escape(_STATUS.get(step.status, step.status))}"
        f"{'' if step.ran else ', did not run'}</span></td>"
        f"<td>{escape(', '.join(step.recorded_policies) or '-')} → "
        f"{escape(', '.join(step.now_policies) or '-')}</td>"
        f"<td>{reasons}</td></tr>"
    )


def render_replay_html(report: ReplayReport) -> str:
    """The whole page: a summary, the changed and unverifiable steps, then every step."""
    diff = [s for s in report.steps if s.status in ("changed", "unverifiable", "not_rerun")]
    head = (
        "<tr><th style='width:12%'>session / step</th><th style='width:30%'>action</th>"
        "<th style='width:16%'>decision</th><th style='width:14%'>policies</th><th>reasons</th></tr>"
    )
    how = "performed and judged again in Chromium" if report.browser else "judged again"
    rerun = f", {len(report.not_rerun)} not performed again" if report.browser else ""
    summary = (
        f"{len(report.steps)} steps in {len(report.sessions)} session(s) {how} in "
        f"{report.elapsed_ms:.0f} ms: <b>{len(report.changed)} changed</b>, "
        f"{len(report.unverifiable)} unverifiable{rerun}. Policies: {escape(report.policies)}; "
        f"model: {escape(report.llm or 'none')}."
    )
    if report.misses:
        summary += " Requests not in the recording: " + escape(", ".join(report.misses[:10])) + "."
    notes = "".join(f"<p class=muted>{escape(n)}</p>" for n in report.notes)
    changed = "".join(_row(s) for s in diff) or "<tr><td colspan=5>no decision changed</td></tr>"
    every = "".join(_row(s) for s in report.steps)
    return (
        "<!doctype html><html><head><meta charset='utf-8'>"
        "<meta http-equiv='Content-Security-Policy' "
        "content=\"default-src 'none'; style-src 'unsafe-inline'\">"
        f"<title>pagewarden replay: {escape(report.source)}</title><style>{_CSS}</style></head><body>"
        f"<h1>Replay of {escape(report.source)}</h1><p>{summary}</p>{notes}"
        f"<h2>Decisions that differ</h2><table>{head}{changed}</table>"
        f"<details><summary>All steps</summary><table>{head}{every}</table></details>"
        "</body></html>\n"
    )
