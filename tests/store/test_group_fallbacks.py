"""The group commit's fallbacks, on both backends: a group that fails before its commit is
written again part by part (``Repository._write_apart``), and every waiter still gets its own
answer: nothing of a failing part is written, nothing of the others is lost or written twice.

- the done marks are written first, on their own: the same outbox id marked twice in one group
  is changed once (its first waiter learns it changed, the second not); a mark that cannot be
  written fails its waiters only, and its effect stays undone in the database (performed again
  at the next start, under its key, never lost);
- each input is written alone, with the answer it would have had in the group: recorded,
  refused (a stale seq), found recorded before (a redelivery), finishing its game;
- a snapshot that cannot be written is only logged (the events stay the truth).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from sqlalchemy import event, select, text
from sqlalchemy.exc import DBAPIError

from bot.store.db import Database
from bot.store.models import ChannelBinding, GameStatus, Outbox, Snapshot
from bot.store.repository import RecordResult, Repository, SeqConflict
from tests.store.test_store_recovery import make_game

pytestmark = pytest.mark.asyncio

SECRET = "甲 is the killer"  # in a snapshot's state: must never reach a log
BAD = {"type": "X", "bad": {1, 2}}  # a set is not JSON: fails the group before its commit


def added(n: int) -> dict[str, Any]:
    return {"type": "Added", "n": n}


class DiskFull(Exception):
    """A done mark that the database will not take."""


@contextmanager
def marks_refused(db: Database) -> Iterator[None]:
    """Every done mark written through SQLAlchemy (the apart path's) fails while inside."""

    def refuse(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        if statement.startswith("UPDATE outbox SET") and "done_at=" in statement:
            raise DiskFull("no room for a done mark")

    event.listen(db.engine.sync_engine, "before_cursor_execute", refuse)
    try:
        yield
    finally:
        event.remove(db.engine.sync_engine, "before_cursor_execute", refuse)


async def done_ids(db: Database, game_id: int) -> set[int]:
    """The game's outbox ids marked done in the database."""
    async with db.sessions() as s:
        rows = await s.scalars(
            select(Outbox.id).where(Outbox.game_id == game_id, Outbox.done_at.is_not(None))
        )
        return set(rows)


async def test_a_group_failing_before_its_commit_gives_each_part_its_own_answer(
    db: Database, caplog: pytest.LogCaptureFixture
) -> None:
    repo = Repository(db.sessions)
    one = await make_game(repo, effects=3)
    failing, stale, ending, redelivered = [await make_game(repo) for _ in range(4)]
    first = await repo.record(redelivered, events=[added(5)], message_id=50)
    async with db.engine.begin() as conn:  # a channel the finishing game lets go of
        await conn.execute(
            text(
                "INSERT INTO channel_bindings (channel_id, server_id, game_id, created_at) "
                "VALUES (900, 1, :g, CURRENT_TIMESTAMP)"
            ),
            {"g": ending},
        )
    a, b, c = await repo.undone_effects(one)
    tasks = [
        asyncio.ensure_future(coroutine)
        for coroutine in (
            repo.mark_done(a.id),
            repo.mark_done(a.id),  # the same id twice in one group
            repo.record(failing, events=[added(2)], effects=[BAD], message_id=2),
            repo.record(one, events=[added(1)], effects=[{"type": "Say"}], message_id=1,
                        expected_seq=1),
            repo.record(stale, events=[added(3)], expected_seq=9),
            repo.record(ending, events=[{"type": "End"}], finish=True, message_id=4),
            repo.record(redelivered, events=[added(5)], message_id=50),
        )
    ]  # fmt: skip
    repo.mark_done_soon(b.id)
    repo.save_snapshot_soon(one, 1, "v1", {"at": 1})
    with caplog.at_level(logging.WARNING, logger="bot.store"):
        answers = await asyncio.gather(*tasks, return_exceptions=True)
        await repo.flush()
    assert "group of 5 inputs failed; writing each alone" in caplog.text

    first_mark, second_mark, bad, recorded, conflict, ended, again = answers
    assert (first_mark, second_mark) == (True, False)  # changed once, by the first
    assert isinstance(bad, Exception) and "not JSON serializable" in str(bad)
    assert isinstance(recorded, RecordResult) and not recorded.duplicate
    assert (recorded.first_seq, recorded.last_seq) == (2, 2)
    assert [item.payload for item in recorded.outbox] == [{"type": "Say"}]
    assert isinstance(conflict, SeqConflict) and (conflict.expected, conflict.actual) == (9, 1)
    assert isinstance(ended, RecordResult) and ended.last_seq == 2
    assert isinstance(again, RecordResult) and again.duplicate
    assert (again.first_seq, again.last_seq) == (first.first_seq, first.last_seq) == (2, 2)

    # the rows: each part written once, the failing input not at all
    assert await repo.load_events(one) == [{"type": "Started"}, added(1)]
    assert await repo.load_events(failing) == [{"type": "Started"}]
    assert await repo.load_events(stale) == [{"type": "Started"}]
    assert await repo.load_events(redelivered) == [{"type": "Started"}, added(5)]
    assert (await repo.get_game(ending)).status is GameStatus.FINISHED
    async with db.sessions() as s:
        held = await s.scalars(select(ChannelBinding).where(ChannelBinding.game_id == ending))
        assert list(held) == []  # released with the append that finished it
        snapshots = (await s.execute(select(Snapshot.game_id, Snapshot.seq))).all()
    assert snapshots == [(one, 1)]
    assert await done_ids(db, one) == {a.id, b.id}
    (say,) = recorded.outbox
    fresh = Repository(db.sessions)  # what the next start reads
    assert [item.id for item in await fresh.undone_effects(one)] == [c.id, say.id]
    # the failing input left nothing behind: recorded now, as new
    assert not (await repo.record(failing, events=[added(2)], message_id=2)).duplicate


async def test_a_done_mark_that_cannot_be_written_fails_its_waiters_and_nothing_else(
    db: Database, caplog: pytest.LogCaptureFixture
) -> None:
    repo = Repository(db.sessions)
    one = await make_game(repo, effects=2)
    other = await make_game(repo)
    a, b = await repo.undone_effects(one)
    with marks_refused(db), caplog.at_level(logging.WARNING, logger="bot.store"):
        tasks = [
            asyncio.ensure_future(coroutine)
            for coroutine in (
                repo.mark_done(a.id),
                repo.mark_done(a.id),
                repo.record(other, events=[added(1)], effects=[BAD], message_id=21),
                repo.record(other, events=[added(2)], message_id=22),
            )
        ]
        repo.mark_done_soon(b.id)
        first_mark, second_mark, bad, recorded = await asyncio.gather(
            *tasks, return_exceptions=True
        )
        await repo.flush()
    assert "2 done marks not written (DiskFull)" in caplog.text
    assert isinstance(first_mark, DiskFull) and isinstance(second_mark, DiskFull)
    assert isinstance(bad, Exception) and not isinstance(bad, DiskFull)
    assert isinstance(recorded, RecordResult) and recorded.last_seq == 2  # not held up
    assert await repo.load_events(other) == [{"type": "Started"}, added(2)]

    assert await done_ids(db, one) == set()  # neither mark was written...
    # ...so the next start performs both again (under their keys): neither is lost. This
    # process performed b (its mark asked for without waiting) and does not offer it again.
    assert [item.id for item in await Repository(db.sessions).undone_effects(one)] == [a.id, b.id]
    assert [item.id for item in await repo.undone_effects(one)] == [a.id]
    # the failed mark changed nothing: marked now, it is changed once
    assert await repo.mark_done(a.id) is True
    assert await repo.mark_done(a.id) is False
    assert (await repo.get_game(one)).last_seq == 1


async def test_a_snapshot_that_cannot_be_written_is_only_logged(
    db: Database, caplog: pytest.LogCaptureFixture
) -> None:
    repo = Repository(db.sessions)
    one = await make_game(repo, effects=1)
    two = await make_game(repo)
    (item,) = await repo.undone_effects(one)
    recording = asyncio.ensure_future(repo.record(two, events=[added(2)], message_id=31))
    repo.save_snapshot_soon(one, 1, "v1", {"secret": SECRET, "bad": {1}})  # not JSON
    repo.save_snapshot_soon(two, 1, "v1", {"at": 1})
    repo.mark_done_soon(item.id)
    with caplog.at_level(logging.WARNING, logger="bot.store"):
        async with asyncio.timeout(30):  # a barrier never released would hang here
            await repo.flush()
        recorded = await recording
    assert "group of 1 inputs failed; writing each alone" in caplog.text
    assert f"game {one}: snapshot at seq 1 not written" in caplog.text
    assert SECRET not in caplog.text
    assert recorded.last_seq == 2
    async with db.sessions() as s:
        snapshots = (await s.execute(select(Snapshot.game_id, Snapshot.seq))).all()
    assert snapshots == [(two, 1)]  # the other game's is written
    assert await done_ids(db, one) == {item.id}
    assert await repo.load_events(one) == [{"type": "Started"}]


@pytest.mark.parametrize("backend", ["postgresql"], indirect=True)
async def test_a_group_the_server_refuses_is_written_apart(
    db: Database, caplog: pytest.LogCaptureFixture
) -> None:
    """PostgreSQL refuses the group's one statement (an event type longer than its column):
    the server wrote nothing, so the parts are written apart, not failed as of unknown outcome."""
    repo = Repository(db.sessions)
    one = await make_game(repo, effects=1)
    other = await make_game(repo)
    (item,) = await repo.undone_effects(one)
    tasks = [
        asyncio.ensure_future(repo.record(one, events=[added(1)], message_id=41)),
        asyncio.ensure_future(repo.record(other, events=[{"type": "T" * 65}], message_id=42)),
    ]
    repo.mark_done_soon(item.id)
    repo.save_snapshot_soon(one, 1, "v1", {"at": 1})
    with caplog.at_level(logging.WARNING, logger="bot.store"):
        recorded, refused = await asyncio.gather(*tasks, return_exceptions=True)
        await repo.flush()
    assert "group of 2 inputs failed; writing each alone" in caplog.text
    assert isinstance(recorded, RecordResult) and recorded.last_seq == 2
    assert isinstance(refused, DBAPIError)
    assert await repo.load_events(one) == [{"type": "Started"}, added(1)]
    assert await repo.load_events(other) == [{"type": "Started"}]
    assert await done_ids(db, one) == {item.id}
    async with db.sessions() as s:
        assert (await s.execute(select(Snapshot.game_id, Snapshot.seq))).all() == [(one, 1)]
    assert not (await repo.record(other, events=[added(2)], message_id=42)).duplicate
