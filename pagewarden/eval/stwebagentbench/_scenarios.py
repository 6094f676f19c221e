"""Scenario building blocks: simulated steps, sites and pages, and the two views of a
step — a trace record in the benchmark's shape, and a pagewarden `Step`."""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Any

from pagewarden.eval.stwebagentbench._dom import Page, element_facts
from pagewarden.observe import Observation
from pagewarden.policies.importers import BenchmarkPolicy
from pagewarden.steps import Action

__all__ = [
    "SITES",
    "Scenario",
    "SimStep",
    "Site",
    "Widget",
    "page_with",
    "to_action",
    "to_observation",
    "to_record",
]


@dataclass(frozen=True, slots=True)
class Site:
    """A benchmark site: where it lives and pages an agent would work on."""

    name: str
    base: str
    work_paths: tuple[str, ...]
    title: str


SITES: dict[str, Site] = {
    "gitlab": Site(
        "gitlab",
        "http://gitlab.test:8023",
        (
            "/byteblaze/planner/-/issues",
            "/byteblaze/planner",
            "/dashboard/projects",
            "/byteblaze/planner/-/tree/main",
        ),
        "GitLab",
    ),
    "suitecrm": Site(
        "suitecrm",
        "http://crm.test:8080",
        ("/#/home", "/#/calendar/index", "/#/tasks/index", "/#/notes/index"),
        "SuiteCRM",
    ),
    "shopping_admin": Site(
        "shopping_admin",
        "http://shop.test:7780",
        ("/admin/dashboard", "/admin/catalog/product", "/admin/dashboard/index"),
        "Magento Admin",
    ),
}


@dataclass(frozen=True, slots=True)
class Widget:
    """An element to put on a page: its key, its HTML (with ``{key}`` marking it)."""

    key: str
    markup: str


def _mark(widget: Widget) -> str:
    return widget.markup.replace("{key}", f'data-gen="{html.escape(widget.key, quote=True)}"')


def page_with(url: str, widgets: list[Widget], title: str = "Page") -> Page:
    """A page at `url` holding `widgets` (in order) in its main region."""
    body = (
        '<nav aria-label="Main"><a href="/" data-gen="nav-home">Home</a></nav>'
        f"<main><h1>{html.escape(title)}</h1>"
        + "".join(f"<div>{_mark(w)}</div>" for w in widgets)
        + "</main>"
    )
    return Page(url=url, body=body, title=title)


@dataclass(frozen=True, slots=True)
class SimStep:
    """One simulated action: its kind (pagewarden's name), page before, target, value, page after."""

    kind: str
    page: Page
    key: str | None = None
    value: str | None = None
    after: Page | None = None

    @property
    def page_after(self) -> Page:
        """The page the agent is on after this step."""
        return self.after or self.page


@dataclass(frozen=True, slots=True)
class Scenario:
    """A trajectory built to violate or comply with one policy; its last step is the sample."""

    policy: BenchmarkPolicy
    intent: str  # "violate" | "comply"
    variant: str
    steps: tuple[SimStep, ...]


_BROWSERGYM = {"finish": "answer"}


def to_record(step: SimStep) -> dict[str, Any]:
    """The step as a trace record in ST-WebAgentBench's shape."""
    kind = _BROWSERGYM.get(step.kind, step.kind)
    info: dict[str, Any] = {}
    args: list[Any]
    if step.key is not None:
        element = step.page.element(step.key)
        bid = element.get("bid")
        info = {"element_text": element.text_content(), "element_bid": bid}
        args = [bid] if step.value is None else [bid, step.value]
    else:
        args = [] if step.value is None else [step.value]
    observation = {"url": step.page.url, "open_pages_urls": [step.page.url]}
    return {
        "action": {"action_type": kind, "action_args": args},
        "state": {"info": info, "observation": observation},
    }


_METHODS = {
    "click": "Locator.click",
    "fill": "Locator.fill",
    "select_option": "Locator.select_option",
    "press": "Locator.press",
    "goto": "Page.goto",
    "send_msg_to_user": "Guard.message_user",
    "finish": "finish",
}


def to_action(step: SimStep) -> Action:
    """The step as the action pagewarden judges."""
    selector = f"[bid='{step.page.bid(step.key)}']" if step.key is not None else None
    return Action(
        kind=step.kind, method=_METHODS.get(step.kind, step.kind), selector=selector, value=step.value
    )


def to_observation(step: SimStep) -> Observation:
    """What pagewarden's observer would see before the step."""
    target = element_facts(step.page, step.page.element(step.key)) if step.key is not None else None
    return Observation(
        url=step.page.url,
        title=step.page.title,
        target=target,
        target_count=1 if target is not None else None,
    )
