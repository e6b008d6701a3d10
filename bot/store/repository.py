"""The shell's only door to the database: games, their event logs, the outbox, settings, standings.

Theory of operation ("nothing lost, nothing doubled", DESIGN.md):
- ``record`` appends one accepted input's events, the effects they cause (outbox rows) and the
  input's id and outcome in ONE transaction. The shell performs effects only after it returns,
  so a crash never leaves an effect without its cause, nor a committed input without its effects.
- A Discord message (or interaction) id is recorded once (``inputs`` primary key). Recording it
  again writes nothing and returns the original outcome and outbox rows: redelivery is a no-op.
- ``games.last_seq`` is bumped by the first statement of every append. That statement takes the
  game's row lock (PostgreSQL) or the write lock (SQLite), so appends to one game are serialized
  and seqs are gap-free; ``expected_seq`` turns it into an optimistic check against stale state.
- Events and effects are opaque JSON to this module; folding them into a state is injected.
Nothing here imports the engine or discord.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Collection, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Generic, TypeVar, cast

from sqlalchemy import delete, func, insert, select, text, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.store.db import LAZY_COMMIT, Clock, utc_now
from bot.store.models import (
    Event,
    Game,
    GameSecret,
    GameStatus,
    Input,
    Outbox,
    Seat,
    Server,
    Snapshot,
    Standing,
)

log = logging.getLogger(__name__)

S = TypeVar("S")
JsonDict = dict[str, Any]
Fold = Callable[[list[JsonDict]], S]
"""Events (as stored dicts, in order) → state. Raises if the log cannot be replayed."""


# --- errors -------------------------------------------------------------------------------------


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


# --- values returned ----------------------------------------------------------------------------


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
    """A rebuilt state and the seq it covers (pass it back as ``record(expected_seq=...)``)."""

    state: S
    seq: int


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


class _Repeated(Exception):
    """Raised inside a transaction to roll it back and return the first recording instead."""

    def __init__(self, result: RecordResult) -> None:
        super().__init__(result.game_id)
        self.result = result


@dataclass(slots=True)
class _Batch:
    events: Sequence[Mapping[str, Any]]
    effects: Sequence[Mapping[str, Any]]
    message_id: int | None
    outcome: Mapping[str, Any] | None
    seats: Sequence[SeatSpec] = field(default_factory=tuple)


# --- the repository -----------------------------------------------------------------------------


def _event_type(payload: Mapping[str, Any]) -> str:
    kind = payload.get("type")
    if not isinstance(kind, str) or not kind:
        raise ValueError("every event payload needs a non-empty string 'type'")
    return kind


def _item(row: Outbox) -> OutboxItem:
    return OutboxItem(
        id=row.id,
        game_id=row.game_id,
        seq=row.seq,
        payload=row.payload,
        attempts=row.attempts,
        last_error=row.last_error,
        done_at=row.done_at,
    )


def _info(row: Game) -> GameInfo:
    return GameInfo(
        id=row.id,
        server_id=row.server_id,
        ruleset=row.ruleset,
        options=row.options,
        channels=row.channels,
        schedule=row.schedule,
        status=GameStatus(row.status),
        status_error=row.status_error,
        commitment=row.commitment,
        last_seq=row.last_seq,
        created_at=row.created_at,
        updated_at=row.updated_at,
        finished_at=row.finished_at,
    )


def _upsert(session: AsyncSession, table: Any) -> Any:
    """INSERT … ON CONFLICT for the session's backend (the same statement on both)."""
    name = session.get_bind().dialect.name
    if name == "postgresql":
        return postgresql.insert(table)
    if name == "sqlite":
        return sqlite.insert(table)
    raise NotImplementedError(f"unsupported database backend {name!r}")


