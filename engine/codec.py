"""Events, commands and effects to JSON-safe dicts and back (for storage and records).

Every dataclass is written as a dict with a "type" key naming its class; fields are converted
by their annotations (enums by value, tuples and frozensets as lists, NewTypes as their base).
Loading looks the type up in a registry of the engine's own dataclasses only.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable
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


# Loading converts by annotation. Reading the annotations is slow, so each class and each
# annotation is read once into a converter function (cached), and loading only calls them.

Convert = Callable[[Any], Any]


def _load_dataclass(data: dict[str, Any]) -> Any:
    name = data.get("type")
    known = _classes().get(name)  # type: ignore[arg-type]
    if known is None:
        raise ValueError(f"unknown engine type {name!r}")
    cls, fields, plain = known
    values = {
        f: value if convert is None else convert(value)
        for f, convert in fields
        if (value := data.get(f, _MISSING)) is not _MISSING
    }
    if plain and len(values) == len(fields):
        # Every field given and no __post_init__: what the generated __init__ of a frozen
        # dataclass would do, without its one object.__setattr__ call per field.
        obj: Any = object.__new__(cls)
        obj.__dict__.update(values)
        return obj
    return cls(**values)


_MISSING: Any = object()


@cache
def _classes() -> dict[str, tuple[type, tuple[tuple[str, Convert | None], ...], bool]]:
    """Type name → (class, its fields with their converters (None: kept as is), plain)."""
    return {name: (cls, _fields(cls), _plain(cls)) for name, cls in _registry().items()}


@cache
def _fields(cls: type) -> tuple[tuple[str, Convert | None], ...]:
    hints = _hints(cls)
    fields = ((f.name, _converter(hints[f.name])) for f in dataclasses.fields(cls))
    return tuple((name, None if convert is _same else convert) for name, convert in fields)


@cache
def _plain(cls: type) -> bool:
    """A dataclass whose __init__ only stores its fields (no __post_init__, no __slots__)."""
    return not hasattr(cls, "__post_init__") and "__slots__" not in vars(cls)


def _same(value: Any) -> Any:
    return value


@cache
def _converter(hint: Any) -> Convert:
    """A function that turns a JSON value into a value of type `hint` (None stays None)."""
    supertype = getattr(hint, "__supertype__", None)
    if supertype is not None:  # NewType
        return _converter(supertype)
    origin = get_origin(hint)
    if origin in (Union, types.UnionType):
        options = [a for a in get_args(hint) if a is not type(None)]
        inner = _converter(options[0]) if len(options) == 1 else _same

        def union(value: Any) -> Any:
            if value is None:
                return None
            if isinstance(value, dict) and "type" in value:
                return _load_dataclass(value)
            return inner(value)

        return union
    if origin is tuple:
        args = get_args(hint)
        if len(args) == 2 and args[1] is Ellipsis:
            item = _converter(args[0])
            if item is _same:
                return lambda value: None if value is None else tuple(value)
            return lambda value: None if value is None else tuple(map(item, value))
        items = tuple(_converter(a) for a in args)
        return lambda value: (
            None if value is None else tuple(c(v) for v, c in zip(value, items, strict=True))
        )
    if origin in (frozenset, set):
        (arg,) = get_args(hint)
        member = _converter(arg)
        return lambda value: None if value is None else frozenset(map(member, value))
    if isinstance(hint, type):
        if issubclass(hint, Enum):
            enum = hint
            members = enum._value2member_map_

            def enum_member(value: Any) -> Any:
                if value is None:
                    return None
                try:
                    return members[value]
                except (KeyError, TypeError):  # not a value's exact form: let the Enum decide
                    return enum(value)

            return enum_member
        if dataclasses.is_dataclass(hint):
            return lambda value: None if value is None else _load_dataclass(value)
    return _same
