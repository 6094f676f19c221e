"""Guard-level findings about what the browser will do that no policy has to ask for.

* A `javascript:` URL the action activates (a link, a form action) runs script in the page:
  judged like `evaluate` — it needs a human's approval (PW-SCRIPT), also with no policy file.
* A navigation the action leads to (a link, a form's action, `goto`, a new page) whose URL is
  not a web page (PW-NAVIGATION): ``file:`` reads the machine's own files and browser-internal
  pages (``chrome:``, ``devtools:``, ``view-source:`` …) reach the browser's settings — both
  refused; ``data:`` (a document written into the URL, no site behind it), ``blob:`` /
  ``filesystem:`` made by another site's script (one made by the current site is judged like
  the page rewriting itself: by the domain rules) and other applications' schemes
  (``mailto:``, ``tel:``, custom app links) need a human's approval.
* A download the action starts (a link with a ``download`` attribute) needs a human's
  approval (PW-DOWNLOAD): a file saved on the user's machine.

Sans-I/O: a `Step` and its static prediction in, findings out.
"""

from __future__ import annotations

import re

from pagewarden._url import ParsedURL, parse_url, registrable_domain
from pagewarden.steps import Finding, Prediction, Step

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


#: schemes of web pages (judged by the policies) and of documents that hold nothing
_WEB = frozenset({"http", "https"})
_EMPTY = frozenset({"about:blank", "about:srcdoc"})
_BROWSER = frozenset({
    "chrome", "chrome-extension", "chrome-untrusted", "chrome-search", "chrome-native", "devtools",
    "view-source", "edge", "brave", "opera", "about", "intent", "android-app", "googlechrome",
})  # fmt: skip
_GENERATED = frozenset({"blob", "filesystem"})


def _shown(url: str) -> str:
    """A URL short enough for a message; a data: URL only up to its media type (its content
    can be anything, secrets included)."""
    if url[:5].lower() == "data:":
        head = url.split(",", 1)[0]
        return (head if len(head) <= 60 else head[:57] + "...") + ",…"
    return url if len(url) <= 120 else url[:117] + "..."


def _destinations(step: Step, prediction: Prediction) -> list[tuple[str, str]]:
    """(URL, how) of every document the action may load: the predicted navigation and form
    submission, a goto's or new page's URL."""
    out: list[tuple[str, str]] = []
    nav = prediction.navigation
    if nav is not None and nav.url:
        out.append((nav.url, "a new tab" if nav.new_tab else nav.via))
    if prediction.submission is not None and prediction.submission.url:
        out.append((prediction.submission.url, "form"))
    if step.action.kind in ("goto", "new_page") and step.action.value:
        out.append((step.action.value, step.action.kind))
    el = step.observation.target
    if el is not None and (step.action.kind in _ACTIVATE or el.activation is not None):
        if el.href:
            out.append((el.href, "link"))
        if el.form is not None and el.is_submit and el.form.action:
            out.append((el.form.action, "form"))
    if el is not None and el.download and el.href:  # a download, not a navigation (PW-DOWNLOAD)
        out = [(u, how) for u, how in out if u != el.href]
    seen: set[str] = set()
    return [(u, how) for u, how in out if not (u in seen or seen.add(u))]


def _same_site(parsed: ParsedURL, page_url: str) -> bool:
    page = parse_url(page_url) if page_url else None
    if page is None or not parsed.host or not page.host:
        return False
    return (registrable_domain(parsed.host) or parsed.host) == (registrable_domain(page.host) or page.host)


def _scheme_finding(url: str, how: str, page_url: str) -> Finding | None:
    text = url.strip()
    parsed = parse_url(text) if text else None
    scheme = parsed.scheme if parsed is not None else ""
    if not scheme or scheme in _WEB or scheme == "javascript" or text.lower().split("#", 1)[0] in _EMPTY:
        return None
    if scheme in _GENERATED and parsed is not None and _same_site(parsed, page_url):
        return None  # made by this site's own script: like the page rewriting itself
    shown = _shown(text)
    evidence = {"url": shown, "scheme": scheme, "via": how}
    if scheme == "file":
        return Finding(
            policy_id="PW-NAVIGATION", rule="file_url",
            message=f"the action opens a file: URL ({shown}): it reads files of this machine, not a web page",
            risk_level="high", category="boundary", score=0.95,
            guidance="Local files are off limits. Stay on the web pages of the task; if a file is "
            "needed, ask the user for it.",
            evidence=evidence,
        )  # fmt: skip
    if scheme in _BROWSER:
        return Finding(
            policy_id="PW-NAVIGATION", rule="browser_url",
            message=f"the action opens a browser-internal page ({shown}): settings, extensions, "
            "history and the like are off limits",
            risk_level="high", category="boundary", score=0.95,
            guidance="Browser-internal pages are off limits. Stay on the web pages of the task.",
            evidence=evidence,
        )  # fmt: skip
    if scheme == "data":
        what = (
            "a data: URL: a document written into the URL itself, with no site behind it "
            "(a common phishing trick)"
        )
        rule = "data_url"
    elif scheme in _GENERATED:
        what = f"a {scheme}: URL: a document another site's script generated"
        rule = "blob_url"
    else:
        what = f"a {scheme}: URL: it hands the URL to another application"
        rule = "external_url"
    return Finding(
        policy_id="PW-NAVIGATION", rule=rule, message=f"the action opens {what} ({shown})",
        risk_level="medium", category="boundary", score=0.6, requires_approval=True,
        guidance="This leads to something that is not a web page of a site. Ask the user before "
        "opening it, or reach the goal another way.",
        evidence=evidence,
    )  # fmt: skip


def _download(step: Step) -> Finding | None:
    el = step.observation.target
    if el is None or not el.download or not el.href:
        return None
    if not (step.action.kind in _ACTIVATE or el.activation is not None):
        return None
    shown = _shown(el.href)
    return Finding(
        policy_id="PW-DOWNLOAD", rule="download",
        message=f"the action downloads a file ({shown}) to the user's machine",
        risk_level="medium", category="data", score=0.5, requires_approval=True,
        guidance="Downloading saves a file on the user's machine. Ask the user first.",
        evidence={"url": shown, "name": el.attrs.get("download", "")},
    )  # fmt: skip


def browser_findings(step: Step, prediction: Prediction) -> list[Finding]:
    """Findings the guard adds on its own for `step` (empty when none applies)."""
    out: list[Finding] = []
    seen: set[str] = set()
    for url, how in _destinations(step, prediction):
        finding = _scheme_finding(url, how, step.observation.url or "")
        if finding is not None and finding.rule not in seen:
            seen.add(finding.rule)
            out.append(finding)
    download = _download(step)
    if download is not None:
        out.append(download)
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
