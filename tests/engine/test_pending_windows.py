"""Who is still pending (`/mod pending`, reminders, docs/rules.md §1.4): a power of one's own is
done by one's own submission, a team's by any member's; nobody owes anything once the game is
over."""

from __future__ import annotations

from gamekit import Game

from engine.commands import EndGame
from engine.model import Camp
from engine.pending import Pending, pending, window_key

K, P, D, C = "killer", "police", "doctor", "civilian"
# v3 12: killers 1-3, police 4-6, doctor 7, civilians 8-12
V3 = [K, K, K, P, P, P, D, C, C, C, C, C]


def test_the_doctor_is_done_only_by_his_own_treatment() -> None:
    game = Game("v3", V3)
    assert pending(game.state).powers == (1, 2, 3, 4, 5, 6, 7)
    game.power(7, "save", 9)  # the doctor's own power: he alone is done
    assert pending(game.state).powers == (1, 2, 3, 4, 5, 6)
    game.power(2, "kill", 9)  # one killer for the team: all three are done
    assert pending(game.state).powers == (4, 5, 6)
    game.power(7, "save", 10)  # a changed treatment: still done
    assert pending(game.state).powers == (4, 5, 6)


def test_a_doctor_who_passes_is_done_too() -> None:
    game = Game("v3", V3)
    game.power(7, "save")  # an explicit pass (不行使) is an answer
    assert 7 not in pending(game.state).powers


def test_nothing_is_pending_once_the_game_is_over() -> None:
    game = Game("v3", V3)
    assert window_key(game.state) == "night-1" and pending(game.state).powers
    game.do(EndGame(winner=Camp.DRAW))
    assert window_key(game.state) is None
    assert pending(game.state) == Pending(window=None)
    assert pending(game.state).seats() == ()


def test_each_window_says_what_it_waits_for() -> None:
    """A night waits for powers, a day for votes, a victim's choice for a pick, the warm-up and
    the end for nothing (`/mod pending` names the line from it)."""
    v2 = [K, K, P, P, C, C, C, C]  # v2 8: killers 1-2, police 3-4, civilians 5-8
    game = Game("v2", v2, options={"tie": "victim_choice", "warmup": 30})
    assert pending(game.state).waits_for is None  # the warm-up
    game.lock()
    assert pending(game.state).waits_for == "powers"
    game.night((1, "kill", 5))
    assert pending(game.state).waits_for == "votes"
    game.day({1: 6, 2: 7})  # a tie: a run-off, still votes
    assert pending(game.state).waits_for == "votes"
    game.day({1: 6, 2: 7})  # tied again: the night's victim picks
    assert pending(game.state) == Pending(window="day-1-r2", choice=5, waits_for="choice")
    game.do(EndGame(winner=Camp.DRAW))
    assert pending(game.state).waits_for is None
