"""The data the layers pass to each other: what the agent does (`Action`, `Step`), what the
world model expects of it (`Prediction`), what the guard decides (`Verdict`, `Finding`,
`Decision`) and what it tells its watchers (`GuardEvent`, `EventBus`).

What the guard saw of the page (`Observation`, `ElementFacts` …) is here too: the browser
adapter fills these, the core reads them. The bottom of the decision core: it imports
nothing of pagewarden but serialisation helpers, so every layer above may use it."""

from pagewarden.steps._events import EventBus, EventSink, GuardEvent
from pagewarden.steps._observation import (
    ElementFacts,
    FieldFacts,
    FormFacts,
    FormField,
    Observation,
    OverlayFacts,
    TextSource,
)
from pagewarden.steps._prediction import Consequence, Navigation, Prediction, Submission
from pagewarden.steps._step import Action, DataFormatError, PreviousStep, Step
from pagewarden.steps._verdict import Decision, Finding, Verdict

__all__ = [
    "Action",
    "Consequence",
    "DataFormatError",
    "Decision",
    "ElementFacts",
    "EventBus",
    "EventSink",
    "FieldFacts",
    "Finding",
    "FormFacts",
    "FormField",
    "GuardEvent",
    "Navigation",
    "Observation",
    "OverlayFacts",
    "Prediction",
    "PreviousStep",
    "Step",
    "Submission",
    "TextSource",
    "Verdict",
]
