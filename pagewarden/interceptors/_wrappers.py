"""Guarded stand-ins for Playwright objects (async and sync API alike).

A `Guarded` object forwards attribute access to the Playwright object it wraps. Action
methods (see `_methods.py`) run through the guard; read-only ones pass straight through;
anything returned that can act (pages, frames, locators, handles, keyboards, contexts …)
comes back guarded too, including event payloads (popups) and `expect_*` values. The
stand-ins report the wrapped object's class, so `isinstance(page, Page)` and Playwright's
`expect(locator)` keep working.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
import secrets
import types
import weakref
from collections.abc import Callable
from typing import Any

from pagewarden._calls import drive_async, drive_sync
from pagewarden.guard import Guard, GuardReleased
from pagewarden.interceptors._convert import arity, convert, holds
from pagewarden.interceptors._errors import without_guard_frames
from pagewarden.interceptors._gate import NavigationGate, keep_dispose, page_site, pin_hosts
from pagewarden.interceptors._methods import READ_ONLY, ActionSpec, spec_for
from pagewarden.interceptors._pipeline import guarded_action
from pagewarden.interceptors._release import release_steps
from pagewarden.rules import EgressRules
from pagewarden.rules.provenance import InstructionProvenance
from pagewarden.steps import Verdict

__all__ = ["Guarded", "GuardedPage", "SharedState"]

_PLAYWRIGHT_MODULES = ("playwright.async_api._generated", "playwright.sync_api._generated")
_WRAPPED_TYPES = frozenset(READ_ONLY) | {"Page"}
_CACHED_TYPES = frozenset({"Page", "Frame", "BrowserContext", "Browser", "Keyboard", "Mouse", "Touchscreen"})
_UNCLASSIFIED = ActionSpec("unclassified", target="none")
_PLAIN = frozenset({str, bytes, int, float, bool, type(None)})
#: objects whose routes the agent can add and remove (the gate stays ahead of them)
_ROUTED = frozenset({"Page", "BrowserContext"})
_UNROUTE = frozenset({"unroute", "unroute_all"})


def _type_name(obj: Any) -> str | None:
    cls = type(obj)
    if cls.__module__ in _PLAYWRIGHT_MODULES:
        for klass in cls.__mro__:
            if klass.__name__ in _WRAPPED_TYPES and klass.__module__ in _PLAYWRIGHT_MODULES:
                return klass.__name__
    return None


class SharedState:
    """What all wrappers of one guarded session share: the guard, the API mode, caches."""

    def __init__(self, guard: Guard, mode: str) -> None:
        self.guard = guard
        self.mode = mode  # "async" | "sync"
        self.drive = drive_async if mode == "async" else drive_sync
        self.pending_reasoning: str | None = None
        #: name of the facts reader this session installs in its contexts (unguessable by pages)
        self.facts_reader = f"__pw_{secrets.token_hex(8)}"
        self._readers: weakref.WeakSet[Any] = weakref.WeakSet()
        self._engines: weakref.WeakKeyDictionary[Any, bool] = weakref.WeakKeyDictionary()
        self._missing: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()
        self._pending: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()
        self._cache: weakref.WeakKeyDictionary[Any, Guarded] = weakref.WeakKeyDictionary()
        self._handler_memo = _HandlerMemo()
        self._route_memo = _HandlerMemo()
        self._mouse: weakref.WeakKeyDictionary[Any, tuple[float, float]] = weakref.WeakKeyDictionary()
        self._tabs: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()
        self._tabs_seen = 0
        #: the navigation gate (built on first use; None: a proxy runs)
        self._gate: NavigationGate | bool | None = False
        self._gate_pending: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()
        #: one CDP session per page, opened the first time a closed shadow root is read there
        self.cdp_sessions: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()
        #: per page, the facts reader called over a CDP session of its own (`observe._direct`)
        self.direct_readers: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()
        #: the contexts this session was released from (`release`): their stand-ins refuse use
        self.released: weakref.WeakSet[Any] = weakref.WeakSet()
        #: per context, calls undoing what the session installed there besides the gate's (`release`)
        self.undo: weakref.WeakKeyDictionary[Any, list[Callable[[], Any]]] = weakref.WeakKeyDictionary()
        #: per page, its browser context (a page never changes context: asked once, not per action)
        self._contexts: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()
        #: the policies' allow-list as the facts reader's pin sees it (see `pin_hosts_for`)
        self.pin_allow = pin_hosts(EgressRules.from_policies(guard.policies))
        self.ugc_selectors: tuple[str, ...] = tuple(
            selector
            for rule in guard.rulebook.rules
            if isinstance(rule, InstructionProvenance)
            for selector in rule.rule.ugc_selectors
        )

    # -- releasing ------------------------------------------------------------------------
    def release(self, page: Any) -> Any:
        """Release the guard from `page`'s context (`pagewarden.interceptors._release`): done
        at once under the sync API, an awaitable under the async API."""
        return self.drive(release_steps(self, page))

    def keep_undo(self, page: Any, disposable: Any) -> None:
        """Remember how to undo something installed in `page`'s context (a Playwright
        Disposable: its Python API names the undoing ``close()``)."""
        with contextlib.suppress(Exception):
            keep_dispose(self.undo.setdefault(self.context_of(page), []), disposable)

    def unrelease(self, page: Any) -> None:
        """`page` is wrapped again: its context is guarded again (installs redone as needed)."""
        with contextlib.suppress(Exception):
            self.released.discard(self.context_of(page))

    def check_released(self, owner: Guarded) -> None:
        """Raise `GuardReleased` when `owner` belongs to a context this session was released from."""
        try:
            if owner._pw_type == "BrowserContext":
                context = owner._pw_obj
            else:
                page = owner.page_raw()
                context = self.context_of(page) if page is not None else None
        except Exception:  # noqa: BLE001 - a closed page: Playwright will say so
            return
        if context is not None and context in self.released:
            raise GuardReleased(
                f"this {owner._pw_type} belongs to a browser context the guard was released from"
                " (page.release()): wrap a page of it again, or use the raw page (unwrap())"
            )

    # -- reasoning ------------------------------------------------------------------------
    def take_reasoning(self) -> str | None:
        """The reasoning given for the next action, consumed by it."""
        text, self.pending_reasoning = self.pending_reasoning, None
        return text

    def context_of(self, page: Any) -> Any:
        """`page.context`, asked of Playwright once per page (raises as `page.context` does)."""
        try:
            context = self._contexts.get(page)
        except TypeError:  # (not weakly referable: a stand-in in a test)
            return page.context
        if context is None:
            context = page.context
            with contextlib.suppress(TypeError):
                self._contexts[page] = context
        return context

    def needs_reader(self, page: Any) -> bool:
        """True once per browser context: the caller installs the facts reader there."""
        try:
            context = self.context_of(page)
        except Exception:  # noqa: BLE001 - a closed page has no context to install into
            return False
        if context in self._readers:
            return False
        self._readers.add(context)
        return True

    def register_reader_early(self, page: Any) -> None:
        """Register the facts reader's engine in `page`'s context at wrap time: at once under
        the sync API, as a task under the async API (the first guarded action awaits it)."""
        from pagewarden.observe import register_reader

        try:
            context = page.context
        except Exception:  # noqa: BLE001 - a closed page: the first action will say so
            return
        if context in self._readers:
            return
        call = register_reader(context, self.facts_reader, self.mode)
        if self.mode == "sync":
            self._readers.add(context)
            try:
                call()
                self._engines[context] = True
            except Exception:  # noqa: BLE001 - the first action installs the main-world reader
                self._readers.discard(context)
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self._readers.add(context)
        self._pending[context] = loop.create_task(_registered(call()))

    def pending_registration(self, page: Any) -> Any:
        """The registration task of `page`'s context still to be awaited (None when none)."""
        try:
            return self._pending.pop(self.context_of(page), None)
        except Exception:  # noqa: BLE001 - a closed page
            return None

    def reader_engine(self, page: Any) -> str | None:
        """The selector-engine name of the facts reader for `page`'s current document, None
        when the reader could not be registered in its context, or the document's utility
        world predates the registration (the main-world reader stands in)."""
        try:
            if self._missing.get(page) == page.url:
                return None
            return self.facts_reader if self._engines.get(self.context_of(page)) else None
        except Exception:  # noqa: BLE001 - a closed page
            return None

    def mark_engine_missing(self, page: Any) -> None:
        """The reader's engine is missing in `page`'s current document (until it navigates)."""
        with contextlib.suppress(Exception):
            self._missing[page] = page.url

    def set_reader_engine(self, page: Any, registered: bool) -> None:
        """Remember whether the reader's selector engine is registered in `page`'s context."""
        with contextlib.suppress(Exception):
            self._engines[page.context] = registered

    # -- navigation gate --------------------------------------------------------------------
    @property
    def gate(self) -> NavigationGate | None:
        """The session's navigation gate (see `pagewarden.interceptors._gate`), built on first
        use: None when a network layer runs (the proxy judges navigations and downloads); with
        no URL or domain rule it judges the downloads responses start only."""
        if self._gate is False:
            network = getattr(self.guard, "network", None)
            self._gate = None if network is not None else NavigationGate.for_guard(self.guard)
        return self._gate if isinstance(self._gate, NavigationGate) else None

    @property
    def built_gate(self) -> NavigationGate | None:
        """The gate if it was built (no building: for the refusals check before each action)."""
        return self._gate if isinstance(self._gate, NavigationGate) else None

    def gate_install(self, page: Any) -> Callable[[], Any] | None:
        """The call that routes `page`'s context through the gate, None when done or not needed."""
        gate = self.gate
        if gate is None:
            return None
        try:
            context = self.context_of(page)
        except Exception:  # noqa: BLE001 - a closed page
            return None
        return gate.install(context, self.mode)

    def install_gate_early(self, page: Any) -> None:
        """Route `page`'s context through the gate at wrap time: at once under the sync API,
        as a task under the async API (the first guarded action awaits it)."""
        call = self.gate_install(page)
        gate = self.gate
        if call is None or gate is None:
            return
        context = page.context
        if self.mode == "sync":
            try:
                call()
            except Exception:  # noqa: BLE001 - the first action tries again
                gate.uninstalled(context)
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            gate.uninstalled(context)
            return
        self._gate_pending[context] = loop.create_task(_registered(call()))

    def gate_first(self, handler: Any) -> Any:
        """The agent's route `handler` behind the navigation gate: Playwright asks the agent's
        routes (page routes, and context routes added later) before the gate's, so a handler
        that continues every request would let a refused navigation pass; the gate judges
        the request first (the same wrapper for the same handler: ``unroute`` finds it)."""
        if not callable(handler):
            return handler
        existing = self._route_memo.get(handler)
        if existing is not None:
            return existing
        shared = self
        try:
            count = arity(handler, 2)
        except (TypeError, ValueError):  # no signature to read: Playwright's own call will say so
            count = 2
        if inspect.iscoroutinefunction(handler):

            async def first(route: Any, request: Any) -> Any:
                gate = shared.gate_for(request)
                answer = gate.before_route_handler(route, request) if gate is not None else None
                if answer is not None:
                    if inspect.isawaitable(answer):
                        await answer
                    return None
                return await handler(*(route, request)[:count])
        else:

            def first(route: Any, request: Any) -> Any:
                gate = shared.gate_for(request)
                answer = gate.before_route_handler(route, request) if gate is not None else None
                if answer is not None:
                    return answer if inspect.isawaitable(answer) else None
                return handler(*(route, request)[:count])

        first.__name__ = getattr(handler, "__name__", "handler")
        self._route_memo.put(handler, first)
        return first

    def gate_for(self, request: Any) -> NavigationGate | None:
        """The gate that judges `request` ahead of an agent's route handler: none once the
        session was released from the request's context (the agent's route stays, ours goes)."""
        gate = self.built_gate
        if gate is None or not self.released:
            return gate
        raw = request._pw_obj if isinstance(request, Guarded) else request  # (arrives guarded)
        try:
            context = raw.frame.page.context
        except Exception:  # noqa: BLE001 - a worker's request, a popup's first: judged as before
            return gate
        return None if context in self.released else gate

    def gate_reroute(self, context: Any) -> Callable[[], Any] | None:
        """The call that puts the gate's route back on `context` (see `NavigationGate.reroute`)."""
        gate = self.built_gate
        return gate.reroute(context, self.mode) if gate is not None else None

    def pending_gate(self, page: Any) -> Any:
        """The gate's routing task of `page`'s context still to be awaited (None when none)."""
        try:
            return self._gate_pending.pop(self.context_of(page), None)
        except Exception:  # noqa: BLE001 - a closed page
            return None

    def pin_hosts_for(self, url: str) -> dict[str, Any] | None:
        """The hosts the policies allow, for the reader's pin at a page of `url`: the
        allow-list's rules, or without one the page's own site."""
        if self.pin_allow:
            return {"allow": self.pin_allow}
        site = page_site(url)
        return {"site": site} if site else None

    def tab_id(self, page: Any) -> str:
        """A stable id for a tab (page) of this session: t1, t2, … in the order first seen."""
        tab = self._tabs.get(page)
        if tab is None:
            self._tabs_seen += 1
            tab = self._tabs[page] = f"t{self._tabs_seen}"
        return tab

    # -- mouse ----------------------------------------------------------------------------
    def mouse_position(self, page: Any) -> tuple[float, float]:
        """Where the mouse of `page` was last moved to."""
        return self._mouse.get(page, (0.0, 0.0))

    def set_mouse_position(self, page: Any, x: float, y: float) -> None:
        """Remember a mouse move (clicks at the current position are checked there)."""
        if page is not None:
            self._mouse[page] = (float(x), float(y))

    # -- wrapping -------------------------------------------------------------------------
    def wrap(self, obj: Any, parent: Any = None) -> Any:
        """`obj` guarded if it is a Playwright object that can act; lists, tuples and dicts
        holding such objects are copied with them guarded (see `_convert`), others returned
        as they are."""
        if type(obj) in _PLAIN or isinstance(obj, Guarded):
            return obj
        if isinstance(obj, (list, tuple, dict)):
            if not holds(obj, _swappable):
                return obj
            return convert(obj, lambda item: self._wrap_one(item, parent))
        return self._wrap_one(obj, parent)

    def wrap_result(self, obj: Any, parent: Any = None) -> Any:
        """`wrap` for what an action that has run returns: never raises (the action is done;
        a value that cannot be wrapped is returned as Playwright gave it, and logged)."""
        try:
            return self.wrap(obj, parent)
        except Exception as exc:  # noqa: BLE001 - the agent gets the value unguarded, not an error
            with contextlib.suppress(Exception):
                self.guard.log.warning("result_not_wrapped", error=f"{type(exc).__name__}: {exc}"[:300])
            return obj

    def _wrap_one(self, obj: Any, parent: Any = None) -> Any:
        if isinstance(obj, Guarded):
            return obj
        name = _type_name(obj)
        if name is None:
            if _is_event_manager(obj):
                return GuardedEventManager(obj, self)
            return obj
        if name in _CACHED_TYPES:
            cached = self._cache.get(obj)
            if cached is not None:
                return cached
        cls = GuardedPage if name == "Page" else Guarded
        wrapped = cls(obj, self, name, parent)
        if name in _CACHED_TYPES:
            self._cache[obj] = wrapped
        return wrapped

    def unwrap(self, value: Any) -> Any:
        """What to pass to Playwright for an argument: the Playwright objects behind stand-ins,
        callbacks wrapped so that their arguments arrive guarded (containers copied only when
        they hold either, keeping shared references and cycles, see `_convert`)."""
        if type(value) in _PLAIN:
            return value
        if isinstance(value, (list, tuple, dict)):
            if not holds(value, _unwrappable):
                return value
            return convert(value, self._unwrap_one)
        return self._unwrap_one(value)

    def _unwrap_one(self, value: Any) -> Any:
        if isinstance(value, Guarded):
            return value._pw_obj
        if _is_callback(value):
            return self.wrap_handler(value)
        return value

    def wrap_handler(self, handler: Callable[..., Any]) -> Callable[..., Any]:
        """A callback whose Playwright arguments (a popup page, a binding's source …) arrive
        guarded, given as many arguments as Playwright would give it (`_convert.arity`); the
        same wrapper each time for the same callback, so ``remove_listener`` finds it."""
        existing = self._handler_memo.get(handler)
        if existing is not None:
            return existing
        shared = self

        def wrapped(*args: Any, **kwargs: Any) -> Any:
            args = args[: arity(handler, len(args))]
            return handler(*shared.wrap(args), **{k: shared.wrap(v) for k, v in kwargs.items()})

        wrapped.__name__ = getattr(handler, "__name__", "handler")
        self._handler_memo.put(handler, wrapped)
        return wrapped


