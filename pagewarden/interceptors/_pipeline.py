"""The guarded action, written once for both Playwright APIs.

`guarded_action` is a generator: it yields each Playwright call it needs (observe, take a
screenshot, run the action) and gets the result back. `drive_async` awaits the calls,
`drive_sync` makes them directly; the decision logic is shared.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Generator
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pagewarden._calls import drive_async, drive_sync
from pagewarden._url import parse_url
from pagewarden.guard import ActionBlocked, ApprovalRequired, GuardError, RevisionRequired
from pagewarden.interceptors._frames import RefusedMeanwhile, raced, subframe_urls
from pagewarden.interceptors._methods import ActionSpec
from pagewarden.interceptors._request import follow_redirects
from pagewarden.observe import (
    Begin,
    Call,
    ElementFacts,
    EngineMissing,
    FactsUnavailable,
    Finish,
    Observation,
    Running,
    TextSource,
    closed_shadow_facts,
    direct_reader,
    facts_at_point,
    facts_of_focused,
    facts_of_handle,
    facts_of_locator,
    install_script,
    mask_boxes,
    needle_for,
    paint_masks,
    prune_snapshot,
    register_reader,
    stopped_navigations,
    value_sources,
)
from pagewarden.steps import Action, Decision, Finding, Step, Verdict

if TYPE_CHECKING:
    from pagewarden.interceptors._wrappers import Guarded, SharedState

__all__ = ["Begin", "Finish", "Running", "drive_async", "drive_sync", "exception_for", "guarded_action"]

_EXCEPTIONS: dict[Decision, type[GuardError]] = {
    Decision.BLOCK: ActionBlocked,
    Decision.ASK: ApprovalRequired,
    Decision.REVISE: RevisionRequired,
}
_URL_KINDS = frozenset({"goto", "new_page", "request"})
_NEEDS_SOURCES = frozenset({"fill", "type"}) | _URL_KINDS
#: Actions that type into their target: the reader also reports the field itself (mirrors, opacity).
_TYPING = frozenset({"fill", "type", "press", "clear"})
#: An observation note: the reader stopped a navigation the page started after an earlier action.
EARLIER_STOP = "navigation-stopped: "
Pipeline = Generator[Call, Any, Any]


def exception_for(verdict: Verdict, action: str) -> GuardError:
    """The exception for a verdict that stops the action (not redacted: the pipeline raises
    `Guard.stop(step, verdict)`, which is)."""
    return _EXCEPTIONS.get(verdict.decision, ActionBlocked)(verdict, action)


def _arg(
    args: tuple[Any, ...], kwargs: dict[str, Any], where: tuple[int | None, str | None], offset: int
) -> Any:
    index, key = where
    if key is not None and key in kwargs:
        return kwargs[key]
    if index is not None and len(args) > index + offset:
        return args[index + offset]
    return None


def _describe_value(kind: str, value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if kind == "set_input_files":
        items = value if isinstance(value, (list, tuple)) else [value]
        names = [
            str(item.get("name", "?")) if isinstance(item, dict) else Path(str(item)).name for item in items
        ]
        return ", ".join(names)
    if isinstance(value, (list, tuple)):
        return ", ".join(_describe_value(kind, v) or "" for v in value)
    if isinstance(value, dict):
        return ", ".join(f"{k}={v}" for k, v in value.items() if isinstance(v, (str, int, float)))
    if callable(value):
        return getattr(value, "__name__", "callable")
    return str(value)


def _selector_of(locator: Any) -> str | None:
    impl = getattr(locator, "_impl_obj", None)
    selector = getattr(impl, "_selector", None)
    return selector if isinstance(selector, str) else None


def _options(kwargs: dict[str, Any]) -> dict[str, Any]:
    keep = (
        "button",
        "modifiers",
        "click_count",
        "force",
        "position",
        "no_wait_after",
        "trial",
        "strict",
        "timeout",
    )
    return {
        k: v for k, v in kwargs.items() if k in keep and isinstance(v, (str, int, float, bool, list, dict))
    }


def build_action(
    owner: Guarded, name: str, spec: ActionSpec, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Action:
    """The `Action` for a call of `owner.name(*args, **kwargs)`."""
    offset = 1 if spec.target == "selector" else 0
    raw_value = _arg(args, kwargs, spec.value, offset)
    kind = spec.kind
    if name == "set_checked":
        kind = "check" if raw_value else "uncheck"
        raw_value = None
    if kind == "dispatch_event" and raw_value in ("click", "dblclick"):
        kind = "click"
    if kind in ("add_script_tag", "add_style_tag") and raw_value is None:
        raw_value = kwargs.get("url") or kwargs.get("path")
    if kind == "press" and spec.target in ("self", "selector") and raw_value is None:
        raw_value = _arg(args, kwargs, (0, "key"), offset)
    selector: str | None = None
    if spec.target == "selector":
        first = args[0] if args else kwargs.get("selector")
        selector = first if isinstance(first, str) else None
    elif spec.target == "self":
        selector = _selector_of(owner._pw_obj)
    elif spec.target == "point" and len(args) >= 2:
        selector = f"point({args[0]:g},{args[1]:g})"
    elif spec.target == "focused":
        selector = ":focus"
    return Action(
        kind=kind,
        method=f"{owner._pw_type}.{name}",
        selector=selector,
        value=_describe_value(kind, raw_value),
        options=_options(kwargs),
    )


_CLICKS = frozenset({"click", "dblclick", "tap", "check", "uncheck", "drag"})
_ENTER = frozenset({"enter", "numpadenter", "\n", "\r"})


def _key_of(value: str | None) -> str | None:
    """"Enter" or "Space" when a key press (``Shift+Enter``, ``NumpadEnter`` …) is one of them."""
    if not value:
        return None
    key = value if value in ("+", " ") else value.rsplit("+", 1)[-1]
    if key.lower() in _ENTER:
        return "Enter"
    if key in (" ", "Space"):
        return "Space"
    return None


def activation_options(name: str, spec: ActionSpec, action: Action, kwargs: dict[str, Any]) -> dict | None:
    """What the facts reader must resolve the action's activation for (None: nothing activates).

    Clicks (and what clicks underneath: check, drag's press on the source, mouse.down) are
    resolved at Playwright's click point; a dispatched click on the element itself; keys
    (Enter, Space; a typed new line or space) on the element that has the focus.
    """
    kind = action.kind
    if name == "dispatch_event":
        return {"dispatch": True} if kind in ("click", "dblclick") else None
    if kind in _CLICKS:
        position = kwargs.get("source_position") if kind == "drag" else kwargs.get("position")
        point = position if isinstance(position, dict) else None
        return {"force": bool(kwargs.get("force")), "position": point}
    if name == "insert_text":
        return None
    if kind == "press":
        key = _key_of(action.value)
        return {"key": key} if key else None
    if kind == "type" and action.value:
        if "\n" in action.value or "\r" in action.value:
            return {"key": "Enter"}
        if " " in action.value:
            return {"key": "Space"}
    return None


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
                yield Call(page.context.add_init_script, (install_script(lib),))
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
                yield Call(page.context.add_init_script, (install_script(lib),))
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
    target: ElementFacts | None = None
    drop: ElementFacts | None = None
    count: int | None = None
    sources: tuple[TextSource, ...] = ()
    raw = owner._pw_obj
    timeout = kwargs.get("timeout")
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
        elif needle and page is not None:
            try:
                url_path = parse_url(action.value or "").path if action.kind in _URL_KINDS else None
                sources = yield from value_sources(
                    page, needle, ugc_selectors=ugc, lib=lib, path=url_path, engine=engine, direct=direct,
                    meanwhile=meanwhile,
                )  # fmt: skip
            except (FactsUnavailable, EngineMissing):
                raise
            except Exception as exc:  # noqa: BLE001 - mid-navigation pages have no text to search
                notes.append(f"page text unavailable: {type(exc).__name__}")
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
    if shared.guard.snapshot and page is not None:
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


def _pinning_finding(message: str, guidance: str, evidence: dict[str, Any]) -> Finding:
    """The `PW-GUARD/destination_pinning` finding every pinning verdict carries."""
    return Finding(
        policy_id="PW-GUARD",
        rule="destination_pinning",
        message=message,
        risk_level="high",
        score=0.9,
        guidance=guidance,
        evidence=evidence,
    )


def _pinning_block(verdict: Verdict, finding: Finding) -> Verdict:
    """`verdict` turned into a BLOCK led by the pinning `finding`."""
    return replace(
        verdict,
        decision=Decision.BLOCK,
        score=max(verdict.score, 0.9),
        findings=(finding, *verdict.findings),
        explanation=f"[PW-GUARD/destination_pinning] {finding.message}",
        guidance=finding.guidance,
        approved_by=None,
    )


def _destination_changed(step: Step, verdict: Verdict, stop: dict[str, Any]) -> Verdict:
    """The verdict once the page swapped the judged destination and the reader stopped it."""
    message = (
        f"the page changed the {stop.get('how', 'link')}'s destination when it was clicked, from "
        f"{stop.get('expected')} to {stop.get('actual')}; the navigation was stopped"
    )
    finding = _pinning_finding(
        message,
        "The page tried to send you somewhere other than where its link said. Do not retry "
        "it; continue with the user's goal another way, or tell the user.",
        {"expected": stop.get("expected"), "actual": stop.get("actual")},
    )
    return _pinning_block(verdict, finding)


class DocumentWatch:
    """Whether the page's main frame committed a new document while an action ran.

    Playwright's frame `navigated` event says so (`newDocument`); a click that navigated returns
    after that event, so when it came, the judged document (and any navigation its reader
    stopped) is gone and nothing needs asking. When the event cannot be watched (a Playwright
    without it), `replaced` stays False and the guard asks, as before."""

    def __init__(self, page: Any) -> None:
        self.replaced = False
        self._emitter: Any = None
        try:
            frame = page.main_frame
            emitter = getattr(frame, "_impl_obj", frame)._event_emitter
            emitter.on("navigated", self._on_navigated)
            self._emitter = emitter
        except Exception:  # noqa: BLE001 - not watchable: the report is read instead
            self._emitter = None

    def _on_navigated(self, event: Any) -> None:
        if isinstance(event, dict) and event.get("newDocument") is not None and not event.get("error"):
            self.replaced = True

    def close(self) -> None:
        """Stop watching (idempotent)."""
        if self._emitter is not None:
            with contextlib.suppress(Exception):  # already removed
                self._emitter.remove_listener("navigated", self._on_navigated)
            self._emitter = None


def _report_unavailable(step: Step, verdict: Verdict, reason: str) -> Verdict:
    """The verdict when the judged page did not say whether it stopped a navigation (it did
    not answer in time): blocked, so the agent does not take the step as done."""
    message = (
        "the action ran, but the guard could not confirm that the page kept the judged "
        f"destination: {reason}"
    )
    finding = _pinning_finding(
        message,
        "Check where the page is now before going on; if it is not where the link said, "
        "go back or tell the user.",
        {"expected": step.observation.target.href if step.observation.target else None},
    )
    return _pinning_block(verdict, finding)


def _stopped_earlier(step: Step, stops: list[str], guard_mode: str) -> Verdict:
    """The verdict that tells the agent, at its next action, that the page tried to navigate
    by itself after the previous one and the reader stopped it (this action does not run: it
    is heard once, as the network layer's refusals are)."""
    message = (
        "after your previous action the page tried to leave for a site nobody judged ("
        + "; ".join(stops)
        + "); it was stopped"
    )
    finding = _pinning_finding(
        message,
        "The page tried to take you elsewhere by itself; you are still on the same page. "
        "This action did not run: retry it if the task still needs it. If the task needs that "
        "other site, open it with goto, so that it is judged.",
        {"stopped": stops},
    )
    return Verdict(
        decision=Decision.BLOCK,
        score=0.9,
        findings=(finding,),
        explanation=f"[PW-GUARD/destination_pinning] {message}",
        guidance=finding.guidance,
        mode=guard_mode,
        enforced=guard_mode == "enforce",
        step_index=step.index,
    )


def _fail_closed(step: Step, message: str, guard_mode: str) -> Verdict:
    finding = Finding(
        policy_id="PW-GUARD",
        rule="tier:guard",
        message=message,
        risk_level="high",
        score=0.9,
        guidance="The guard could not judge this action, so it did not run. Try again, or ask the user.",
    )
    return Verdict(
        decision=Decision.BLOCK,
        score=0.9,
        findings=(finding,),
        explanation=f"[PW-GUARD] {message}",
        guidance=finding.guidance,
        tier_errors=(message,),
        mode=guard_mode,
        enforced=guard_mode == "enforce",
        step_index=step.index,
    )


def _playwright_would_raise(exc: BaseException) -> bool:
    """Errors the action itself would have raised in the same place (its own timeout while
    waiting for the element, a closed page, a strict-mode violation)."""
    names = {klass.__name__ for klass in type(exc).__mro__}
    if "TimeoutError" in names or "TargetClosedError" in names:
        return True
    return "Error" in names and "strict mode violation" in str(exc)


def _observation_failed(
    guard: Any, owner: Guarded, action: Action, reasoning: str | None, exc: BaseException
) -> BaseException:
    """A trace line for an attempt the guard could not observe (the page navigated or closed,
    the element never came), and the exception the agent gets: the one raw Playwright would
    have raised for the call, or the guard's BLOCK saying what happened."""
    page = owner.page_raw()
    try:
        url = page.url if page is not None else ""
    except Exception:  # noqa: BLE001 - a closed page
        url = ""
    first_line = (str(exc).strip().splitlines() or [""])[0][:300]
    message = f"the page could not be observed before the action: {type(exc).__name__}: {first_line}"
    step = guard.make_step(action, Observation(url=url, notes=(message,)), reasoning)
    verdict = _fail_closed(step, message, guard.mode)
    guard.commit(step, verdict, ran=False)
    if isinstance(exc, GuardError) or _playwright_would_raise(exc):
        return exc
    return guard.stop(step, verdict)


def _tag_tab(network: Any, page: Any, tab: str | None) -> Pipeline:
    """Once per tab, before its first judged action runs: the page sends its tab id to the
    proxy (per-tab grants). A page that cannot be tagged keeps the untagged grants."""
    if page is None or not network.needs_tag(tab):
        return
    watch = getattr(network, "watch_frames", None)
    if watch is not None:
        watch(page)  # which refusals were a frame's (the proxy cannot tell over plain HTTP)
    try:
        yield Call(page.set_extra_http_headers, ({"Accept-Language": network.tab_language(tab)},))
    except Exception:  # noqa: BLE001 - a closed page: its grants stay untagged
        return
    network.tagged(tab, getattr(page, "url", None))


def guarded_action(
    shared: SharedState,
    owner: Guarded,
    name: str,
    spec: ActionSpec,
    method: Any,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    reasoning: str | None,
) -> Pipeline:
    """Observe, judge, then run `method` or raise the guard's exception."""
    guard = shared.guard
    if guard.console is not None:
        # A supervising console may hold the action here (pause, take over) or stop the session.
        yield from guard.console.gate(shared, owner)
    started = time.perf_counter()
    action = build_action(owner, name, spec, args, kwargs)
    reasoning = reasoning if reasoning is not None else shared.take_reasoning()
    network = getattr(guard, "network", None)
    if network is not None and network.has_pending():
        # the network layer refused what the page did after the agent's last action
        raw = owner.page_raw()
        if raw is not None:
            # one round trip to the browser: the request events it sent before (which frame each
            # refused navigation was for) are in before the refusals are judged
            with contextlib.suppress(Exception):
                yield Call(raw.context.cookies, ([_NO_COOKIES],))
        step = guard.make_step(action, Observation(url=getattr(raw, "url", "") or ""), reasoning)
        refused = network.pending_verdict(step, subframe_urls(raw) if raw is not None else frozenset())
        if refused is not None:
            guard.commit(step, refused, ran=False)
            raise guard.stop(step, refused)
    gate = shared.built_gate
    if gate is not None and gate.has_pending():
        # the navigation gate refused a navigation the page started after the last action
        raw = owner.page_raw()
        step = guard.make_step(action, Observation(url=getattr(raw, "url", "") or ""), reasoning)
        refused = gate.pending_verdict(step)
        if refused is not None:
            guard.commit(step, refused, ran=False)
            raise guard.stop(step, refused)
    try:
        observation = yield from _observe(shared, owner, name, spec, action, args, kwargs)
    except Exception as exc:  # noqa: BLE001 - recorded, then raised as Playwright would, or blocked
        raise _observation_failed(guard, owner, action, reasoning, exc) from None
    observed = time.perf_counter()
    step = guard.make_step(action, observation, reasoning)
    unreadable = [n for n in observation.notes if n.startswith("facts-unavailable")]
    earlier = [n[len(EARLIER_STOP) :] for n in observation.notes if n.startswith(EARLIER_STOP)]
    try:
        if unreadable and spec.target != "none":
            verdict = _fail_closed(step, unreadable[0], guard.mode)
        elif earlier and guard.mode == "enforce":
            verdict = _stopped_earlier(step, earlier, guard.mode)
        else:
            # The deterministic tiers, then the model where the cascade consults it.
            verdict = yield from guard.judge(step, owner.page_raw())
    except Exception as exc:  # noqa: BLE001 - never crash the agent; fail closed
        verdict = _fail_closed(step, f"guard error: {type(exc).__name__}: {exc}", guard.mode)
    verdict = _with_timings(verdict, {"observe": round((observed - started) * 1000, 3), **verdict.timings_ms})
    if verdict.decision is Decision.ASK and verdict.enforced:
        approved, problem = yield Call(guard.approval, (verdict, step))
        if problem:
            verdict = guard.approver_problem(verdict, problem)
        if approved:
            verdict = replace(verdict, approved_by="approver")
    screenshot = None
    page = owner.page_raw()
    if guard.screenshots and guard.trace is not None and page is not None:
        path = guard.trace.directory / f"{guard.session_id}-step{step.index:04d}.png"
        try:
            # password fields and fields holding a registered secret are painted over before the
            # picture is written (read before and after the capture; unreadable: no picture)
            engine, reader = shared.reader_engine(page), shared.facts_reader
            before = yield from mask_boxes(page, guard.secrets, engine=engine, lib=reader)
            data = yield Call(page.screenshot, (), {})
            after = yield from mask_boxes(page, guard.secrets, engine=engine, lib=reader)
            path.write_bytes(paint_masks(data, (before, after)))
            screenshot = path.relative_to(guard.trace.path.parent).as_posix()
        except Exception as exc:  # noqa: BLE001 - a failed screenshot must not stop the step
            guard.log.warning("screenshot_failed", error=str(exc))
    if not verdict.allowed:
        guard.commit(step, verdict, ran=False, screenshot=screenshot)
        raise guard.stop(step, verdict)
    call_args = tuple(shared.unwrap(a) for a in args)
    call_kwargs = {k: shared.unwrap(v) for k, v in kwargs.items()}
    if network is not None:
        yield from _tag_tab(network, page, step.observation.tab)
        network.grant(step, verdict)  # the proxy lets this action's navigation through
    elif (gate := shared.built_gate) is not None:
        gate.grant(step, verdict)  # a download this action starts may be saved
    frame_actions = _frame_actions(shared, network, step.observation)
    for each in frame_actions:
        each.began()
    executed = time.perf_counter()
    pinned = (
        activation_options(name, spec, action, kwargs) is not None
        and guard.mode == "enforce"
        and observation.target is not None
        and (observation.target.href is not None or observation.target.is_submit)
        and page is not None
    )
    watch = DocumentWatch(page) if pinned else None
    remembered = False
    gate = shared.built_gate
    signals = [getattr(o, "signal", None) for o in (gate, network) if o is not None]
    method = raced(method, [s for s in signals if s is not None])
    failure: Exception | None = None
    try:
        try:
            if action.kind == "request" and owner._pw_type == "APIRequestContext":
                result = yield from follow_redirects(
                    shared, owner, name, method, call_args, call_kwargs, step
                )
            elif pinned:
                result = yield Call(method, call_args, call_kwargs)
            else:
                # Nothing that comes back changes this verdict: the step goes into session memory
                # while the action is on its way (async API), and into the trace once it has run.
                running = yield Begin(method, call_args, call_kwargs)
                try:
                    guard.remember(step, verdict, ran=True)
                    remembered = True
                finally:
                    result = yield Finish(running)
            if watch is not None:
                watch.close()
            if pinned and not (watch is not None and watch.replaced):
                # The judged document is still there: ask it whether it stopped a navigation. (When
                # a new document replaced it, the navigation went through and nothing is asked.)
                try:
                    stopped = yield from stopped_navigations(
                        page, shared.facts_reader, shared.reader_engine(page), shared.direct_readers.get(page)
                    )
                except FactsUnavailable as exc:
                    verdict = _report_unavailable(step, verdict, str(exc))
                    stopped = []
                except Exception:  # noqa: BLE001 - the page navigated away: nothing was stopped
                    stopped = []
                if stopped:
                    verdict = _destination_changed(step, verdict, stopped[0])
        except Exception as exc:  # noqa: BLE001 - raised below unless a refusal explains it
            failure = exc
        if failure is not None:
            # the action failed (a navigation aborted, or ended early because it waited for one
            # the guard refused): when the page tried to leave the allowed sites meanwhile, the
            # agent hears that, not a bare net::ERR_ABORTED or a timeout. (An action that ran
            # hears of such a refusal at its next call, as before.)
            during = yield from _refused_during(shared, network, step, page, action)
            if during is None and isinstance(failure, RefusedMeanwhile) and failure.task is not None:
                # the refusal that ended the wait was a frame's own (an embed loading: the
                # proxy could not tell at once), not the agent's: the action goes on
                result = yield Call(failure.finish)
            elif during is None:
                raise failure
            elif verdict.decision is not Decision.BLOCK:
                verdict = during
        else:
            # the action ran, but the page, a popup, a meta refresh or a download it set off was
            # refused while it ran (under the proxy a refused navigation commits the refusal
            # page, so the wait ends normally): the action fails with it now, not the next call
            during = yield from _refused_during(shared, network, step, page, action, kinds=_LED_TO)
            if during is not None and verdict.decision is not Decision.BLOCK:
                verdict = during
    finally:
        for each in frame_actions:
            each.ended()
        if watch is not None:
            watch.close()
        verdict.timings_ms["execute"] = round((time.perf_counter() - executed) * 1000, 3)
        if not remembered:
            guard.remember(step, verdict, ran=True)
        guard.report(step, verdict, ran=True, screenshot=screenshot)
    if verdict.decision is Decision.BLOCK and verdict.enforced and verdict.approved_by is None:
        raise guard.stop(step, verdict)
    return shared.wrap(result)


#: a URL no cookie is set for: asking its cookies is a round trip that returns nothing
_NO_COOKIES = "http://round-trip.pagewarden.invalid/"


#: the refusals an action that ran fails with at once: where it led the page (a navigation, a
#: redirect hop, a popup, a meta refresh, a download); the others (data the page sent, a
#: websocket) are told at the next call, as before
_LED_TO = frozenset({"navigation", "redirect", "download"})


def _refused_during(
    shared: SharedState,
    network: Any,
    step: Step,
    page: Any,
    action: Action,
    kinds: frozenset[str] | None = None,
) -> Pipeline:
    """The BLOCK for refusals the agent must hear of that happened while its action ran (the
    page, a popup or a redirect tried to leave the allowed sites), naming where the action
    started from; None when there were none. `kinds` (for an action that ran): only refusals
    of these actions, and only those known to be a tab's (the others stay for the next call)."""
    start = action.value if action.kind in ("goto", "new_page") and action.value else step.observation.url
    verdicts: list[Verdict] = []
    if network is not None and network.has_pending(kinds):
        if page is not None:
            with contextlib.suppress(Exception):  # see the check before the action
                yield Call(page.context.cookies, ([_NO_COOKIES],))
        frames = subframe_urls(page) if page is not None else frozenset()
        tabs_only = kinds is not None
        verdicts.append(network.pending_verdict(step, frames, during=start, kinds=kinds, tabs_only=tabs_only))
    gate = shared.built_gate
    if gate is not None and gate.has_pending(kinds):
        verdicts.append(gate.pending_verdict(step, during=start, kinds=kinds))
    found = [v for v in verdicts if v is not None]
    if not found:
        return None
    first = found[0]
    if len(found) > 1:
        first = replace(first, findings=tuple(f for v in found for f in v.findings))
    return first


def _frame_actions(shared: SharedState, network: Any, observation: Observation) -> list[Any]:
    """The `FrameActions` to tell of an action inside a frame (none for an action on a tab's
    top document): a refused frame navigation while it runs is the agent's, not the page's."""
    target = observation.target
    if target is None:
        return []
    if not (target.frame_content or (target.frame_url and target.frame_url != observation.url)):
        return []
    found = (getattr(o, "frame_actions", None) for o in (shared.built_gate, network) if o is not None)
    return [f for f in found if f is not None]


def _with_timings(verdict: Verdict, timings: dict[str, float]) -> Verdict:
    """`verdict` with its own copy of `timings` (the pipeline adds the action's time to it)."""
    verdict.timings_ms.clear()  # (a fresh dict of this verdict: filled in place, no copy of the verdict)
    verdict.timings_ms.update(timings)
    return verdict
