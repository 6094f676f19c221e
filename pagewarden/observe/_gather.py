"""Reading the observation from a live page, cheaply, for sync and async Playwright alike.

The functions here are generators that yield the Playwright calls they need (`Call`) and
receive the results; a driver runs each call (awaiting it under the async API). So one
implementation serves both APIs.

The deterministic tiers need the target's facts, the URL and the open tabs: one
`evaluate_all` round trip for a locator (no waiting when the element is there), one
`evaluate` for a point or the focused element. The aria snapshot (tens of ms on a large
page) is taken only when asked for.
"""

from __future__ import annotations

import contextlib
import json
import re
import time
from collections.abc import Callable, Generator, Sequence
from functools import cache
from typing import Any
from urllib.parse import unquote

import idna as _idna

from pagewarden._calls import Call
from pagewarden._netaddr import ip_of
from pagewarden._serde import DataFormatError, from_data
from pagewarden._url import parse_url
from pagewarden.observe._library import library
from pagewarden.steps import ElementFacts, TextSource

__all__ = [
    "Call",
    "EngineMissing",
    "FactsUnavailable",
    "Gather",
    "address_needle",
    "facts_at_point",
    "facts_of_focused",
    "facts_of_handle",
    "facts_of_locator",
    "install_script",
    "needle_for",
    "register_reader",
    "stopped_navigations",
    "value_sources",
]


class FactsUnavailable(Exception):
    """The page did not let the facts be read (script error, hostile DOM)."""


def _library() -> str:
    return library()


# Entry points of the library: (parameters, expression on `lib`).
_ENTRIES: dict[str, tuple[str, str]] = {
    "locator": ("els, opts", "lib.locator(els, opts)"),
    "handle": ("el, opts", "lib.result(el, opts)"),
    "point": ("opts", "lib.atPoint(opts)"),
    "focused": ("opts", "lib.focused(opts)"),
    "sources": ("opts", "lib.sources(opts.needle, opts)"),
    "report": ("opts", "lib.report()"),
    "mask": ("opts", "lib.maskFields(opts)"),
}
_GUARDED_BODY = "try {{ {setup} return {expr}; }} catch (e) {{ return {{__error: String(e)}}; }}"


@cache
def _inline_js(entry: str) -> str:
    """The entry with the whole library in the call (documents without the installed reader)."""
    params, expr = _ENTRIES[entry]
    body = _GUARDED_BODY.format(setup="const lib = __pwLibrary();", expr=expr)
    return f"({params}) => {{ {_library()}\n {body} }}"


@cache
def _installed_js(entry: str) -> str:
    """The entry calling the reader the init script installed under `opts.lib`."""
    params, expr = _ENTRIES[entry]
    body = _GUARDED_BODY.format(
        setup="const lib = window[opts.lib]; if (!lib) return {__missing: true};", expr=expr
    )
    return f"({params}) => {{ {body} }}"


def install_script(name: str) -> str:
    """An init script that installs the facts reader as a frozen, non-configurable `window[name]`.

    Run before any page script, it captures pristine DOM primitives, so page code that patches
    them later cannot change what the guard reads.
    """
    return (
        f"(() => {{ {_library()}\n try {{ const lib = __pwLibrary(); lib.listen();"
        f" Object.defineProperty(window, {json.dumps(name)}, "
        "{value: lib, enumerable: false, configurable: false, writable: false});"
        " } catch (e) {} })();"
    )


def _world_reader(name: str) -> str:
    """An expression for the facts reader of the current world under `window[name]`: the one
    already there (installed by the engine or by a direct read: one reader per document, so
    one pin and one report of stopped navigations), else a new one, listening, put there."""
    key = json.dumps(name)
    return (
        f"(window[{key}] || (() => {{ {_library()}\n const lib = __pwLibrary();"
        " try { lib.listen(); } catch (e) {}"
        f" try {{ Object.defineProperty(window, {key}, {{value: lib}}); }} catch (e) {{}}"
        " return lib; })())"
    )


def engine_source(name: str) -> str:
    """The facts reader as a Playwright selector engine (see `register_reader`)."""
    return f"(() => {_world_reader(name)}.engine())()"


