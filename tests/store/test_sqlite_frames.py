"""The frames between the bot and its SQLite writer process (``bot.store.sqlite_frames``), read
as the event loop reads them: a pipe delivers them in pieces of any size, so a frame may arrive
cut anywhere, and several may arrive together; each value comes out once, whole and in order."""

from __future__ import annotations

import io
import itertools
from enum import StrEnum

from hypothesis import given
from hypothesis import strategies as st

from bot.store.sqlite_frames import FrameReader, frame, read_frame

VALUES = [
    (True, ([1, 2], [(3, [10, 11])])),
    ("commit", True, None, [], [(1, None, False, 5, {"k": "投票"}, [{}], ["VotePosted"], [])], {}),
    (False, "OperationalError", "attempt to write a readonly database", False, 8, "READONLY"),
    (True, None),
]
STREAM = b"".join(frame(value) for value in VALUES)


class Kind(StrEnum):
    VOTE = "vote"


@given(st.lists(st.integers(min_value=0, max_value=len(STREAM)), max_size=12))
def test_frames_cut_anywhere_come_out_whole_once_and_in_order(cuts: list[int]) -> None:
    bounds = [0, *sorted(cuts), len(STREAM)]
    reader = FrameReader()
    got = []
    for start, end in itertools.pairwise(bounds):
        got += reader.feed(STREAM[start:end])
    assert got == VALUES


def test_a_frame_cut_short_waits_for_the_rest() -> None:
    reader = FrameReader()
    whole = frame(VALUES[0])
    assert reader.feed(whole[:3]) == []  # not even the length yet
    assert reader.feed(whole[3:-1]) == []
    assert reader.feed(whole[-1:] + frame(VALUES[3])) == [VALUES[0], VALUES[3]]


def test_the_child_reads_what_the_bot_frames_with_json_subclasses_as_plain_values() -> None:
    sent = {"type": Kind.VOTE, "seats": [1, 2]}
    value = read_frame(io.BytesIO(frame(sent)))
    assert value == {"type": "vote", "seats": [1, 2]}
    assert type(value["type"]) is str  # the child has no bot classes to unpickle
