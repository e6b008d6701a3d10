"""`GameState.seats_of` and `seat_of`, answered from the seatings memo, are what a scan of the seats
answers: in every state of played games (substitutes, deaths, several cards a player)."""

from __future__ import annotations

import dataclasses

from playouts import steps_of

from engine.model import Seat
from engine.state import GameState, Seatings


def _scanned(state: GameState, player: str) -> tuple[tuple[Seat, ...], Seat | None]:
    mine = tuple(s.seat for s in state.seats if s.player == player)
    return mine, next((s for s in mine if state.seat(s).alive), mine[0] if mine else None)


def test_a_players_seats_are_those_a_scan_finds() -> None:
    states = [step.after for step in steps_of(13, games=12)]
    assert any(len(s.seats_of(s.seats[0].player)) > 1 for s in states)  # several cards
    assert any(not seat.alive for s in states for seat in s.seats)
    assert any(seat.former_players for s in states for seat in s.seats)  # a substitute
    for state in states:
        players = {s.player for s in state.seats} | {
            p for s in state.seats for p in s.former_players
        }
        for player in [*players, "nobody"]:
            assert (state.seats_of(player), state.seat_of(player)) == _scanned(state, player)


def test_the_memo_holds_a_bounded_number_of_seatings_and_answers_for_a_new_one() -> None:
    memo = Seatings()
    memo.LIMIT = 3
    state = steps_of(2, games=1)[-1].after
    seatings = [
        tuple(dataclasses.replace(s, alive=(s.seat + k) % 3 != 0) for s in state.seats)
        for k in range(6)
    ]
    for seats in seatings * 2:
        moved = dataclasses.replace(state, seats=seats)
        for player in {s.player for s in seats}:
            seat_now = memo.of(seats)[player][1]
            assert (memo.of(seats)[player][0], seat_now) == _scanned(moved, player)
        assert len(memo._known) <= 3