def register_reader(context: Any, name: str, mode: str) -> Callable[[], Any]:
    """A call that registers the facts reader with `context` as a content-script selector
    engine named `name`: it then runs in Playwright's utility world (an isolated world the
    page's scripts cannot touch) in every frame, documents already loaded included.

    Uses the context's channel (Playwright's public `selectors.register` is process-wide and
    only for contexts created afterwards in some versions); raises if Playwright lacks it.
    """
    from playwright._impl.timeout_settings import NO_TIMEOUT

    impl = getattr(context, "_impl_obj", context)
    engine = {"name": name, "source": engine_source(name), "contentScript": True}

    def call() -> Any:
        request = impl._channel.registerSelectorEngine(selectorEngine=engine, timeout=NO_TIMEOUT)
        return context._sync(request) if mode == "sync" else request

    return call


def _engine_selector(engine: str, entry: str, opts: dict[str, Any]) -> str:
    # `>>` would end the selector part: JSON spells `>` inside strings as \u003e.
    body = json.dumps({**opts, "entry": entry}, separators=(",", ":")).replace(">", "\\u003e")
    return f"{engine}={body}"


def _selector_of(locator: Any) -> str | None:
    selector = getattr(getattr(locator, "_impl_obj", None), "_selector", None)
    return selector if isinstance(selector, str) else None


def _parse(text: Any) -> Any:
    if not isinstance(text, str):
        raise FactsUnavailable("the facts reader gave no answer")
    try:
        return json.loads(text)
    except ValueError as exc:
        raise FactsUnavailable(f"the facts reader's answer is not JSON: {exc}") from None


class EngineMissing(Exception):
    """The document's utility world was set up before the reader's engine was registered
    (Playwright had already acted in it): the main-world reader stands in there."""


_MISSING = ("reading 'queryAll'", "reading 'query'", "Unknown engine")

DOCUMENT_READ_TIMEOUT_MS = 5000.0
"""How long a read of the document itself (a point, the focused element, the page's text, the
report of stopped navigations) may wait. The document is always there, so the read answers at
once unless the frame is between documents or the page's main thread is stuck; past this bound
the read fails closed (`FactsUnavailable`) instead of waiting for Playwright's 30 s default."""


def _is_timeout(exc: BaseException) -> bool:
    return any(klass.__name__ == "TimeoutError" for klass in type(exc).__mro__)


def _read(scope: Any, engine: str, entry: str, opts: dict[str, Any], timeout: float | None = None,
          *, document: bool = False, direct: Any = None, meanwhile: Callable[[], Any] | None = None,
          ) -> Gather:  # fmt: skip
    """One round trip: `entry` of the reader in the utility world of `scope`'s frame.

    A `document` read (rooted at the document, not at an element the action waits for) is
    bounded by `DOCUMENT_READ_TIMEOUT_MS` and raises `FactsUnavailable` when the page does not
    answer in time. With `direct` (a `DirectReader` of the page, `scope` being its main frame)
    the read is one CDP call in that same world, and the usual read only when that fails;
    `meanwhile` then runs while that call is on its way (see `DirectReader.read`)."""
    if direct is not None and direct.name == engine:
        text = yield from direct.read(entry, {**opts, "lib": engine}, meanwhile)
        if text is not None:
            return _parse(text)
    if document:
        timeout = DOCUMENT_READ_TIMEOUT_MS if timeout is None else min(timeout, DOCUMENT_READ_TIMEOUT_MS)
    kwargs = {} if timeout is None else {"timeout": timeout}
    selector = _engine_selector(engine, entry, {**opts, "lib": engine})
    try:
        text = yield Call(scope.locator(selector).get_attribute, ("d",), kwargs)
    except Exception as exc:
        if any(marker in str(exc) for marker in _MISSING):
            raise EngineMissing(str(exc)) from None
        if document and _is_timeout(exc):
            raise FactsUnavailable(
                f"the page did not answer the facts reader within {timeout / 1000:g} s "
                "(between documents, or its main thread is busy)"
            ) from None
        raise
    return _parse(text)


def _run(fn: Callable[..., Any], entry: str, head: tuple[Any, ...], opts: dict[str, Any]) -> Gather:
    """Call `entry` through the installed reader, or with the inline library when it is absent."""
    if opts.get("lib"):
        result = yield Call(fn, (*head, _installed_js(entry), opts))
        if not (isinstance(result, dict) and result.get("__missing")):
            return result
    return (yield Call(fn, (*head, _inline_js(entry), opts)))


