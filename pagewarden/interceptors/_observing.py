"""Observing before an action: the target's facts (direct read, selector engine, point,
focus), the page's tree and value sources, dialogs, and routing through the gate."""

from __future__ import annotations

import contextlib
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from pagewarden._calls import Call
from pagewarden._url import parse_url
from pagewarden.interceptors._methods import ActionSpec
from pagewarden.observe import (
    ElementFacts,
    EngineMissing,
    FactsUnavailable,
    Observation,
    TextSource,
    address_needle,
    closed_shadow_facts,
    direct_reader,
    facts_at_point,
    facts_of_focused,
    facts_of_handle,
    facts_of_locator,
    install_script,
    needle_for,
    prune_snapshot,
    register_reader,
    value_sources,
)
from pagewarden.steps import Action

if TYPE_CHECKING:
    from pagewarden.interceptors._wrappers import Guarded, SharedState
from pagewarden.interceptors._action import (
    _NEEDS_SOURCES,
    _TYPING,
    _URL_KINDS,
    EARLIER_STOP,
    Pipeline,
    _arg,
    activation_options,
)
from pagewarden.interceptors._verdicts import call_timeout

__all__ = []


def _observe(
    shared: SharedState,
    owner: Guarded,
    name: str,
    spec: ActionSpec,
    action: Action,
    args: tuple,
    kwargs: dict,
) -> Pipeline:
    """Gather the observation the deterministic tiers need (a generator of calls)."""
    page = owner.page_raw()
    url = page.url if page is not None else ""
    notes: list[str] = []
    later: dict[str, Any] = {}

    def meanwhile() -> None:
        # What the observation needs besides the read: gathered while the read is on its way.
        if "tabs" in later:
            return
        tabs: tuple[str, ...] = ()
        if page is not None:
            try:
                tabs = tuple(p.url for p in shared.context_of(page).pages)
            except Exception:  # noqa: BLE001 - a closed context has no tabs to list
                tabs = ()
            later["tab"] = shared.tab_id(page)
        later["tabs"] = tabs

    needle = needle_for(action.kind, action.value) if action.kind in _NEEDS_SOURCES else None
    address = address_needle(action.value, url or None) if action.kind in _URL_KINDS else None
    ugc = shared.ugc_selectors
    lib = shared.facts_reader
    field = action.kind in _TYPING
    activate = activation_options(name, spec, action, kwargs)
    # Every activation the guard judges pins the origins it judged until it has run; any other
    # action on an element (hover, focus, typing, a change) pins the page's own origin, so a
    # navigation the page's handlers start in answer to it cannot go elsewhere unjudged.
    # With a network layer, navigations the page's script starts are the proxy's (it refuses and
    # reports them): the reader then pins link and form activations only ("links").
    pin: bool | str = False
    if shared.guard.mode == "enforce" and spec.target not in ("none", "dialog", "chooser"):
        if getattr(shared.guard, "network", None) is not None:
            pin = "links" if activate is not None else False
        else:
            pin = True if activate is not None else "page"
    pending = shared.pending_registration(page) if page is not None else None
    if pending is not None:
        # registered at wrap time: the first action waits for it to have gone through
        ok = yield Call(lambda: pending)
        shared.set_reader_engine(page, bool(ok))
        if not ok:
            notes.append("facts reader engine not registered")
            try:
                shared.keep_undo(page, (yield Call(page.context.add_init_script, (install_script(lib),))))
            except Exception as exc:  # noqa: BLE001 - the inline reader still works without it
                notes.append(f"facts reader not installed: {type(exc).__name__}")
    if page is not None and shared.needs_reader(page):
        # Once per context: the reader as a selector engine in Playwright's utility world
        # (every frame, documents already loaded too, out of the page's reach) …
        try:
            yield Call(register_reader(page.context, lib, shared.mode))
            shared.set_reader_engine(page, True)
        except Exception as exc:  # noqa: BLE001 - older Playwright: the main-world reader
            notes.append(f"facts reader engine not registered: {type(exc).__name__}")
            # … or, failing that, installed before page scripts of every later document run.
            try:
                shared.keep_undo(page, (yield Call(page.context.add_init_script, (install_script(lib),))))
            except Exception as exc2:  # noqa: BLE001 - the inline reader still works without it
                notes.append(f"facts reader not installed: {type(exc2).__name__}")
    if page is not None:
        yield from _route_through_gate(shared, page, notes)
    hosts = shared.pin_hosts_for(url) if pin else None
    engine = shared.reader_engine(page) if page is not None else None
    direct = None
    if engine is not None:
        # the reader over CDP in the same world: one message each way, no selector round trip
        direct = yield from direct_reader(shared.direct_readers, page, engine, shared.mode)
    # Monitor mode never changes when an action starts. An action the browser process runs (a
    # goto, a reload, a history step, a request) does not wait for a navigation the page has
    # started itself and has in progress, but a read of the page would (Chromium holds it until
    # that navigation ends): the page is then not read, and the observation says so. (Enforce
    # mode reads it, after the navigation: the verdict is about the page the action leaves. A
    # goto of the agent's own still on its way is waited for in both modes, as before.)
    unread = (
        shared.guard.mode == "monitor" and spec.target == "none" and direct is not None and direct.navigating
    )
    if unread:
        notes.append("page not read: a navigation the page started was in progress")
    target: ElementFacts | None = None
    drop: ElementFacts | None = None
    count: int | None = None
    sources: tuple[TextSource, ...] = ()
    raw = owner._pw_obj
    timeout = call_timeout(kwargs.get("timeout"))
    stops: list[dict[str, Any]] = []  # navigations the reader stopped after an earlier action

    def read(engine: str | None) -> Pipeline:
        target: ElementFacts | None = None
        drop: ElementFacts | None = None
        count: int | None = None
        sources: tuple[TextSource, ...] = ()
        if spec.target == "self" and owner._pw_type == "Locator":
            target, count, sources = yield from facts_of_locator(
                raw,
                strict=True,
                timeout=timeout,
                needle=needle,
                ugc_selectors=ugc,
                selector=action.selector,
                lib=lib,
                pin=pin,
                field=field,
                activate=activate,
                engine=engine,
                stops=stops,
                hosts=hosts,
                direct=direct,
                meanwhile=meanwhile,
            )
        elif spec.target == "self" and owner._pw_type == "ElementHandle":
            target, sources = yield from facts_of_handle(
                raw, needle=needle, ugc_selectors=ugc, lib=lib, field=field, activate=activate,
                engine=engine, pin=pin, stops=stops, hosts=hosts,
            )  # fmt: skip
        elif spec.target == "selector" and action.selector is not None:
            strict = bool(kwargs.get("strict", False))
            target, count, sources = yield from facts_of_locator(
                raw.locator(action.selector), strict=strict, timeout=timeout, needle=needle,
                ugc_selectors=ugc, selector=action.selector, lib=lib, pin=pin, field=field,
                activate=activate, engine=engine, stops=stops, hosts=hosts, direct=direct,
                meanwhile=meanwhile,
            )  # fmt: skip
        elif spec.target in ("point", "mouse") and page is not None:
            if spec.target == "point":
                x, y = float(args[0]), float(args[1])
            else:
                x, y = shared.mouse_position(page)
            point_activate = None if activate is None else {**activate, "position": None}
            target, sources = yield from facts_at_point(
                page, x, y, needle=needle, ugc_selectors=ugc, lib=lib, field=field,
                activate=point_activate, pointer=spec.target == "mouse", engine=engine, pin=pin,
                stops=stops, hosts=hosts, direct=direct, meanwhile=meanwhile,
            )  # fmt: skip
        elif spec.target == "chooser":
            target, sources = yield from facts_of_handle(
                raw.element, needle=needle, ugc_selectors=ugc, lib=lib, engine=engine
            )
        elif spec.target == "dialog":
            target = _dialog_facts(raw)
        elif spec.target == "focused" and page is not None:
            target, sources = yield from facts_of_focused(
                page, needle=needle, ugc_selectors=ugc, lib=lib, field=field, activate=activate,
                engine=engine, pin=pin, stops=stops, hosts=hosts, direct=direct,
                meanwhile=meanwhile,
            )  # fmt: skip
        elif (needle or address) and page is not None and not unread:
            try:
                url_path = parse_url(action.value or "").path if action.kind in _URL_KINDS else None
                sources = yield from value_sources(
                    page, needle or "", ugc_selectors=ugc, lib=lib, path=url_path, engine=engine,
                    direct=direct, meanwhile=meanwhile, address=address,
                )  # fmt: skip
            except (FactsUnavailable, EngineMissing):
                raise
            except Exception as exc:  # noqa: BLE001 - mid-navigation pages have no text to search
                notes.append(f"page text unavailable: {type(exc).__name__}")
        if address is not None and not sources:
            # a new tab, or a request context of no page: the address may come from the tabs
            # the agent was reading
            for other in _reading_tabs(shared, owner, page, url):
                try:
                    sources = yield from value_sources(
                        other, needle or "", ugc_selectors=ugc, lib=lib, engine=shared.reader_engine(other),
                        address=address,
                    )  # fmt: skip
                except Exception as exc:  # noqa: BLE001 - a tab navigating or closing: not read
                    notes.append(f"another tab's text unavailable: {type(exc).__name__}")
                if sources:
                    break
        if spec.drop is not None:
            drop_arg = _arg(args, kwargs, spec.drop, 1 if spec.target == "selector" else 0)
            if isinstance(drop_arg, str) and hasattr(raw, "locator"):
                drop, _, _ = yield from facts_of_locator(
                    raw.locator(drop_arg), strict=False, ugc_selectors=ugc, lib=lib, engine=engine
                )
            elif drop_arg is not None:
                drop_raw = getattr(drop_arg, "_pw_obj", drop_arg)
                drop, _, _ = yield from facts_of_locator(
                    drop_raw, strict=True, ugc_selectors=ugc, lib=lib, engine=engine
                )
        return target, drop, count, sources

    try:
        try:
            target, drop, count, sources = yield from read(engine)
        except EngineMissing:
            # Playwright had set up this document's utility world before the reader's engine
            # was registered: the main-world reader reads it (patchable; no pinning there).
            shared.mark_engine_missing(page)
            notes.append("facts read in the page's own world: the document predates the guard's reader")
            if page is not None:
                # installed once in this document (one round trip now, none re-sending it later)
                try:
                    yield Call(page.evaluate, (install_script(lib).rstrip().rstrip(";"),))
                except Exception as exc:  # noqa: BLE001 - the inline reader still works
                    notes.append(f"facts reader not installed: {type(exc).__name__}")
            target, drop, count, sources = yield from read(None)
    except FactsUnavailable as exc:
        notes.append(f"facts-unavailable: {exc}")
    if target is not None and target.shadow_probe and page is not None:
        # the click point may show a closed shadow root's content: read it there over CDP
        try:
            target = yield from closed_shadow_facts(shared.cdp_sessions, page, target)
        except Exception as exc:  # noqa: BLE001 - not Chromium, or the page changed: pin and gate remain
            target = replace(target, shadow_probe=None)
            notes.append(f"closed shadow root not read: {type(exc).__name__}")
    notes.extend(f"{EARLIER_STOP}{s.get('how', 'navigation')} to {s.get('actual')}" for s in stops[:4])
    title: str | None = None
    snapshot: str | None = None
    if shared.guard.snapshot and page is not None and not unread:
        try:
            title = yield Call(page.title)
            raw_snapshot = yield Call(page.aria_snapshot, (), {"mode": "ai"})
            snapshot = prune_snapshot(raw_snapshot, focus=target.label if target is not None else "")
        except Exception as exc:  # noqa: BLE001 - the snapshot is optional context
            notes.append(f"snapshot unavailable: {type(exc).__name__}")
    meanwhile()  # (done already when the read was sent over CDP)
    return Observation(
        url=url,
        title=title,
        aria_snapshot=snapshot,
        tabs=later["tabs"],
        tab=later.get("tab"),
        target=target,
        target_count=count,
        drop_target=drop,
        value_sources=sources,
        notes=tuple(notes),
    )


