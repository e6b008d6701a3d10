"""The shell's only door to the database: games, their event logs, the outbox, settings, standings.

Theory of operation ("nothing lost, nothing doubled", DESIGN.md):
- ``record`` appends one accepted input's events, the effects they cause (outbox rows) and the
  input's id and outcome in ONE transaction. The shell performs effects only after it returns,
  so a crash never leaves an effect without its cause, nor a committed input without its effects.
- A Discord message (or interaction) id is recorded once (``inputs`` primary key). Recording it
  again writes nothing and returns the original outcome and outbox rows: redelivery is a no-op.
- ``games.last_seq`` is bumped by every append. That statement takes the game's row lock
  (PostgreSQL); on SQLite write transactions hold the write lock from BEGIN. Appends to one game
  are serialized and seqs are gap-free; ``expected_seq`` makes it an optimistic check against
  stale state.
- Group commit (``writer``): inputs recorded while a transaction is being written wait and go
  together in the next one, each awaiting that durable commit (the same ``synchronous`` setting
  as alone) before its effects are performed. One input's refusal (stale seq, duplicate, game
  over) writes nothing for that input and does not touch the others; a statement that fails
  before the commit makes every input of the group be written again alone.
- Effects performed are marked done with the next transaction (``mark_done_soon``): if that mark
  is lost (a crash), the effect is performed again, which its idempotency key makes harmless.
  Until it is written, ``undone_effects`` does not return it.
- Snapshots of a game's state are a cache beside its events: written with the next transaction
  after the events they cover, read with the events after them, ignored when unusable.
- Events and effects are opaque JSON to this module; folding them into a state is injected.
Nothing here imports the engine or discord.

The values it returns are in ``values``, its errors in ``errors``, its SQL in ``statements``,
the group commit's queue in ``writer``, and a group written in one call on the driver in
``sqlite_group`` and ``pg_group``; its values and errors are importable from here too.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import (
    AsyncIterator,
    Callable,
    Collection,
    Iterable,
    Iterator,
    Mapping,
    Sequence,
)
from contextlib import asynccontextmanager
from datetime import datetime
from typing import TYPE_CHECKING, Any, cast

from sqlalchemy import exists, func, insert, select, text, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, AsyncSession, async_sessionmaker
from sqlalchemy.orm import aliased

from bot.store import pg_group, sqlite_group
from bot.store import statements as sql
from bot.store.db import LAZY_COMMIT, WRITE_NOW, Clock, utc_now
from bot.store.errors import (
    CorruptLog,
    GameNotActive,
    GameNotFound,
    SeedSealed,
    SeqConflict,
    StoreError,
)
from bot.store.lobbies import Lobbies
from bot.store.models import (
    ChannelBinding,
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
from bot.store.sqlite_group import REFUSED, SEEN, PlannedAppend, Written
from bot.store.sqlite_process import SqliteProcess
from bot.store.values import (
    Fold,
    GameDraft,
    GameInfo,
    JsonDict,
    Loaded,
    OutboxItem,
    RecordResult,
    S,
    SeatSpec,
    SeatTerm,
    Shards,
    SnapshotCodec,
    StandingRow,
    StoredEvent,
)
from bot.store.writer import SPLIT_FROM, Append, Batch, Group, Stage, Writer
from engine.replacing import maker

__all__ = [  # the names callers import from here, wherever they are defined
    "CorruptLog",
    "Fold",
    "GameInfo",
    "GameNotActive",
    "GameNotFound",
    "JsonDict",
    "Loaded",
    "OutboxItem",
    "RecordResult",
    "Repository",
    "SeatSpec",
    "SeatTerm",
    "SeedSealed",
    "SeqConflict",
    "SnapshotCodec",
    "StandingRow",
    "StoreError",
    "StoredEvent",
]

log = logging.getLogger(__name__)


class _Repeated(Exception):
    """Raised inside a transaction to roll it back and return the first recording instead."""

    def __init__(self, result: RecordResult) -> None:
        super().__init__(result.game_id)
        self.result = result


def _event_type(payload: Mapping[str, Any]) -> str:
    kind = payload.get("type")
    if not isinstance(kind, str) or not kind:
        raise ValueError("every event payload needs a non-empty string 'type'")
    return kind


def _item(row: Outbox, *, done_at: datetime | None = None) -> OutboxItem:
    return OutboxItem(
        id=row.id,
        game_id=row.game_id,
        seq=row.seq,
        payload=row.payload,
        attempts=row.attempts,
        last_error=row.last_error,
        done_at=row.done_at or done_at,
        created_at=row.created_at,
    )


async def _locked_game(s: AsyncSession, game_id: int) -> Game:
    """A game's row, locked for this transaction (``FOR UPDATE``; SQLite's writes queue on the
    process's write lock): read, changed and written back with no other write in between."""
    row = await s.scalar(select(Game).where(Game.id == game_id).with_for_update())
    if row is None:
        raise GameNotFound(game_id)
    return row


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


def _gap_free(game_id: int, after_seq: int, last_seq: int, rows: Sequence[Any]) -> list[JsonDict]:
    """The payloads of (seq, payload) rows, checked to be exactly ``after_seq``+1..``last_seq``."""
    for expected, (seq, payload) in enumerate(rows, after_seq + 1):
        if seq != expected:
            raise CorruptLog(game_id, expected, "missing event")
        if not isinstance(payload, dict):
            raise CorruptLog(game_id, seq, "event payload is not an object")
    if len(rows) != last_seq - after_seq:
        raise CorruptLog(game_id, after_seq + len(rows) + 1, "missing event")
    return [payload for _, payload in rows]


