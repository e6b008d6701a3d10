"""What PostgreSQL's READ COMMITTED lets another transaction do between two statements of ours,
and what the store does about it (SQLite's writes take the write lock at BEGIN, and its reads see
one snapshot: none of this can happen there).

- A start recorded by another transaction after ours looked for its message id: our insert of
  the id finds it, and ours rolls back and returns the first (no second game, no effect twice).
- A game resumed between a restart's two bulk reads has events but no head: its rows are
  skipped, and the games after it still load in bulk (it is loaded alone, as a game left out is).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from sqlalchemy import func, select, text
from sqlalchemy.ext.asyncio import AsyncConnection

from bot.store.db import Database
from bot.store.models import Event, Game, Input, Outbox
from bot.store.recovery import rebuild_games
from bot.store.repository import Repository, SeatSpec
from tests.store.test_store_recovery import fold, make_game

pytestmark = [
    pytest.mark.asyncio,
    pytest.mark.parametrize("backend", ["postgresql"], indirect=True),
]


async def waiting_on_inputs(db: Database) -> int:
    """How many transactions wait for a lock on the ``inputs`` table."""
    async with db.engine.connect() as conn:
        return int(
            await conn.scalar(
                text(
                    "SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation "
                    "WHERE c.relname = 'inputs' AND NOT l.granted"
                )
            )
            or 0
        )


async def test_a_start_recorded_meanwhile_by_another_transaction_is_returned_not_made_again(
    db: Database,
) -> None:
    repo = Repository(db.sessions)
    await make_game(repo)  # the server's row exists: neither start waits on the other's

    def start() -> Any:
        return repo.create_game(
            server_id=1, ruleset="v2", seed="s", commitment="c", seats=[SeatSpec(1, "甲")],
            events=[{"type": "Started"}], effects=[{"type": "Deal"}], message_id=777,
            outcome={"ok": True},
        )  # fmt: skip

    async with db.engine.connect() as locker:
        # Both starts look for message 777 (not there), then wait to insert it.
        await locker.execute(text("LOCK TABLE inputs IN SHARE MODE"))
        starts = [asyncio.ensure_future(start()), asyncio.ensure_future(start())]
        async with asyncio.timeout(30):
            while await waiting_on_inputs(db) < 2:
                await asyncio.sleep(0.01)  # polled: the server says nothing when one waits
        await locker.rollback()  # let them go: one inserts, the other then finds it
        first, second = await asyncio.gather(*starts)
    made, found = (first, second) if not first.duplicate else (second, first)
    assert not made.duplicate and found.duplicate
    assert found.game_id == made.game_id
    assert [item.id for item in found.outbox] == [item.id for item in made.outbox]
    async with db.sessions() as s:
        games = await s.scalar(select(func.count()).select_from(Game))
        inputs = await s.scalar(select(func.count()).where(Input.message_id == 777))
        events = await s.scalar(select(func.count()).where(Event.message_id == 777))
        effects = await s.scalar(select(func.count()).where(Outbox.message_id == 777))
    assert (games, inputs, events, effects) == (2, 1, 1, 1)  # the first game, and this one once


async def test_a_game_resumed_between_the_bulk_reads_is_left_to_load_game(
    db: Database,
) -> None:
    repo = Repository(db.sessions)
    before = await make_game(repo, 1)
    resumed = await make_game(repo, 2, 3)
    after = await make_game(repo, 4, 5)
    await repo.stop_game(resumed, "a moderator stopped it")
    reading = repo._reading

    @asynccontextmanager
    async def resumed_after_the_first_read() -> AsyncIterator[Any]:
        async with reading() as conn:
            yield FirstReadThen(conn, repo.resume_game(resumed))

    repo._reading = resumed_after_the_first_read  # type: ignore[method-assign]
    try:
        loaded = await repo.load_active_games(fold)
    finally:
        del repo._reading
    assert set(loaded) == {before, after}  # the games after it still load in bulk
    assert loaded[after] == await repo.load_game(after, fold)
    report = await rebuild_games(repo, fold)  # the resumed game, alone
    assert {game_id: r.state for game_id, r in report.games.items()} == {
        before: 1,
        resumed: 5,
        after: 9,
    }
    assert report.stopped == {}


class FirstReadThen:
    """A connection whose first statement is followed, before it returns, by ``meanwhile`` (a
    write of another transaction, committed)."""

    def __init__(self, conn: AsyncConnection, meanwhile: Any) -> None:
        self._conn = conn
        self._meanwhile = meanwhile

    async def execute(self, *args: Any, **kwargs: Any) -> Any:
        result = await self._conn.execute(*args, **kwargs)
        if self._meanwhile is not None:
            meanwhile, self._meanwhile = self._meanwhile, None
            await meanwhile
        return result
