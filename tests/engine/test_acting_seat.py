"""A power submitted for a named seat acts for that seat only: a seat the player does not hold
(a menu sent for a seat they held before moderators re-seated them) is refused, in words that
fit the game (a seat in a one-card game, the menu when it came from one, a card in 5.0), and
never taken as a submission of the seat they hold now."""

from __future__ import annotations

from dataclasses import replace

import pytest
from gamekit import Game

from engine.commands import ReplacePlayer, SubmitPower
from engine.errors import ActorError
from engine.game import decide, new_game, replay_events, start_events
from engine.model import Power, Seat

K, P, C = "killer", "police", "civilian"
V2 = [K, K, P, P, C, C, C, C]


def _reseated() -> Game:
    """p1 (the killer in seat 1) replaced by an outsider, then made the other killer's
    substitute (seat 2). Moderators can no longer do this (`mod.played_before`), but a game
    recorded before that refusal holds it: its events are folded as recorded, so the event is
    written here as such a game has it."""
    game = Game("v2", V2)
    game.do(ReplacePlayer(seat=Seat(1), new_player="outsider"))
    (event,) = [e for e in game.do(ReplacePlayer(seat=Seat(2), new_player="newcomer"))]
    game.events[-1] = replace(event, new_player="p1")
    game.state = replay_events(game.events)
    assert game.state.seats_of("p1") == (Seat(2),)
    return game


def test_a_menu_of_a_seat_the_player_left_is_refused() -> None:
    game = _reseated()
    before = game.state
    menu = SubmitPower(player="p1", power=Power.KILL, target=Seat(5), seat=Seat(1), night=1)
    with pytest.raises(ActorError) as refused:
        decide(game.state, menu)
    assert refused.value.key == "actor.menu_not_your_seat"
    assert refused.value.params == {"seat": 1}
    assert game.state == before and game.state.submissions == ()


def test_act_naming_a_seat_not_held_is_refused_in_a_one_card_game() -> None:
    game = _reseated()
    act = SubmitPower(player="p1", power=Power.KILL, target=Seat(5), seat=Seat(1))
    with pytest.raises(ActorError) as refused:
        decide(game.state, act)
    assert refused.value.key == "actor.seat_not_yours"
    assert refused.value.params == {"seat": 1}


def test_the_seat_held_now_acts_and_an_unnamed_seat_acts_as_before() -> None:
    game = _reseated()
    game.do(SubmitPower(player="p1", power=Power.KILL, target=Seat(5), seat=Seat(2), night=1))
    assert [(s.seat, s.target) for s in game.state.submissions] == [(2, 5)]
    game.do(SubmitPower(player="p1", power=Power.KILL, target=Seat(6), night=1))  # an old menu
    assert [(s.seat, s.target) for s in game.state.submissions][-1] == (2, 6)


def test_a_card_not_held_in_5_0_keeps_its_card_wording() -> None:
    players = [f"p{i}" for i in range(1, 8)]
    created = new_game(ruleset="v5", players=players, seed="s", roles={"p1#1": "killer"})
    state = replay_events(start_events(created))
    assert state.seats_of("p1") == (Seat(1), Seat(2))
    for night in (None, 1):
        command = SubmitPower(
            player="p1", power=Power.KILL, target=Seat(5), seat=Seat(3), night=night
        )
        with pytest.raises(ActorError) as refused:
            decide(state, command)
        assert refused.value.key == "actor.not_your_seat"
