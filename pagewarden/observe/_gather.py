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

from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

from pagewarden._serde import DataFormatError, from_data
from pagewarden._url import parse_url
from pagewarden.observe._facts import ElementFacts, TextSource

__all__ = [
    "Call",
    "FactsUnavailable",
    "Gather",
    "facts_at_point",
    "facts_of_focused",
    "facts_of_handle",
    "facts_of_locator",
    "needle_for",
    "value_sources",
]


class FactsUnavailable(Exception):
    """The page did not let the facts be read (script error, hostile DOM)."""


@cache
def _library() -> str:
    return resources.files("pagewarden.observe").joinpath("element_facts.js").read_text("utf-8")


def _wrap_js(body: str, params: str) -> str:
    return (
        f"({params}) => {{ {_library()}\n try {{ {body} }} catch (e) {{ return {{__error: String(e)}}; }} }}"
    )


@cache
def _locator_js() -> str:
    return _wrap_js(
        "const one = els.length >= 1 && (els.length === 1 || !opts.strict);"
        "return {count: els.length, facts: one ? __pwFacts(els[0], opts) : null,"
        " sources: opts.needle ? __pwSources(opts.needle, opts) : []};",
        "els, opts",
    )


@cache
def _point_js() -> str:
    return _wrap_js("return __pwAtPoint(opts);", "opts")


@cache
def _focused_js() -> str:
    return _wrap_js("return __pwFocused(opts);", "opts")


@cache
def _handle_js() -> str:
    return _wrap_js("return __pwResult(el, opts);", "el, opts")


@cache
def _sources_js() -> str:
    return _wrap_js("return __pwSources(opts.needle, opts);", "opts")


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


def _check(result: Any) -> dict[str, Any]:
    if not isinstance(result, dict):
        raise FactsUnavailable(f"the facts script returned {type(result).__name__}")
    if "__error" in result:
        raise FactsUnavailable(f"the facts script failed in the page: {result['__error']}")
    return result


@dataclass(frozen=True, slots=True)
class Call:
    """One Playwright call the observation needs: the driver runs it (awaiting if async)."""

    fn: Callable[..., Any]
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)


Gather = Generator[Call, Any, Any]


def facts_of_locator(
    locator: Any,
    *,
    strict: bool = True,
    timeout: float | None = None,
    needle: str | None = None,
    ugc_selectors: Sequence[str] = (),
    selector: str | None = None,
) -> Gather:
    """Facts of the element `locator` resolves to, its match count and where `needle` occurs.

    Waits (like the action would) only when nothing matches yet. With `strict` and several
    matches it raises Playwright's own strict-mode error, as the action would.
    Returns ``(facts, count, sources)``.
    """
    opts = {"strict": strict, "needle": needle, "ugc": list(ugc_selectors)}
    result = _check((yield Call(locator.evaluate_all, (_locator_js(), opts))))
    if result["count"] == 0:
        wait_kwargs: dict[str, Any] = {"state": "attached"}
        if timeout is not None:
            wait_kwargs["timeout"] = timeout
        yield Call(locator.first.wait_for, (), wait_kwargs)
        result = _check((yield Call(locator.evaluate_all, (_locator_js(), opts))))
    if result["count"] > 1 and strict:
        # Let Playwright raise its strict-mode violation, exactly as the action would.
        yield Call(locator.evaluate, ("() => null",))
    return _facts(result.get("facts"), selector), int(result["count"]), _sources(result.get("sources", ()))


def facts_of_handle(handle: Any, *, needle: str | None = None, ugc_selectors: Sequence[str] = ()) -> Gather:
    """Facts of an element handle. Returns ``(facts, sources)``."""
    opts = {"needle": needle, "ugc": list(ugc_selectors)}
    result = _check((yield Call(handle.evaluate, (_handle_js(), opts))))
    return _facts(result.get("facts"), "element-handle"), _sources(result.get("sources", ()))


def facts_at_point(
    page_or_frame: Any, x: float, y: float, *, needle: str | None = None, ugc_selectors: Sequence[str] = ()
) -> Gather:
    """Facts of the element at viewport point (x, y). Returns ``(facts, sources)``."""
    opts = {"x": x, "y": y, "needle": needle, "ugc": list(ugc_selectors)}
    result = _check((yield Call(page_or_frame.evaluate, (_point_js(), opts))))
    return _facts(result.get("facts"), f"point({x:g},{y:g})"), _sources(result.get("sources", ()))


def facts_of_focused(
    page_or_frame: Any, *, needle: str | None = None, ugc_selectors: Sequence[str] = ()
) -> Gather:
    """Facts of the focused element (where keyboard input goes). Returns ``(facts, sources)``."""
    opts = {"needle": needle, "ugc": list(ugc_selectors)}
    result = _check((yield Call(page_or_frame.evaluate, (_focused_js(), opts))))
    return _facts(result.get("facts"), ":focus"), _sources(result.get("sources", ()))


def value_sources(page_or_frame: Any, needle: str, *, ugc_selectors: Sequence[str] = ()) -> Gather:
    """Where `needle` occurs in the page (text, links, aria attributes)."""
    result = yield Call(
        page_or_frame.evaluate, (_sources_js(), {"needle": needle, "ugc": list(ugc_selectors)})
    )
    if isinstance(result, dict) and "__error" in result:
        raise FactsUnavailable(f"the sources script failed in the page: {result['__error']}")
    return _sources(result if isinstance(result, list) else ())
