"""The static world model: predict an action's effect from the DOM facts alone.

It answers what the DOM can answer honestly — where a click navigates (link, form
submission with its method and target, new tab), whether that is another origin or site,
what a submission would carry, and whether the action is consequential or irreversible
(by what the element says and where it posts). It does not guess what a page's scripts do.
"""

from __future__ import annotations

import re

from pagewarden._url import parse_url, same_site
from pagewarden.steps import Consequence, ElementFacts, Navigation, Prediction, Step, Submission

__all__ = ["SCRIPT_KINDS", "classify_consequence", "predict_static"]

# Terms on an element (or in the path a form posts to) that mark the action's consequence.
_IRREVERSIBLE = (
    "delete",
    "remove",
    "destroy",
    "erase",
    "purge",
    "wipe",
    "drop",
    "terminate",
    "pay",
    "pay now",
    "purchase",
    "buy",
    "place order",
    "checkout",
    "check out",
    "confirm order",
    "send",
    "transfer",
    "withdraw",
    "wire",
    "publish",
    "merge",
    "revoke",
    "deactivate",
    "close account",
    "deploy token",
    "access token",
    "create token",
    "generate token",
    "new token",
    "create key",
    "deploy key",
    "api key",
    "grant",
    "make owner",
    "transfer ownership",
    "empty trash",
    "unpublish",
    "force push",
)
_CONSEQUENTIAL = (
    "submit",
    "save",
    "update",
    "edit",
    "change",
    "settings",
    "preferences",
    "invite",
    "add member",
    "members",
    "assign",
    "create",
    "new project",
    "archive",
    "close",
    "reopen",
    "enable",
    "disable",
    "approve",
    "reject",
    "upload",
    "comment",
    "reply",
    # "post" names the same act as "comment" / "reply" (and is a noun in "upvote post 12"):
    # a post on the site can be edited or deleted there. What it carries is judged apart
    # (typed data the goal does not contain, a submission to another site).
    "post",
    "like",
    "upvote",
    "downvote",
    "vote",
    "follow",
    "subscribe",
    "unsubscribe",
    "star",
    "reset",
    "rename",
    "move",
    "share",
    "permission",
    "role",
    "visibility",
    "password",
    "confirm",
    "accept",
    "apply",
    "add to cart",
    "register",
    "sign up",
    "log out",
)


def _term_pattern(terms: tuple[str, ...]) -> re.Pattern[str]:
    alternation = "|".join(
        re.escape(t).replace(r"\ ", r"[\s_\-]+") for t in sorted(terms, key=len, reverse=True)
    )
    return re.compile(rf"(?<![a-z0-9])(?:{alternation})(?![a-z0-9])", re.IGNORECASE)


_IRREVERSIBLE_RE = _term_pattern(_IRREVERSIBLE)
_CONSEQUENTIAL_RE = _term_pattern(_CONSEQUENTIAL)

#: Action kinds that run code in the page or change how it talks to the network.
SCRIPT_KINDS = frozenset(
    {
        "evaluate",
        "add_script_tag",
        "add_style_tag",
        "add_init_script",
        "expose_function",
        "set_content",
        "route",
        "network_config",
        "cdp",
        "unclassified",
    }
)
_ACTIVATING = frozenset({"click", "dblclick", "tap", "accept_dialog"})


def classify_consequence(*texts: str) -> tuple[Consequence, tuple[str, ...]]:
    """Consequence of acting on something described by `texts`, and the terms that said so."""
    joined = " | ".join(t for t in texts if t)
    if not joined:
        return Consequence.NONE, ()
    hits = tuple(dict.fromkeys(m.group(0).lower() for m in _IRREVERSIBLE_RE.finditer(joined)))
    if hits:
        return Consequence.IRREVERSIBLE, hits
    hits = tuple(dict.fromkeys(m.group(0).lower() for m in _CONSEQUENTIAL_RE.finditer(joined)))
    if hits:
        return Consequence.CONSEQUENTIAL, hits
    return Consequence.NONE, ()


def _navigation(
    url: str, via: str, page_url: str, *, method: str = "get", new_tab: bool = False
) -> Navigation:
    dest = parse_url(url, page_url or None)
    here = parse_url(page_url or "about:blank")
    cross_origin = dest.origin != here.origin
    return Navigation(
        url=dest.url,
        via=via,
        method=method,
        new_tab=new_tab,
        cross_origin=cross_origin,
        cross_site=cross_origin and not same_site(dest.host, here.host),
    )


def _submission(el: ElementFacts, page_url: str) -> Submission | None:
    form = el.form
    if form is None:
        return None
    dest = parse_url(form.action, page_url or None)
    here = parse_url(page_url or "about:blank")
    return Submission(
        url=dest.url,
        method=form.method,
        fields=tuple(f.name for f in form.fields if f.name),
        carries_password=any(f.type == "password" and f.value for f in form.fields),
        cross_site=bool(dest.host) and not same_site(dest.host, here.host),
    )


def _element_texts(el: ElementFacts) -> tuple[str, ...]:
    return (el.name, el.text[:200], el.attrs.get("value", ""), el.aria_text, el.attrs.get("id", ""))


