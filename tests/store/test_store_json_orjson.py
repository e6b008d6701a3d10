"""With orjson installed, the store's JSON (``sqlite_group.json_dumps``, ``dump_all``) is still
the standard encoder's text, character for character, and refuses what it refuses: for every
event, effect and state of the recorded games (written by orjson itself), and for what orjson
writes otherwise (NaN and infinities as null, floats by digits of its own, plain enum members
and UUIDs by their value) or refuses (keys other than str, ints beyond 64 bits, lone surrogates,
subclasses, nesting over 254 deep). Without orjson, in this process or the writer process's, the
standard encoder writes it all. (The module's own name would clash with tests/store/
test_store_json.py's.)"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import subprocess
import sys
import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from enum import Enum, IntEnum, StrEnum
from functools import cache
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.records.replay import replay_file
from bot.store import sqlite_group, sqlite_process
from bot.store.sqlite_group import dump_all, json_dumps
from engine import codec
from engine.publish import effects_and_state

GAMES = sorted((Path(__file__).resolve().parents[1] / "games").rglob("*.toml"))


def expected(value: Any) -> str:
    """What the standard encoder writes (the store's JSON before orjson)."""
    return json.dumps(value, allow_nan=False, ensure_ascii=False, separators=(",", ":"))


def outcome(write: Callable[[Any], str], value: Any) -> tuple[str, str]:
    """``write(value)``'s text, or the type of its refusal."""
    try:
        return "text", write(value)
    except (TypeError, ValueError, RecursionError) as exc:
        return "refused", type(exc).__name__


@cache
def recorded() -> list[tuple[str, dict[str, Any]]]:
    """Every event, effect and state (after each event) of the recorded games, as the codec
    dumps them for the store: (kind, value)."""
    out: list[tuple[str, dict[str, Any]]] = []
    for game in GAMES:
        state = None
        for event in replay_file(game).events:
            effects, state = effects_and_state(state, [event])
            out.append(("event", codec.dump(event)))
            out += [("effect", codec.dump(effect)) for effect in effects]
            out.append(("state", codec.dump(state)))
    return out


@pytest.fixture
def fallbacks(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Any]]:
    """The values the standard encoder wrote meanwhile (orjson's text was not kept)."""
    written: list[Any] = []
    standard = sqlite_group._standard_dumps

    def counted(value: Any) -> str:
        written.append(value)
        return standard(value)

    monkeypatch.setattr(sqlite_group, "_standard_dumps", counted)
    yield written


def test_orjson_is_what_writes_here() -> None:
    assert json_dumps is not sqlite_group._standard_dumps


def test_every_payload_and_state_of_the_recorded_games_is_written_by_orjson_as_before(
    fallbacks: list[Any],
) -> None:
    values = recorded()
    kinds = {kind for kind, _ in values}
    assert len(GAMES) > 50 and kinds == {"event", "effect", "state"}, (len(GAMES), kinds)
    for _, value in values:
        text = expected(value)
        assert orjson.dumps(value).decode() == text  # orjson's own text, unchecked
        assert json_dumps(value) == text
    plain = [value for _, value in values]
    assert dump_all(plain) == [expected(value) for value in plain]
    assert fallbacks == []  # every one of them by orjson (no float, NaN or odd key among them)


class Seat(IntEnum):
    FIVE = 5


class Kind(StrEnum):
    VOTE = "投票"


class Plain(Enum):
    A = "a"


class Shouting(StrEnum):
    """A member whose ``value`` is not its text: the standard encoder writes its text."""

    A = "a"

    @property
    def value(self) -> str:
        return "A!"


class Fraction(float, Enum):
    HALF = 0.5


class Missing(Enum):
    NAN = math.nan


class Items(dict[str, Any]):
    """A dict whose items() the standard encoder reads (orjson would read its storage)."""

    def items(self) -> Any:
        return reversed(list(super().items()))


@dataclasses.dataclass
class Point:
    x: int = 1


def moved() -> OrderedDict[str, int]:
    value = OrderedDict(a=1, b=2)
    value.move_to_end("a")  # its order is no longer its dict's
    return value


