"""Events, commands and effects to JSON-safe dicts and back (for storage and records).

Every dataclass is written as a dict with a "type" key naming its class; fields are converted
by their annotations (enums by value, tuples and frozensets as lists, NewTypes as their base).
Loading looks the type up in a registry of the engine's own dataclasses only. A loaded value is
kept compact, since a running bot holds every active game's state: the dataclasses are slotted,
repeated strings are interned and empty sets shared (a rebuilt game: ~16 KB instead of ~42 KB).
"""

from __future__ import annotations

import dataclasses
import sys
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


_AS_IS = frozenset({str, int, float, bool, type(None)})
"""Types dumped as they are (exactly these: an enum deriving from str or int is not one)."""


Dump = Callable[[Any], Any]


def dump(obj: Any) -> Any:
    """A JSON-safe form of an engine value (dataclasses become dicts with a "type" key)."""
    cls = type(obj)
    if cls in _AS_IS:
        return obj
    return _BY_CLASS[cls](obj)


class _Dumpers(dict[type, Dump]):
    """Per class, the function that dumps a value of it (`_dumper`), made the first time one is
    dumped: every vote post dumps its events and effects, every snapshot the whole state, and
    looking at what a value is on each was most of the work."""

    def __missing__(self, cls: type) -> Dump:
        made = self[cls] = _dumper(cls)
        return made


_BY_CLASS = _Dumpers()


def _dumper(cls: type) -> Dump:
    """How a value of `cls` is dumped, decided once for the class: a dataclass by a function
    made for its fields (`_fields_dumper`), an enum by its value, a tuple or list as a list and a
    set sorted, each item dumped; any other value as it is."""
    if dataclasses.is_dataclass(cls):
        return _fields_dumper(cls)
    if issubclass(cls, Enum):
        return _value if _redefines_value(cls) else _stored_value
    if issubclass(cls, tuple | list | state.AppendLog):
        return _listed
    if issubclass(cls, frozenset | set):
        return _sorted
    return _same


def _value(obj: Any) -> Any:
    return obj.value


def _stored_value(obj: Any) -> Any:
    """`Enum.value`, read where it keeps it (the property runs Python code on every read)."""
    return obj._value_


def _redefines_value(cls: type) -> bool:
    """Whether an enum's `value` is its own, not `Enum.value`."""
    return any("value" in vars(c) for c in cls.__mro__[: cls.__mro__.index(Enum)])


def _listed(obj: Any) -> list[Any]:
    if not obj:  # most of a state's tuples and sets are empty
        return []
    return [x if type(x) in _AS_IS else _BY_CLASS[type(x)](x) for x in obj]


def _sorted(obj: Any) -> list[Any]:
    return sorted(_listed(obj))


def _fields_dumper(cls: type) -> Dump:
    """For a dataclass, a function made for its fields: the dict `{"type": name, field: value,
    ...}` in field order, each value kept as it is when its type is one `_AS_IS` names (no call)
    and dumped by its class's function otherwise."""
    names = [f.name for f in dataclasses.fields(cls)]
    scope: dict[str, Any] = {"as_is": _AS_IS, "by_class": _BY_CLASS, "name": cls.__name__}
    lines = ["def dump_one(obj):"]
    items = ['"type": name']
    for i, field in enumerate(names):
        lines.append(f"    v{i} = obj.{field}")
        lines.append(f"    t{i} = type(v{i})")
        items.append(f"{field!r}: v{i} if t{i} in as_is else by_class[t{i}](v{i})")
    lines.append("    return {" + ", ".join(items) + "}")
    exec("\n".join(lines), scope)  # the source is made here, from field names only
    made: Dump = scope["dump_one"]
    return made


def load(data: Any) -> Any:
    """The engine value of a dict written by `dump` (its "type" names the class)."""
    if not isinstance(data, dict) or "type" not in data:
        raise ValueError("not an engine value: a dict with a 'type' key was expected")
    return _load_dataclass(data)


# Loading converts by annotation. Reading the annotations is slow, so each class is read once
# into a loader function (cached) made for its fields, and loading only calls them.

