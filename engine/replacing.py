"""`replace(obj, **changes)`: `dataclasses.replace` for the engine's slotted frozen dataclasses,
made for each class once.

`evolve` makes a new `GameState` (23 fields) for every event it folds: every input, and every
event of a game a restart rebuilds. `dataclasses.replace` walks the class's fields, builds a
keyword dict and calls the frozen `__init__`, which stores each field through
`object.__setattr__`: ~5 µs a state. The function made here for a class takes the changes as
keyword-only parameters and fills the new object's slots directly (as `engine.codec` loads them):
~2 µs. The result is the same object `dataclasses.replace` would build (same fields, so the same
equality, hash and serialized form); a class it cannot be made for (no slots, an `__post_init__`,
a field not set by `__init__`, an `InitVar`) gets `dataclasses.replace` itself.
"""

from __future__ import annotations

import dataclasses
import types
from collections.abc import Callable
from functools import cache
from typing import Any, TypeVar

T = TypeVar("T")

_MISSING: Any = object()
"""A keyword not given: the field keeps the old object's value."""


def replace(obj: T, /, **changes: Any) -> T:
    """A copy of the dataclass instance `obj` with `changes` (field name → new value)."""
    cls: type = type(obj)
    new: T = _replacer(cls)(obj, **changes)
    return new


@cache
def _replacer(cls: type) -> Callable[..., Any]:
    """The function that copies a `cls` with changes (made once per class)."""
    fields = dataclasses.fields(cls)
    slots = [vars(cls).get(f.name) for f in fields]
    if (
        not fields
        or hasattr(cls, "__post_init__")
        or len(fields) != len(cls.__dataclass_fields__)  # type: ignore[attr-defined]  # InitVar
        or not all(f.init for f in fields)
        or not all(isinstance(slot, types.MemberDescriptorType) for slot in slots)
        or any(f.name.startswith("_") for f in fields)
    ):
        return dataclasses.replace
    # The generated body, per field: `set_i(new, old.name if name is missing else name)`.
    scope: dict[str, Any] = {"new_object": object.__new__, "cls": cls, "missing": _MISSING}
    params = ", ".join(f"{f.name}=missing" for f in fields)
    lines = [f"def replace(_old, /, *, {params}):", "    _new = new_object(cls)"]
    for i, (f, slot) in enumerate(zip(fields, slots, strict=True)):
        scope[f"set_{i}"] = slot.__set__  # type: ignore[union-attr]
        lines.append(f"    set_{i}(_new, _old.{f.name} if {f.name} is missing else {f.name})")
    lines.append("    return _new")
    exec("\n".join(lines), scope)  # the source is made here, from field names only
    made: Callable[..., Any] = scope["replace"]
    return made