def _with_tails(heads: Iterable[Any], tails: Iterable[Any]) -> Iterator[tuple[Any, ...]]:
    """Each head row (game id, last seq, snapshot seq, snapshot) with its game's (seq, payload)
    tail rows: both ordered by game id, merged as the games come."""
    rows = iter(tails)
    pending = next(rows, None)
    for game_id, last, base, blob in heads:
        while pending is not None and pending[0] < game_id:
            pending = next(rows, None)  # a game not in the heads: changed between the reads
        tail = []
        while pending is not None and pending[0] == game_id:
            tail.append((pending[1], pending[2]))
            pending = next(rows, None)
        yield game_id, last, base, blob, tail


if TYPE_CHECKING:  # mypy checks each call against the class
    _outbox_item, _record_result, _planned = OutboxItem, RecordResult, PlannedAppend
else:  # the same objects, built faster (`engine.replacing`): each vote post makes one of each
    _outbox_item, _record_result, _planned = map(maker, (OutboxItem, RecordResult, PlannedAppend))


def _recorded(
    game_id: int,
    seq: int,
    seqs: tuple[int | None, int | None],
    outcome: JsonDict | None,
    outbox_ids: Sequence[int],
    payloads: Sequence[JsonDict],
    at: datetime,
) -> RecordResult:
    """An input just recorded: its events' seqs and its outbox rows (all at ``seq``). Made for
    every input on the group commit's path: a list comprehension (a generator cost a fifth)."""
    items = [
        _outbox_item(id=i, game_id=game_id, seq=seq, payload=payload, attempts=0,
                     last_error=None, done_at=None, created_at=at)
        for i, payload in zip(outbox_ids, payloads, strict=True)
    ]  # fmt: skip
    return _record_result(game_id=game_id, duplicate=False, first_seq=seqs[0], last_seq=seqs[1],
                          outcome=outcome, outbox=tuple(items))  # fmt: skip


def _plans(group: Group) -> list[PlannedAppend]:
    """A group's inputs as the rows a one-call write writes."""
    return [
        _planned(
            game_id=a.game_id, expected_seq=a.expected_seq, finish=a.finish,
            message_id=a.batch.message_id, outcome=a.batch.outcome, events=a.batch.events,
            types=a.batch.types or [_event_type(p) for p in a.batch.events],
            effects=a.batch.effects,
        )
        for a in group.appends
    ]  # fmt: skip


def _asyncpg_engine(sessions: async_sessionmaker[AsyncSession]) -> AsyncEngine | None:
    """The engine of ``sessions`` if it is PostgreSQL through asyncpg (``pg_group`` writes on
    its connections), else None."""
    bind = sessions.kw.get("bind")
    if isinstance(bind, AsyncEngine) and bind.dialect.name == "postgresql":
        return bind if bind.dialect.driver == "asyncpg" else None
    return None