class _HandlerMemo:
    """The wrapper made for each callback, kept on the callback itself (on the object of a bound
    method), as Playwright keeps its own: it lives exactly as long as the callback does."""

    __slots__ = ("_attr", "_other")

    def __init__(self) -> None:
        self._attr = f"__pagewarden_handler_{secrets.token_hex(6)}"
        #: callbacks that take no attribute (a builtin, an object with __slots__)
        self._other: dict[Any, Callable[..., Any]] = {}

    def _holder(self, handler: Any) -> tuple[Any, str]:
        if inspect.ismethod(handler):
            return handler.__self__, f"{self._attr}_{handler.__name__}"
        return handler, self._attr

    def get(self, handler: Any) -> Callable[..., Any] | None:
        holder, attr = self._holder(handler)
        found = getattr(holder, attr, None)
        if found is not None:
            return found
        try:
            return self._other.get(handler)
        except TypeError:  # unhashable
            return None

    def put(self, handler: Any, wrapper: Callable[..., Any]) -> None:
        holder, attr = self._holder(handler)
        try:
            setattr(holder, attr, wrapper)
        except (AttributeError, TypeError):
            with contextlib.suppress(TypeError):  # unhashable: no memo, remove_listener cannot match it
                self._other[handler] = wrapper


def _swappable(item: Any) -> bool:
    """A leaf `SharedState.wrap` swaps: a Playwright object, or an ``expect_*`` manager."""
    return _type_name(item) is not None or _is_event_manager(item)


