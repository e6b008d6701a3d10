"""Group commit, on both backends: inputs recorded at once share one durable commit, each gets
its own answer, one input's failure is its own; done marks ride with the next transaction."""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar

import pytest
from sqlalchemy import event, select, text

from bot.store import pg_group
from bot.store.db import Database
from bot.store.models import Outbox
from bot.store.repository import (
    GameNotActive,
    GameNotFound,
    RecordResult,
    Repository,
    SeatSpec,
    SeqConflict,
)
from bot.store.sqlite_process import SqliteProcess
from tests.store.test_store_recovery import make_game

pytestmark = pytest.mark.asyncio


def added(n: int) -> dict[str, Any]:
    return {"type": "Added", "n": n}


async def new_game(repo: Repository, effects: int = 0) -> int:
    return await make_game(repo, effects=effects)


class Commits:
    """Counts the commits of an engine, with the durability of each: SQLAlchemy's, with
    SQLite's ``synchronous`` level; and the groups written in one call on the driver: SQLite's
    (``SqliteProcess.commit``, the level read back from its connection after it) and PostgreSQL's
    (``pg_group.write``: one transaction each, "FULL" when durable, "NORMAL" when lazy)."""

    LEVELS: ClassVar[dict[int, str]] = {1: "NORMAL", 2: "FULL"}

    def __init__(self, db: Database, monkeypatch: pytest.MonkeyPatch) -> None:
        self.levels: list[str] = []
        event.listen(db.engine.sync_engine, "commit", self._commit)
        write, commit = pg_group.write, SqliteProcess.commit

        async def pg_written(conn: Any, args: tuple[Any, ...], *, durable: bool) -> Any:
            written = await write(conn, args, durable=durable)
            self.levels.append("FULL" if durable else "NORMAL")
            return written

        async def sqlite_committed(writer: SqliteProcess, *args: Any) -> Any:
            written = await commit(writer, *args)
            self.levels.append(self.LEVELS[await writer.pragma("synchronous")])
            return written

        monkeypatch.setattr(pg_group, "write", pg_written)
        monkeypatch.setattr(SqliteProcess, "commit", sqlite_committed)

    def _commit(self, conn: Any) -> None:
        self.levels.append(str(conn.connection.info.get("synchronous", "FULL")))


