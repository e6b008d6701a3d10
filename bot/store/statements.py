"""The SQL the repository runs on every input, built once, and where the two backends differ.

Statements are module constants (or cached per variant) so SQLAlchemy compiles each once and reuses
it. SQLite and PostgreSQL share one schema; the few differences (``INSERT … ON CONFLICT`` comes from
each dialect; SQLite cannot order ``RETURNING``, so outbox ids are given here) stay in this module.
"""

from __future__ import annotations

from dataclasses import fields
from functools import cache
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Integer,
    Text,
    bindparam,
    cast,
    delete,
    func,
    insert,
    literal_column,
    null,
    select,
    text,
    union_all,
    update,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.orm import InstrumentedAttribute
from sqlalchemy.sql.visitors import InternalTraversal

from bot.store.db import UTCDateTime
from bot.store.models import ChannelBinding, Event, Game, GameStatus, Input, Outbox, Snapshot
from bot.store.values import DISCORD_SHARD_SHIFT, OutboxItem


def upsert(session: AsyncSession, table: Any) -> Any:
    """INSERT … ON CONFLICT for the session's backend (the same statement on both)."""
    return dialect_insert(session.get_bind().dialect.name, table)


def dialect_insert(name: str, table: Any) -> Any:
    """The backend's own INSERT (the one with ``on_conflict_do_…``), by dialect name."""
    if name == "postgresql":
        return postgresql.insert(table)
    if name == "sqlite":
        return sqlite.insert(table)
    raise NotImplementedError(f"unsupported database backend {name!r}")


# Statements of the group commit, built once (SQLAlchemy caches their compiled form).
_NOW = bindparam("now", type_=UTCDateTime())


class _Unindexed(ColumnElement[Any]):
    """A timestamp column in a term no index may serve (``sqlite_group.MARK_DONE_SQL`` says
    why): on SQLite ``+column``, on PostgreSQL ``(column + interval '0 s')``."""

    inherit_cache = True
    _traverse_internals = [("column", InternalTraversal.dp_clauseelement)]  # noqa: RUF012 (cache key)

    def __init__(self, column: ColumnElement[Any] | InstrumentedAttribute[Any]) -> None:
        self.column = column
        self.type = column.type


@compiles(_Unindexed)
def _unindexed(element: _Unindexed, compiler: Any, **kw: Any) -> str:
    return str(compiler.process(element.column, **kw))  # another backend: the column itself


@compiles(_Unindexed, "postgresql")
def _unindexed_postgresql(element: _Unindexed, compiler: Any, **kw: Any) -> str:
    return f"({compiler.process(element.column, **kw)} + interval '0 s')"


@compiles(_Unindexed, "sqlite")
def _unindexed_sqlite(element: _Unindexed, compiler: Any, **kw: Any) -> str:
    return f"+{compiler.process(element.column, **kw)}"


MARK_DONE = (
    update(Outbox)
    .where(Outbox.id.in_(bindparam("ids", expanding=True)), _Unindexed(Outbox.done_at).is_(None))
    .values(done_at=_NOW, attempts=Outbox.attempts + 1)
    .returning(Outbox.id)
)
SEEN = select(Input.message_id).where(Input.message_id.in_(bindparam("ids", expanding=True)))
RELEASE_CHANNELS = delete(ChannelBinding).where(ChannelBinding.game_id == bindparam("g"))
"""A finished game lets go of its channels (with the append that finishes it)."""
OLDER_SNAPSHOTS = delete(Snapshot).where(
    Snapshot.game_id == bindparam("g"), Snapshot.seq < bindparam("upto")
)


_RETURNING_IDS = insert(Outbox).returning(Outbox.id, sort_by_parameter_order=True)
_LAST_OUTBOX_ID = text(
    "SELECT max(COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'outbox'), 0), "
    "COALESCE((SELECT max(id) FROM outbox), 0))"
)


async def insert_outbox(conn: AsyncConnection, rows: list[dict[str, Any]]) -> list[int]:
    """Insert outbox rows in one statement; their ids, in the order of ``rows``.

    PostgreSQL: ``INSERT … RETURNING`` ordered by SQLAlchemy. SQLite cannot order RETURNING, and
    one statement per row is slow, so the ids are given here: the transaction holds the write
    lock, and the next ids are above any ever used (``sqlite_sequence``, kept by AUTOINCREMENT),
    so an idempotency key is never reused.
    """
    if conn.dialect.name != "sqlite":
        return list(await conn.scalars(_RETURNING_IDS, rows))
    last = int((await conn.execute(_LAST_OUTBOX_ID)).scalar_one())
    ids = list(range(last + 1, last + 1 + len(rows)))
    await conn.execute(insert(Outbox), [{**row, "id": i} for row, i in zip(rows, ids, strict=True)])
    return ids


_OUTBOX_ITEM = tuple(getattr(Outbox, f.name) for f in fields(OutboxItem))
"""An outbox row's columns in `OutboxItem`'s order (its fields are the columns' names)."""


