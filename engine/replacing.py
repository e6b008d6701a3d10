"""`replace(obj, **changes)`: `dataclasses.replace` for the engine's slotted frozen dataclasses,
made for each class and set of fields changed, once.

`evolve` makes a new `GameState` (23 fields) for every event it folds: every input, and every
event of a game a restart rebuilds. `dataclasses.replace` walks the class's fields, builds a
keyword dict and calls the frozen `__init__`, which stores each field through
`object.__setattr__`: ~5 µs a state. The function made here for a class and the fields a call
changes takes them as keyword-only parameters and fills the new object's slots directly (as
`engine.codec` loads them), the others from the old object: ~1.5 µs. The result is the same
object `dataclasses.replace` would build (same fields, so the same equality, hash and serialized
form); a class it cannot be made for (no slots, an `__post_init__`, a field not set by
`__init__`, an `InitVar`, an unknown field) gets `dataclasses.replace` itself.
"""

from __future__ import annotations

import dataclasses
import types
from collections.abc import Callable
from functools import cache
from typing import Any, TypeVar

T = TypeVar("T")


def replace(obj: T, /, **changes: Any) -> T:
    """A copy of the dataclass instance `obj` with `changes` (field name → new value)."""
    cls: type = type(obj)
    new: T = _replacer(cls, tuple(changes))(obj, **changes)
    return new


@cache
def _replacer(cls: type, changed: tuple[str, ...]) -> Callable[..., Any]:
    """The function that copies a `cls` with new values for the fields `changed` (made once per
    class and set of fields changed: each call site changes the same ones every time)."""
    fields = dataclasses.fields(cls)
    slots = [vars(cls).get(f.name) for f in fields]
    if (
        not fields
        or hasattr(cls, "__post_init__")
        or len(fields) != len(cls.__dataclass_fields__)  # type: ignore[attr-defined]  # InitVar
        or not all(f.init for f in fields)
        or not all(isinstance(slot, types.MemberDescriptorType) for slot in slots)
        or any(f.name.startswith("_") for f in fields)
        or not set(changed) <= {f.name for f in fields}  # dataclasses.replace says what is wrong
    ):
        return dataclasses.replace
    # The generated body, per field: `set_i(new, name)` if changed, else `set_i(new, old.name)`.
    scope: dict[str, Any] = {"new_object": object.__new__, "cls": cls}
    params = "".join(f", {name}" for name in changed)
    keywords = f", *{params}" if changed else ""
    lines = [f"def replace(_old, /{keywords}):", "    _new = new_object(cls)"]
    for i, (f, slot) in enumerate(zip(fields, slots, strict=True)):
        scope[f"set_{i}"] = slot.__set__  # type: ignore[union-attr]
        value = f.name if f.name in changed else f"_old.{f.name}"
        lines.append(f"    set_{i}(_new, {value})")
    lines.append("    return _new")
    exec("\n".join(lines), scope)  # the source is made here, from field names only
    made: Callable[..., Any] = scope["replace"]
    return made
