"""Values crossing the guarded surface, passed through as Playwright passes them.

What a guarded call returns, and what a callback receives, is what Playwright would give,
with the Playwright objects in it (pages, frames, locators, handles …) swapped for their
guarded stand-ins; what the agent passes in gets the stand-ins swapped back. Playwright itself
copies the lists and dicts it hands over (``from_maybe_impl`` / ``to_impl``), keeping shared
references and cycles; so does `convert`, and only when there is something to swap: a value
with no Playwright object in it (an `evaluate` result, however large, with cycles or not) is
returned as it is. The walks are iterative: no depth of nesting exhausts the stack.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

__all__ = ["arity", "convert", "holds"]

#: leaves never swapped (checked by exact type: the common case costs one set lookup)
_PLAIN = frozenset({str, bytes, int, float, bool, type(None)})


def holds(root: Any, swapped: Callable[[Any], bool]) -> bool:
    """Whether `root` is, or holds in its lists, tuples and dict values, a leaf `swapped`
    says must be swapped (each container is visited once: cycles end)."""
    seen: set[int] = set()
    stack = [root]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind in _PLAIN:
            continue
        if isinstance(item, (list, tuple, dict)):
            if id(item) in seen:
                continue
            seen.add(id(item))
            stack.extend(item.values() if isinstance(item, dict) else item)
        elif swapped(item):
            return True
    return False


def convert(root: Any, swap: Callable[[Any], Any]) -> Any:
    """`root` with every leaf passed through `swap`: lists and dicts copied (as plain lists
    and dicts, as Playwright copies them), each once, so that shared references stay shared
    and a cycle stays a cycle; tuples rebuilt after their items."""
    made: dict[int, Any] = {}
    pending: list[tuple[Any, Any]] = []

    def visit(item: Any) -> Any:
        if type(item) in _PLAIN:
            return item
        if isinstance(item, (list, dict)):
            done = made.get(id(item))
            if done is not None:
                return done
            copy: Any = {} if isinstance(item, dict) else []
            made[id(item)] = copy
            pending.append((item, copy))
            return copy
        if isinstance(item, tuple):
            done = made.get(id(item))
            if done is not None:
                return done
            made[id(item)] = item  # a cycle back into a tuple being built keeps the original
            rebuilt = tuple(visit(each) for each in item)
            made[id(item)] = rebuilt
            return rebuilt
        return swap(item)

    result = visit(root)
    while pending:
        source, copy = pending.pop()
        if isinstance(copy, dict):
            for key, value in source.items():
                copy[key] = visit(value)
        else:
            copy.extend(visit(value) for value in source)
    return result


def arity(handler: Callable[..., Any], given: int) -> int:
    """How many of `given` positional arguments Playwright passes to `handler` (its own rule,
    ``wrap_handler`` in ``_impl_to_api_mapping``): all with ``*args``, else as many as it has
    positional parameters (a callback may take fewer than the event offers)."""
    parameters = inspect.signature(handler).parameters.values()
    if any(p.kind == inspect.Parameter.VAR_POSITIONAL for p in parameters):
        return given
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return sum(p.kind in positional for p in parameters)