def nested(depth: int) -> Any:
    value: Any = "end"
    for _ in range(depth):
        value = [value]
    return value


CASES: dict[str, Any] = {
    "nan": {"a": [1, {"b": math.nan}]},
    "infinity": [math.inf],
    "minus infinity": {"x": -math.inf},
    "nan alone": math.nan,
    "int beyond 64 bits": {"n": 2**64},
    "uint64 max": {"n": 2**64 - 1},
    "int64 min": [-(2**63)],
    "below int64 min": [-(2**63) - 1],
    "huge int": 10**40,
    "int keys": {1: "a", 2: {3: None}},
    "bool, None and float keys": {True: 1, None: 2, 1.5: 3},
    "int enum key and value": {Seat.FIVE: Seat.FIVE},
    "str enum key and value": {Kind.VOTE: [Kind.VOTE]},
    "str enum in a list": ["x", Kind.VOTE, Seat.FIVE],
    "enum whose value is not its text": {"k": Shouting.A},
    "float enum": [Fraction.HALF],
    "nan enum": {"k": Missing.NAN},
    "plain enum": {"k": Plain.A},
    "uuid": {"id": uuid.UUID(int=1)},
    "dataclass": [Point()],
    "datetime": {"at": datetime(2026, 1, 1, tzinfo=UTC)},
    "set": {"s": {1}},
    "fragment": [orjson.Fragment(b"[1]")],
    "control characters": "".join(map(chr, range(32))) + '\x7f"\\/',
    "line separators": "a\u2028b\u2029c",
    "emoji": {"😀": "👍🏽 家"},
    "lone surrogate": "a\ud800b",
    "lone surrogate key": {"\udfff": 1},
    "a pair of surrogates": "\ud83d\ude00",
    "nested tuples": (1, (2, (3, ())), [()]),
    "a named tuple": {"t": os.stat_result(range(10))},
    "empty containers": [{}, [], (), ""],
    "bools and None": [True, False, None, {"t": True}],
    "floats": [1e16, 0.1, -0.0, 0.0, 1.0, 100.0, 1e-05, 1e-07, 5e-324, 1.7976931348623157e308],
    "a float alone": 1e-05,
    "floats in a dict": {"f": [1e-05, 0.5, 1e16], "n": None},
    "float-like text": ["1.5", "e-5", "1e+16", "v1.2", "-0.0"],
    "negative ints": [-1, -10, 0, -0],
    "dict subclass reading its items": Items(a=1, b=2),
    "ordered dict moved": moved(),
    "list subclass": {"l": type("L", (list,), {})([1, 2])},
    "str subclass": type("S", (str,), {})("s"),
    "nested 254 deep": nested(254),
    "nested 300 deep": nested(300),
}


@pytest.mark.parametrize("value", CASES.values(), ids=CASES.keys())
def test_what_orjson_writes_otherwise_or_refuses_is_written_or_refused_as_before(
    value: Any,
) -> None:
    assert outcome(json_dumps, value) == outcome(expected, value)
    if isinstance(value, dict):  # as a payload: written as its dict
        want = outcome(expected, dict(value))
        assert outcome(lambda v: dump_all([v])[0], value) == want
        assert outcome(lambda v: dump_all([{"ok": 1}, v, {"ok": 2}])[1], value) == want


def test_in_a_group_only_the_payloads_orjson_cannot_write_are_written_by_the_other(
    fallbacks: list[Any],
) -> None:
    values = [{"a": 1}, {"f": 1e-05}, {"k": Plain.A.value, "n": None}, {"v": "1.5"}]
    assert dump_all(values) == [expected(value) for value in values]
    assert fallbacks == [{"f": 1e-05}, {"v": "1.5"}]


@pytest.mark.parametrize("number", [math.nan, math.inf, -math.inf])
def test_nan_and_infinities_are_refused_as_before(number: float) -> None:
    with pytest.raises(ValueError, match="not JSON compliant"):
        json_dumps({"at": [number], "note": None})
    with pytest.raises(ValueError, match="not JSON compliant"):
        dump_all([{"fine": None}, {"at": [number]}])


