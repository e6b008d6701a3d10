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


class ChannelHeld(StoreError):
    """A channel is held by another open sign-up or game in play (the binding's primary key)."""

    def __init__(self, channel_id: int, game_id: int | None, lobby_channel_id: int | None) -> None:
        holder = f"game {game_id}" if game_id is not None else f"sign-up in {lobby_channel_id}"
        super().__init__(f"channel {channel_id} is held by {holder}")
        self.channel_id = channel_id
        self.game_id = game_id
        self.lobby_channel_id = lobby_channel_id


class LobbyRefused(StoreError):
    """A join, leave or start the sign-up cannot take; ``reason`` says which (a catalog key's
    last part: ``started``, ``cancelled``, ``already_joined``, ``not_joined``, ``full``,
    ``too_few``), ``game_id`` the game it started, ``count`` and ``limit`` the numbers."""

    def __init__(
        self,
        lobby_id: int,
        reason: str,
        *,
        game_id: int | None = None,
        count: int = 0,
        limit: int = 0,
    ) -> None:
        super().__init__(f"sign-up {lobby_id}: {reason}")
        self.lobby_id = lobby_id
        self.reason = reason
        self.game_id = game_id
        self.count = count
        self.limit = limit
