"""Guard-level findings about what the browser will do that no policy has to ask for.

* A `javascript:` URL the action activates (a link, a form action) runs script in the page:
  judged like `evaluate` — it needs a human's approval (PW-SCRIPT), also with no policy file.

Sans-I/O: a `Step` and its static prediction in, findings out.
"""

from __future__ import annotations

import re

from pagewarden._url import parse_url
from pagewarden.guard._step import Step
from pagewarden.guard._verdict import Finding
from pagewarden.worldmodel._prediction import Prediction

__all__ = ["browser_findings"]

_ACTIVATE = frozenset({"click", "dblclick", "tap"})
#: javascript: URLs that run nothing (the page's own click handler does the work)
_NO_OP = re.compile(r"^\s*javascript:\s*(?:void\s*\(?\s*0\s*\)?|undefined|null|false|true|0)?\s*;?\s*$", re.I)


def _script_url(step: Step) -> str | None:
    el = step.observation.target
    if el is None:
        return None
    activates = step.action.kind in _ACTIVATE or el.activation is not None
    if not activates:
        return None
    for url in (el.href, el.form.action if el.form is not None and el.is_submit else None):
        if url and parse_url(url).scheme == "javascript" and not _NO_OP.match(url):
            return url
    return None


def browser_findings(step: Step, prediction: Prediction) -> list[Finding]:
    """Findings the guard adds on its own for `step` (empty when none applies)."""
    out: list[Finding] = []
    script = _script_url(step)
    if script is not None:
        shown = script if len(script) <= 120 else script[:117] + "..."
        out.append(
            Finding(
                policy_id="PW-SCRIPT",
                rule="javascript_url",
                message=f"activating a javascript: URL runs script in the page ({shown})",
                risk_level="medium",
                category="execution",
                score=0.6,
                requires_approval=True,
                guidance="This link runs a script instead of opening a page. Ask the user before "
                "running it, or reach the goal another way.",
                evidence={"url": shown},
            )
        )
    return out
