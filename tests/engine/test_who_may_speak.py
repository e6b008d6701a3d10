"""Who may post where now (`engine.speech`), asked of the state, and the effects that announce
each change agree with it at every event: what the shell sets on a transition (SetChannelsOpen,
Silence, Unsilence, SeatLeft) and what it sets again from the state on a reconcile are one
answer (docs/rulings.md "The forum's rhythm"; docs/rules.md §1.6)."""

from __future__ import annotations

import random
from collections.abc import Sequence

from gamekit import Game
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from playouts import play

from engine.commands import Lock, ModKill, SubmitPower
from engine.effects import SeatLeft, SetChannelsOpen, Silence, Unsilence
from engine.events import Event, GameCreated
from engine.evolve import evolve, initial_state, replay_events
from engine.game import apply, new_game, start_events
from engine.model import Power, Seat
from engine.publish import effects_for
from engine.speech import ChannelsOpen, channels_open, out_of_game, silenced
from engine.state import GameState
from engine.view import view_for

V2 = ["killer", "killer", "police", "police", "civilian", "civilian", "civilian", "civilian"]
V4B = ["butterfly", "sniper", "doctor", "police", "elder", "killer", "killer", "killer"] + [
    "civilian"
] * 3
SHUT = ChannelsOpen(game=False, vote=False)


def test_the_channels_follow_the_forums_rhythm() -> None:
    created = new_game(ruleset="v2", players=[f"p{i}" for i in range(1, 9)], seed="s")
    assert channels_open(initial_state(created)) is None  # no window yet
    game = Game("v2", V2, options={"tie": "revote"})
    assert channels_open(game.state) == ChannelsOpen(game=True, vote=False)  # night 1
    game.lock()
    assert channels_open(game.state) == ChannelsOpen(game=True, vote=True)  # day 1
    game.vote(1, 5)
    game.vote(3, 6)
    game.lock()
    window = game.state.window
    assert window is not None and window.revote == 1
    assert channels_open(game.state) == ChannelsOpen(game=True, vote=True)  # the run-off


def test_the_warmup_opens_discussion_only_and_the_end_opens_both() -> None:
    game = Game("v2", V2, options={"warmup": 30})
    assert channels_open(game.state) == ChannelsOpen(game=True, vote=False)
    for seat in (1, 2):
        game.do(ModKill(seat=Seat(seat)))
    assert game.state.over and channels_open(game.state) == ChannelsOpen(game=True, vote=True)


def test_a_victims_choice_and_a_last_act_keep_the_channels_shut() -> None:
    choice = Game("v2", V2, options={"tie": "victim_choice"})
    choice.night((1, "kill", 5))
    choice.day({1: 6, 2: 7})  # a tie: a run-off
    choice.day({1: 6, 2: 7})  # tied again: the night's victim picks
    window = choice.state.window
    assert window is not None and window.chooser == 5
    assert channels_open(choice.state) == SHUT
    shot = Game("basic", ["sniper", "police", *["civilian"] * 4], options={"sniper": "yes"})
    shot.night((1, "kill", 1))  # the game would end: it waits for the sniper's last shot
    window = shot.state.window
    assert window is not None and window.last_act
    assert channels_open(shot.state) == SHUT


def test_the_silence_lasts_from_the_nights_results_until_the_next_night() -> None:
    game = Game("v4_butterfly", V4B)
    assert silenced(game.state) == ()
    game.night((1, "hug", 9), (5, "silence", 1))
    assert silenced(game.state) == (1, 9)  # the hugged player shares it
    game.vote(1, 6)
    game.lock()  # 6 leaves; night 2 opens: the day is over
    assert silenced(game.state) == ()
    game.night((5, "silence", 10), (7, "kill", 10))
    assert silenced(game.state) == ()  # the dead are not silenced: they are out


def test_a_player_is_out_of_the_game_with_the_last_of_their_cards() -> None:
    roles = ["killer", "doctor", "police", "civilian", "butterfly", "civilian", "mole", "civilian"]
    roles += ["secret_police", "civilian", "secret_police", "civilian", "civilian", "civilian"]
    created = new_game(  # 5.0: 7 players holding two cards each
        ruleset="v5",
        players=[f"p{i}" for i in range(1, 8)],
        seed="s",
        roles={f"p{i // 2 + 1}#{i % 2 + 1}": r for i, r in enumerate(roles)},
    )
    state = replay_events(start_events(created))
    assert state.seats_of("p2") == (3, 4)
    kill = SubmitPower(player="p1", power=Power.KILL, target=Seat(4), seat=Seat(1))
    for command in (kill, Lock()):
        state, _ = apply(state, command)
    assert not state.seat(Seat(4)).alive
    assert not out_of_game(state, "p2")  # seat 3 is still in
    state, _ = apply(state, ModKill(seat=Seat(3)))
    assert out_of_game(state, "p2") and not state.over
    assert not out_of_game(state, "p1")
    assert not out_of_game(state, "stranger")  # holds no seat: never in


def _check_every_event(events: Sequence[Event]) -> int:
    """Fold the events one at a time, keeping what their effects said, and compare; returns how
    many states were checked with a silence in force."""
    state: GameState | None = None
    said: SetChannelsOpen | None = None
    silenced_said: set[Seat] = set()
    with_silence = 0
    for event in events:
        before = state
        effects = effects_for(before, [event])
        if before is None:
            assert isinstance(event, GameCreated)
            state = initial_state(event)
        else:
            state = evolve(before, event)
        for effect in effects:
            if isinstance(effect, SetChannelsOpen):
                said = effect
            elif isinstance(effect, Silence):
                silenced_said.add(effect.seat)
            elif isinstance(effect, Unsilence):
                silenced_said.discard(effect.seat)
            elif isinstance(effect, SeatLeft):
                assert out_of_game(state, state.seat(effect.seat).player), effect
        now = channels_open(state)
        expected = None if said is None else ChannelsOpen(said.open, said.vote_open)
        assert now == expected, (event, now, said)
        living = {s for s in silenced_said if state.seat(s).alive}
        assert set(silenced(state)) == living, (event, silenced(state), living)
        assert view_for(state, None).silenced == silenced(state)
        with_silence += bool(living)
        if before is not None:
            gone = [
                p
                for p in {s.player for s in state.seats}
                if out_of_game(state, p) and not out_of_game(before, p)
            ]
            left = {state.seat(e.seat).player for e in effects if isinstance(e, SeatLeft)}
            assert set(gone) == left, (event, gone, left)
    return with_silence


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**32))
def test_the_engines_answers_agree_with_the_effects_at_every_event(seed: int) -> None:
    game = play(random.Random(seed))
    assume(game is not None)
    assert game is not None
    opening, steps = game
    events = [*opening, *(e for step in steps for e in step.events)]
    _check_every_event(events)


def test_the_playouts_reach_silences_and_agree_there_too() -> None:
    """The property above, on fixed games that are sure to silence someone (so it can fail)."""
    checked = 0
    for seed in range(150):
        game = play(random.Random(seed))
        if game is None:
            continue
        opening, steps = game
        checked += _check_every_event([*opening, *(e for s in steps for e in s.events)])
    assert checked > 30