async def _commit_lazily(session: AsyncSession) -> None:
    """Start the session's transaction so that its commit returns before reaching the disk.

    The commit still survives a crash of the bot; a power cut may lose it. PostgreSQL:
    ``synchronous_commit = off`` for this transaction; SQLite: ``synchronous=NORMAL`` for it
    (``LAZY_COMMIT``, see ``bot.store.db``), on disk with the next commit of either backend.
    """
    await session.connection(execution_options={LAZY_COMMIT: True})
    if session.get_bind().dialect.name == "postgresql":
        await session.execute(text("SET LOCAL synchronous_commit = off"))


class _Batcher:
    """Group commit: items asked for while a batch is being written go in the next batch.

    The first item starts a task that writes batches until none is waiting; every caller waits
    only for the batch that holds its item (one caller alone: a batch of one, at once).
    """

    def __init__(
        self, loop: asyncio.AbstractEventLoop, write: Callable[[list[int]], Awaitable[set[int]]]
    ) -> None:
        self.loop = loop
        self._write = write
        self._waiting: dict[int, asyncio.Future[bool]] = {}
        self._task: asyncio.Task[None] | None = None

    async def add(self, item: int) -> bool:
        """Wait until `item` is written; True if the write changed it."""
        future = self._waiting.get(item) or self.loop.create_future()
        self._waiting[item] = future
        if self._task is None:
            self._task = self.loop.create_task(self._drain())
        return await asyncio.shield(future)

    async def _drain(self) -> None:
        try:
            while self._waiting:
                batch, self._waiting = self._waiting, {}
                try:
                    changed = await self._write(list(batch))
                except BaseException as exc:
                    for waiting in batch.values():
                        waiting.set_exception(exc)
                    if not isinstance(exc, Exception):
                        raise
                    continue
                for key, waiting in batch.items():
                    waiting.set_result(key in changed)
        finally:
            self._task = None


