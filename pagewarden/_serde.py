"""Plain-data conversion for the frozen dataclasses that cross the trace boundary.

`to_data` turns a dataclass tree into JSON-able dicts/lists (dropping None and empty
defaults); `from_data` rebuilds it from such data, checking types and naming the field at
fault in a `DataFormatError`.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable
from enum import Enum
from functools import cache
from typing import Any, TypeVar, Union, get_args, get_origin

__all__ = ["DataFormatError", "from_data", "to_data"]

T = TypeVar("T")


class DataFormatError(ValueError):
    """Data does not have the documented shape; the message names the field."""


def to_data(obj: Any) -> Any:
    """A JSON-able form of a dataclass tree (None values and empty tuples left out)."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        out: dict[str, Any] = {}
        for f in dataclasses.fields(obj):
            value = getattr(obj, f.name)
            if value is None or value == () or value == {}:
                continue
            out[f.name] = to_data(value)
        return out
    if isinstance(obj, Enum):
        return obj.value
    if isinstance(obj, (list, tuple)):
        return [to_data(v) for v in obj]
    if isinstance(obj, dict):
        return {str(k): to_data(v) for k, v in obj.items()}
    return obj


@cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


Converter = Callable[[Any, str], Any]


def _identity(value: Any, where: str) -> Any:
    return value


@cache
def _converter(tp: Any) -> Converter:
    """A function that checks and converts a value of type `tp`, naming `where` in its errors:
    worked out once per type (the type hints, unions and nested classes are not looked at again
    for each value; facts are converted on every guarded action)."""
    origin = get_origin(tp)
    if tp is Any:
        return _identity
    if origin in (Union, types.UnionType):
        args = get_args(tp)
        nullable = type(None) in args
        options = [_converter(arg) for arg in args if arg is not type(None)]

        def union(value: Any, where: str) -> Any:
            if value is None:
                if nullable:
                    return None
                raise DataFormatError(f"{where}: must not be null")
            errors = []
            for option in options:
                try:
                    return option(value, where)
                except DataFormatError as exc:
                    errors.append(str(exc))
            raise DataFormatError(errors[0] if len(errors) == 1 else f"{where}: unexpected value {value!r}")

        return union
    if origin is tuple:
        (item_tp, *_rest) = get_args(tp)
        item = _converter(item_tp)

        def sequence(value: Any, where: str) -> Any:
            if not isinstance(value, (list, tuple)):
                raise DataFormatError(f"{where}: expected a list, got {type(value).__name__}")
            return tuple(item(v, f"{where}[{i}]") for i, v in enumerate(value))

        return sequence
    if origin is dict or tp is dict:

        def mapping(value: Any, where: str) -> Any:
            if not isinstance(value, dict):
                raise DataFormatError(f"{where}: expected a mapping, got {type(value).__name__}")
            return dict(value)

        return mapping
    if origin is typing.Literal:
        allowed = get_args(tp)

        def literal(value: Any, where: str) -> Any:
            if value not in allowed:
                raise DataFormatError(f"{where}: must be one of {allowed}, got {value!r}")
            return value

        return literal
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return lambda value, where: from_data(tp, value, where)
    if isinstance(tp, type) and issubclass(tp, Enum):
        members = tp

        def enum(value: Any, where: str) -> Any:
            try:
                return members(value)
            except ValueError:
                choices = [m.value for m in members]
                raise DataFormatError(f"{where}: must be one of {choices}, got {value!r}") from None

        return enum
    if tp is float:

        def number(value: Any, where: str) -> Any:
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise DataFormatError(f"{where}: expected a number, got {value!r}")
            return float(value)

        return number
    if tp is int:

        def integer(value: Any, where: str) -> Any:
            if isinstance(value, bool) or not isinstance(value, int):
                raise DataFormatError(f"{where}: expected an integer, got {value!r}")
            return value

        return integer
    if tp in (str, bool):

        def plain(value: Any, where: str) -> Any:
            if not isinstance(value, tp):
                raise DataFormatError(f"{where}: expected {tp.__name__}, got {type(value).__name__}")
            return value

        return plain
    return _identity


def _convert(tp: Any, value: Any, where: str) -> Any:
    return _converter(tp)(value, where)


#: Types a value of which a converter hands back unchanged when it is of exactly that type.
_AS_IS = (str, bool, int, float)


def _exact_types(tp: Any) -> frozenset[type] | None:
    """The exact types of value that `_converter(tp)` returns unchanged (so `from_data` takes
    them without calling it), or None when every value goes through the converter."""
    if tp is Any:
        return None  # (the identity: anything, but cheap to call and rare)
    if get_origin(tp) in (Union, types.UnionType):
        args = get_args(tp)
        if float in args and int in args:
            return None  # (an int may be made a float: the order of the options decides)
        parts = [frozenset({type(None)}) if arg is type(None) else _exact_types(arg) for arg in args]
        if any(part is None for part in parts):
            return None
        return frozenset().union(*parts)  # type: ignore[arg-type]
    if tp in _AS_IS:
        return frozenset({tp})
    return None


@cache
def _plan(cls: type) -> tuple[dict[str, Converter], tuple[str, ...], dict[str, frozenset[type]]]:
    """The converter of each field of dataclass `cls`, the fields without a default, and for
    the fields of plain types (str, bool, int, float, or optional ones) the exact types of value
    taken as they are."""
    hints = _hints(cls)
    fields = dataclasses.fields(cls)  # type: ignore[arg-type]
    converters = {f.name: _converter(hints[f.name]) for f in fields}
    missing = dataclasses.MISSING
    required = tuple(f.name for f in fields if f.default is missing and f.default_factory is missing)
    exact = {f.name: kinds for f in fields if (kinds := _exact_types(hints[f.name])) is not None}
    return converters, required, exact


def from_data(cls: type[T], data: Any, where: str = "") -> T:
    """Build dataclass `cls` from plain data; unknown keys are an error."""
    name = where or cls.__name__
    if isinstance(data, cls):
        return data
    if not isinstance(data, dict):
        raise DataFormatError(f"{name}: expected a mapping, got {type(data).__name__}")
    converters, required, exact = _plan(cls)
    if not converters.keys() >= data.keys():
        raise DataFormatError(f"{name}: unknown field(s) {sorted(set(data) - set(converters))}")
    kwargs: dict[str, Any] = {}
    for key, value in data.items():
        kinds = exact.get(key)
        # a value of exactly the field's plain type is what its converter would hand back
        if kinds is not None and type(value) in kinds:
            kwargs[key] = value
        else:
            kwargs[key] = converters[key](value, f"{name}.{key}")
    missing = [n for n in required if n not in kwargs]
    if missing:
        raise DataFormatError(f"{name}: missing required field(s) {missing}")
    return cls(**kwargs)