def predict_static(step: Step) -> Prediction:
    """What `step`'s action will do, as far as the DOM facts tell."""
    action = step.action
    obs = step.observation
    el = obs.target
    kind = action.kind
    page_url = obs.url

    navigation: Navigation | None = None
    submission: Submission | None = None
    delta = ""
    impact = ""
    changes: dict[str, list[str]] = {}
    consequence, terms = Consequence.NONE, ()

    if kind in ("goto", "new_page", "request") and action.value:
        navigation = _navigation(action.value, "goto" if kind == "new_page" else kind, page_url)
        delta = f"{'sends a request to' if kind == 'request' else 'loads'} {navigation.url}"
    elif kind in ("go_back", "go_forward"):
        delta = f"moves {kind.removeprefix('go_')} in the tab's history"
    elif kind == "reload":
        navigation = _navigation(page_url, "reload", page_url) if page_url else None
        delta = "reloads the page; unsaved input is lost"
    elif kind in SCRIPT_KINDS:
        consequence, terms = Consequence.CONSEQUENTIAL, (kind,)
        delta = f"runs {kind} in the page: arbitrary effects the DOM cannot predict"
        impact = "scripts can read and send anything the page can reach"
    elif el is not None:
        label = el.label[:80]
        # `activation` is set when the facts reader resolved what the action activates (the
        # click point's element, Enter / Space on the focused one, a check() on a link …).
        activates = el.activation is not None and bool(el.href or el.is_submit or el.frame_content)
        if (
            kind in _ACTIVATING
            or activates
            or (kind == "press" and (action.value or "").lower() in ("enter", "numpadenter"))
        ):
            if el.href and (kind in _ACTIVATING or activates):
                new_tab = el.link_target == "_blank" or bool(action.options.get("modifiers"))
                if parse_url(el.href).scheme == "javascript":
                    consequence, terms = Consequence.CONSEQUENTIAL, ("javascript: link",)
                    delta = f"runs the javascript: link {label!r}"
                else:
                    navigation = _navigation(el.href, "link", page_url, new_tab=new_tab)
                    delta = f"follows link {label!r} to {navigation.url}" + (
                        " in a new tab" if new_tab else ""
                    )
            # Enter in a single-line field submits its form (implicit submission); in a
            # textarea or a contenteditable it types a new line.
            enter_submits = kind == "press" and el.editable and el.tag == "input" and el.activation is None
            submits = el.form is not None and (el.is_submit or enter_submits)
            if submits:
                submission = _submission(el, page_url)
                if submission is not None and el.form is not None:
                    navigation = navigation or _navigation(
                        el.form.action,
                        "form",
                        page_url,
                        method=submission.method,
                        new_tab=el.form.target == "_blank",
                    )
                    delta = f"submits the form ({submission.method.upper()}) to {submission.url}"
                    if submission.method == "post":
                        consequence, terms = Consequence.CONSEQUENTIAL, ("form post",)
            texts = _element_texts(el)
            if submission is not None:
                texts = (*texts, parse_url(submission.url).path)
            found, found_terms = classify_consequence(*texts)
            if found is Consequence.IRREVERSIBLE or (
                found is Consequence.CONSEQUENTIAL and consequence is Consequence.NONE
            ):
                consequence, terms = found, found_terms
            if el.frame_content and not delta:
                origin = parse_url(el.frame_content).origin
                delta = f"{kind}s into a frame of {origin} (its content cannot be read)"
            if not delta:
                delta = f"{kind}s {el.role or el.tag} {label!r}"
            if el.pointed:
                delta += f" (pointed at {el.pointed}; {el.activation or 'activates this element'})"
        elif kind in ("fill", "type", "clear"):
            shown = "" if kind == "clear" else f"{len(action.value or '')} characters"
            delta = f"sets field {label!r}" + (f" to {shown}" if shown else " to empty")
            changes = {"changed": [label]}
            if el.form is not None:
                submission = _submission(el, page_url)
        elif kind in ("check", "uncheck", "select_option"):
            delta = f"{kind.replace('_', ' ')} on {label!r}"
            changes = {"changed": [label]}
            found, found_terms = classify_consequence(*_element_texts(el))
            if found is not Consequence.NONE:
                consequence, terms = Consequence.CONSEQUENTIAL, found_terms
        elif kind == "set_input_files":
            delta = f"attaches files to {label!r}"
            consequence, terms = Consequence.CONSEQUENTIAL, ("upload",)
            if el.form is not None:
                submission = _submission(el, page_url)
        else:
            delta = f"{kind} on {el.role or el.tag} {label!r}"

    if navigation is not None and navigation.cross_site:
        impact = (impact + "; " if impact else "") + f"leaves this site for {parse_url(navigation.url).host}"
    if submission is not None and submission.cross_site and kind in _ACTIVATING | {"press"}:
        impact = (impact + "; " if impact else "") + "sends form data to another site"
    if consequence is Consequence.IRREVERSIBLE:
        impact = (impact + "; " if impact else "") + f"cannot be undone ({', '.join(terms)})"
    elif consequence is Consequence.CONSEQUENTIAL and not impact:
        impact = f"changes state ({', '.join(terms)})"

    return Prediction(
        semantic_delta=delta,
        element_changes=changes,
        long_term_impact=impact,
        navigation=navigation,
        submission=submission,
        consequence=consequence,
        consequence_terms=terms,
        source="static",
    )