def _is_callback(value: Any) -> bool:
    return callable(value) and not isinstance(value, type) and _type_name(value) is None


def _unwrappable(item: Any) -> bool:
    """A leaf `SharedState.unwrap` swaps: a stand-in, or a callback."""
    return isinstance(item, Guarded) or _is_callback(item)


async def _registered(request: Any) -> bool:
    """Await a registration; True when it went through (never raises: a task nobody awaits)."""
    try:
        await request
    except Exception:  # noqa: BLE001 - reported as False; the main-world reader stands in
        return False
    return True


def _is_event_manager(obj: Any) -> bool:
    module = type(obj).__module__
    return module in ("playwright._impl._async_base", "playwright._impl._sync_base") and hasattr(
        obj, "_event"
    )


class Guarded:
    """A stand-in for one Playwright object; see the module docstring."""

    __slots__ = ("__weakref__", "_pw_obj", "_pw_parent", "_pw_shared", "_pw_type")

    def __init__(self, obj: Any, shared: SharedState, type_name: str, parent: Any = None) -> None:
        object.__setattr__(self, "_pw_obj", obj)
        object.__setattr__(self, "_pw_shared", shared)
        object.__setattr__(self, "_pw_type", type_name)
        object.__setattr__(self, "_pw_parent", parent)

    @property  # type: ignore[misc]
    def __class__(self) -> type:
        return type(self._pw_obj)

    def __getattr__(self, name: str) -> Any:
        obj = self._pw_obj
        shared = self._pw_shared
        if shared.released:
            shared.check_released(self)
        spec = spec_for(self._pw_type, name)
        if spec is not None:
            if name == "route" and self._pw_type in _ROUTED:
                return self._route(spec, getattr(obj, name))
            return self._action(name, spec, getattr(obj, name))
        attr = getattr(obj, name)
        if name.startswith("_"):
            return attr
        if name in READ_ONLY.get(self._pw_type, ()):
            if callable(attr):
                if name in _UNROUTE and self._pw_type in _ROUTED:
                    return self._unroute(name, attr)
                return self._read(name, attr)
            return shared.wrap(attr, self._page_for_child())
        if callable(attr):
            return self._action(name, _UNCLASSIFIED, attr)
        return shared.wrap(attr, self._page_for_child())

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._pw_obj, name, value)

    # Invisible where that is free: printed, compared and hashed as the object it stands for.
    def __repr__(self) -> str:
        return repr(self._pw_obj)

    def __str__(self) -> str:
        return str(self._pw_obj)

    def __dir__(self) -> list[str]:
        return sorted(set(dir(self._pw_obj)) | {n for n in vars(type(self)) if not n.startswith("_")})

    def __eq__(self, other: object) -> bool:
        other_obj = other._pw_obj if isinstance(other, Guarded) else other
        return self._pw_obj == other_obj

    def __hash__(self) -> int:
        return hash(self._pw_obj)

    # Async context managers / iteration are not part of the acting surface; forward them.
    async def __aenter__(self) -> Any:
        await self._pw_obj.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> Any:
        return await self._pw_obj.__aexit__(*exc)

    def __enter__(self) -> Any:
        self._pw_obj.__enter__()
        return self

    def __exit__(self, *exc: Any) -> Any:
        return self._pw_obj.__exit__(*exc)

    # -- plumbing -------------------------------------------------------------------------
    def page_raw(self) -> Any:
        """The raw Playwright page this object belongs to (None when unknown)."""
        obj = self._pw_obj
        kind = self._pw_type
        if kind == "Page":
            return obj
        if kind in ("Frame", "Locator"):
            return obj.page
        if kind == "ElementHandle":
            frame = self._pw_parent
            return frame if _type_name(frame) == "Page" else None
        if kind == "FrameLocator":
            return obj.owner.page
        if kind in ("FileChooser", "Dialog"):
            return obj.page
        parent = self._pw_parent
        return parent if _type_name(parent) == "Page" else None

    def _page_for_child(self) -> Any:
        page = self.page_raw()
        return page if page is not None else self._pw_parent

    def _action(self, name: str, spec: ActionSpec, method: Any) -> Callable[..., Any]:
        shared = self._pw_shared
        owner = self

        def call(*args: Any, reasoning: str | None = None, **kwargs: Any) -> Any:
            if owner._pw_type == "Mouse" and name == "move" and len(args) >= 2:
                # where mouse.down() acts next (the page's own record of the pointer wins)
                shared.set_mouse_position(owner._page_for_child(), args[0], args[1])
            pipeline = guarded_action(shared, owner, name, spec, method, args, kwargs, reasoning)
            if shared.mode == "async":
                return _frames_kept(shared.drive(pipeline))
            try:
                return shared.drive(pipeline)
            except Exception as exc:
                without_guard_frames(exc)  # the same exception, its stack tidied
                raise

        return _as_method(call, method, self)

    def _route(self, spec: ActionSpec, method: Any) -> Callable[..., Any]:
        """``route``: the agent's handler runs behind the navigation gate (`gate_first`)."""
        action = self._action("route", spec, method)
        shared = self._pw_shared

        def call(*args: Any, **kwargs: Any) -> Any:
            if len(args) >= 2:
                args = (args[0], shared.gate_first(args[1]), *args[2:])
            elif "handler" in kwargs:
                kwargs["handler"] = shared.gate_first(kwargs["handler"])
            return action(*args, **kwargs)

        return _as_method(call, method, self)

    def _unroute(self, name: str, method: Any) -> Callable[..., Any]:
        """``unroute`` / ``unroute_all``: the agent's routes go; the navigation gate stays (put
        back on a context at once, ahead of the agent's remaining routes)."""
        shared = self._pw_shared
        read = self._read(name, method)
        owner = self._pw_obj

        def call(*args: Any, **kwargs: Any) -> Any:
            if name == "unroute":
                if len(args) >= 2:
                    args = (args[0], shared.gate_first(args[1]), *args[2:])
                elif kwargs.get("handler") is not None:
                    kwargs["handler"] = shared.gate_first(kwargs["handler"])
            result = read(*args, **kwargs)
            again = shared.gate_reroute(owner) if self._pw_type == "BrowserContext" else None
            if again is None:
                return result
            if inspect.isawaitable(result):
                return _then(result, again)
            again()
            return result

        return _as_method(call, method, self)

    def _read(self, name: str, method: Any) -> Callable[..., Any]:
        shared = self._pw_shared
        parent = self._page_for_child()
        owner = self

        def call(*args: Any, **kwargs: Any) -> Any:
            try:
                result = method(*shared.unwrap(args), **{k: shared.unwrap(v) for k, v in kwargs.items()})
            except Exception as exc:
                without_guard_frames(exc)  # the same exception, its stack tidied
                raise
            if owner._pw_type == "Mouse" and name == "move" and len(args) >= 2:
                shared.set_mouse_position(parent, args[0], args[1])
            if inspect.isawaitable(result):
                return _await_and_wrap(result, shared, parent)
            return shared.wrap_result(result, parent)

        return _as_method(call, method, self)