#: how many other tabs a typed address is looked for in
_OTHER_TABS = 3


def _reading_tabs(shared: SharedState, owner: Guarded, page: Any, url: str) -> list[Any]:
    """The tabs whose text may have given an address the agent opens from `page`: none when
    `page` shows a page of its own (the agent reads that one), else the context's other tabs
    showing a page, latest first (a new tab; ``context.request``, which has no page)."""
    if page is not None and parse_url(url or "about:blank").host:
        return []
    try:
        if page is not None:
            context = shared.context_of(page)
        else:
            parent = getattr(owner, "_pw_parent", None)
            context = parent if type(parent).__name__ == "BrowserContext" else None
        pages = list(context.pages) if context is not None else []
    except Exception:  # noqa: BLE001 - a closed context has no tabs
        return []
    shown = [p for p in pages if p is not page and parse_url(getattr(p, "url", "") or "about:blank").host]
    return list(reversed(shown))[:_OTHER_TABS]


def _route_through_gate(shared: SharedState, page: Any, notes: list[str]) -> Pipeline:
    """Make sure `page`'s context is routed through the navigation gate before the action runs
    (the routing started at wrap time is awaited; a context not routed yet is routed now)."""
    pending = shared.pending_gate(page)
    if pending is not None:
        ok = yield Call(lambda: pending)
        gate = shared.gate
        if not ok and gate is not None:
            gate.uninstalled(page.context)
    call = shared.gate_install(page)
    if call is None:
        return
    try:
        yield Call(call)
    except Exception as exc:  # noqa: BLE001 - a closed context; the next action tries again
        gate = shared.gate
        if gate is not None:
            with contextlib.suppress(Exception):
                gate.uninstalled(page.context)
        notes.append(f"navigation gate not installed: {type(exc).__name__}")


def _dialog_facts(dialog: Any) -> ElementFacts:
    """A JavaScript dialog (alert, confirm, prompt, beforeunload) as the element acted on."""
    message = str(dialog.message or "")
    return ElementFacts(
        tag="dialog",
        role="alertdialog",
        name=message[:200],
        text=message[:400],
        in_dialog=True,
        region="dialog",
        context_text=message[:1200],
        attrs={"type": str(dialog.type)},
        selector=f"dialog:{dialog.type}",
    )
