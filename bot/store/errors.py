"""Errors the store raises on purpose: one base class, one subclass per cause.

The shell tells a refusal it can explain (stale state, a game over, a sealed seed) from a fault by
catching ``StoreError`` or the precise cause; each names the game it is about.
"""

from __future__ import annotations

from bot.store.models import GameStatus


class StoreError(Exception):
    """Base of every error the store raises on purpose."""


class GameNotFound(StoreError, LookupError):
    """No game has this id."""


class GameNotActive(StoreError):
    """The game is finished or stopped: it takes no more input."""

    def __init__(self, game_id: int, status: GameStatus) -> None:
        super().__init__(f"game {game_id} is {status.value}")
        self.game_id = game_id
        self.status = status


class SeqConflict(StoreError):
    """Another append came first: the state the caller decided on is stale; reload and retry."""

    def __init__(self, game_id: int, expected: int, actual: int) -> None:
        super().__init__(f"game {game_id}: expected last seq {expected}, found {actual}")
        self.game_id = game_id
        self.expected = expected
        self.actual = actual


class CorruptLog(StoreError):
    """The stored event log is not 1..last_seq without gaps (or a row cannot be read)."""

    def __init__(self, game_id: int, seq: int | None, what: str) -> None:
        super().__init__(f"game {game_id}: corrupt event log at seq {seq}: {what}")
        self.game_id = game_id
        self.seq = seq


class SeedSealed(StoreError):
    """The seed of a game is shown only once the game is finished."""