Convert = Callable[[Any], Any]
Load = Callable[[dict[str, Any]], Any]


def _load_dataclass(data: dict[str, Any]) -> Any:
    name = data.get("type")
    load_one = (_LOADERS or _loaders()).get(name)  # type: ignore[arg-type]
    if load_one is None:
        raise ValueError(f"unknown engine type {name!r}")
    return load_one(data)


_MISSING: Any = object()

_UNIQUE = frozenset({"post_id", "seed", "commitment", "text", "raw", "last_words_given"})
"""Fields whose strings are seldom repeated (one post's id, a game's seed, free text): kept as
read. Every other string an engine value holds (player ids, names, message keys, labels) is
interned, so a game's 48 vote posts share their authors' 16 ids with its seats, and games share
keys and labels: most of the strings a rebuilt game would otherwise keep."""

_EMPTY: frozenset[Any] = frozenset()
"""The one empty frozenset loading hands out (every seat's `spent`, at first)."""


_LOADERS: dict[str, Load] = {}
"""Type name → the function that builds that class from its dict (`_loaders`, made on first use;
read directly: a snapshot loads ~80 values, each looked up here)."""


def _loaders() -> dict[str, Load]:
    """`_LOADERS`, made if it is not yet."""
    if not _LOADERS:
        _LOADERS.update({name: _loader(cls) for name, cls in _registry().items()})
    return _LOADERS


@cache
def _fields(cls: type) -> tuple[tuple[str, Convert | None, Any], ...]:
    """Each field: its name, its converter (None: kept as read) and its default (or _MISSING)."""
    hints = _hints(cls)
    fields = []
    for f in dataclasses.fields(cls):
        convert = _converter(hints[f.name], intern=f.name not in _UNIQUE)
        default = _MISSING if f.default is dataclasses.MISSING else f.default
        fields.append((f.name, None if convert is _same else convert, default))
    return tuple(fields)


def _loader(cls: type) -> Load:
    """A function building `cls` from its dict: for a slotted dataclass whose __init__ only
    stores its fields, one made for it that fills the slots directly (no keyword dict, no
    frozen __setattr__ per field: about twice as fast as calling the class); else the class."""
    fields = _fields(cls)

    def by_init(data: dict[str, Any]) -> Any:
        values = {
            name: value if convert is None else convert(value)
            for name, convert, _ in fields
            if (value := data.get(name, _MISSING)) is not _MISSING
        }
        return cls(**values)

    slots = [vars(cls).get(name) for name, _, _ in fields]
    if hasattr(cls, "__post_init__") or not all(
        isinstance(slot, types.MemberDescriptorType) for slot in slots
    ):
        return by_init
    # The generated body, per field: `set_i(obj, convert_i(data["name"]))`; a field with a
    # default takes it when absent; a missing required field (KeyError) goes to `by_init`,
    # which raises what the class does.
    scope: dict[str, Any] = {
        "new": object.__new__,
        "cls": cls,
        "missing": _MISSING,
        "intern": sys.intern,
        "load_dataclass": _load_dataclass,
    }
    lines = ["def load(data):", "    try:", "        obj = new(cls)"]
    for i, ((name, convert, default), slot) in enumerate(zip(fields, slots, strict=True)):
        scope[f"set_{i}"] = slot.__set__  # type: ignore[union-attr]
        scope[f"convert_{i}"] = convert
        scope[f"default_{i}"] = default
        read = _inline_read(i, convert)
        if default is _MISSING:
            lines.append(f"        value = data[{name!r}]")
            lines.append(f"        set_{i}(obj, {read})")
        else:
            lines.append(f"        value = data.get({name!r}, missing)")
            lines.append(f"        set_{i}(obj, default_{i} if value is missing else {read})")
    lines += ["    except KeyError:", "        return by_init(data)", "    return obj"]
    scope["by_init"] = by_init
    exec("\n".join(lines), scope)  # the source is made here, from field names only
    load_one: Load = scope["load"]
    return load_one