def _as_method(call: Callable[..., Any], method: Any, owner: Guarded) -> Any:
    """`call` as `method` looks: a method bound to the stand-in, with Playwright's name,
    docstring and signature (and a coroutine function where Playwright's is one)."""
    if inspect.iscoroutinefunction(method):

        async def bound(_owner: Any, *args: Any, **kwargs: Any) -> Any:
            return await call(*args, **kwargs)
    else:

        def bound(_owner: Any, *args: Any, **kwargs: Any) -> Any:
            return call(*args, **kwargs)

    with contextlib.suppress(AttributeError, TypeError):
        functools.update_wrapper(bound, getattr(method, "__func__", method))
    return types.MethodType(bound, owner)


async def _then(awaitable: Any, again: Callable[[], Any]) -> Any:
    result = await awaitable
    await again()
    return result


async def _await_and_wrap(awaitable: Any, shared: SharedState, parent: Any) -> Any:
    try:
        result = await awaitable
    except Exception as exc:
        without_guard_frames(exc)  # the same exception, its stack tidied
        raise
    return shared.wrap_result(result, parent)


async def _frames_kept(awaitable: Any) -> Any:
    """Await a guarded call; a Playwright error it raises leaves out the guard's frames."""
    try:
        return await awaitable
    except Exception as exc:
        without_guard_frames(exc)  # the same exception, its stack tidied
        raise


