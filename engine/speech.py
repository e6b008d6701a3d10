"""Who may post where now (docs/rulings.md "The forum's rhythm"; docs/rules.md §1.6): the game
and vote channels open or shut, 森林老人's silence, the dead.

Pure functions of the state, so that the effects announcing a change (`engine.publish`:
SetChannelsOpen, Silence, Unsilence, SeatLeft), the public view and the shell's reconciles (after
a restart, a handover, a late or repeated effect) all read one answer. They hold at every event
boundary, between a resolution and the window it opens too.
"""

from __future__ import annotations

from typing import NamedTuple

from engine.model import PhaseKind, Seat
from engine.state import GameState, NightRecord
from engine.windows import is_vote_window


class ChannelsOpen(NamedTuple):
    """Whether the living players may post in each of the game's channels."""

    game: bool
    """The game channel (the discussion; a forum's main post)."""
    vote: bool
    """The vote channel (a forum's day 投票帖)."""


def channels_open(state: GameState) -> ChannelsOpen | None:
    """The channels now: the game channel is open in the warm-up and in every night and vote
    window, the vote channel only in a vote window; both are shut from each 看表帖 until the window
    that follows its results opens, and while the game only waits for a victim's choice or a last
    act; both open at the end. None before the first window opens."""
    if state.over:
        return ChannelsOpen(game=True, vote=True)
    window = state.window
    if window is None:  # none opened yet, or a resolution's results before the next window
        return None if state.window_index == 0 else ChannelsOpen(game=False, vote=False)
    if window.chooser is not None or window.last_act:
        return ChannelsOpen(game=False, vote=False)
    return ChannelsOpen(game=True, vote=is_vote_window(window))


def last_silenced(state: GameState) -> tuple[int, tuple[Seat, ...]] | None:
    """The last night resolved (its number) and the players it silenced who are still in the
    game, in seat order; None before the first night's results."""
    last = next((e for e in reversed(state.history) if isinstance(e, NightRecord)), None)
    if last is None:
        return None
    return last.number, tuple(s for s in last.silenced if state.seat(s).alive)


def silenced(state: GameState) -> tuple[Seat, ...]:
    """The players under 森林老人's silence now, in seat order (docs/rules.md §1.6: no post in
    the discussion for the coming day; votes and last words unaffected): those the last night
    silenced, still in the game, from its results until the next night opens or the game ends."""
    last = last_silenced(state)
    if state.over or last is None:
        return ()
    night, seats = last
    window = state.window
    if window is not None and window.kind is PhaseKind.NIGHT and window.number > night:
        return ()
    return seats


def out_of_game(state: GameState, player: str) -> bool:
    """Whether `player` holds seats and none of them is still in the game (a player holding
    several cards leaves with the last): the dead are silent in every window."""
    mine = state.seats_of(player)
    return bool(mine) and not any(state.seat(s).alive for s in mine)
