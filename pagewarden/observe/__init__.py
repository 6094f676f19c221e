"""Observation: what the page looks like before an action (facts, aria snapshot)."""

from pagewarden.observe._facts import (
    ElementFacts,
    FieldFacts,
    FormFacts,
    FormField,
    Observation,
    OverlayFacts,
    TextSource,
)

__all__ = [
    "ElementFacts",
    "FieldFacts",
    "FormFacts",
    "FormField",
    "Observation",
    "OverlayFacts",
    "TextSource",
]
