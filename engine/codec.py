"""Events, commands and effects to JSON-safe dicts and back (for storage and records).

Every dataclass is written as a dict with a "type" key naming its class; fields are converted
by their annotations (enums by value, tuples and frozensets as lists, NewTypes as their base).
Loading looks the type up in a registry of the engine's own dataclasses only.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from enum import Enum
from functools import cache
from typing import Any, Union, get_args, get_origin

from engine import commands, effects, events, model, state

_MODULES = (events, commands, effects, state, model)


@cache
def _registry() -> dict[str, type]:
    found: dict[str, type] = {}
    for module in _MODULES:
        for name, obj in vars(module).items():
            if (
                isinstance(obj, type)
                and dataclasses.is_dataclass(obj)
                and obj.__module__ == module.__name__
            ):
                found[name] = obj
    return found


@cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def dump(obj: Any) -> Any:
    """A JSON-safe form of an engine value (dataclasses become dicts with a "type" key)."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        out: dict[str, Any] = {"type": type(obj).__name__}
        for f in dataclasses.fields(obj):
            out[f.name] = dump(getattr(obj, f.name))
        return out
    if isinstance(obj, Enum):
        return obj.value
    if isinstance(obj, tuple | list):
        return [dump(x) for x in obj]
    if isinstance(obj, frozenset | set):
        return sorted(dump(x) for x in obj)
    return obj


def load(data: Any) -> Any:
    """The engine value of a dict written by `dump` (its "type" names the class)."""
    if not isinstance(data, dict) or "type" not in data:
        raise ValueError("not an engine value: a dict with a 'type' key was expected")
    return _load_dataclass(data)


def _load_dataclass(data: dict[str, Any]) -> Any:
    cls = _registry().get(str(data.get("type")))
    if cls is None:
        raise ValueError(f"unknown engine type {data.get('type')!r}")
    hints = _hints(cls)
    kwargs = {
        f.name: _convert(data[f.name], hints[f.name])
        for f in dataclasses.fields(cls)
        if f.name in data
    }
    return cls(**kwargs)


def _convert(value: Any, hint: Any) -> Any:
    if value is None:
        return None
    supertype = getattr(hint, "__supertype__", None)
    if supertype is not None:  # NewType
        return _convert(value, supertype)
    origin = get_origin(hint)
    if origin in (Union, types.UnionType):
        options = [a for a in get_args(hint) if a is not type(None)]
        if isinstance(value, dict) and "type" in value:
            return _load_dataclass(value)
        return _convert(value, options[0]) if len(options) == 1 else value
    if origin is tuple:
        args = get_args(hint)
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_convert(v, args[0]) for v in value)
        return tuple(_convert(v, a) for v, a in zip(value, args, strict=True))
    if origin in (frozenset, set):
        (arg,) = get_args(hint)
        return frozenset(_convert(v, arg) for v in value)
    if isinstance(hint, type):
        if issubclass(hint, Enum):
            return hint(value)
        if dataclasses.is_dataclass(hint):
            return _load_dataclass(value)
    return value
