"""The world model's output, in SafePred's `Prediction` shape plus static facts."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

__all__ = ["Consequence", "Navigation", "Prediction", "Submission"]


class Consequence(StrEnum):
    """How much an action changes the world beyond the page."""

    NONE = "none"  # reading, moving around
    CONSEQUENTIAL = "consequential"  # changes state but can be undone (edit, settings, invite)
    IRREVERSIBLE = "irreversible"  # cannot be undone (delete, pay, send, publish, tokens)


@dataclass(frozen=True, slots=True)
class Navigation:
    """Where the action takes the browser."""

    url: str
    via: str  # link | form | goto | history | reload | script
    method: str = "get"
    new_tab: bool = False
    cross_origin: bool = False
    cross_site: bool = False


@dataclass(frozen=True, slots=True)
class Submission:
    """What a form submission would carry, and where to."""

    url: str
    method: str
    fields: tuple[str, ...] = ()
    carries_password: bool = False
    cross_site: bool = False


@dataclass(frozen=True, slots=True)
class Prediction:
    """What the action will do: SafePred's fields, filled as honestly as the source allows."""

    semantic_delta: str = ""
    element_changes: dict[str, list[str]] = field(default_factory=dict)
    long_term_impact: str = ""
    violated_policy_ids: tuple[str, ...] = ()
    risk_explanation: str = ""
    optimization_guidance: str = ""
    navigation: Navigation | None = None
    submission: Submission | None = None
    consequence: Consequence = Consequence.NONE
    consequence_terms: tuple[str, ...] = ()
    source: str = "static"