class GuardedPage(Guarded):
    """A guarded Playwright `Page`: the same methods, plus the agent-facing extras."""

    __slots__ = ()

    def reasoning(self, text: str) -> None:
        """State the agent's reasoning for the next action (recorded and judged with it)."""
        self._pw_shared.pending_reasoning = text

    def message_user(self, text: str) -> Verdict:
        """Record a message the agent sent to the user (satisfies consent rules naming it)."""
        return self._pw_shared.guard.message_user(text)

    @property
    def guard(self) -> Guard:
        """The guard judging this page."""
        return self._pw_shared.guard

    def unwrap(self) -> Any:
        """The raw Playwright page (actions on it are NOT checked)."""
        return self._pw_obj

    def release(self) -> Any:
        """Take the guard off this page's browser context, leaving nothing of it there: its
        routes, init scripts, bindings, DevTools sessions and listeners are removed (see
        `pagewarden.interceptors._release`), so another guard can use the context next. Every
        stand-in of the context then raises `GuardReleased`; ``unwrap()`` still gives the raw
        page. Awaitable under the async API (``await page.release()``), done at once under the
        sync API."""
        return self._pw_shared.release(self._pw_obj)


class GuardedEventManager:
    """`expect_popup()` and friends: the value arrives guarded."""

    __slots__ = ("_cm", "_shared")

    def __init__(self, cm: Any, shared: SharedState) -> None:
        self._cm = cm
        self._shared = shared

    async def __aenter__(self) -> GuardedEventInfo:
        return GuardedEventInfo(await self._cm.__aenter__(), self._shared)

    async def __aexit__(self, *exc: Any) -> Any:
        return await self._cm.__aexit__(*exc)

    def __enter__(self) -> GuardedEventInfo:
        return GuardedEventInfo(self._cm.__enter__(), self._shared)

    def __exit__(self, *exc: Any) -> Any:
        return self._cm.__exit__(*exc)


class GuardedEventInfo:
    """The `as info` of an `expect_*` block; `info.value` is guarded."""

    __slots__ = ("_info", "_shared")

    def __init__(self, info: Any, shared: SharedState) -> None:
        self._info = info
        self._shared = shared

    @property
    def value(self) -> Any:
        """The event's value (awaitable under the async API), guarded."""
        value = self._info.value
        if inspect.isawaitable(value):
            return _await_and_wrap(value, self._shared, None)
        return self._shared.wrap(value)

    def is_done(self) -> bool:
        """Whether the event has arrived."""
        return self._info.is_done()