def address_needle(value: str | None, base: str | None = None) -> dict[str, Any] | None:
    """What the reader looks for when the agent opens a URL (see `sources.js`): the host's
    spellings (punycode and Unicode), the path (decoded, lower case; "" for the root), and for
    an IP literal its IPv4 address as a number (``v4``, also for an IPv4-mapped IPv6 literal)
    and its IPv6 form (``v6``). None when the URL has no host."""
    if not value:
        return None
    parsed = parse_url(value, base or None)
    host = parsed.host
    if not host or not parsed.valid:
        return None
    path = unquote(parsed.path or "/").lower().rstrip("/")
    hosts = [host]
    if "xn--" in host:
        with contextlib.suppress(Exception):  # a label that does not decode: punycode only
            hosts.append(_idna.decode(host).lower())
    out: dict[str, Any] = {"hosts": hosts, "path": path}
    if parsed.is_ip:
        address = ip_of(host)
        if host.startswith("["):
            out["v6"] = host
        if address is not None and address.version == 4:
            out["v4"] = int(address)
    return out


def needle_for(kind: str, value: str | None) -> str | None:
    """What to search the page for: a typed value's first 80 characters, a URL's host+path."""
    if not value:
        return None
    if kind in ("goto", "new_page", "request"):
        parsed = parse_url(value)
        if not parsed.host:
            return value[:120] if len(value) >= 6 else None
        path = parsed.path if parsed.path not in ("", "/") else ""
        needle = parsed.host + path
        return needle[:120] if len(needle) >= 6 else None
    text = value.strip()
    return text[:80] if len(text) >= 8 else None


def _facts(data: Any, selector: str | None) -> ElementFacts | None:
    if not data:
        return None
    if selector:
        data = {**data, "selector": selector}
    try:
        return from_data(ElementFacts, data, "facts")
    except DataFormatError as exc:
        raise FactsUnavailable(f"unexpected facts from the page: {exc}") from None


def _sources(items: Sequence[Any]) -> tuple[TextSource, ...]:
    out = []
    for item in items or ():
        try:
            out.append(from_data(TextSource, item, "source"))
        except DataFormatError:
            continue
    return tuple(out)