def _inline_read(i: int, convert: Convert | None) -> str:
    """The generated expression reading field ``i``'s ``value``: the commonest converters (a
    string interned, an engine value's dict) written out in it, the rest called."""
    if convert is None:
        return "value"
    if convert is _interned:
        return "intern(value) if type(value) is str else value"
    if convert is _dataclass_or_none:
        return "None if value is None else load_dataclass(value)"
    return f"convert_{i}(value)"


def _same(value: Any) -> Any:
    return value


def _interned(value: Any) -> Any:
    return sys.intern(value) if type(value) is str else value


def _dataclass_or_none(value: Any) -> Any:
    """An engine value read from its dict (None stays None)."""
    return None if value is None else _load_dataclass(value)


def _plain_tuple(value: Any) -> Any:
    """A list of values kept as read, as a tuple (None stays None)."""
    return None if value is None else tuple(value)


def _pair(value: Any) -> tuple[Any, Any]:
    """A pair of values kept as read (any other length is refused, as `zip(strict=True)`)."""
    first, second = value
    return (first, second)


def _plain_pair(value: Any) -> Any:
    """`_pair`, None staying None."""
    return None if value is None else _pair(value)


def _fixed_tuple(items: tuple[Convert, ...]) -> Convert:
    """The converter of a fixed-length tuple whose members convert by ``items`` (a list of
    another length is refused)."""
    if items == (_same, _same):
        return _plain_pair
    return lambda value: (
        None if value is None else tuple(c(v) for v, c in zip(value, items, strict=True))
    )


_SCALARS = frozenset({int, float, bool, str})
"""Types whose values JSON holds as they are (a union of only these never holds a dict)."""


def _base(hint: Any) -> Any:
    """A NewType's base type (``Seat`` → int); any other hint as it is."""
    while (supertype := getattr(hint, "__supertype__", None)) is not None:
        hint = supertype
    return hint


@cache
def _converter(hint: Any, *, intern: bool = True) -> Convert:
    """A function that turns a JSON value into a value of type `hint` (None stays None); with
    `intern`, the strings in it are interned."""
    base = _base(hint)
    if base is not hint:  # a NewType: its base type's converter
        return _converter(base, intern=intern)
    if hint is str:
        return _interned if intern else _same
    origin = get_origin(hint)
    if origin in (Union, types.UnionType):
        options = [a for a in get_args(hint) if a is not type(None)]
        inner = _converter(options[0], intern=intern) if len(options) == 1 else _same
        # The wrapper below is for a dataclass's dict in a union: where none can be, the
        # value's own converter (or none) does (a snapshot's load made ~160 calls of it).
        if inner is not _same:
            return inner  # `X | None` of a converted X: it keeps None, reads its dicts itself
        if all(_base(a) in _SCALARS for a in options):
            return _same  # `Seat | None`, `str | int | bool`: JSON's own values, as read

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
            item = _converter(args[0], intern=intern)
            if item is _same:
                return _plain_tuple
            if item is _plain_pair and get_origin(args[0]) is tuple:
                # pairs of JSON's own values (a tally's (seat, votes)), never None: in C
                return lambda value: None if value is None else tuple(map(_pair, value))
            if item is _dataclass_or_none and get_origin(args[0]) is None:
                # engine values (a day's void posts), never None: read with no step between
                return lambda value: None if value is None else tuple(map(_load_dataclass, value))
            return lambda value: None if value is None else tuple(map(item, value))
        return _fixed_tuple(tuple(_converter(a, intern=intern) for a in args))
    if origin in (frozenset, set):
        (arg,) = get_args(hint)
        member = _converter(arg, intern=intern)
        return lambda value: (
            None if value is None else frozenset(map(member, value)) if value else _EMPTY
        )
    if isinstance(hint, type) and issubclass(hint, state.AppendLog):
        log = hint  # a window's posts or submissions: stored as a list of them
        return lambda value: None if value is None else log(map(_load_dataclass, value))
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
            return _dataclass_or_none
    return _same
