"""Observation: what the page looks like before an action (facts, aria snapshot)."""

from pagewarden.observe._facts import ElementFacts, FormFacts, FormField, Observation, TextSource

__all__ = ["ElementFacts", "FormFacts", "FormField", "Observation", "TextSource"]
