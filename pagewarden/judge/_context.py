"""What the model sees about a step: the prompt's sections, built from a `Step` (sans-I/O).

Trusted parts (the user's goal, the organisation's policies, facts pagewarden measured
itself: action kinds, roles, hosts, flags) are plain text. Everything a page, an agent or
an earlier attacker wrote (URLs, titles, element text, the tree, the agent's reasoning,
selectors, typed values, past violations) goes inside the call's `Fence`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from pagewarden._url import parse_url
from pagewarden.judge._observation import measured_lines, page_lines
from pagewarden.judge._relevance import policy_applies
from pagewarden.judge._tree import PrunedTree
from pagewarden.llm import Fence, block
from pagewarden.policies import Policy
from pagewarden.rules import significant_tokens
from pagewarden.steps import Finding, Prediction, Step

__all__ = ["StepContext", "build_context", "select_policies"]

_REASONING_CHARS = 1500
_VALUE_CHARS = 400
_REFERENCE_CHARS = 300
_DESCRIPTION_CHARS = 400
_CATEGORY_HINTS = {
    "untrusted": ("injection", "boundary"),
    "typed": ("data", "consent"),
    "offsite": ("boundary", "data"),
    "consequential": ("consent", "execution", "hierarchy", "goal"),
}


@dataclass(frozen=True, slots=True)
class StepContext:
    """The rendered sections of one consultation and what went into them."""

    sections: dict[str, str]
    policies: tuple[Policy, ...]
    tree: PrunedTree | None


def _clip(text: str | None, limit: int) -> str:
    text = (text or "").strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _host(url: str | None) -> str:
    if not url:
        return "-"
    parsed = parse_url(url)
    return parsed.host or parsed.scheme or "-"


def select_policies(
    policies: Sequence[Policy],
    step: Step,
    prediction: Prediction | None,
    findings: Iterable[Finding],
    reasons: Iterable[str],
    *,
    limit: int = 12,
) -> list[Policy]:
    """The policies worth showing for this step: those with findings first, then those that
    can apply to this action (`policy_applies`: their rules' action kinds and destinations,
    a scope naming the sites involved), the most relevant first by shared words and by
    category for why the model is consulted; at most `limit`."""
    by_id = {p.id: p for p in policies}
    chosen: dict[str, Policy] = {}
    for finding in findings:
        if finding.policy_id in by_id:
            chosen.setdefault(finding.policy_id, by_id[finding.policy_id])
    target = step.observation.target
    words = " ".join(
        x
        for x in (
            step.goal or "",
            step.action.kind,
            target.label if target is not None else "",
            parse_url(step.observation.url).path if step.observation.url else "",
            prediction.semantic_delta if prediction is not None else "",
            " ".join(prediction.consequence_terms) if prediction is not None else "",
        )
        if x
    )
    step_tokens = significant_tokens(words)
    wanted_categories = {c for reason in reasons for c in _CATEGORY_HINTS.get(reason, ())}
    scored: list[tuple[float, int, Policy]] = []
    for order, policy in enumerate(policies):
        if policy.id in chosen or not policy_applies(policy, step, prediction):
            continue
        text = " ".join([policy.description, policy.scope or "", *policy.definitions])
        overlap = len(significant_tokens(text) & step_tokens)
        score = overlap + (1.5 if policy.category.value in wanted_categories else 0.0)
        score += {"high": 0.3, "medium": 0.2, "low": 0.1}[policy.risk_level.value]
        scored.append((score, -order, policy))
    for _, _, policy in sorted(scored, key=lambda item: (item[0], item[1]), reverse=True):
        if len(chosen) >= limit:
            break
        chosen.setdefault(policy.id, policy)
    return list(chosen.values())


def _policies_text(policies: Sequence[Policy]) -> str:
    """One line per policy: id, risk level, category, description, scope."""
    lines = []
    for policy in policies:
        level, category = policy.risk_level.value, policy.category.value
        description = " ".join(policy.description.split())
        line = f"- {policy.id} ({level}, {category}): {_clip(description, _DESCRIPTION_CHARS)}"
        if policy.scope:
            line += f" [scope: {_clip(policy.scope, 120)}]"
        lines.append(line)
    return "\n".join(lines)


def _references_text(policies: Sequence[Policy], fence: Fence, per_policy: int) -> str:
    parts = []
    for policy in policies:
        refs = [r.text for r in policy.references[-per_policy:]] if per_policy else []
        for number, ref in enumerate(refs, 1):
            parts.append(f"{policy.id} example {number}: {_clip(ref, _REFERENCE_CHARS)}")
    if not parts:
        return ""
    intro = "Earlier violations of the policies above, recorded by the guard (may quote attackers):"
    return intro + "\n" + fence.wrap("past violations", "\n".join(parts))


def _element_facts(step: Step) -> list[str]:
    el = step.observation.target
    if el is None:
        return ["target element: none (the action has no element, or it could not be read)"]
    flags = [
        name
        for name, on in (
            ("inside user-written content (comment, post, issue body)", el.in_ugc),
            ("inside a dialog or pop-up", el.in_dialog),
            ("the pop-up itself sits inside user-written content (a forged dialog)", el.overlay_in_ugc),
            ("not visible" + (f" ({el.hidden_reason})" if el.hidden_reason else ""), not el.visible),
            ("carries text that is not rendered", bool(el.hidden_text)),
            ("editable", el.editable),
            ("submits its form", el.is_submit),
        )
        if on
    ]
    facts = [f"target element: {el.role or el.tag} (tag {el.tag}" + (
        f", input type {el.input_type})" if el.input_type else ")"
    ) + (f", in page region '{el.region}'" if el.region else "")]  # fmt: skip
    if flags:
        facts.append("target flags: " + "; ".join(flags))
    if step.observation.target_count and step.observation.target_count > 1:
        facts.append(f"the selector matches {step.observation.target_count} elements")
    return facts


def _prediction_facts(prediction: Prediction | None) -> list[str]:
    if prediction is None:
        return []
    facts = [f"consequence: {prediction.consequence.value}" + (
        f" (because of: {', '.join(prediction.consequence_terms)})" if prediction.consequence_terms else ""
    )]  # fmt: skip
    nav = prediction.navigation
    if nav is not None:
        facts.append(
            f"navigates (via {nav.via}, {nav.method.upper()}) to host {_host(nav.url)}"
            + (", another site" if nav.cross_site else ", another origin" if nav.cross_origin else "")
            + (", in a new tab" if nav.new_tab else "")
        )
    sub = prediction.submission
    if sub is not None:
        facts.append(
            f"submits a form ({sub.method.upper()}) to host {_host(sub.url)} with {len(sub.fields)} field(s)"
            + (", including a password" if sub.carries_password else "")
            + (", to another site" if sub.cross_site else "")
        )
    return facts


def _findings_facts(findings: Sequence[Finding]) -> list[str]:
    return [
        f"deterministic finding: {f.policy_id} / {f.rule} ({f.risk_level} risk)"
        for f in sorted(findings, key=lambda f: -f.score)[:5]
    ]


def _step_data(step: Step, tree: PrunedTree | None, evidence: Sequence[str] = ()) -> tuple[str, str]:
    """The agent's data and the page's data for the current (and previous) step."""
    action = step.action
    agent = [f"reasoning: {_clip(step.reasoning, _REASONING_CHARS) or '(none given)'}"]
    if action.selector:
        agent.append(f"selector: {_clip(action.selector, 200)}")
    if action.value is not None:
        agent.append(f"value: {_clip(action.value, _VALUE_CHARS)}")
    obs = step.observation
    page = [f"url: {_clip(obs.url, 300)}"]
    if obs.title:
        page.append(f"title: {_clip(obs.title, 200)}")
    el = obs.target
    if el is not None:
        if el.name:
            page.append(f"target name: {_clip(el.name, 200)}")
        if el.text and el.text != el.name:
            page.append(f"target text: {_clip(el.text, 300)}")
        if el.href:
            page.append(f"target link: {_clip(el.href, 300)}")
        if el.hidden_text:
            page.append(f"target hidden text: {_clip(el.hidden_text, 300)}")
        if el.context_text:
            page.append(f"around the target: {_clip(el.context_text, 360)}")
    for source in obs.value_sources[:3]:
        where = ", ".join(
            w for w, on in (("user content", source.in_ugc), ("hidden", source.hidden),
                            ("pop-up", source.in_dialog)) if on
        ) or "page"  # fmt: skip
        page.append(f"the value appears on the page ({where}): {_clip(source.snippet, 300)}")
    # The targeted observation; the flagged page text only when no tree carries it already.
    page += page_lines(step, None if tree is not None and tree.text else list(evidence))
    if tree is not None and tree.text:
        page.append("accessibility tree (pruned around the target):\n" + tree.text)
    return "\n".join(agent), "\n".join(page)


def build_context(
    step: Step,
    prediction: Prediction | None,
    findings: Sequence[Finding],
    policies: Sequence[Policy],
    tree: PrunedTree | None,
    fence: Fence,
    *,
    references: int = 3,
    reasons: Sequence[str] = (),
    evidence: Sequence[str] = (),
) -> StepContext:
    """The sections of the prompt for `step` (see the prompt files for where each goes).
    `evidence`: page lines the guard flagged (`evidence_lines`), shown when there is no tree."""
    agent_text, page_text = _step_data(step, tree, evidence)
    current = [f"action: {step.action.kind}" + (f" ({step.action.method})" if step.action.method else "")]
    current.append(fence.wrap("agent", agent_text))
    current.append(fence.wrap("page", page_text))
    previous = ""
    if step.previous is not None:
        prev = step.previous
        lines = [
            f"action: {prev.action.kind} on host {_host(prev.url)}"
            + (f"; the guard decided: {prev.decision}" if prev.decision else "")
        ]
        data = [f"reasoning: {_clip(prev.reasoning, 600) or '(none given)'}"]
        if prev.action.selector:
            data.append(f"selector: {_clip(prev.action.selector, 200)}")
        if prev.action.value is not None:
            data.append(f"value: {_clip(prev.action.value, 200)}")
        if prev.url:
            data.append(f"url: {_clip(prev.url, 300)}")
        if prev.target:
            data.append(f"target: {_clip(prev.target, 200)}")
        if prev.title:
            data.append(f"title: {_clip(prev.title, 200)}")
        lines.append(fence.wrap("previous step", "\n".join(data)))
        previous = "\n".join(lines)
    facts = [f"the page is on host {_host(step.observation.url)}"]
    facts += _element_facts(step) + measured_lines(step) + _prediction_facts(prediction)
    facts += _findings_facts(findings)
    if reasons:
        facts.append("why you are consulted: " + ", ".join(_REASON_TEXT.get(r, r) for r in reasons))
    goal = step.goal or "(no goal was given: judge against the policies only, and report no goal deviation)"
    sections = {
        "token": fence.token,
        "goal": block("User goal (trusted)", goal),
        "policies": block("Policies (trusted; id (risk, category): text)", _policies_text(policies)),
        "references": block("Past violations", _references_text(policies, fence, references)),
        "previous": block("Previous step", previous),
        "current": block("Current step (not yet executed)", "\n".join(current)),
        "facts": block("Measured facts (true)", "\n".join(f"- {f}" for f in facts)),
    }
    return StepContext(sections, tuple(policies), tree)


_REASON_TEXT = {
    "irreversible": "the action cannot be undone",
    "consequential": "the action changes state",
    "offsite": "the action leaves the site",
    "typed": "the action sends typed data",
    "untrusted": "the action acts on untrusted page content",
    "script": "the action runs a script",
    "always": "every action is judged",
}
