"""A moderator's override given twice — at the same moment by two moderators, or again in a row
— acts once; the second is refused, saying why, and changes nothing (tests/discord/
test_moderator_audit.py plays the same through Discord). And a player replaced out of a game
takes no other seat in it."""

from __future__ import annotations

import pytest
from gamekit import Game

from engine.commands import (
    ExtendDeadline,
    Pause,
    Penalize,
    ReplacePlayer,
    Resume,
    SetDeadline,
)
from engine.errors import ModeratorError
from engine.model import Instant, Power, Seat, Team

V2 = ["killer", "killer", "police", "police", "civilian", "civilian", "civilian", "civilian"]


def refused(game: Game, command: object, key: str) -> None:
    before = game.state
    with pytest.raises(ModeratorError) as error:
        game.do(command)  # type: ignore[arg-type]
    assert error.value.key == key
    assert game.state == before


def test_a_deadline_moved_since_it_was_seen_is_not_moved_again() -> None:
    game = Game("v2", V2)
    game.do(SetDeadline(deadline=Instant(100_000), at=Instant(0)))
    seen = Instant(100_000)
    game.do(ExtendDeadline(delta_ms=60_000, at=Instant(1), seen=seen))  # the first moderator's
    refused(game, ExtendDeadline(delta_ms=60_000, at=Instant(2), seen=seen), "mod.deadline_moved")
    refused(
        game, SetDeadline(deadline=Instant(500_000), at=Instant(2), seen=seen), "mod.deadline_moved"
    )
    assert game.state.deadline == 160_000
    game.do(ExtendDeadline(delta_ms=-60_000, at=Instant(3), seen=Instant(160_000)))
    assert game.state.deadline == 100_000


def test_a_command_given_on_a_paused_game_is_refused_once_it_is_resumed() -> None:
    """Moderator B extends a paused game (B saw no deadline) while A's resume lands first: B's
    command would move a deadline B never saw. It is refused, as it is in the other order
    (`phase.paused`)."""
    game = Game("v2", V2)
    game.do(SetDeadline(deadline=Instant(100_000), at=Instant(0)))
    game.do(Pause(at=Instant(1)))
    game.do(Resume(at=Instant(2)))  # moderator A's
    for command in (
        ExtendDeadline(delta_ms=60_000, at=Instant(3), saw_none=True),
        SetDeadline(deadline=Instant(500_000), at=Instant(3), saw_none=True),
    ):
        refused(game, command, "mod.deadline_moved")
    game.do(ExtendDeadline(delta_ms=60_000, at=Instant(3), seen=game.state.deadline))
    assert game.state.deadline == 160_001


def test_the_deadline_in_force_is_not_set_again() -> None:
    game = Game("v2", V2)
    game.do(SetDeadline(deadline=Instant(100_000), at=Instant(0)))
    refused(game, SetDeadline(deadline=Instant(100_000), at=Instant(1)), "mod.deadline_unchanged")


def test_a_penalty_already_given_or_covered_is_not_given_again() -> None:
    game = Game("v2", V2)
    game.do(Penalize(team=Team.KILLERS, reason="诈尸"))
    refused(game, Penalize(team=Team.KILLERS, reason="again"), "mod.penalty_already")
    refused(game, Penalize(team=Team.KILLERS, power=Power.KILL, reason="x"), "mod.penalty_already")
    game.do(Penalize(seat=Seat(3), power=Power.CHECK, reason="x"))
    refused(game, Penalize(seat=Seat(3), power=Power.CHECK, reason="x"), "mod.penalty_already")
    game.do(Penalize(seat=Seat(3), reason="x"))  # wider: every power of the seat
    game.do(Penalize(seat=Seat(4), power=Power.CHECK, reason="x"))  # another seat
    assert len(game.state.suspensions) == 4


def test_a_player_replaced_out_takes_back_only_their_own_seat() -> None:
    game = Game("v2", V2)
    game.do(ReplacePlayer(seat=Seat(1), new_player="sub"))
    refused(game, ReplacePlayer(seat=Seat(3), new_player="p1"), "mod.played_before")
    game.do(ReplacePlayer(seat=Seat(1), new_player="p1"))
    assert game.state.seat(Seat(1)).player == "p1"