def _check(result: Any, stops: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    if not isinstance(result, dict):
        raise FactsUnavailable(f"the facts script returned {type(result).__name__}")
    if "__error" in result:
        raise FactsUnavailable(f"the facts script failed in the page: {result['__error']}")
    if stops is not None:
        # navigations the reader stopped after an earlier action (see `stopped_navigations`)
        stops.extend(item for item in result.get("earlier_stops") or () if isinstance(item, dict))
    return result


Gather = Generator[Call, Any, Any]


# A selector Playwright reads as one plain CSS part: no `>>` chain, no engine prefix (`text=`,
# `internal:role=` …), no XPath or quoted text, and none of the characters that open Playwright's
# own CSS extensions (`:visible`, `:has-text()` …), selector lists (`a, b`: Playwright sorts
# those across shadow roots) or escapes. For such a selector the native query of the light tree
# finds what Playwright's engine finds there, in the same order.
_PLAIN_CSS = re.compile(r"[A-Za-z0-9_#.\-\[\]=\"' >+~*^$|/?&%@]+")
_ENGINE_PREFIX = re.compile(r"^\s*[A-Za-z_0-9\-+:*]+=")


def plain_css(selector: str | None) -> str | None:
    """`selector` when Playwright resolves it as one plain CSS selector (see `_PLAIN_CSS`), else None."""
    if not selector or len(selector) > 300 or ">>" in selector or _ENGINE_PREFIX.match(selector):
        return None
    text = selector.strip()
    if not text or text.startswith(("//", "..", '"', "'")) or not _PLAIN_CSS.fullmatch(text):
        return None
    return text


def _frame_of(locator: Any) -> tuple[Any, bool]:
    """The public `Frame` a locator resolves in (None when it cannot be told), and whether it
    is its page's main frame."""
    impl = getattr(locator, "_impl_obj", None)
    frame_impl = getattr(impl, "_frame", None)
    if frame_impl is None:
        return None, False
    try:
        page = locator.page
        main = page.main_frame
        if getattr(main, "_impl_obj", None) is frame_impl:
            return main, True
        frames = page.frames
    except Exception:  # noqa: BLE001 - a closed page: the usual read says so
        return None, False
    return next((f for f in frames if getattr(f, "_impl_obj", None) is frame_impl), None), False


def facts_of_locator(
    locator: Any,
    *,
    strict: bool = True,
    timeout: float | None = None,
    needle: str | None = None,
    ugc_selectors: Sequence[str] = (),
    selector: str | None = None,
    lib: str | None = None,
    pin: bool | str = False,
    field: bool = False,
    activate: dict[str, Any] | None = None,
    engine: str | None = None,
    stops: list[dict[str, Any]] | None = None,
    hosts: dict[str, Any] | None = None,
    direct: Any = None,
    meanwhile: Callable[[], Any] | None = None,
) -> Gather:
    """Facts of the element `locator` resolves to, its match count and where `needle` occurs.

    Waits (like the action would) only when nothing matches yet. With `strict` and several
    matches it raises Playwright's own strict-mode error, as the action would. With `pin`,
    the installed reader pins the link or form destination it read (see `stopped_navigations`);
    `hosts` (``{"allow": [[pattern, …], …], "site": …}``) are the hosts the policies allow, where
    a navigation is not stopped for its origin.
    With `engine` (the reader registered as a selector engine) it is one `get_attribute` round
    trip in the utility world (with `direct`, the page's `DirectReader`, a plain CSS locator of
    the main frame is read over CDP). Returns ``(facts, count, sources)``; count is None when not
    known.
    """
    opts = {
        "strict": strict,
        "needle": needle,
        "ugc": list(ugc_selectors),
        "lib": lib,
        "pin": pin,
        "field": field,
        "activate": activate,
    }
    if pin and hosts:
        opts["hosts"] = hosts
    if engine:
        css = plain_css(_selector_of(locator))
        frame, main_frame = _frame_of(locator) if css is not None else (None, False)
        if frame is not None:
            # One read at the document: the light tree's native query finds the element, with no
            # walk over the whole page to resolve the locator (see `select` in the library). It
            # waits for nothing but the page's answer, within the action's timeout, as the usual
            # read would; what it leaves to the usual read gets the rest of that timeout.
            started = time.monotonic()
            main = direct if main_frame else None
            at = {**opts, "css": css}
            read = _read(frame, engine, "select", at, timeout, direct=main, meanwhile=meanwhile)
            result = _check((yield from read), stops)
            if not result.get("fallback"):
                count = 1 if strict else None
                return _facts(result.get("facts"), selector), count, _sources(result.get("sources", ()))
            if timeout is not None:
                timeout = max(1.0, timeout - (time.monotonic() - started) * 1000)
        try:
            scope = locator if strict else locator.first
            result = _check((yield from _read(scope, engine, "locator", opts, timeout)), stops)
        except (FactsUnavailable, EngineMissing):
            raise
        except Exception as exc:
            if strict and "strict mode violation" in str(exc):
                # Let Playwright raise its strict-mode violation for the locator itself.
                yield Call(locator.evaluate, ("() => null",))
            raise
        count = 1 if strict else None
        return _facts(result.get("facts"), selector), count, _sources(result.get("sources", ()))
    result = _check((yield from _run(locator.evaluate_all, "locator", (), opts)), stops)
    if result["count"] == 0:
        wait_kwargs: dict[str, Any] = {"state": "attached"}
        if timeout is not None:
            wait_kwargs["timeout"] = timeout
        yield Call(locator.first.wait_for, (), wait_kwargs)
        result = _check((yield from _run(locator.evaluate_all, "locator", (), opts)), stops)
    if result["count"] > 1 and strict:
        # Let Playwright raise its strict-mode violation, exactly as the action would.
        yield Call(locator.evaluate, ("() => null",))
    return _facts(result.get("facts"), selector), int(result["count"]), _sources(result.get("sources", ()))


def facts_of_handle(
    handle: Any,
    *,
    needle: str | None = None,
    ugc_selectors: Sequence[str] = (),
    lib: str | None = None,
    field: bool = False,
    activate: dict[str, Any] | None = None,
    engine: str | None = None,
    pin: bool | str = False,
    stops: list[dict[str, Any]] | None = None,
    hosts: dict[str, Any] | None = None,
) -> Gather:
    """Facts of an element handle (what the action activates through it). Returns ``(facts, sources)``."""
    opts = {
        "needle": needle, "ugc": list(ugc_selectors), "lib": lib, "field": field,
        "activate": activate, "pin": pin,
    }  # fmt: skip
    if pin and hosts:
        opts["hosts"] = hosts
    if engine:
        selector = _engine_selector(engine, "locator", {**opts, "lib": engine})
        try:
            holder = yield Call(handle.query_selector, (selector,))
        except Exception as exc:
            if any(marker in str(exc) for marker in _MISSING):
                raise EngineMissing(str(exc)) from None
            raise
        if holder is None:
            raise FactsUnavailable("the facts reader gave no answer")
        result = _check(_parse((yield Call(holder.get_attribute, ("d",)))), stops)
        return _facts(result.get("facts"), "element-handle"), _sources(result.get("sources", ()))
    result = _check((yield from _run(handle.evaluate, "handle", (), opts)), stops)
    return _facts(result.get("facts"), "element-handle"), _sources(result.get("sources", ()))


def facts_at_point(
    page_or_frame: Any,
    x: float,
    y: float,
    *,
    needle: str | None = None,
    ugc_selectors: Sequence[str] = (),
    lib: str | None = None,
    field: bool = False,
    activate: dict[str, Any] | None = None,
    pointer: bool = False,
    engine: str | None = None,
    pin: bool | str = False,
    stops: list[dict[str, Any]] | None = None,
    hosts: dict[str, Any] | None = None,
    direct: Any = None,
    meanwhile: Callable[[], Any] | None = None,
) -> Gather:
    """Facts of the element at viewport point (x, y) (into same-origin frames; with
    `activate`, of what a click there activates; with `pointer`, at the mouse's last position
    the page saw, when it saw one). Returns ``(facts, sources)``."""
    opts = {
        "x": x, "y": y, "needle": needle, "ugc": list(ugc_selectors), "lib": lib, "field": field,
        "activate": activate, "pointer": pointer, "pin": pin,
    }  # fmt: skip
    if pin and hosts:
        opts["hosts"] = hosts
    if engine:
        read = _read(page_or_frame, engine, "point", opts, document=True, direct=direct, meanwhile=meanwhile)
        result = _check((yield from read), stops)
    else:
        result = _check((yield from _run(page_or_frame.evaluate, "point", (), opts)), stops)
    return _facts(result.get("facts"), f"point({x:g},{y:g})"), _sources(result.get("sources", ()))


def facts_of_focused(
    page_or_frame: Any,
    *,
    needle: str | None = None,
    ugc_selectors: Sequence[str] = (),
    lib: str | None = None,
    field: bool = False,
    activate: dict[str, Any] | None = None,
    engine: str | None = None,
    pin: bool | str = False,
    stops: list[dict[str, Any]] | None = None,
    hosts: dict[str, Any] | None = None,
    direct: Any = None,
    meanwhile: Callable[[], Any] | None = None,
) -> Gather:
    """Facts of the focused element (where keyboard input goes; with `activate`, of what the
    key activates there). Returns ``(facts, sources)``."""
    opts = {
        "needle": needle, "ugc": list(ugc_selectors), "lib": lib, "field": field,
        "activate": activate, "pin": pin,
    }  # fmt: skip
    if pin and hosts:
        opts["hosts"] = hosts
    if engine:
        read = _read(page_or_frame, engine, "focused", opts, document=True, direct=direct,
                     meanwhile=meanwhile)  # fmt: skip
        result = _check((yield from read), stops)
    else:
        result = _check((yield from _run(page_or_frame.evaluate, "focused", (), opts)), stops)
    return _facts(result.get("facts"), ":focus"), _sources(result.get("sources", ()))


def value_sources(
    page_or_frame: Any,
    needle: str,
    *,
    ugc_selectors: Sequence[str] = (),
    lib: str | None = None,
    path: str | None = None,
    engine: str | None = None,
    direct: Any = None,
    meanwhile: Callable[[], Any] | None = None,
    address: dict[str, Any] | None = None,
) -> Gather:
    """Where `needle` occurs in the page (text, links, aria attributes).

    For a URL, `needle` is host+path and `path` its path, which relative links contain; with
    `address` (`address_needle`) the reader looks for the address however the page writes it
    (text, comments, links, labelling attributes).
    """
    opts: dict[str, Any] = {"needle": needle, "ugc": list(ugc_selectors), "lib": lib, "path": path}
    if address is not None:
        opts["address"] = address
    if engine:
        result = yield from _read(
            page_or_frame, engine, "sources", opts, document=True, direct=direct, meanwhile=meanwhile
        )
    else:
        result = yield from _run(page_or_frame.evaluate, "sources", (), opts)
    if isinstance(result, dict) and "__error" in result:
        raise FactsUnavailable(f"the sources script failed in the page: {result['__error']}")
    return _sources(result if isinstance(result, list) else ())


def stopped_navigations(
    page_or_frame: Any, lib: str, engine: str | None = None, direct: Any = None
) -> Gather:
    """Navigations the installed reader stopped because the page changed a pinned destination.

    Returns a list of ``{"expected", "actual", "how"}``; empty when nothing was stopped, or when
    the page has navigated away (then nothing was stopped either).
    """
    if engine:
        result = yield from _read(page_or_frame, engine, "report", {}, document=True, direct=direct)
    else:
        result = yield Call(page_or_frame.evaluate, (_installed_js("report"), {"lib": lib}))
    return [item for item in result if isinstance(item, dict)] if isinstance(result, list) else []
