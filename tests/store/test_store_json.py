"""The store's JSON serializer (``sqlite_group.json_dumps``, both backends' and SQLAlchemy's) writes
exactly what ``json.dumps`` writes with the store's options — compact, Chinese kept readable — and
refuses what it refuses: NaN and infinities (PostgreSQL's json has none), and values JSON has no
type for."""

from __future__ import annotations

import json
import math
from enum import IntEnum, StrEnum
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.store.sqlite_group import json_dumps

SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)
JSON_VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=5)
        | st.tuples(inner, inner)
        | st.dictionaries(st.text(), inner, max_size=5)
    ),
    max_leaves=30,
)


def expected(value: Any) -> str:
    return json.dumps(value, allow_nan=False, ensure_ascii=False, separators=(",", ":"))


@given(JSON_VALUES)
def test_it_writes_what_json_dumps_writes(value: Any) -> None:
    assert json_dumps(value) == expected(value)


class Seat(IntEnum):
    FIVE = 5


class Kind(StrEnum):
    VOTE = "投票"


def test_enum_members_and_chinese_are_written_as_json_dumps_writes_them() -> None:
    value = {"seat": Seat.FIVE, "kind": Kind.VOTE, "名": ["甲", "乙"], "n": 1.5}
    assert (
        json_dumps(value) == expected(value) == '{"seat":5,"kind":"投票","名":["甲","乙"],"n":1.5}'
    )


@pytest.mark.parametrize("number", [math.nan, math.inf, -math.inf])
def test_it_refuses_nan_and_infinities(number: float) -> None:
    with pytest.raises(ValueError, match="not JSON compliant"):
        json_dumps({"at": [number]})


def test_it_refuses_a_value_json_has_no_type_for() -> None:
    with pytest.raises(TypeError, match="not JSON serializable"):
        json_dumps({"at": {1, 2}})
    assert json_dumps({"after": "a refusal"}) == '{"after":"a refusal"}'  # nothing left behind