@cache
def undone(one_game: bool, include_stopped: bool, sharded: bool) -> Any:
    """Effects not marked done, in the order recorded, as `OutboxItem`'s fields: of game ``:g``
    only (``one_game``), of games stopped on an error too (``include_stopped``), of the shards'
    servers only (``sharded``: ``owned``'s parameters)."""
    query = (
        select(*_OUTBOX_ITEM)
        .join(Game, Game.id == Outbox.game_id)
        .where(Outbox.done_at.is_(None))
        .order_by(Outbox.id)
    )
    if one_game:
        query = query.where(Outbox.game_id == bindparam("g"))
    if not include_stopped:
        query = query.where(Game.status != GameStatus.STOPPED_ERROR.value)
    if sharded:
        query = query.where(owned(Game.server_id))
    return query


LAST_SEQ = select(Game.last_seq).where(Game.id == bindparam("g"))
PAYLOADS = (
    select(Event.seq, Event.payload)
    .where(
        Event.game_id == bindparam("g"),
        Event.seq > bindparam("after"),
        Event.seq <= bindparam("upto"),
    )
    .order_by(Event.seq)
)


def _load_statement() -> Any:
    """A game's last seq and newest snapshot of version ``:v`` (part 0), then the events after
    that snapshot, up to the last seq (part 1): one statement, so one consistent read."""
    game = bindparam("g", type_=Integer())
    last = select(Game.last_seq).where(Game.id == game).scalar_subquery()
    newest = (
        select(func.max(Snapshot.seq))
        .where(Snapshot.game_id == game, Snapshot.version == bindparam("v"), Snapshot.seq <= last)
        .scalar_subquery()
    )
    head = (
        select(
            literal_column("0").label("part"),
            Game.last_seq.label("seq"),
            Snapshot.seq.label("base"),
            Snapshot.state.label("doc"),
        )
        .select_from(Game)
        .outerjoin(Snapshot, (Snapshot.game_id == Game.id) & (Snapshot.seq == newest))
        .where(Game.id == game)
    )
    tail = select(literal_column("1"), Event.seq, null(), Event.payload).where(
        Event.game_id == game, Event.seq > func.coalesce(newest, 0), Event.seq <= last
    )
    return union_all(head, tail).order_by("part", "seq")


LOAD = _load_statement()


@cache
def bump(expected: bool, finish: bool) -> Any:
    """``UPDATE games SET last_seq = last_seq + :n`` for an active game (checked against
    ``:expected``; marking it finished)."""
    stmt = (
        update(Game)
        .where(Game.id == bindparam("g"), Game.status == GameStatus.ACTIVE.value)
        .values(last_seq=Game.last_seq + bindparam("n", type_=Integer()), updated_at=_NOW)
        .returning(Game.last_seq)
    )
    if expected:
        stmt = stmt.where(Game.last_seq == bindparam("expected"))
    if finish:
        stmt = stmt.values(status=GameStatus.FINISHED.value, finished_at=_NOW)
    return stmt


def owned(server_id: Any) -> Any:
    """``server_id``'s Discord shard is one of ``:ids`` out of ``:count`` (``(id >> 22) % count``,
    as integer arithmetic both backends share: `//`, since `/` is a true division in SQLAlchemy 2
    and on PostgreSQL leaves the low 22 bits as a fraction)."""
    shard = (server_id // (1 << DISCORD_SHARD_SHIFT)) % bindparam("count", type_=Integer())
    return shard.in_(bindparam("ids", expanding=True))


@cache
def bulk_statements(sharded: bool = False) -> tuple[Any, Any]:
    """Every active game's last seq and newest snapshot of version ``:v`` (heads), and every
    active game's events after that snapshot (tails, by game and seq): a restart's reads in two.
    ``sharded``: only the games of the servers on shards ``:ids`` of ``:count``. The snapshot
    and the payloads come as JSON text, for the reader to decode a game at a time (asyncpg
    would decode every row at once, as it fetches them)."""

    def newest(game_id: Any) -> Any:
        return (
            select(func.max(Snapshot.seq))
            .where(
                Snapshot.game_id == game_id,
                Snapshot.version == bindparam("v"),
                Snapshot.seq <= Game.last_seq,
            )
            .correlate(Game, Event)
            .scalar_subquery()
        )

    active = Game.status == GameStatus.ACTIVE.value
    if sharded:
        active = active & owned(Game.server_id)
    heads = (
        select(Game.id, Game.last_seq, Snapshot.seq, cast(Snapshot.state, Text))
        .select_from(Game)
        .outerjoin(Snapshot, (Snapshot.game_id == Game.id) & (Snapshot.seq == newest(Game.id)))
        .where(active)
        .order_by(Game.id)
    )
    tails = (
        select(Event.game_id, Event.seq, cast(Event.payload, Text))
        .join(Game, Game.id == Event.game_id)
        .where(active, Event.seq > func.coalesce(newest(Event.game_id), 0))
        .where(Event.seq <= Game.last_seq)
        .order_by(Event.game_id, Event.seq)
    )
    return heads, tails


ACTIVE_HEADS, ACTIVE_TAILS = bulk_statements()