def test_every_character_is_written_as_before(fallbacks: list[Any]) -> None:
    text = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF)
    assert orjson.dumps(text).decode() == expected(text)
    assert json_dumps({"t": text}) == expected({"t": text})
    assert fallbacks == []


FLOATS = st.floats(allow_nan=False, allow_infinity=False)


@given(FLOATS)
def test_every_float_orjson_writes_is_seen_as_one(number: float) -> None:
    text = orjson.dumps({"x": [number]}).decode()
    assert sqlite_group._may_hold_floats(text)
    assert json_dumps({"x": [number]}) == expected({"x": [number]})


def test_every_float_of_every_exponent_is_seen_as_one() -> None:
    for exponent in range(-1074, 1024):
        for number in (2.0**exponent, 3 * 2.0**exponent, -(2.0**exponent) / 3):
            if math.isfinite(number):
                assert sqlite_group._may_hold_floats(orjson.dumps(number).decode()), number


def test_ints_and_text_are_not_taken_for_floats() -> None:
    assert not sqlite_group._may_hold_floats('{"a":-12,"b":[1,2e],"c":"x.y","d":"e-f","n":null}')


KEYS = st.text() | st.sampled_from(list(Kind)) | st.integers(-5, 5)
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(-(2**70), 2**70)
    | st.floats()
    | st.text()
    | st.sampled_from([*Seat, *Kind, Plain.A, Shouting.A, Fraction.HALF])
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=5)
        | st.tuples(inner, inner)
        | st.dictionaries(KEYS, inner, max_size=5)
    ),
    max_leaves=30,
)


@given(VALUES)
def test_any_value_is_written_or_refused_as_before(value: Any) -> None:
    assert outcome(json_dumps, value) == outcome(expected, value)


@given(st.lists(st.dictionaries(KEYS, VALUES, max_size=4), max_size=6))
def test_a_group_s_payloads_are_written_or_refused_as_before(values: list[Any]) -> None:
    want = [outcome(expected, value) for value in values]
    refused = next((w for w in want if w[0] == "refused"), None)
    if refused is None:
        assert dump_all(values) == [text for _, text in want]
    else:  # the first refusal's
        assert outcome(lambda v: dump_all(v)[0], values) == refused


def test_a_mapping_not_a_dict_is_written_as_its_dict() -> None:
    class Row(dict[str, Any]):
        pass

    proxy = type(vars(Point))  # mappingproxy
    values = [Row(a=1), proxy({"b": [2]}), {"c": 3}]
    assert dump_all(values) == ['{"a":1}', '{"b":[2]}', '{"c":3}']


def test_without_orjson_the_standard_encoder_writes_it_all(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "orjson", None)  # import orjson: ImportError
    dumps, every = sqlite_group._serializers()
    assert dumps is sqlite_group._standard_dumps
    assert every([{"a": 1}, moved()]) == ['{"a":1}', '{"b":2,"a":1}']
    with pytest.raises(ValueError):
        every([{"a": math.nan}])


CHILD_IMPORTS = """
import runpy, sys
sys.argv[:] = sys.argv[1:]  # as the writer process sees them: its path, then its arguments
runpy.run_path(sys.argv[0])  # not as __main__: its imports only
group = sys.modules["sqlite_group"]
print("orjson" in sys.modules, group.json_dumps is not group._standard_dumps)
"""


def child_imports(*args: str) -> str:
    """What the writer process imports, started as ``sqlite_process`` starts it with ``args``:
    whether orjson, and whether its JSON is orjson's."""
    argv = [sys.executable, "-I", "-S", "-c", CHILD_IMPORTS, sqlite_process.CHILD, *args]
    return subprocess.run(argv, capture_output=True, text=True, check=True).stdout.strip()


def test_the_writer_process_imports_orjson_from_where_the_bot_found_it() -> None:
    home = sqlite_process._orjson_home()
    assert home is not None and os.path.isdir(os.path.join(home, "orjson"))
    assert child_imports(home) == "True True"


def test_the_writer_process_runs_without_orjson() -> None:
    assert child_imports() == "False False"


def test_no_directory_is_given_without_orjson(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "orjson", None)
    assert sqlite_process._orjson_home() is None
