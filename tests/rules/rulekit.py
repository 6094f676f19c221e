"""Small builders for rules-tier tests: policies from rule mappings, elements, steps, guards."""

from __future__ import annotations

from typing import Any

from pagewarden.guard import Action, Guard, Verdict
from pagewarden.policies import Policy
from pagewarden.steps import ElementFacts, FormFacts, FormField, Observation

PAGE = "https://app.test/projects/1"


def policy(*rules: dict[str, Any], risk: str = "high", pid: str = "P1") -> Policy:
    """A policy holding `rules` (one-key mappings, as in policy files)."""
    return Policy(
        id=pid, category="boundary", risk_level=risk, description=f"test policy {pid}", rules=list(rules)
    )


def guard(*rules: dict[str, Any], risk: str = "high", **kwargs: Any) -> Guard:
    """A guard with one test policy and no baseline (unless asked for)."""
    kwargs.setdefault("baseline", False)
    return Guard([policy(*rules, risk=risk)], **kwargs)


def button(text: str, **kw: Any) -> ElementFacts:
    """A button whose accessible name is its text."""
    return ElementFacts(tag="button", role="button", name=text, text=text, **kw)


def link(text: str, href: str) -> ElementFacts:
    """A link (href already absolute, as the observer reports it)."""
    return ElementFacts(tag="a", role="link", name=text, text=text, href=href)


def field(
    label: str, *, kind: str = "text", attrs: dict[str, str] | None = None, form: FormFacts | None = None
):
    """A labelled input."""
    return ElementFacts(
        tag="input", role="textbox", name=label, input_type=kind, editable=True, attrs=attrs or {}, form=form
    )


def form(action: str, *fields: tuple[str, str, str | None], method: str = "post") -> FormFacts:
    """Form facts: (name, type, value) per field."""
    return FormFacts(action=action, method=method, fields=tuple(FormField(n, t, v) for n, t, v in fields))


def act(
    g: Guard,
    kind: str,
    *,
    target: ElementFacts | None = None,
    value: str | None = None,
    url: str = PAGE,
    selector: str | None = None,
) -> Verdict:
    """Judge one action with `g` (the session remembers it if it is allowed)."""
    action = Action(kind=kind, method=f"test.{kind}", selector=selector, value=value)
    return g.check(g.make_step(action, Observation(url=url, target=target)))


def decision(verdict: Verdict) -> str:
    """The decision's value ("allow", "block", "ask", "revise")."""
    return verdict.decision.value


def rules_fired(verdict: Verdict) -> set[str]:
    """The rule kinds with findings in a verdict."""
    return {f.rule for f in verdict.findings}
