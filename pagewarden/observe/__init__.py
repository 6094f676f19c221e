"""Observation: what the page looks like before an action (facts, aria snapshot)."""

from pagewarden.observe._direct import direct_reader
from pagewarden.observe._gather import (
    EngineMissing,
    FactsUnavailable,
    address_needle,
    facts_at_point,
    facts_of_focused,
    facts_of_handle,
    facts_of_locator,
    install_script,
    needle_for,
    register_reader,
    stopped_navigations,
    value_sources,
)
from pagewarden.observe._mask import MaskBoxes, MaskUnavailable, mask_boxes, paint_masks
from pagewarden.observe._prune import prune_snapshot
from pagewarden.observe._shadow import closed_shadow_facts
from pagewarden.steps import (
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
    "EngineMissing",
    "FactsUnavailable",
    "FieldFacts",
    "FormFacts",
    "FormField",
    "MaskBoxes",
    "MaskUnavailable",
    "Observation",
    "OverlayFacts",
    "TextSource",
    "address_needle",
    "closed_shadow_facts",
    "direct_reader",
    "facts_at_point",
    "facts_of_focused",
    "facts_of_handle",
    "facts_of_locator",
    "install_script",
    "mask_boxes",
    "needle_for",
    "paint_masks",
    "prune_snapshot",
    "register_reader",
    "stopped_navigations",
    "value_sources",
]
