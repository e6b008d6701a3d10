"""`replace(obj, **changes)`: `dataclasses.replace` for the engine's slotted frozen dataclasses,
and `maker(cls)`: a function building a `cls` as its `__init__` does; each made once per class
(and set of fields changed).

`evolve` makes a new `GameState` (23 fields) for every event it folds: every input, and every
event of a game a restart rebuilds; every vote post also builds its command, its post and its
event. A frozen dataclass stores each field through `object.__setattr__` (`dataclasses.replace`
first walks the fields and builds a keyword dict): ~5 µs a state. Here the new object is made as
an instance of the class's *twin*, a plain class with the same slots in the same order (so the
same memory layout), filled by ordinary attribute stores (which Python runs as fast as a local
store), and then made a `cls` by assigning `__class__`, which Python allows between classes of
one layout: ~0.5 µs a state. The result is the same object the class itself would build (same
type, fields, equality, hash and serialized form; frozen again); a class this cannot be done for
(no slots of its own, a base other than `object`, an `__post_init__`, a field not set by
`__init__`, a default factory, an `InitVar`, an unknown field) gets `dataclasses.replace` or the
class itself. tests/engine/test_replacing.py compares the two.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from functools import cache
from typing import Any, TypeVar, cast

T = TypeVar("T")


def replace(obj: T, /, **changes: Any) -> T:
    """A copy of the dataclass instance `obj` with `changes` (field name → new value)."""
    cls: type = type(obj)
    new: T = _replacer(cls, tuple(changes))(obj, **changes)
    return new


def replacer(cls: type[T], *fields: str) -> Callable[..., T]:
    """The function `replace` calls to change `fields` of a `cls` (the object, then the fields
    as keywords), for a call site that changes the same ones every time."""
    made: Callable[..., T] = _replacer(cast(type, cls), fields)
    return made


def maker(cls: type[T]) -> Callable[..., T]:
    """A function taking what `cls(...)` takes (keywords) and building the same object; `cls`
    itself where a twin cannot build it."""
    made: Callable[..., T] = _maker(cast(type, cls))
    return made


@cache
def _replacer(cls: type, changed: tuple[str, ...]) -> Callable[..., Any]:
    """The function that copies a `cls` with new values for the fields `changed` (made once per
    class and set of fields changed: each call site changes the same ones every time)."""
    twin = _twin(cls)
    names = [f.name for f in dataclasses.fields(cls)] if twin is not None else []
    if twin is None or not set(changed) <= set(names):  # dataclasses.replace says what is wrong
        return dataclasses.replace
    keywords = "".join(f", {name}" for name in changed)
    values = [name if name in changed else f"_old.{name}" for name in names]
    return _made(cls, twin, f"replace(_old, /{', *' if changed else ''}{keywords})", names, values)


@cache
def _maker(cls: type) -> Callable[..., Any]:
    twin = _twin(cls)
    fields = dataclasses.fields(cls)
    if twin is None or any(f.default_factory is not dataclasses.MISSING for f in fields):
        return cls
    defaults = {f"default_{f.name}": f.default for f in fields}
    params = ", ".join(
        f.name if f.default is dataclasses.MISSING else f"{f.name}=default_{f.name}" for f in fields
    )
    names = [f.name for f in fields]
    return _made(cls, twin, f"make(*, {params})", names, names, defaults)


def _made(
    cls: type,
    twin: type,
    signature: str,
    names: list[str],
    values: list[str],
    scope: dict[str, Any] | None = None,
) -> Callable[..., Any]:
    """A function `signature` that fills a twin's fields `names` with `values` (expressions) and
    makes it a `cls`."""
    scope = {**(scope or {}), "new_object": object.__new__, "cls": cls, "twin": twin}
    lines = [f"def {signature}:", "    _new = new_object(twin)"]
    lines += [f"    _new.{name} = {value}" for name, value in zip(names, values, strict=True)]
    lines += ["    _new.__class__ = cls", "    return _new"]
    exec("\n".join(lines), scope)  # the source is made here, from field names only
    made: Callable[..., Any] = scope[signature.partition("(")[0]]
    return made


@cache
def _twin(cls: type) -> type | None:
    """A plain class with `cls`'s slots, whose objects may become `cls` objects; None when
    `cls` is not a slotted dataclass whose `__init__` only stores its fields."""
    if not dataclasses.is_dataclass(cls):
        return None
    fields = dataclasses.fields(cls)
    names = tuple(f.name for f in fields)
    if (
        not fields
        or cls.__bases__ != (object,)
        or vars(cls).get("__slots__") != names
        or hasattr(cls, "__post_init__")
        or len(fields) != len(cls.__dataclass_fields__)  # an InitVar
        or not all(f.init for f in fields)
        or any(name.startswith("_") for name in names)
    ):
        return None
    twin = type(f"{cls.__name__}Twin", (), {"__slots__": names})
    probe: Any = twin()
    try:  # Python says here whether the two layouts are one
        probe.__class__ = cls
    except TypeError:
        return None
    return twin
