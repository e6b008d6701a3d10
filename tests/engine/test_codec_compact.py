"""A loaded state is compact (slotted objects, shared strings) and the same value as before."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
from gamekit import Game

from engine import codec, commands, effects, events, model, state
from engine.state import GameState, VotePost

V2 = ["killer", "killer", "police", "police", "civilian", "civilian", "civilian", "civilian"]


def _stored(value: Any) -> Any:
    """`value` as the store hands it back: dumped, written as JSON and read (fresh strings)."""
    return json.loads(json.dumps(codec.dump(value)))


def _day_one() -> Game:
    g = Game("v2", V2)
    g.lock()  # night 1 → day 1
    for voter, target in ((1, 5), (2, 5), (3, 1), (5, 1), (6, 5)):
        g.vote(voter, target)
    return g


def test_every_engine_value_class_keeps_its_fields_in_slots() -> None:
    for module in (events, commands, effects, state, model):
        for obj in vars(module).values():
            if dataclasses.is_dataclass(obj) and obj.__module__ == module.__name__:
                assert "__slots__" in vars(obj), obj
                assert "__dict__" not in dir(obj), obj


def test_a_loaded_state_equals_the_state_and_shares_the_players_ids() -> None:
    g = _day_one()
    loaded = codec.load(_stored(g.state))
    assert isinstance(loaded, GameState)
    assert loaded == g.state
    assert codec.dump(loaded) == codec.dump(g.state)
    players = {s.player: s.player for s in loaded.seats}
    assert loaded.posts
    for post in loaded.posts:
        assert post.author is players[post.author]  # one string per player, not one per post
    again = codec.load(_stored(g.state))
    assert again.seats[0].player is loaded.seats[0].player  # and one across loads
    spent = {id(s.spent) for s in loaded.seats}
    assert len(spent) == 1  # the seats' empty `spent` sets are one object


def test_events_load_as_they_were_recorded() -> None:
    g = _day_one()
    assert [codec.load(_stored(e)) for e in g.events] == g.events


def test_a_field_left_out_takes_its_default_and_a_missing_required_one_is_refused() -> None:
    post = {"type": "VotePost", "post_id": "9", "author": "p1", "seat": 1, "target": 2}
    post |= {"abstain": False, "at": None}  # no void_reason, no void_params: written before them
    loaded = codec.load(post)
    assert loaded == VotePost(
        post_id="9", author="p1", seat=model.Seat(1), target=model.Seat(2), abstain=False, at=None
    )
    del post["author"]
    with pytest.raises(TypeError):
        codec.load(post)


def test_a_loaded_value_is_still_checked_by_its_class() -> None:
    assert codec.load({"type": "PhaseId", "number": 2, "kind": "day"}) == model.PhaseId(
        number=2, kind=model.PhaseKind.DAY
    )
    with pytest.raises(ValueError):
        codec.load({"type": "PhaseId", "number": 2, "kind": "ended"})


def test_a_record_of_pairs_loads_as_it_was_and_a_pair_of_another_length_is_refused() -> None:
    g = _day_one()
    g.vote(7, None)  # an abstention: a counted voter whose vote is None
    g.lock()  # day 1's count
    (record,) = [e.record for e in g.events if isinstance(e, events.DayResolved)]
    assert any(target is None for _, target in record.votes)
    stored = _stored(record)
    loaded = codec.load(stored)
    assert loaded == record
    assert all(type(pair) is tuple for pair in loaded.tally + loaded.votes)
    stored["tally"][0].append(1)  # (seat, votes, ?): not a pair
    with pytest.raises(ValueError):
        codec.load(stored)