class Repository:
    """Storage for the shell; every method is one short transaction."""

    def __init__(self, sessions: async_sessionmaker[AsyncSession], *, clock: Clock = utc_now):
        self._sessions = sessions
        self._clock = clock
        bind = sessions.kw.get("bind")
        self._serial = bind is not None and bind.dialect.name == "sqlite"
        self._writer: tuple[asyncio.AbstractEventLoop, asyncio.Lock] | None = None
        self._marks: _Batcher | None = None

    @asynccontextmanager
    async def _writing(self) -> AsyncIterator[AsyncSession]:
        """A session in a write transaction, committed at the end (rolled back on an error).

        SQLite has one writer at a time; a second connection that tries to write waits in
        SQLite's busy handler, which sleeps (up to 100 ms a time). So on SQLite this process's
        writes queue here instead, in order, and never meet a busy database among themselves.
        """
        if not self._serial:
            async with self._sessions() as s, s.begin():
                yield s
            return
        loop = asyncio.get_running_loop()
        if self._writer is None or self._writer[0] is not loop:
            self._writer = (loop, asyncio.Lock())
        async with self._writer[1], self._sessions() as s, s.begin():
            yield s

    # --- games --------------------------------------------------------------------------------

    async def create_game(
        self,
        *,
        server_id: int,
        ruleset: str,
        seed: str,
        commitment: str,
        seats: Sequence[SeatSpec],
        events: Sequence[Mapping[str, Any]],
        effects: Sequence[Mapping[str, Any]] = (),
        options: Mapping[str, Any] | None = None,
        channels: Mapping[str, Any] | None = None,
        schedule: Mapping[str, Any] | None = None,
        message_id: int | None = None,
        outcome: Mapping[str, Any] | None = None,
    ) -> RecordResult:
        """Create an active game with its first events and effects, in one transaction.

        The seed goes to a table nothing shows before the end. With ``message_id`` (the command
        that started the game), a repeated call returns the game first created.
        """
        for payload in events:
            _event_type(payload)
        batch = _Batch(events, effects, message_id, outcome)
        try:
            async with self._writing() as s:
                now = self._clock()
                # The first statement is a write, so SQLite takes its write lock before any read.
                await s.execute(
                    _upsert(s, Server)
                    .values(id=server_id, settings={}, created_at=now, updated_at=now)
                    .on_conflict_do_nothing(index_elements=["id"])
                )
                await self._raise_if_repeated(s, message_id)
                game = Game(
                    server_id=server_id,
                    ruleset=ruleset,
                    options=dict(options or {}),
                    channels=dict(channels or {}),
                    schedule=dict(schedule or {}),
                    status=GameStatus.ACTIVE.value,
                    commitment=commitment,
                    last_seq=len(events),
                    created_at=now,
                    updated_at=now,
                )
                s.add(game)
                await s.flush()
                s.add(GameSecret(game_id=game.id, seed=seed))
                s.add_all(
                    Seat(
                        game_id=game.id,
                        seat=spec.seat,
                        term=0,
                        user_id=spec.user_id,
                        name=spec.name,
                        since_seq=1,
                        since=now,
                    )
                    for spec in seats
                )
                return await self._append(s, game.id, 1, batch, now)
        except _Repeated as repeated:
            return repeated.result

    async def record(
        self,
        game_id: int,
        *,
        events: Sequence[Mapping[str, Any]],
        effects: Sequence[Mapping[str, Any]] = (),
        message_id: int | None = None,
        outcome: Mapping[str, Any] | None = None,
        expected_seq: int | None = None,
        substitutes: Sequence[SeatSpec] = (),
        finish: bool = False,
    ) -> RecordResult:
        """Append one input's events, effects, substitutes (and the end, if ``finish``) atomically.

        A ``message_id`` already recorded makes this a no-op that returns the original result.
        Raises ``GameNotFound``, ``GameNotActive``, or ``SeqConflict`` when ``expected_seq`` (the
        seq the caller's state covers) is no longer the game's last. An input the engine rejected
        is recorded with no events (its outcome and any reply effects), so it too is done once.
        """
        for payload in events:
            _event_type(payload)
        batch = _Batch(events, effects, message_id, outcome, substitutes)
        n = len(events)
        try:
            async with self._writing() as s:
                now = self._clock()
                # Bumping last_seq first locks the game row (PostgreSQL) or the database (SQLite),
                # so appends to one game are serialized and gap-free.
                bump = (
                    update(Game)
                    .where(Game.id == game_id, Game.status == GameStatus.ACTIVE.value)
                    .values(last_seq=Game.last_seq + n, updated_at=now)
                    .returning(Game.last_seq)
                )
                if expected_seq is not None:
                    bump = bump.where(Game.last_seq == expected_seq)
                if finish:
                    bump = bump.values(status=GameStatus.FINISHED.value, finished_at=now)
                conn = await s.connection()  # Core from here: no unit of work per input
                last_seq = (await conn.execute(bump)).scalar_one_or_none()
                if last_seq is None:
                    await self._raise_if_repeated(s, message_id)
                    raise await self._refusal(s, game_id, expected_seq)
                # A repeated message id is found by its insert in _append (and rolled back).
                return await self._append(s, game_id, last_seq - n + 1, batch, now)
        except _Repeated as repeated:
            return repeated.result

    async def _raise_if_repeated(self, s: AsyncSession, message_id: int | None) -> None:
        """Abort the transaction (nothing written) if this input was recorded before."""
        if message_id is not None and (found := await self._duplicate(s, message_id)):
            raise _Repeated(found)

    async def _refusal(self, s: AsyncSession, game_id: int, expected_seq: int | None) -> StoreError:
        """Why an append matched no game row."""
        row = (
            await s.execute(select(Game.status, Game.last_seq).where(Game.id == game_id))
        ).one_or_none()
        if row is None:
            return GameNotFound(game_id)
        status, actual = GameStatus(row[0]), row[1]
        if status is not GameStatus.ACTIVE:
            return GameNotActive(game_id, status)
        return SeqConflict(game_id, expected_seq if expected_seq is not None else -1, actual)

    async def _append(
        self, s: AsyncSession, game_id: int, first_seq: int, batch: _Batch, now: datetime
    ) -> RecordResult:
        """Insert the input, its events, substitutes and outbox rows (Core statements: one per
        table, no unit of work); a message id recorded before raises ``_Repeated``."""
        n = len(batch.events)
        last_seq = first_seq + n - 1
        seqs = (first_seq, last_seq) if n else (None, None)
        outcome = dict(batch.outcome) if batch.outcome is not None else None
        conn = await s.connection()
        if batch.message_id is not None:
            inserted = await conn.execute(
                _upsert(s, Input)
                .values(
                    message_id=batch.message_id,
                    game_id=game_id,
                    outcome=outcome,
                    first_seq=seqs[0],
                    last_seq=seqs[1],
                    received_at=now,
                )
                .on_conflict_do_nothing(index_elements=["message_id"])
                .returning(Input.message_id)
            )
            if inserted.scalar_one_or_none() is None:
                await self._raise_if_repeated(s, batch.message_id)
        if batch.events:
            await conn.execute(
                insert(Event),
                [
                    {
                        "game_id": game_id,
                        "seq": first_seq + i,
                        "type": _event_type(payload),
                        "payload": dict(payload),
                        "message_id": batch.message_id,
                        "created_at": now,
                    }
                    for i, payload in enumerate(batch.events)
                ],
            )
        if batch.seats:
            terms = await self._next_terms(s, game_id, [spec.seat for spec in batch.seats])
            s.add_all(
                Seat(
                    game_id=game_id,
                    seat=spec.seat,
                    term=terms[spec.seat],
                    user_id=spec.user_id,
                    name=spec.name,
                    since_seq=first_seq,
                    since=now,
                )
                for spec in batch.seats
            )
            await s.flush()
        outbox: tuple[OutboxItem, ...] = ()
        if batch.effects:
            seq = last_seq if n else first_seq - 1
            rows = [
                {
                    "game_id": game_id,
                    "seq": seq,
                    "message_id": batch.message_id,
                    "payload": dict(effect),
                    "attempts": 0,
                    "created_at": now,
                }
                for effect in batch.effects
            ]
            ids = await conn.scalars(
                insert(Outbox).returning(Outbox.id, sort_by_parameter_order=True), rows
            )
            outbox = tuple(
                OutboxItem(
                    id=outbox_id,
                    game_id=game_id,
                    seq=seq,
                    payload=cast(JsonDict, row["payload"]),
                    attempts=0,
                    last_error=None,
                    done_at=None,
                )
                for outbox_id, row in zip(ids, rows, strict=True)
            )
        return RecordResult(
            game_id=game_id,
            duplicate=False,
            first_seq=seqs[0],
            last_seq=seqs[1],
            outcome=outcome,
            outbox=outbox,
        )

    async def _next_terms(self, s: AsyncSession, game_id: int, seats: list[int]) -> dict[int, int]:
        if len(set(seats)) != len(seats):
            raise ValueError("one substitute per seat per input")
        rows = await s.execute(
            select(Seat.seat, func.max(Seat.term))
            .where(Seat.game_id == game_id, Seat.seat.in_(seats))
            .group_by(Seat.seat)
        )
        current = {seat: term for seat, term in rows}
        return {seat: current.get(seat, -1) + 1 for seat in seats}

    async def _duplicate(self, s: AsyncSession, message_id: int) -> RecordResult | None:
        found = await s.get(Input, message_id)
        if found is None:
            return None
        rows = await s.scalars(
            select(Outbox).where(Outbox.message_id == message_id).order_by(Outbox.id)
        )
        return RecordResult(
            game_id=found.game_id,
            duplicate=True,
            first_seq=found.first_seq,
            last_seq=found.last_seq,
            outcome=found.outcome,
            outbox=tuple(_item(row) for row in rows),
        )

    async def last_message_id(self, game_id: int) -> int | None:
        """The newest Discord message recorded for the game: catch-up reads history after it."""
        async with self._sessions() as s:
            return await s.scalar(
                select(func.max(Input.message_id)).where(Input.game_id == game_id)
            )

    async def get_game(self, game_id: int) -> GameInfo:
        """The game's record (no seed); raises ``GameNotFound``."""
        async with self._sessions() as s:
            row = await s.get(Game, game_id)
            if row is None:
                raise GameNotFound(game_id)
            return _info(row)

    async def list_games(
        self, *, server_id: int | None = None, statuses: Collection[GameStatus] | None = None
    ) -> list[GameInfo]:
        """Games in id order, optionally of one server and/or in the given statuses."""
        query = select(Game).order_by(Game.id)
        if server_id is not None:
            query = query.where(Game.server_id == server_id)
        if statuses is not None:
            query = query.where(Game.status.in_([status.value for status in statuses]))
        async with self._sessions() as s:
            return [_info(row) for row in await s.scalars(query)]

    async def active_game_ids(self) -> list[int]:
        """Ids of the games to rebuild at start."""
        async with self._sessions() as s:
            rows = await s.scalars(
                select(Game.id).where(Game.status == GameStatus.ACTIVE.value).order_by(Game.id)
            )
            return list(rows)

    async def stop_game(self, game_id: int, error: str) -> None:
        """Mark a game ``stopped_error`` with a reason moderators see; it takes no more input."""
        await self._set_status(game_id, GameStatus.STOPPED_ERROR, error)

    async def resume_game(self, game_id: int) -> None:
        """Put a stopped game back to ``active`` (after a moderator or an upgrade fixed it)."""
        await self._set_status(game_id, GameStatus.ACTIVE, None)

    async def finish_game(self, game_id: int) -> None:
        """Mark a game ``finished`` without new events (``record(finish=True)`` does it with)."""
        await self._set_status(game_id, GameStatus.FINISHED, None)

    async def _set_status(self, game_id: int, status: GameStatus, error: str | None) -> None:
        async with self._writing() as s:
            now = self._clock()
            values: dict[str, Any] = {"status": status.value, "status_error": error}
            values["updated_at"] = now
            values["finished_at"] = now if status is GameStatus.FINISHED else None
            result = await s.execute(
                update(Game).where(Game.id == game_id).values(**values).returning(Game.id)
            )
            if result.scalar_one_or_none() is None:
                raise GameNotFound(game_id)

    # --- the seed -----------------------------------------------------------------------------

    async def reveal_seed(self, game_id: int) -> str:
        """The seed, for publishing at the end; raises ``SeedSealed`` while the game is not over."""
        async with self._sessions() as s:
            row = (
                await s.execute(
                    select(Game.status, GameSecret.seed)
                    .join(GameSecret, GameSecret.game_id == Game.id)
                    .where(Game.id == game_id)
                )
            ).one_or_none()
        if row is None:
            raise GameNotFound(game_id)
        if row[0] != GameStatus.FINISHED.value:
            raise SeedSealed(f"game {game_id} is not finished")
        return str(row[1])

    async def sealed_seed(self, game_id: int) -> str:
        """The seed while the game runs, for the judge's own draws only: never render it."""
        async with self._sessions() as s:
            secret = await s.get(GameSecret, game_id)
        if secret is None:
            raise GameNotFound(game_id)
        return secret.seed

    # --- events and state ---------------------------------------------------------------------

    async def load_events(self, game_id: int) -> list[JsonDict]:
        """Every event payload of the game, in order; raises ``CorruptLog`` on a gap."""
        return [event.payload for event in await self.event_rows(game_id)]

    async def event_rows(self, game_id: int, *, after_seq: int = 0) -> list[StoredEvent]:
        """Events after ``after_seq`` with their metadata, checked to be gap-free."""
        async with self._sessions() as s:  # one read transaction, rolled back at close
            last = await self._last_seq(s, game_id)
            return await self._events(s, game_id, after_seq, last)

    async def _last_seq(self, s: AsyncSession, game_id: int) -> int:
        last = (await s.execute(select(Game.last_seq).where(Game.id == game_id))).scalar()
        if last is None:
            raise GameNotFound(game_id)
        return last

    async def _events(
        self, s: AsyncSession, game_id: int, after_seq: int, last_seq: int
    ) -> list[StoredEvent]:
        # Bounded by last_seq read first: appends are atomic, so this is a consistent prefix even
        # under READ COMMITTED.
        try:
            rows = list(
                await s.scalars(
                    select(Event)
                    .where(Event.game_id == game_id, Event.seq > after_seq, Event.seq <= last_seq)
                    .order_by(Event.seq)
                )
            )
        except ValueError as exc:  # a payload that is not JSON (SQLite stores text)
            raise CorruptLog(game_id, None, "unreadable event payload") from exc
        expected = after_seq + 1
        for row in rows:
            if row.seq != expected:
                raise CorruptLog(game_id, expected, "missing event")
            if not isinstance(row.payload, dict):
                raise CorruptLog(game_id, row.seq, "event payload is not an object")
            expected += 1
        if expected != last_seq + 1:
            raise CorruptLog(game_id, expected, "missing event")
        return [
            StoredEvent(
                seq=row.seq,
                type=row.type,
                payload=row.payload,
                message_id=row.message_id,
                created_at=row.created_at,
            )
            for row in rows
        ]

    async def _payloads(
        self, s: AsyncSession, game_id: int, after_seq: int, last_seq: int
    ) -> list[JsonDict]:
        """The payloads of events ``after_seq``+1 .. ``last_seq``, checked to be gap-free."""
        conn = await s.connection()  # Core: plain rows, no ORM per row
        try:
            rows = (
                await conn.execute(
                    select(Event.seq, Event.payload)
                    .where(Event.game_id == game_id, Event.seq > after_seq, Event.seq <= last_seq)
                    .order_by(Event.seq)
                )
            ).all()
        except ValueError as exc:  # a payload that is not JSON (SQLite stores text)
            raise CorruptLog(game_id, None, "unreadable event payload") from exc
        for expected, (seq, payload) in enumerate(rows, after_seq + 1):
            if seq != expected:
                raise CorruptLog(game_id, expected, "missing event")
            if not isinstance(payload, dict):
                raise CorruptLog(game_id, seq, "event payload is not an object")
        if len(rows) != last_seq - after_seq:
            raise CorruptLog(game_id, after_seq + len(rows) + 1, "missing event")
        return [payload for _, payload in rows]

    async def load_game(
        self, game_id: int, fold: Fold[S], *, snapshot: SnapshotCodec[S] | None = None
    ) -> Loaded[S]:
        """Rebuild the state: newest usable snapshot + the events after it, or a full replay.

        A snapshot that fails to load or resume is ignored (logged): the events are the truth.
        Errors from ``fold`` propagate (``recovery.rebuild`` turns them into a stopped game).
        """
        async with self._sessions() as s:  # one read transaction, rolled back at close
            base, state = 0, None
            if snapshot is None:
                last = await self._last_seq(s, game_id)
            else:
                # The game's last seq and its newest snapshot of this version, in one query.
                conn = await s.connection()
                found = (
                    await conn.execute(
                        select(Game.last_seq, Snapshot.seq, Snapshot.state)
                        .outerjoin(
                            Snapshot,
                            (Snapshot.game_id == Game.id)
                            & (Snapshot.version == snapshot.version)
                            & (Snapshot.seq <= Game.last_seq),
                        )
                        .where(Game.id == game_id)
                        .order_by(Snapshot.seq.desc())
                        .limit(1)
                    )
                ).one_or_none()
                if found is None:
                    raise GameNotFound(game_id)
                last, base, state = found[0], found[1] or 0, found[2]
            tail = await self._payloads(s, game_id, base, last)
            if base and snapshot is not None:
                try:
                    blob = cast(JsonDict, state)
                    return Loaded(snapshot.resume(snapshot.load(blob), tail), last)
                except Exception as exc:
                    log.warning(
                        "game %s: snapshot at seq %s unusable (%s); replaying all events",
                        game_id,
                        base,
                        type(exc).__name__,
                    )
                tail = await self._payloads(s, game_id, 0, base) + tail
        return Loaded(fold(tail), last)

    async def save_snapshot(self, game_id: int, loaded: Loaded[S], codec: SnapshotCodec[S]) -> None:
        """Store ``loaded.state`` as covering events 1..``loaded.seq``; older snapshots go."""
        async with self._writing() as s:
            await s.execute(
                _upsert(s, Snapshot)
                .values(
                    game_id=game_id,
                    seq=loaded.seq,
                    version=codec.version,
                    state=codec.dump(loaded.state),
                    created_at=self._clock(),
                )
                .on_conflict_do_nothing(index_elements=["game_id", "seq"])
            )
            await s.execute(
                delete(Snapshot).where(Snapshot.game_id == game_id, Snapshot.seq < loaded.seq)
            )

    # --- outbox -------------------------------------------------------------------------------

    async def undone_effects(
        self, game_id: int | None = None, *, include_stopped: bool = False
    ) -> list[OutboxItem]:
        """Effects not yet marked done, in the order they were recorded.

        Finished games' effects are included (the last input's reveal must still go out);
        those of games stopped on an error are not, unless asked: their state is in doubt.
        """
        query = (
            select(Outbox)
            .join(Game, Game.id == Outbox.game_id)
            .where(Outbox.done_at.is_(None))
            .order_by(Outbox.id)
        )
        if game_id is not None:
            query = query.where(Outbox.game_id == game_id)
        if not include_stopped:
            query = query.where(Game.status != GameStatus.STOPPED_ERROR.value)
        async with self._sessions() as s:
            return [_item(row) for row in await s.scalars(query)]

    async def mark_done(self, outbox_id: int) -> bool:
        """Mark an effect performed; False if it already was (a retry that raced a first try).

        Marks asked for while one is being written go together in the next transaction, and
        they are committed lazily (``_commit_lazily``): if a power cut loses a mark, the effect
        is performed again, which its idempotency key makes harmless.
        """
        loop = asyncio.get_running_loop()
        if self._marks is None or self._marks.loop is not loop:
            self._marks = _Batcher(loop, self._mark_done_now)
        return await self._marks.add(outbox_id)

    async def _mark_done_now(self, ids: list[int]) -> set[int]:
        async with self._writing() as s:
            await _commit_lazily(s)
            result = await s.execute(
                update(Outbox)
                .where(Outbox.id.in_(ids), Outbox.done_at.is_(None))
                .values(done_at=self._clock(), attempts=Outbox.attempts + 1)
                .returning(Outbox.id)
            )
            return set(result.scalars())

    async def record_attempt_failure(self, outbox_id: int, error: str) -> None:
        """Count a failed attempt and keep its error (truncated) for moderators and operators."""
        async with self._writing() as s:
            await s.execute(
                update(Outbox)
                .where(Outbox.id == outbox_id)
                .values(attempts=Outbox.attempts + 1, last_error=error[:2000])
            )

    # --- seats --------------------------------------------------------------------------------

    async def seats(self, game_id: int) -> list[SeatTerm]:
        """Every holder of every seat, by seat then term."""
        async with self._sessions() as s:
            rows = await s.scalars(
                select(Seat).where(Seat.game_id == game_id).order_by(Seat.seat, Seat.term)
            )
            return [
                SeatTerm(
                    seat=row.seat,
                    term=row.term,
                    name=row.name,
                    user_id=row.user_id,
                    since_seq=row.since_seq,
                    since=row.since,
                )
                for row in rows
            ]

    async def current_seats(self, game_id: int) -> dict[int, SeatTerm]:
        """Seat number → its present holder."""
        return {term.seat: term for term in await self.seats(game_id)}

    async def games_of_user(
        self, user_id: int, *, statuses: Collection[GameStatus] = (GameStatus.ACTIVE,)
    ) -> list[tuple[int, int]]:
        """(game id, seat) pairs where the user is the present holder of a seat."""
        latest = (
            select(Seat.game_id, Seat.seat, func.max(Seat.term).label("term"))
            .group_by(Seat.game_id, Seat.seat)
            .subquery()
        )
        query = (
            select(Seat.game_id, Seat.seat)
            .join(
                latest,
                (latest.c.game_id == Seat.game_id)
                & (latest.c.seat == Seat.seat)
                & (latest.c.term == Seat.term),
            )
            .join(Game, Game.id == Seat.game_id)
            .where(Seat.user_id == user_id, Game.status.in_([st.value for st in statuses]))
            .order_by(Seat.game_id, Seat.seat)
        )
        async with self._sessions() as s:
            return [(game_id, seat) for game_id, seat in await s.execute(query)]

    async def update_channels(self, game_id: int, changes: Mapping[str, Any]) -> JsonDict:
        """Merge ``changes`` into a game's Discord objects (channels, threads, role)."""
        async with self._writing() as s:
            row = await s.scalar(select(Game).where(Game.id == game_id).with_for_update())
            if row is None:
                raise GameNotFound(game_id)
            merged = {**row.channels, **changes}
            row.channels = {key: value for key, value in merged.items() if value is not None}
            row.updated_at = self._clock()
            return dict(row.channels)

    # --- servers ------------------------------------------------------------------------------

    async def get_settings(self, server_id: int) -> JsonDict:
        """A server's settings ({} for a server never configured)."""
        async with self._sessions() as s:
            row = await s.get(Server, server_id)
            return dict(row.settings) if row is not None else {}

    async def update_settings(self, server_id: int, changes: Mapping[str, Any]) -> JsonDict:
        """Merge ``changes`` into the settings (a ``None`` value removes the key); returns them."""
        async with self._writing() as s:
            now = self._clock()
            await s.execute(
                _upsert(s, Server)
                .values(id=server_id, settings={}, created_at=now, updated_at=now)
                .on_conflict_do_nothing(index_elements=["id"])
            )
            row = await s.scalar(select(Server).where(Server.id == server_id).with_for_update())
            assert row is not None
            merged = {**row.settings, **changes}
            settings = {key: value for key, value in merged.items() if value is not None}
            row.settings = settings
            row.updated_at = now
            return dict(settings)

    # --- standings ----------------------------------------------------------------------------

    async def apply_scores(
        self,
        game_id: int,
        *,
        season: str,
        scores: Mapping[int, int],
        winners: Collection[int] = (),
    ) -> bool:
        """Add a finished game's scores to the server's season standings, once per game.

        ``scores`` maps user id → points. Returns False (and changes nothing) if this game's
        scores were already applied, so a retry after a crash never counts a game twice.
        """
        async with self._writing() as s:
            now = self._clock()
            server_id = (
                await s.execute(
                    update(Game)
                    .where(Game.id == game_id, Game.scored_at.is_(None))
                    .values(scored_at=now)
                    .returning(Game.server_id)
                )
            ).scalar_one_or_none()
            if server_id is None:
                await self._last_seq(s, game_id)  # GameNotFound if there is no such game
                return False
            for user_id, points in sorted(scores.items()):
                won = 1 if user_id in winners else 0
                stmt = _upsert(s, Standing).values(
                    server_id=server_id,
                    season=season,
                    user_id=user_id,
                    points=points,
                    games=1,
                    wins=won,
                    updated_at=now,
                )
                await s.execute(
                    stmt.on_conflict_do_update(
                        index_elements=["server_id", "season", "user_id"],
                        set_={
                            "points": Standing.points + points,
                            "games": Standing.games + 1,
                            "wins": Standing.wins + won,
                            "updated_at": now,
                        },
                    )
                )
            return True

    async def standings(self, server_id: int, season: str) -> list[StandingRow]:
        """The season table: most points first, then most wins, then user id."""
        async with self._sessions() as s:
            rows = await s.scalars(
                select(Standing)
                .where(Standing.server_id == server_id, Standing.season == season)
                .order_by(Standing.points.desc(), Standing.wins.desc(), Standing.user_id)
            )
            return [
                StandingRow(user_id=r.user_id, points=r.points, games=r.games, wins=r.wins)
                for r in rows
            ]
