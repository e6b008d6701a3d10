"""`codec.dump`'s functions made per class write what dumping field by field writes: the same
keys in the same order, the same values, for every kind of engine value a game holds."""

from __future__ import annotations

import dataclasses
import json
from enum import Enum
from typing import Any

from playouts import steps_of

from engine import codec
from engine.publish import effects_for
from engine.state import AppendLog

AS_IS = (str, int, float, bool, type(None))


def dump_field_by_field(obj: Any) -> Any:
    """The plain recursive dump the codec's made functions must match."""
    if type(obj) in AS_IS:
        return obj
    if isinstance(obj, Enum):
        return obj.value
    if isinstance(obj, tuple | list | AppendLog):
        return list(map(dump_field_by_field, obj))
    if isinstance(obj, frozenset | set):
        return sorted(map(dump_field_by_field, obj))
    fields = {f.name: dump_field_by_field(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    return {"type": type(obj).__name__} | fields


def _as_text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def test_states_events_and_effects_dump_as_field_by_field() -> None:
    steps = steps_of(12, games=5)
    assert len(steps) >= 100
    for step in steps:
        for value in (step.after, *step.events, *effects_for(step.before, step.events)):
            assert _as_text(codec.dump(value)) == _as_text(dump_field_by_field(value))


def test_a_field_named_type_keeps_the_first_place_and_its_own_value() -> None:
    @dataclasses.dataclass(frozen=True)
    class Odd:
        type: str
        n: int

    assert list(codec.dump(Odd(type="x", n=1)).items()) == [("type", "x"), ("n", 1)]


def test_an_enum_is_dumped_as_its_value_reads_even_where_it_redefines_value() -> None:
    class Plain(Enum):
        A = "a"

    class Shouting(Enum):
        A = "a"

        @property
        def value(self) -> str:
            return "A!"

    assert codec.dump(Plain.A) == "a" and codec.dump((Plain.A, frozenset({Plain.A}))) == [
        "a",
        ["a"],
    ]
    assert codec.dump(Shouting.A) == "A!"
