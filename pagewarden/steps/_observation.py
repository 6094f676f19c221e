"""What the guard knows about the page before an action: `Observation` and `ElementFacts`.

These are plain frozen data (no Playwright inside): the sans-I/O judging core reads them,
traces record them, and `Step.from_dict` rebuilds them from a trace line.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = [
    "ElementFacts",
    "FieldFacts",
    "FormFacts",
    "FormField",
    "Observation",
    "OverlayFacts",
    "TextSource",
]


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
class FieldFacts:
    """The field itself, for typing: how visible it is and whether another field mirrors it.

    A mirror is another visible field with the same accessible name; `mirror_form_action` is
    where the first mirror in another form posts (None when no mirror sits in another form).
    """

    opacity: float = 1.0  # effective opacity (the product over the ancestors)
    width: int = 0
    height: int = 0
    mirrors: int = 0
    mirror_form_action: str | None = None
    mirror_in_form: bool = False


@dataclass(frozen=True, slots=True)
class OverlayFacts:
    """The box over the page the element sits in (fixed, sticky, dialog, popover, raised).

    `agent_opened` is True when the box appeared or changed within seconds after the agent's
    own input in this document, False when the page put it there by itself, None when the
    reader could not tell (a document without the installed reader).
    """

    kind: str  # dialog | popover | fixed | sticky | absolute
    area: float = 0.0  # share of the viewport it covers
    agent_opened: bool | None = None
    links: int = 0
    same_origin_links: int = 0
    controls: int = 0
    landmark: bool = False  # inside header / nav / footer
    text: str = ""


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
    pings: tuple[str, ...] = ()  # hyperlink-auditing (`<a ping>`) URLs the link also requests
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
    overlay: OverlayFacts | None = None  # the box over the page it sits in, if any
    closes: bool = False  # built as a close control (dismiss attributes, dialog form, close id/class)
    field: FieldFacts | None = None  # for typing: the field's own visibility and mirrors
    #: how the action reaches this element when it is not the one pointed at (the click point
    #: hits a child or an overlay, a label passes the click on, Enter submits through the
    #: form's default button …); None when the action acts on the pointed element itself
    activation: str | None = None
    pointed: str | None = None  # the element pointed at, when the activated one differs
    #: the URL of a frame whose content (unreadable: another origin) the action lands in
    frame_content: str | None = None
    #: ``"x,y"``: the click point may be over a closed shadow root's content (which no script
    #: reads): the guard reads it there over CDP before judging (`observe._shadow`)
    shadow_probe: str | None = None

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
    tab: str | None = None  # which tab of the session acted (stable id), for per-tab memory
    aria_snapshot: str | None = None
    target: ElementFacts | None = None
    target_count: int | None = None
    drop_target: ElementFacts | None = None
    value_sources: tuple[TextSource, ...] = ()
    notes: tuple[str, ...] = ()
