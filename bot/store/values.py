"""The plain values the repository takes and returns: frozen dataclasses, never ORM rows.

Callers never hold a session or a row that could lazy-load after its transaction ended. Events,
effects and states are opaque JSON here (``JsonDict``); turning them into a state is injected by
the caller (``Fold``, ``SnapshotCodec``), so the store never imports the engine.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Generic, TypeVar

from bot.store.models import GameStatus, LobbyStatus

S = TypeVar("S")
JsonDict = dict[str, Any]
Fold = Callable[[list[JsonDict]], S]
"""Events (as stored dicts, in order) → state. Raises if the log cannot be replayed."""


@dataclass(frozen=True, slots=True)
class OutboxItem:
    """An effect to perform; ``idempotency_key`` lets the performer avoid doing it twice."""

    id: int
    game_id: int
    seq: int | None
    payload: JsonDict
    attempts: int
    last_error: str | None
    done_at: datetime | None
    created_at: datetime | None = None
    """When it was recorded (its input's commit, by the store's clock): a repeat looks for its
    own earlier send from then on only (None: not known)."""

    @property
    def idempotency_key(self) -> str:
        """Stable for this effect across retries and restarts (ids are never reused)."""
        return f"outbox:{self.id}"

    @property
    def done(self) -> bool:
        """Whether the effect was performed and marked so."""
        return self.done_at is not None


@dataclass(frozen=True, slots=True)
class RecordResult:
    """What one input wrote (for a repeated message id: what it wrote the first time)."""

    game_id: int
    duplicate: bool
    first_seq: int | None
    last_seq: int | None
    outcome: JsonDict | None
    outbox: tuple[OutboxItem, ...]

    @property
    def pending(self) -> tuple[OutboxItem, ...]:
        """Effects still to perform (on a duplicate, those the first delivery did not finish)."""
        return tuple(item for item in self.outbox if not item.done)


@dataclass(frozen=True, slots=True)
class SeatSpec:
    """A player for a seat: at game creation, or a substitute from the recorded events on."""

    seat: int
    name: str
    user_id: int | None = None


@dataclass(frozen=True, slots=True)
class SeatTerm:
    """One holder of a seat: term 0 is the original player, then each substitute."""

    seat: int
    term: int
    name: str
    user_id: int | None
    since_seq: int
    since: datetime


@dataclass(frozen=True, slots=True)
class GameInfo:
    """A game's public record. Deliberately has no seed: see ``Repository.reveal_seed``."""

    id: int
    server_id: int
    ruleset: str
    options: JsonDict
    channels: JsonDict
    schedule: JsonDict
    status: GameStatus
    status_error: str | None
    commitment: str
    last_seq: int
    created_at: datetime
    updated_at: datetime
    finished_at: datetime | None


@dataclass(frozen=True, slots=True)
class StoredEvent:
    """An event row with its metadata, for audits and replays."""

    seq: int
    type: str
    payload: JsonDict
    message_id: int | None
    created_at: datetime


@dataclass(frozen=True, slots=True)
class Loaded(Generic[S]):
    """A rebuilt state and the seq it covers (pass it back as ``record(expected_seq=...)``);
    ``snapshot_seq``: the seq of the snapshot it was rebuilt from (0: from the events alone)."""

    state: S
    seq: int
    snapshot_seq: int = field(default=0, compare=False)


@dataclass(frozen=True)
class SnapshotCodec(Generic[S]):
    """How to store a state and continue from it; ``version`` invalidates old snapshots."""

    version: str
    dump: Callable[[S], JsonDict]
    load: Callable[[JsonDict], S]
    resume: Callable[[S, list[JsonDict]], S]


@dataclass(frozen=True, slots=True)
class StandingRow:
    """A player's season total."""

    user_id: int
    points: int
    games: int
    wins: int


@dataclass(frozen=True, slots=True)
class LobbyEntry:
    """A signed-up player, in seat order."""

    user_id: int
    name: str


@dataclass(frozen=True, slots=True)
class LobbyInfo:
    """A sign-up as stored: where, how many, its settings (ruleset, schedule, …) and players."""

    id: int
    server_id: int
    channel_id: int
    vote_channel_id: int
    min_players: int
    max_players: int
    settings: JsonDict
    status: LobbyStatus
    game_id: int | None
    players: tuple[LobbyEntry, ...] = ()
    replaced: tuple[LobbyEntry, ...] = ()
    """From `Lobbies.open` only: the players of the open sign-up this one replaced in its
    channel, no longer signed up (they are told so)."""


@dataclass(frozen=True, slots=True)
class Joined:
    """A join as recorded: the player's seat and the number signed up, both as of that join."""

    seat: int
    count: int
    max_players: int


@dataclass(frozen=True, slots=True)
class GameDraft:
    """Everything a new game's first transaction writes (built from the sign-up's players)."""

    ruleset: str
    seed: str
    commitment: str
    seats: tuple[SeatSpec, ...]
    events: tuple[JsonDict, ...]
    effects: tuple[JsonDict, ...]
    options: JsonDict
    channels: JsonDict
    schedule: JsonDict


DISCORD_SHARD_SHIFT = 22
"""Discord's shard of a server: ``(server_id >> 22) % shard_count``."""


@dataclass(frozen=True, slots=True)
class Shards:
    """The Discord shards a process runs: its games are those of the servers on them."""

    count: int
    ids: tuple[int, ...]

    def owns(self, server_id: int) -> bool:
        """Whether a server's games belong to this process."""
        return (server_id >> DISCORD_SHARD_SHIFT) % self.count in self.ids