async def test_inputs_recorded_at_once_share_one_durable_commit(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = Repository(db.sessions)
    games = [await new_game(repo) for _ in range(6)]
    await repo.record(games[0], events=[added(1)], message_id=500)  # to be redelivered
    await repo.record(games[1], events=[{"type": "End"}], finish=True)  # over
    commits = Commits(db, monkeypatch)
    answers = await asyncio.gather(
        *(
            repo.record(
                g,
                events=[added(g), added(g)],
                effects=[{"type": "A", "g": g}],
                message_id=1000 + g,
                expected_seq=1,
            )
            for g in games[2:]
        ),
        repo.record(games[0], events=[added(9)], message_id=500),  # redelivered
        repo.record(games[0], events=[added(9)], expected_seq=1),  # stale
        repo.record(games[1], events=[added(9)]),  # the game is over
        repo.record(424242, events=[added(9)]),  # no such game
        return_exceptions=True,
    )
    assert len(commits.levels) == 1  # one transaction for all of them
    assert commits.levels == ["FULL"]  # durable: the store's own synchronous setting
    fresh = answers[:4]
    for g, answer in zip(games[2:], fresh, strict=True):
        assert isinstance(answer, RecordResult) and not answer.duplicate
        assert (answer.game_id, answer.first_seq, answer.last_seq) == (g, 2, 3)
        assert [item.payload for item in answer.outbox] == [{"type": "A", "g": g}]
        assert await repo.load_events(g) == [{"type": "Started"}, added(g), added(g)]
    redelivered, stale, over, missing = answers[4:]
    assert isinstance(redelivered, RecordResult) and redelivered.duplicate
    assert isinstance(stale, SeqConflict) and (stale.expected, stale.actual) == (1, 2)
    assert isinstance(over, GameNotActive)
    assert isinstance(missing, GameNotFound)
    assert await repo.load_events(games[0]) == [{"type": "Started"}, added(1)]
    ids = [
        item.id for answer in fresh if isinstance(answer, RecordResult) for item in answer.outbox
    ]
    assert ids == sorted(ids) and len(set(ids)) == 4  # outbox ids in the order of the inputs


async def test_a_failing_input_fails_alone(db: Database) -> None:
    """A statement that fails sinks its group; every input is then written on its own."""
    repo = Repository(db.sessions)
    one, two = await new_game(repo), await new_game(repo)
    answers = await asyncio.gather(
        repo.record(one, events=[added(1)], message_id=1),
        repo.record(two, events=[added(2)], effects=[{"type": "X", "bad": {1, 2}}], message_id=2),
        return_exceptions=True,
    )
    assert isinstance(answers[0], RecordResult) and answers[0].last_seq == 2
    assert isinstance(answers[1], Exception)  # a set is not JSON
    assert await repo.load_events(one) == [{"type": "Started"}, added(1)]
    assert await repo.load_events(two) == [{"type": "Started"}]
    assert not (await repo.record(two, events=[added(2)], message_id=2)).duplicate


async def test_a_caller_cancelled_while_waiting_leaves_its_input_written_and_others_answered(
    db: Database,
) -> None:
    """The input is in the group already: it is written; the others of its group (and of the
    next) get their answers; a group that fails writes it alone, with nobody to tell."""
    repo = Repository(db.sessions)
    one, two = await new_game(repo), await new_game(repo)
    cancelled = asyncio.ensure_future(repo.record(one, events=[added(1)], message_id=11))
    other = asyncio.ensure_future(repo.record(two, events=[added(2)], message_id=12))
    await asyncio.sleep(0)  # both are queued for the same group
    cancelled.cancel()
    answer = await other
    assert answer.last_seq == 2
    with pytest.raises(asyncio.CancelledError):
        await cancelled
    assert await repo.load_events(one) == [{"type": "Started"}, added(1)]
    again = await repo.record(one, events=[added(1)], message_id=11)
    assert again.duplicate and again.last_seq == 2
    failing = asyncio.ensure_future(
        repo.record(one, events=[added(3)], effects=[{"type": "X", "bad": {1}}], message_id=13)
    )
    alone = asyncio.ensure_future(repo.record(one, events=[added(4)], message_id=14))
    fine = asyncio.ensure_future(repo.record(two, events=[added(5)], message_id=15))
    await asyncio.sleep(0)
    alone.cancel()
    assert (await fine).last_seq == 3
    with pytest.raises(Exception, match="not JSON serializable"):
        await failing  # a set is not JSON
    assert await repo.load_events(one) == [{"type": "Started"}, added(1), added(4)]


async def test_the_same_message_twice_at_once_is_recorded_once(repo: Repository) -> None:
    gid = await new_game(repo)
    first, again = await asyncio.gather(
        repo.record(gid, events=[added(1)], message_id=7, outcome={"ok": 1}),
        repo.record(gid, events=[added(1)], message_id=7, outcome={"ok": 1}),
    )
    assert not first.duplicate and again.duplicate and again.last_seq == first.last_seq
    assert len(await repo.load_events(gid)) == 2


async def test_done_marks_are_written_with_the_next_transaction(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = Repository(db.sessions)
    gid = await new_game(repo, effects=2)
    result = await repo.record(gid, events=[added(1)], effects=[{"type": "B"}], message_id=3)
    (reply,) = result.outbox
    commits = Commits(db, monkeypatch)
    repo.mark_done_soon(reply.id)
    # performed: no longer undone for this process, and a redelivery has nothing to finish
    assert reply.id not in [item.id for item in await repo.undone_effects(gid)]
    await repo.flush()
    assert commits.levels == ["NORMAL"]  # the mark alone: one transaction, committed lazily
    async with db.sessions() as s:
        done = await s.scalar(select(Outbox.done_at).where(Outbox.id == reply.id))
    assert done is not None
    repo.mark_done_soon(reply.id)  # again (a redelivery finished it too): still done once
    assert (await repo.record(gid, events=[added(1)], message_id=3)).pending == ()
    # a mark asked for with an input goes in that input's (durable) transaction
    commits.levels.clear()
    first, _ = await repo.undone_effects(gid)
    repo.mark_done_soon(first.id)
    await repo.record(gid, events=[added(2)])
    assert len(commits.levels) == 1
    assert [item.id for item in await Repository(db.sessions).undone_effects(gid)] == [first.id + 1]
    assert await repo.mark_done(first.id + 1) and not await repo.mark_done(first.id + 1)


async def test_sqlite_group_rows_read_back_as_sqlalchemy_writes_them(db: Database) -> None:
    """On SQLite a group is written by plain sqlite3 calls in the writer process: its rows must
    be the rows SQLAlchemy writes (JSON text, datetimes), read back the same way."""
    repo = Repository(db.sessions)
    created = await repo.create_game(
        server_id=1, ruleset="v2", seed="s", commitment="c", seats=[SeatSpec(1, "甲")],
        events=[{"type": "Started", "名": "甲"}],
    )  # fmt: skip
    gid = created.game_id
    result = await repo.record(
        gid, events=[{"type": "Added", "n": 1, "名": "乙"}], effects=[{"type": "Say", "t": "丙"}],
        message_id=77, outcome={"ok": True}, expected_seq=1,
    )  # fmt: skip
    assert (result.first_seq, result.last_seq) == (2, 2)
    assert [item.payload for item in result.outbox] == [{"type": "Say", "t": "丙"}]
    rows = await repo.event_rows(gid)
    assert [r.payload for r in rows] == [{"type": "Started", "名": "甲"},
                                         {"type": "Added", "n": 1, "名": "乙"}]  # fmt: skip
    assert all(r.created_at.tzinfo is not None for r in rows)
    async with db.engine.connect() as conn:
        raw = (
            await conn.execute(text("SELECT payload, created_at FROM events ORDER BY seq"))
        ).all()
    if db.engine.dialect.name == "sqlite":
        assert raw[1][0] == '{"type":"Added","n":1,"名":"乙"}'
        assert len(raw[0][1]) == len(raw[1][1]) == len("2026-01-01 00:00:00.000000")
    again = await repo.record(gid, events=[{"type": "Added", "n": 1}], message_id=77)
    assert again.duplicate and again.outcome == {"ok": True}
    assert [item.payload for item in again.outbox] == [{"type": "Say", "t": "丙"}]


async def test_more_done_marks_than_a_statement_may_bind_are_written(repo: Repository) -> None:
    """Done marks pile up by tens of thousands while a large group is written; drivers refuse
    over 32,767 parameters in one statement, so the marks go in parts."""
    gid = await make_game(repo, effects=1)
    (item,) = await repo.undone_effects(gid)
    for outbox_id in range(item.id, item.id + 40_000):
        repo.mark_done_soon(outbox_id)
    await repo.flush()
    assert await repo.undone_effects(gid) == []
    assert await repo.mark_done(item.id) is False  # written: marking again changes nothing


async def test_a_mark_written_while_undone_effects_reads_is_still_left_out(
    db: Database,
) -> None:
    """The read's snapshot can predate the mark's commit while the write finishes (and the mark
    leaves the pending set) before the read returns: the effect is done all the same."""
    repo = Repository(db.sessions)
    gid = await new_game(repo, effects=2)
    first, second = await repo.undone_effects(gid)
    repo.mark_done_soon(first.id)

    def written_meanwhile(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        if "FROM outbox" in statement:
            repo._unwritten_marks.discard(first.id)  # as the group commit's end does

    event.listen(db.engine.sync_engine, "after_cursor_execute", written_meanwhile)
    try:
        assert [item.id for item in await repo.undone_effects(gid)] == [second.id]
    finally:
        event.remove(db.engine.sync_engine, "after_cursor_execute", written_meanwhile)
