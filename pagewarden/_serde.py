"""Plain-data conversion for the frozen dataclasses that cross the trace boundary.

`to_data` turns a dataclass tree into JSON-able dicts/lists (dropping None and empty
defaults); `from_data` rebuilds it from such data, checking types and naming the field at
fault in a `DataFormatError`.
"""

from __future__ import annotations

import dataclasses
import types
import typing
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


def _convert(tp: Any, value: Any, where: str) -> Any:
    origin = get_origin(tp)
    if tp is Any:
        return value
    if origin in (Union, types.UnionType):
        args = get_args(tp)
        if value is None:
            if type(None) in args:
                return None
            raise DataFormatError(f"{where}: must not be null")
        errors = []
        for arg in args:
            if arg is type(None):
                continue
            try:
                return _convert(arg, value, where)
            except DataFormatError as exc:
                errors.append(str(exc))
        raise DataFormatError(errors[0] if len(errors) == 1 else f"{where}: unexpected value {value!r}")
    if origin is tuple:
        if not isinstance(value, (list, tuple)):
            raise DataFormatError(f"{where}: expected a list, got {type(value).__name__}")
        (item_tp, *_rest) = get_args(tp)
        return tuple(_convert(item_tp, v, f"{where}[{i}]") for i, v in enumerate(value))
    if origin is dict or tp is dict:
        if not isinstance(value, dict):
            raise DataFormatError(f"{where}: expected a mapping, got {type(value).__name__}")
        return dict(value)
    if origin is typing.Literal:
        if value not in get_args(tp):
            raise DataFormatError(f"{where}: must be one of {get_args(tp)}, got {value!r}")
        return value
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return from_data(tp, value, where)
    if isinstance(tp, type) and issubclass(tp, Enum):
        try:
            return tp(value)
        except ValueError:
            raise DataFormatError(f"{where}: must be one of {[m.value for m in tp]}, got {value!r}") from None
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise DataFormatError(f"{where}: expected a number, got {value!r}")
        return float(value)
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise DataFormatError(f"{where}: expected an integer, got {value!r}")
        return value
    if tp in (str, bool):
        if not isinstance(value, tp):
            raise DataFormatError(f"{where}: expected {tp.__name__}, got {type(value).__name__}")
        return value
    return value


def from_data(cls: type[T], data: Any, where: str = "") -> T:
    """Build dataclass `cls` from plain data; unknown keys are an error."""
    name = where or cls.__name__
    if isinstance(data, cls):
        return data
    if not isinstance(data, dict):
        raise DataFormatError(f"{name}: expected a mapping, got {type(data).__name__}")
    hints = _hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    unknown = sorted(set(data) - set(fields))
    if unknown:
        raise DataFormatError(f"{name}: unknown field(s) {unknown}")
    kwargs = {}
    for key, value in data.items():
        kwargs[key] = _convert(hints[key], value, f"{name}.{key}")
    missing = [
        n
        for n, f in fields.items()
        if n not in kwargs and f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    ]
    if missing:
        raise DataFormatError(f"{name}: missing required field(s) {missing}")
    return cls(**kwargs)
