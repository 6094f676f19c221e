"""What the guard knows about the page before an action: `Observation` and `ElementFacts`.

These are plain frozen data (no Playwright inside): the sans-I/O judging core reads them,
traces record them, and `Step.from_dict` rebuilds them from a trace line.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["ElementFacts", "FormFacts", "FormField", "Observation", "TextSource"]


@dataclass(frozen=True, slots=True)
class FormField:
    """One field a form submission would carry."""

    name: str
    type: str = "text"
    value: str | None = None


@dataclass(frozen=True, slots=True)
class FormFacts:
    """Where and how the element's form submits.

    `action` is absolute. When the form (and the submitter) has no ``action`` attribute the
    submission goes to the document URL: `action` is then that URL and `action_explicit`
    is False (``form.action`` alone cannot tell the two apart).
    """

    action: str
    method: str = "get"
    action_explicit: bool = True
    target: str | None = None
    fields: tuple[FormField, ...] = ()


@dataclass(frozen=True, slots=True)
class TextSource:
    """A place in the page where a value (typed text, a URL) occurs, with its surroundings."""

    snippet: str
    in_ugc: bool = False
    hidden: bool = False
    in_dialog: bool = False
    kind: str = "text"  # text | href | attribute


@dataclass(frozen=True, slots=True)
class ElementFacts:
    """Facts about the target element, read from the live DOM just before acting."""

    tag: str
    role: str | None = None
    name: str = ""  # accessible name (aria-labelledby, aria-label, label, alt, title, text)
    text: str = ""  # rendered text (innerText)
    hidden_text: str = ""  # text in the DOM that is not rendered
    aria_text: str = ""  # aria-label / aria-description / title / alt
    attrs: dict[str, str] = field(default_factory=dict)
    href: str | None = None  # absolute URL of the enclosing link
    link_target: str | None = None  # the link's target attribute (_blank …)
    download: bool = False
    form: FormFacts | None = None
    is_submit: bool = False
    input_type: str | None = None
    value: str | None = None
    editable: bool = False
    visible: bool = True
    hidden_reason: str | None = None
    in_ugc: bool = False
    ugc_selector: str | None = None
    in_dialog: bool = False
    overlay_in_ugc: bool = False  # the pop-up/overlay itself sits inside user content (forged UI)
    region: str | None = None  # main | navigation | banner | contentinfo | complementary | dialog
    context_text: str = ""  # text of the neighbourhood, hidden text included
    frame_url: str | None = None
    selector: str | None = None

    @property
    def label(self) -> str:
        """The best short human label: accessible name, else text, else tag."""
        return self.name or self.text or self.attrs.get("value", "") or self.tag


@dataclass(frozen=True, slots=True)
class Observation:
    """The page as the guard saw it before the action."""

    url: str
    title: str | None = None
    tabs: tuple[str, ...] = ()
    aria_snapshot: str | None = None
    target: ElementFacts | None = None
    target_count: int | None = None
    drop_target: ElementFacts | None = None
    value_sources: tuple[TextSource, ...] = ()
    notes: tuple[str, ...] = ()
