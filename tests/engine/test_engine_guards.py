"""The engine's own guards: a game's event log must start with its one `GameCreated`; phases order
in play order (what `until` of the last-words policies compares); the memos of seatings and posts
answer as a scan would, however they are used."""

from __future__ import annotations

import dataclasses

import pytest
from gamekit import Game

from engine.game import evolve, replay_events
from engine.model import Instant, PhaseId, PhaseKind, Seat
from engine.state import PostIndex, Seatings, VotePost

V2 = ["killer", "killer", "police", "police", "civilian", "civilian", "civilian", "civilian"]


def test_an_event_log_must_start_with_its_one_game_created() -> None:
    game = Game("v2", V2)
    created, opened = game.events[0], game.events[1]
    assert replay_events(game.events) == game.state
    with pytest.raises(ValueError, match="start with GameCreated"):
        replay_events([])
    with pytest.raises(ValueError, match="start with GameCreated"):
        replay_events([opened, created])
    with pytest.raises(ValueError, match="GameCreated starts a game"):
        replay_events([created, opened, created])  # a second game in the same log
    with pytest.raises(ValueError, match="GameCreated starts a game"):
        evolve(game.state, created)


def test_phases_order_in_play_order() -> None:
    night = PhaseKind.NIGHT
    day = PhaseKind.DAY
    order = [
        PhaseId(number=1, kind=night),
        PhaseId(number=1, kind=day),
        PhaseId(number=2, kind=night),
        PhaseId(number=2, kind=day),
    ]
    assert sorted(reversed(order), key=lambda p: p) == order  # __lt__
    assert order[0] < order[1] < order[2] and not order[1] < order[0]
    assert order[1] <= order[1] <= order[2] and not order[2] <= order[1]
    with pytest.raises(TypeError):
        _ = order[0] < 1
    with pytest.raises(TypeError):
        _ = order[0] <= "night 1"


def test_seatings_of_a_list_answer_without_being_remembered() -> None:
    memo = Seatings()
    state = Game("v2", V2).state
    seats = list(state.seats)
    dead = [dataclasses.replace(s, alive=False) if s.seat == 5 else s for s in seats]
    assert memo.of(seats) == memo.of(tuple(seats))  # type: ignore[arg-type]
    assert len(memo._known) == 1  # the tuple only: a list could change after the answer
    assert memo.of(dead)["p5"] == ((Seat(5),), Seat(5))  # type: ignore[arg-type]
    dead[4] = dataclasses.replace(dead[4], player="p9")  # the list changes: a fresh answer
    assert "p5" not in memo.of(dead) and "p9" in memo.of(dead)  # type: ignore[arg-type]
    assert len(memo._known) == 1


def _post(n: int) -> VotePost:
    return VotePost(post_id=str(n), author="1", seat=Seat(1), target=Seat(2), abstain=False,
                    at=Instant(n))  # fmt: skip


def test_the_post_index_forgets_the_oldest_days_past_its_limit() -> None:
    index = PostIndex()
    index.LIMIT = 2
    days = [tuple(_post(100 * d + n) for n in range(3)) for d in range(5)]
    for day in days:
        assert index.holds(day, day[1].post_id)
        assert len(index) <= 2
    assert index.holds(days[0], "1") and not index.holds(days[0], "101")  # forgotten: re-read
    assert len(index) == 2


def test_a_stale_position_falls_back_to_a_scan() -> None:
    """The index is told (wrongly) that a shorter tuple extends the known one: a hit whose
    position is past the end, or holds another post, is checked by a scan."""
    index = PostIndex()
    a, b, c = _post(1), _post(2), _post(3)
    known = (a, b, c)
    assert index.holds(known, "3")
    shorter = (a,)
    index.appended(known, shorter)  # not what evolve ever says: the index keeps c at 2
    assert not index.holds(shorter, "3") and index.holds(shorter, "1")
    index = PostIndex()
    assert index.holds(known, "2")
    moved = (a, c)
    index.appended(known, moved)  # b's place (1) now holds c
    assert not index.holds(moved, "2") and index.holds(moved, "3")