class Repository:
    """Storage for the shell; every method is one short transaction."""

    def __init__(self, sessions: async_sessionmaker[AsyncSession], *, clock: Clock = utc_now):
        self._sessions = sessions
        self._clock = clock
        bind = sessions.kw.get("bind")
        self._serial = bind is not None and bind.dialect.name == "sqlite"
        self._pg = _asyncpg_engine(sessions)
        """PostgreSQL through asyncpg: a group is written in one statement (``pg_group``)."""
        self._one_call = True
        """Write groups in one call on the driver (SQLite, PostgreSQL); False: statement by
        statement through SQLAlchemy (what the one-call writes are checked against)."""
        self._sqlite_process = (
            SqliteProcess.for_engine(bind) if isinstance(bind, AsyncEngine) else None
        )
        """SQLite's group commits in a process of their own (not for a memory database)."""
        self._writer: tuple[asyncio.AbstractEventLoop, asyncio.Lock] | None = None
        self._group: Writer | None = None
        self._unwritten_marks: set[int] = set()
        """Effects performed whose done mark is not written yet (``mark_done_soon``). A read
        leaves out those pending when it began too: the mark may be written (and dropped from
        here) while the read runs on a snapshot from before."""
        self.lobbies = Lobbies(
            sessions, self._writing, clock, self._ensure_server, self._insert_game
        )
        """Sign-ups, role confirmations and channel bindings (``bot.store.lobbies``)."""

    @asynccontextmanager
    async def _writing(self, *, lazy: bool = False) -> AsyncIterator[AsyncSession]:
        """A session in a write transaction, committed at the end (rolled back on an error).

        SQLite has one writer at a time; a second connection that tries to write waits in
        SQLite's busy handler, which sleeps (up to 100 ms a time). So on SQLite this process's
        writes queue here instead, in order, and never meet a busy database among themselves.

        ``lazy``: the commit may return before it is on disk. It still survives a crash of the
        bot; a power cut may lose it. PostgreSQL: ``synchronous_commit = off`` for this
        transaction; SQLite: ``synchronous=NORMAL`` for it (``LAZY_COMMIT``, see
        ``bot.store.db``), on disk with the next commit of either backend.
        """
        options: dict[str, Any] = {WRITE_NOW: True}
        if lazy:
            options[LAZY_COMMIT] = True
        if not self._serial:
            async with self._sessions() as s, s.begin():
                await s.connection(execution_options=options)
                if lazy and s.get_bind().dialect.name == "postgresql":
                    await s.execute(text("SET LOCAL synchronous_commit = off"))
                yield s
            return
        async with self._write_lock(), self._sessions() as s, s.begin():
            await s.connection(execution_options=options)
            yield s

    def _write_lock(self) -> asyncio.Lock:
        """The lock this process's SQLite writes queue on (see ``_writing``)."""
        loop = asyncio.get_running_loop()
        if self._writer is None or self._writer[0] is not loop:
            self._writer = (loop, asyncio.Lock())
        return self._writer[1]

    def _grouped(self) -> Writer:
        loop = asyncio.get_running_loop()
        if self._group is None or self._group.loop is not loop:
            # SQLite's writer process runs beside the loop; PostgreSQL's server shares this
            # machine's cores with it, and splitting measured no gain there
            split = SPLIT_FROM if self._sqlite_process is not None else None
            self._group = Writer(loop, self._commit_group, split_from=split)
        return self._group

    async def flush(self) -> None:
        """Wait until everything asked for so far (done marks, snapshots) is written."""
        if self._group is not None and self._group.loop is asyncio.get_running_loop():
            barrier = self._group.barrier()
            if barrier is not None:
                await asyncio.shield(barrier)

    @property
    def sqlite_writer_pid(self) -> int | None:
        """The SQLite writer process's id while one runs (for accounting for its CPU), else
        None."""
        return None if self._sqlite_process is None else self._sqlite_process.pid

    async def earlier_writes_landed(self) -> None:
        """Once nothing an earlier run of the bot sent to its SQLite writer process can still
        commit (``sqlite_lock``): what recovery reads then is all there will be. At once on
        PostgreSQL: its server finishes a statement the dead bot had sent (a group is one) a
        moment after the death, long before a restarted bot has logged in and reads; a sharded
        bot's sweep (``bot.runtime.wakes``) would perform such a group's effects all the same."""
        if self._sqlite_process is None:
            return
        waited = await self._sqlite_process.earlier_writer_ended()
        if waited is None:
            log.warning("another SQLite writer process is still running; reading without it")
        elif waited:
            log.info("waited %.2f s for the last run's SQLite writer process to end", waited)

    async def close(self) -> None:
        """At a clean stop: write what is asked for (``flush``), then close the group writer's
        process and its connection (SQLite), so the engine's ``dispose`` closes the last one."""
        await self.flush()
        if self._sqlite_process is not None:
            await self._sqlite_process.aclose()

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
        draft = GameDraft(
            ruleset=ruleset,
            seed=seed,
            commitment=commitment,
            seats=tuple(seats),
            events=tuple(dict(e) for e in events),
            effects=tuple(dict(e) for e in effects),
            options=dict(options or {}),
            channels=dict(channels or {}),
            schedule=dict(schedule or {}),
        )
        try:
            async with self._writing() as s:
                now = self._clock()
                await self._ensure_server(s, server_id, now)
                await self._raise_if_repeated(s, message_id)
                return await self._insert_game(s, server_id, draft, now, message_id, outcome)
        except _Repeated as repeated:
            return repeated.result

    async def _ensure_server(self, s: AsyncSession, server_id: int, now: datetime) -> None:
        """The server's row (a write: SQLite takes its write lock before any read)."""
        await s.execute(
            sql.upsert(s, Server)
            .values(id=server_id, settings={}, created_at=now, updated_at=now)
            .on_conflict_do_nothing(index_elements=["id"])
        )

    async def _insert_game(
        self,
        s: AsyncSession,
        server_id: int,
        draft: GameDraft,
        now: datetime,
        message_id: int | None = None,
        outcome: Mapping[str, Any] | None = None,
    ) -> RecordResult:
        """A new active game's rows (game, secret, seats, first events and effects), inside the
        caller's transaction."""
        game = Game(
            server_id=server_id,
            ruleset=draft.ruleset,
            options=dict(draft.options),
            channels=dict(draft.channels),
            schedule=dict(draft.schedule),
            status=GameStatus.ACTIVE.value,
            commitment=draft.commitment,
            last_seq=len(draft.events),
            created_at=now,
            updated_at=now,
        )
        s.add(game)
        await s.flush()
        s.add(GameSecret(game_id=game.id, seed=draft.seed))
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
            for spec in draft.seats
        )
        batch = Batch(draft.events, draft.effects, message_id, outcome)
        return await self._append(s, game.id, 1, batch, now)

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
        Returns once the transaction holding it is committed (group commit: see the module).
        """
        types = [_event_type(payload) for payload in events]
        if substitutes:
            seats = [spec.seat for spec in substitutes]
            if len(set(seats)) != len(seats):
                raise ValueError("one substitute per seat per input")
        batch = Batch(events, effects, message_id, outcome, substitutes, types)
        # Awaited as it is, not shielded: a caller cancelled cancels only its own future, which
        # the group then leaves unanswered (``Append.answer``), its input written all the same.
        return await self._grouped().append(game_id, batch, expected_seq, finish)

    async def _record_alone(self, append: Append) -> RecordResult:
        """One input in a transaction of its own (when its group could not be written)."""
        batch, game_id, expected_seq = append.batch, append.game_id, append.expected_seq
        n = len(batch.events)
        try:
            async with self._writing() as s:
                now = self._clock()
                conn = await s.connection()  # Core from here: no unit of work per input
                await self._raise_if_repeated(s, batch.message_id)
                params = {"g": game_id, "n": n, "now": now, "expected": expected_seq}
                bump = sql.bump(expected_seq is not None, append.finish)
                last_seq = (await conn.execute(bump, params)).scalar_one_or_none()
                if last_seq is None:
                    raise await self._refusal(s, game_id, expected_seq)
                if append.finish:
                    await conn.execute(sql.RELEASE_CHANNELS, {"g": game_id})
                # A message id recorded since is found by its insert in _append (rolled back).
                return await self._append(s, game_id, last_seq - n + 1, batch, now)
        except _Repeated as repeated:
            return repeated.result

    # --- the group commit ---------------------------------------------------------------------

    async def _commit_group(self, group: Group) -> None:
        """Write one group and answer everyone waiting on it; never raises an ``Exception``."""
        if not (group.appends or group.marks or group.snapshots):
            group.release()  # only waiting for what came before: written already
            return
        stage = Stage()
        try:
            try:
                results, changed = await self._write_group(group, stage)
            except Exception:
                if stage.committing:
                    raise  # the commit itself failed: its outcome is unknown, say so to all
                # A statement failed, nothing was written: write each part on its own, so that
                # the failure is only its own input's.
                log.warning("group of %s inputs failed; writing each alone", len(group.appends))
                await self._write_apart(group)
                return
        except BaseException as exc:
            group.fail(exc)
            if not isinstance(exc, Exception):
                raise
            return
        self._unwritten_marks.difference_update(group.marks)
        for append, result in zip(group.appends, results, strict=True):
            append.answer(result)
        for outbox_id, waiting in group.marks.items():
            if waiting is not None and not waiting.done():
                waiting.set_result(outbox_id in changed)
        group.release()

    async def _write_apart(self, group: Group) -> None:
        if group.marks:
            ids = list(group.marks)
            try:
                changed = await self._mark_done_now(ids)
            except Exception as exc:
                for waiting in group.marks.values():
                    if waiting is not None and not waiting.done():
                        waiting.set_exception(exc)
                log.warning("%s done marks not written (%s)", len(ids), type(exc).__name__)
            else:
                self._unwritten_marks.difference_update(ids)
                for outbox_id, waiting in group.marks.items():
                    if waiting is not None and not waiting.done():
                        waiting.set_result(outbox_id in changed)
        for append in group.appends:
            try:
                result: RecordResult | Exception = await self._record_alone(append)
            except Exception as exc:
                result = exc
            append.answer(result)
        for game_id, (seq, version, state) in group.snapshots.items():
            try:
                async with self._writing(lazy=True) as s:
                    await self._put_snapshots(
                        await s.connection(), {game_id: (seq, version, state)}
                    )
            except Exception as exc:  # a snapshot is only a cache: the events stay the truth
                log.warning("game %s: snapshot at seq %s not written (%s)", game_id, seq,
                            type(exc).__name__)  # fmt: skip
        group.release()

    async def _write_group(
        self, group: Group, stage: Stage
    ) -> tuple[list[RecordResult | StoreError], set[int]]:
        """One transaction: done marks, then the inputs, then snapshots. Durable (the store's
        ``synchronous`` setting) if it holds an input; committed lazily otherwise."""
        one_call = self._one_call and not any(a.batch.seats for a in group.appends)
        if one_call and self._pg is not None:
            plans = _plans(group)
            if pg_group.fits(plans):
                return await self._write_group_pg(self._pg, group, plans, stage)
        if one_call and self._serial:
            done = await self._write_group_sqlite(group, stage)
            if done is not None:
                return done
        async with self._writing(lazy=not group.appends) as s:
            conn = await s.connection()
            now = self._clock()
            changed: set[int] = set()
            for ids in sqlite_group.chunks(list(group.marks)):
                params = {"ids": ids, "now": now}
                changed |= set((await conn.execute(sql.MARK_DONE, params)).scalars())
            results = await self._append_group(s, conn, group.appends, now)
            if group.snapshots:
                await self._put_snapshots(conn, group.snapshots)
            stage.committing = True
        return results, changed

    async def _write_group_sqlite(
        self, group: Group, stage: Stage
    ) -> tuple[list[RecordResult | StoreError], set[int]] | None:
        """The group in one request to the writer process (``sqlite_group.commit`` there: begin,
        write, commit), or None for a memory database; the rare answers that need a look-up (a
        duplicate, a refusal) are read after it."""
        if self._sqlite_process is None:
            return None
        plans = _plans(group)
        now = self._clock()
        async with self._write_lock():
            written = await self._sqlite_process.commit(
                stage, bool(plans), now, list(group.marks), plans, group.snapshots
            )
        return await self._answered(group, written, now)

    async def _write_group_pg(
        self, bind: AsyncEngine, group: Group, plans: list[PlannedAppend], stage: Stage
    ) -> tuple[list[RecordResult | StoreError], set[int]]:
        """The group in one statement on the asyncpg connection (``pg_group``), committed with
        it; the rare answers that need a look-up (a duplicate, a refusal) are read after it."""
        now = self._clock()
        args = pg_group.arguments(now, list(group.marks), plans, group.snapshots)
        async with bind.connect() as conn:
            raw = (await conn.get_raw_connection()).driver_connection
            stage.committing = True
            try:
                written = await pg_group.write(raw, args, durable=bool(plans))
            except Exception as exc:
                if pg_group.rejected(exc):  # the server refused it: nothing was written
                    stage.committing = False
                else:
                    await conn.invalidate()
                raise
        return await self._answered(group, written, now)

    async def _answered(
        self, group: Group, written: Written, at: datetime
    ) -> tuple[list[RecordResult | StoreError], set[int]]:
        """``_answers`` of a group written and committed (at ``at``), with a session to read
        in if needed."""
        if all(isinstance(answer, tuple) for answer in written.appends):
            return await self._answers(group, written, None, at), written.changed
        async with self._sessions() as s:
            return await self._answers(group, written, s, at), written.changed

    async def _answers(
        self, group: Group, written: Written, s: AsyncSession | None, at: datetime
    ) -> list[RecordResult | StoreError]:
        """Each input's answer from what a one-call write wrote (``s`` reads a duplicate's first
        recording and why a refused input was refused)."""
        results: list[RecordResult | StoreError] = []
        for append, answer in zip(group.appends, written.appends, strict=True):
            if isinstance(answer, tuple):  # recorded (the commonest answer first)
                last_seq, outbox_ids = answer
                n = len(append.batch.events)
                first, last = (last_seq - n + 1, last_seq) if n else (None, None)
                outcome = dict(append.batch.outcome) if append.batch.outcome is not None else None
                payloads = [dict(effect) for effect in append.batch.effects]
                results.append(
                    _recorded(
                        append.game_id, last_seq, (first, last), outcome, outbox_ids, payloads, at
                    )
                )
            elif answer == SEEN:
                assert s is not None and append.batch.message_id is not None
                results.append(
                    cast(RecordResult, await self._duplicate(s, append.batch.message_id))
                )
            else:
                assert answer == REFUSED and s is not None
                results.append(await self._refusal(s, append.game_id, append.expected_seq))
        return results

    async def _append_group(
        self, s: AsyncSession, conn: AsyncConnection, appends: list[Append], now: datetime
    ) -> list[RecordResult | StoreError]:
        """Every input of a group: a bump of its game's row each, then one insert per table."""
        if not appends:
            return []
        ids = [a.batch.message_id for a in appends if a.batch.message_id is not None]
        seen = set((await conn.execute(sql.SEEN, {"ids": ids})).scalars()) if ids else set()
        answers: list[RecordResult | StoreError | None] = []
        inputs: list[dict[str, Any]] = []
        events: list[dict[str, Any]] = []
        outbox: list[dict[str, Any]] = []
        made: list[tuple[int, int, int, int | None, int | None, JsonDict | None, int]] = []
        """(answer index, game id, seq of its outbox rows, first seq, last seq, outcome,
        number of outbox rows)."""
        for append in appends:
            batch, game_id = append.batch, append.game_id
            if batch.message_id is not None and batch.message_id in seen:
                answers.append(await self._duplicate(s, batch.message_id))
                continue
            n = len(batch.events)
            params = {"g": game_id, "n": n, "now": now, "expected": append.expected_seq}
            bump = sql.bump(append.expected_seq is not None, append.finish)
            last_seq = (await conn.execute(bump, params)).scalar_one_or_none()
            if last_seq is None:
                answers.append(await self._refusal(s, game_id, append.expected_seq))
                continue
            if append.finish:
                await conn.execute(sql.RELEASE_CHANNELS, {"g": game_id})
            first_seq = last_seq - n + 1
            seqs = (first_seq, last_seq) if n else (None, None)
            outcome = dict(batch.outcome) if batch.outcome is not None else None
            if batch.message_id is not None:
                inputs.append(
                    {"message_id": batch.message_id, "game_id": game_id, "outcome": outcome,
                     "first_seq": seqs[0], "last_seq": seqs[1], "received_at": now}
                )  # fmt: skip
            events += (
                {"game_id": game_id, "seq": first_seq + i, "type": _event_type(payload),
                 "payload": dict(payload), "message_id": batch.message_id, "created_at": now}
                for i, payload in enumerate(batch.events)
            )  # fmt: skip
            if batch.seats:
                await self._add_seats(s, game_id, first_seq, batch.seats, now)
            seq = last_seq if n else first_seq - 1
            outbox += (
                {"game_id": game_id, "seq": seq, "message_id": batch.message_id,
                 "payload": dict(effect), "attempts": 0, "created_at": now}
                for effect in batch.effects
            )  # fmt: skip
            made.append((len(answers), game_id, seq, *seqs, outcome, len(batch.effects)))
            answers.append(None)
        if inputs:
            await conn.execute(insert(Input), inputs)
        if events:
            await conn.execute(insert(Event), events)
        outbox_ids: list[int] = []
        if outbox:
            outbox_ids = await sql.insert_outbox(conn, outbox)
        at = 0
        for index, game_id, seq, first, last, outcome, count in made:
            payloads = [row["payload"] for row in outbox[at : at + count]]
            answers[index] = _recorded(
                game_id, seq, (first, last), outcome, outbox_ids[at : at + count], payloads, now
            )
            at += count
        assert all(answer is not None for answer in answers)
        return cast(list[RecordResult | StoreError], answers)

    async def _put_snapshots(
        self, conn: AsyncConnection, snapshots: Mapping[int, tuple[int, str, JsonDict]]
    ) -> None:
        now = self._clock()
        rows = [
            {"game_id": game_id, "seq": seq, "version": version, "state": state, "created_at": now}
            for game_id, (seq, version, state) in snapshots.items()
        ]
        upsert = sql.dialect_insert(conn.dialect.name, Snapshot).on_conflict_do_nothing(
            index_elements=["game_id", "seq"]
        )
        await conn.execute(upsert, rows)
        await conn.execute(
            sql.OLDER_SNAPSHOTS,
            [{"g": game_id, "upto": seq} for game_id, (seq, _, _) in snapshots.items()],
        )

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
        self, s: AsyncSession, game_id: int, first_seq: int, batch: Batch, now: datetime
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
                sql.upsert(s, Input)
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
            await self._add_seats(s, game_id, first_seq, batch.seats, now)
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
            ids = await sql.insert_outbox(conn, rows)
            outbox = tuple(
                OutboxItem(
                    id=outbox_id,
                    game_id=game_id,
                    seq=seq,
                    payload=cast(JsonDict, row["payload"]),
                    attempts=0,
                    last_error=None,
                    done_at=None,
                    created_at=now,
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

    async def _add_seats(
        self,
        s: AsyncSession,
        game_id: int,
        since_seq: int,
        seats: Sequence[SeatSpec],
        now: datetime,
    ) -> None:
        terms = await self._next_terms(s, game_id, [spec.seat for spec in seats])
        s.add_all(
            Seat(
                game_id=game_id,
                seat=spec.seat,
                term=terms[spec.seat],
                user_id=spec.user_id,
                name=spec.name,
                since_seq=since_seq,
                since=now,
            )
            for spec in seats
        )
        await s.flush()

    async def _next_terms(self, s: AsyncSession, game_id: int, seats: list[int]) -> dict[int, int]:
        """Each seat's next term (its seats are distinct: ``record`` refuses one seat twice)."""
        rows = await s.execute(
            select(Seat.seat, func.max(Seat.term))
            .where(Seat.game_id == game_id, Seat.seat.in_(seats))
            .group_by(Seat.seat)
        )
        current = {seat: term for seat, term in rows}
        return {seat: current.get(seat, -1) + 1 for seat in seats}

    async def _duplicate(self, s: AsyncSession, message_id: int) -> RecordResult | None:
        pending = set(self._unwritten_marks)
        found = await s.get(Input, message_id)
        if found is None:
            return None
        rows = await s.scalars(
            select(Outbox).where(Outbox.message_id == message_id).order_by(Outbox.id)
        )
        pending |= self._unwritten_marks
        now = self._clock()
        return RecordResult(
            game_id=found.game_id,
            duplicate=True,
            first_seq=found.first_seq,
            last_seq=found.last_seq,
            outcome=found.outcome,
            # performed, its done mark not yet written: done all the same
            outbox=tuple(_item(row, done_at=now if row.id in pending else None) for row in rows),
        )

    async def last_message_id(self, game_id: int) -> int | None:
        """The newest Discord message recorded for the game: catch-up reads history after it."""
        async with self._sessions() as s:
            return await s.scalar(
                select(func.max(Input.message_id)).where(Input.game_id == game_id)
            )

    async def input_recorded(self, message_id: int) -> bool:
        """Whether an input with this message id is recorded (read from the database, not from
        any cache: after a write whose outcome is unknown)."""
        async with self._sessions() as s:
            found = await s.scalar(select(Input.message_id).where(Input.message_id == message_id))
            return found is not None

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

    async def active_game_ids(self, shards: Shards | None = None) -> list[int]:
        """Ids of the games to rebuild at start (with ``shards``: of the servers on them; found
        through the status index, not by reading every game)."""
        query = select(Game.id).where(Game.status == GameStatus.ACTIVE.value).order_by(Game.id)
        if shards is not None:
            query = query.where(sql.owned(Game.server_id))
        async with self._sessions() as s:
            rows = await s.scalars(query, _shard_params(shards))
            return list(rows)

    async def active_games_info(self, shards: Shards | None = None) -> list[GameInfo]:
        """Every active game's record (with ``shards``: of the servers on them), in id order,
        in one query: what a restart routes and schedules from, instead of a look-up per game."""
        query = select(*Game.__table__.columns).where(Game.status == GameStatus.ACTIVE.value)
        if shards is not None:
            query = query.where(sql.owned(Game.server_id))
        async with self._reading() as conn:
            rows = await conn.execute(query.order_by(Game.id), _shard_params(shards))
            return [_info(cast(Game, row)) for row in rows]  # a row of its columns reads as one

    async def stop_game(self, game_id: int, error: str) -> bool:
        """Mark a game in play ``stopped_error`` with its reason; it takes no more input and lets
        go of its channels. True if this stopped it; False if it was not in play (stopped or
        finished before: nothing changes), so of two causes found at once one alone tells."""
        async with self._writing() as s:
            result = await s.execute(
                update(Game)
                .where(Game.id == game_id, Game.status == GameStatus.ACTIVE.value)
                .values(
                    status=GameStatus.STOPPED_ERROR.value,
                    status_error=error,
                    updated_at=self._clock(),
                    finished_at=None,
                )
                .returning(Game.id)
            )
            if result.scalar_one_or_none() is None:
                if await s.get(Game, game_id) is None:
                    raise GameNotFound(game_id)
                return False
            await s.execute(sql.RELEASE_CHANNELS, {"g": game_id})
            return True

    async def resume_game(self, game_id: int) -> None:
        """Put a stopped game back to ``active`` (after a moderator or an upgrade fixed it); it
        takes its channels back, or raises ``ChannelHeld`` (changing nothing) if another sign-up
        or game holds one of them now."""
        try:
            await self._set_status(game_id, GameStatus.ACTIVE, None)
        except IntegrityError:
            info = await self.get_game(game_id)
            ids = [int(info.channels[k]) for k in ("game", "vote") if k in info.channels]
            raise await self.lobbies.held(*ids) from None

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
            if status is not GameStatus.ACTIVE:  # finished, or stopped: its channels are free
                await s.execute(sql.RELEASE_CHANNELS, {"g": game_id})
                return
            game = await s.get(Game, game_id)
            assert game is not None
            ids = sorted({int(game.channels[k]) for k in ("game", "vote") if k in game.channels})
            held = select(ChannelBinding.channel_id).where(ChannelBinding.game_id == game_id)
            mine = set((await s.scalars(held)).all())
            rows = [
                {"channel_id": cid, "server_id": game.server_id, "lobby_id": None,
                 "game_id": game_id, "created_at": now}
                for cid in ids
                if cid not in mine
            ]  # fmt: skip
            if rows:  # a channel held by another sign-up or game fails here
                await s.execute(insert(ChannelBinding), rows)

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
        _gap_free(game_id, after_seq, last_seq, [(row.seq, row.payload) for row in rows])
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
        self, conn: AsyncConnection, game_id: int, after_seq: int, last_seq: int
    ) -> list[JsonDict]:
        """The payloads of events ``after_seq``+1 .. ``last_seq``, checked to be gap-free."""
        try:
            rows = (
                await conn.execute(
                    sql.PAYLOADS, {"g": game_id, "after": after_seq, "upto": last_seq}
                )
            ).all()
        except ValueError as exc:  # a payload that is not JSON (SQLite stores text)
            raise CorruptLog(game_id, None, "unreadable event payload") from exc
        return _gap_free(game_id, after_seq, last_seq, rows)

    @asynccontextmanager
    async def _reading(self) -> AsyncIterator[AsyncConnection]:
        """A connection in a read transaction (rolled back at the end): Core, no session."""
        bind = self._sessions.kw.get("bind")
        if bind is not None:
            async with bind.connect() as conn:
                yield conn
            return
        async with self._sessions() as s:
            yield await s.connection()

    async def load_game(
        self, game_id: int, fold: Fold[S], *, snapshot: SnapshotCodec[S] | None = None
    ) -> Loaded[S]:
        """Rebuild the state: newest usable snapshot + the events after it, or a full replay.

        One query reads the game's last seq, its newest snapshot of this version and the events
        after it. A snapshot that cannot be read, loaded or resumed is ignored (logged, without
        its content): the events are the truth. Errors from ``fold`` propagate
        (``recovery.rebuild`` turns them into a stopped game).
        """
        version = snapshot.version if snapshot is not None else None
        async with self._reading() as conn:
            try:
                rows = (await conn.execute(sql.LOAD, {"g": game_id, "v": version})).all()
            except ValueError as exc:  # unreadable JSON: a snapshot's, or an event's
                if snapshot is None:
                    raise CorruptLog(game_id, None, "unreadable event payload") from exc
                log.warning("game %s: unreadable snapshot or event; replaying all events", game_id)
                last = await self._last_seq_of(conn, game_id)
                return Loaded(fold(await self._payloads(conn, game_id, 0, last)), last)
            if not rows or rows[0][0] != 0:
                raise GameNotFound(game_id)
            _, last, base, blob = rows[0]
            base = base or 0
            tail = _gap_free(
                game_id, base, last, [(seq, payload) for _, seq, _, payload in rows[1:]]
            )
            if not base or snapshot is None:
                return Loaded(fold(tail), last)
            try:
                state = snapshot.resume(snapshot.load(cast(JsonDict, blob)), tail)
                return Loaded(state, last, snapshot_seq=base)
            except Exception as exc:
                log.warning(
                    "game %s: snapshot at seq %s unusable (%s); replaying all events",
                    game_id,
                    base,
                    type(exc).__name__,
                )
            head = await self._payloads(conn, game_id, 0, base)
        return Loaded(fold(head + tail), last)

    async def load_active_games(
        self,
        fold: Fold[S],
        *,
        snapshot: SnapshotCodec[S] | None = None,
        shards: Shards | None = None,
    ) -> dict[int, Loaded[S]]:
        """Every active game that rebuilds cleanly, from two bulk reads (a restart's reads);
        with ``shards``, only the games of the servers on them.

        A game left out (a gap in its log, a snapshot or event that will not load, a replay
        that fails, or one changed between the two reads) is for ``load_game`` and its error
        handling, one by one: the result for those in it is exactly ``load_game``'s.
        """
        version = snapshot.version if snapshot is not None else None
        heads_sql, tails_sql = sql.bulk_statements(sharded=shards is not None)
        bound: dict[str, Any] = {"v": version, **_shard_params(shards)}
        games: dict[int, Loaded[S]] = {}
        async with self._reading() as conn:
            heads = await conn.execute(heads_sql, bound)
            tails = await conn.execute(tails_sql, bound)
            # Row by row, the JSON (read as text) decoded a game at a time: every row and its
            # JSON alive at once beside the states being built left their freed pages resident
            # (a fresh process recovering 1,000 games: RSS +77 KB a game, against +20–22). No
            # await below: the connection held meanwhile keeps nothing else waiting.
            for game_id, last, base, blob, rows in _with_tails(heads, tails):
                base = base or 0
                try:
                    payloads = [(seq, json.loads(payload)) for seq, payload in rows]
                    tail = _gap_free(game_id, base, last, payloads)
                    if not base or snapshot is None:
                        games[game_id] = Loaded(fold(tail), last)
                    else:
                        state = snapshot.resume(snapshot.load(json.loads(blob)), tail)
                        games[game_id] = Loaded(state, last, snapshot_seq=base)
                except Exception:  # load_game says what is wrong (unreadable JSON too)
                    continue
        return games

    async def _last_seq_of(self, conn: AsyncConnection, game_id: int) -> int:
        last = (await conn.execute(sql.LAST_SEQ, {"g": game_id})).scalar()
        if last is None:
            raise GameNotFound(game_id)
        return int(last)

    async def save_snapshot(self, game_id: int, loaded: Loaded[S], codec: SnapshotCodec[S]) -> None:
        """Store ``loaded.state`` as covering events 1..``loaded.seq``; older snapshots go."""
        blob = codec.dump(loaded.state)
        async with self._writing(lazy=True) as s:
            await self._put_snapshots(
                await s.connection(), {game_id: (loaded.seq, codec.version, blob)}
            )

    def save_snapshot_soon(self, game_id: int, seq: int, version: str, state: JsonDict) -> None:
        """Store ``state`` (already dumped) as covering events 1..``seq``, with the next
        transaction; the events it covers must be committed already. Older snapshots go."""
        self._grouped().snapshot(game_id, seq, version, state)

    # --- outbox -------------------------------------------------------------------------------

    async def undone_count(self, shards: Shards | None = None) -> int:
        """How many effects are recorded and not yet performed (the outbox backlog; with
        ``shards``: of the games of the servers on them)."""
        query = (
            select(func.count())
            .select_from(Outbox)
            .join(Game, Game.id == Outbox.game_id)
            .where(Outbox.done_at.is_(None))
        )
        if shards is not None:
            query = query.where(sql.owned(Game.server_id))
        async with self._sessions() as s:
            return int(await s.scalar(query, _shard_params(shards)) or 0)

    async def undone_effects(
        self,
        game_id: int | None = None,
        *,
        include_stopped: bool = False,
        shards: Shards | None = None,
    ) -> list[OutboxItem]:
        """Effects not yet marked done, in the order they were recorded (with ``shards``: of
        the games of the servers on them only — another process performs the rest).

        Finished games' effects are included (the last input's reveal must still go out);
        those of games stopped on an error are not, unless asked: their state is in doubt.
        """
        query = sql.undone(game_id is not None, include_stopped, shards is not None)
        params = _shard_params(shards)
        if game_id is not None:
            params["g"] = game_id
        pending = set(self._unwritten_marks)
        async with self._reading() as conn:
            rows = (await conn.execute(query, params)).all()
        pending |= self._unwritten_marks
        return [OutboxItem(*row) for row in rows if row[0] not in pending]

    async def mark_done(self, outbox_id: int) -> bool:
        """Mark an effect performed; False if it already was (a retry that raced a first try).

        Written with the next transaction (group commit); alone, it is committed lazily: if a
        power cut loses a mark, the effect is performed again, which its idempotency key makes
        harmless.
        """
        future = self._grouped().mark(outbox_id, wait=True)
        assert future is not None
        return await asyncio.shield(future)

    def mark_done_soon(self, outbox_id: int) -> None:
        """Mark an effect performed with the next transaction, without waiting for it.

        Until the mark is written, ``undone_effects`` leaves the effect out and a redelivered
        input sees it done; if the process dies first, recovery performs the effect again
        (its idempotency key makes that harmless), as after a crash between send and mark.
        """
        self._unwritten_marks.add(outbox_id)
        self._grouped().mark(outbox_id, wait=False)

    async def _mark_done_now(self, ids: list[int]) -> set[int]:
        changed: set[int] = set()
        async with self._writing(lazy=True) as s:
            conn = await s.connection()
            for part in sqlite_group.chunks(ids):
                result = await conn.execute(sql.MARK_DONE, {"ids": part, "now": self._clock()})
                changed |= set(result.scalars())
        return changed

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
        """(game id, seat) pairs where the user is the present holder of a seat.

        The user's seat terms (by the index of user ids) with no later term of the same seat:
        asked on interactions, it reads the user's rows, never every seat of every game ever
        played (as a join on each seat's latest term did, grouping the whole table)."""
        later = aliased(Seat)
        superseded = exists().where(
            later.game_id == Seat.game_id, later.seat == Seat.seat, later.term > Seat.term
        )
        query = (
            select(Seat.game_id, Seat.seat)
            .join(Game, Game.id == Seat.game_id)
            .where(
                Seat.user_id == user_id,
                Game.status.in_([st.value for st in statuses]),
                ~superseded,
            )
            .order_by(Seat.game_id, Seat.seat)
        )
        async with self._sessions() as s:
            return [(game_id, seat) for game_id, seat in await s.execute(query)]

    async def update_channels(self, game_id: int, changes: Mapping[str, Any]) -> JsonDict:
        """Merge ``changes`` into a game's Discord objects (channels, threads, role)."""
        async with self._writing() as s:
            row = await _locked_game(s, game_id)
            merged = {**row.channels, **changes}
            row.channels = {key: value for key, value in merged.items() if value is not None}
            row.updated_at = self._clock()
            return dict(row.channels)

    async def take_channel(self, game_id: int, key: str) -> bool:
        """Remove ``key`` from a game's Discord objects, under the row's lock: whether this call
        removed it. Of callers at once, one takes a mark (a notice due once is said once)."""
        async with self._writing() as s:
            row = await _locked_game(s, game_id)
            if key not in row.channels:
                return False
            row.channels = {k: value for k, value in row.channels.items() if k != key}
            row.updated_at = self._clock()
            return True

    async def claim_channel(self, game_id: int, key: str, value: Any = True) -> bool:
        """Set ``key`` to ``value`` in a game's Discord objects unless it holds that value
        already (a mark absent, or one for something else: another role's), under the row's
        lock: whether this call set it. Of callers at once, one claims a mark (a notice due once
        is said once, by the caller that claimed it, before it is said)."""
        async with self._writing() as s:
            row = await _locked_game(s, game_id)
            if key in row.channels and row.channels[key] == value:
                return False
            row.channels = {**row.channels, key: value}
            row.updated_at = self._clock()
            return True

    # --- servers ------------------------------------------------------------------------------

    async def get_settings(self, server_id: int) -> JsonDict:
        """A server's settings ({} for a server never configured)."""
        async with self._sessions() as s:
            row = await s.get(Server, server_id)
            return dict(row.settings) if row is not None else {}

    async def update_settings(self, server_id: int, changes: Mapping[str, Any]) -> JsonDict:
        """Merge ``changes`` into the settings (a ``None`` value removes the key); returns them."""
        return await self.edit_settings(server_id, lambda _settings: changes)

    async def edit_settings(
        self, server_id: int, edit: Callable[[JsonDict], Mapping[str, Any]]
    ) -> JsonDict:
        """Merge into the settings the changes ``edit`` makes of them as they are, read under
        the row's lock in the same transaction (a change that depends on the stored value, a
        member added to a list: two at once both count, where a read then a write would lose
        one); returns them."""
        async with self._writing() as s:
            now = self._clock()
            await s.execute(
                sql.upsert(s, Server)
                .values(id=server_id, settings={}, created_at=now, updated_at=now)
                .on_conflict_do_nothing(index_elements=["id"])
            )
            row = await s.scalar(select(Server).where(Server.id == server_id).with_for_update())
            assert row is not None
            merged = {**row.settings, **edit(dict(row.settings))}
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
                stmt = sql.upsert(s, Standing).values(
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

    async def seasons(self, server_id: int) -> set[str]:
        """The names of the server's seasons that have a table (a game scored in them): a new
        season must not take one of them, or it would count on from that season's points."""
        async with self._sessions() as s:
            names = await s.scalars(
                select(Standing.season).where(Standing.server_id == server_id).distinct()
            )
            return set(names)


def _shard_params(shards: Shards | None) -> dict[str, Any]:
    """The bound values of ``statements.owned`` (none when every shard is this process's)."""
    return {} if shards is None else {"count": shards.count, "ids": list(shards.ids)}
