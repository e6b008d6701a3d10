"""A group written in one call on the driver (``sqlite_group``, ``pg_group``) writes the rows,
and gives the answers, that the statement-by-statement SQLAlchemy path gives for the same group."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy import bindparam, text

from bot.store import pg_group, sqlite_group
from bot.store.db import Database
from bot.store.repository import RecordResult, Repository
from bot.store.sqlite_process import SqliteProcess
from tests.store.test_store_recovery import make_game

pytestmark = pytest.mark.asyncio

AT = datetime(2026, 3, 4, 5, 6, 7, 890123, tzinfo=UTC)
GAMES = 7


async def one_group(repo: Repository, db: Database, offset: int) -> tuple[list[int], list[Any]]:
    """Seven games, then one group holding every kind of input, done marks and a snapshot; the
    games and each input's answer (or error)."""
    games = [await make_game(repo, effects=2) for _ in range(GAMES)]
    a, b, c, d, e, f, g = games
    await repo.record(a, events=[{"type": "Added", "n": 1}])
    await repo.record(e, events=[{"type": "Added", "n": 2}], message_id=offset + 9,
                      effects=[{"type": "Say", "t": "早"}], outcome={"ok": True})  # fmt: skip
    await repo.record(f, events=[{"type": "End"}], finish=True)
    repo.save_snapshot_soon(a, 1, "v1", {"at": 1})
    await repo.flush()
    async with db.engine.begin() as conn:  # a channel the finishing game lets go of
        await conn.execute(
            text("INSERT INTO channel_bindings (channel_id, server_id, game_id, created_at) "
                 "VALUES (:ch, 1, :g, :at)"),
            {"ch": offset + 500, "g": c, "at": AT.replace(tzinfo=None)},
        )  # fmt: skip
    (first, second) = [item.id for item in await repo.undone_effects(a)][:2]
    tasks = [
        asyncio.ensure_future(coroutine)
        for coroutine in (
            repo.record(a, events=[{"type": "Added", "n": 3}, {"type": "Added", "名": "乙"}],
                        effects=[{"type": "Say", "i": 1}, {"type": "Say", "i": 2}],
                        message_id=offset + 1, outcome={"ok": True, "名": "乙"}, expected_seq=2),
            repo.record(b, events=[], effects=[{"type": "Reply", "why": "不行"}],
                        message_id=offset + 2, outcome={"error": "no"}),  # refused by the rules
            repo.record(c, events=[{"type": "End"}], finish=True, message_id=offset + 3),
            repo.record(d, events=[{"type": "Added", "n": 4}], expected_seq=7),  # stale
            repo.record(e, events=[{"type": "Added", "n": 2}], message_id=offset + 9),  # again
            repo.record(f, events=[{"type": "Added", "n": 5}]),  # the game is over
            repo.record(g, events=[{"type": "Added", "n": 6}], effects=[{"type": "Say"}]),
        )
    ]  # fmt: skip
    repo.mark_done_soon(first)
    repo.mark_done_soon(second)
    repo.save_snapshot_soon(a, 2, "v1", {"at": 2, "名": "甲"})
    answers = await asyncio.gather(*tasks, return_exceptions=True)
    await repo.flush()
    return games, answers


def same_shape(answer: Any, games: list[int], offset: int, outbox: dict[int, int]) -> Any:
    """An answer with its ids made relative to its own scenario."""
    if not isinstance(answer, RecordResult):
        fields = {**vars(answer), "game_id": games.index(answer.game_id)}
        return type(answer).__name__, sorted(fields.items())
    return (
        games.index(answer.game_id), answer.duplicate, answer.first_seq, answer.last_seq,
        answer.outcome,
        [(outbox[i.id], i.seq, i.payload, i.attempts, i.done_at) for i in answer.outbox],
    )  # fmt: skip


async def rows(
    db: Database, games: list[int], offset: int
) -> tuple[dict[str, Any], dict[int, int]]:
    """Every row the scenario's games have, ids relative to the scenario; outbox id → rank."""
    where = {"ids": games}
    index = {g: n for n, g in enumerate(games)}

    def message(m: int | None) -> int | None:
        return None if m is None else m - offset

    async with db.engine.connect() as conn:

        async def read(sql: str) -> list[Any]:
            stmt = text(sql).bindparams(bindparam("ids", expanding=True))
            return list((await conn.execute(stmt, where)).all())

        outbox_ids = [
            r[0] for r in await read("SELECT id FROM outbox WHERE game_id IN :ids ORDER BY id")
        ]
        rank = {i: n for n, i in enumerate(outbox_ids)}
        tables = {
            "games": [
                (index[r[0]], *r[1:])
                for r in await read("SELECT id, last_seq, status, updated_at, finished_at FROM games "
                                    "WHERE id IN :ids ORDER BY id")
            ],
            "inputs": sorted(
                (message(r[0]), index[r[1]], *r[2:])
                for r in await read("SELECT message_id, game_id, CAST(outcome AS TEXT), first_seq, "
                                    "last_seq, received_at FROM inputs WHERE game_id IN :ids")
            ),
            "events": sorted(
                (index[r[0]], r[1], r[2], r[3], message(r[4]), r[5])
                for r in await read("SELECT game_id, seq, type, CAST(payload AS TEXT), message_id, "
                                    "created_at FROM events WHERE game_id IN :ids")
            ),
            "outbox": [
                (rank[r[0]], index[r[1]], r[2], message(r[3]), *r[4:])
                for r in await read("SELECT id, game_id, seq, message_id, CAST(payload AS TEXT), "
                                    "attempts, last_error, created_at, done_at IS NULL FROM outbox "
                                    "WHERE game_id IN :ids ORDER BY id")
            ],
            "snapshots": sorted(
                (index[r[0]], *r[1:])
                for r in await read("SELECT game_id, seq, version, CAST(state AS TEXT), created_at "
                                    "FROM snapshots WHERE game_id IN :ids")
            ),
            "channel_bindings": [
                tuple(r)
                for r in await read("SELECT channel_id, game_id FROM channel_bindings "
                                    "WHERE game_id IN :ids")
            ],
        }  # fmt: skip
    return tables, rank


def repositories(db: Database) -> tuple[Repository, Repository]:
    """A repository writing groups in one call, and one writing them statement by statement."""
    one_call = Repository(db.sessions, clock=lambda: AT)
    by_statement = Repository(db.sessions, clock=lambda: AT)
    by_statement._one_call = False
    return one_call, by_statement


async def same_rows_and_answers(
    db: Database,
    theirs: tuple[list[int], list[Any]],
    ours: tuple[list[int], list[Any]],
    offsets: tuple[int, int],
) -> dict[str, Any]:
    """Checks that both scenarios wrote the same rows and got the same answers; the rows."""
    expected, expected_rank = await rows(db, theirs[0], offsets[0])
    got, got_rank = await rows(db, ours[0], offsets[1])
    for table in expected:
        assert got[table] == expected[table], table
    assert [same_shape(answer, theirs[0], offsets[0], expected_rank) for answer in theirs[1]] == [
        same_shape(answer, ours[0], offsets[1], got_rank) for answer in ours[1]
    ]
    return expected


async def test_a_group_in_one_call_writes_what_sqlalchemy_writes(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    one_call, by_statement = repositories(db)
    groups: list[int] = []
    pg = db.engine.dialect.name == "postgresql"
    # PostgreSQL's one statement; SQLite's request to the writer process
    module: Any = pg_group if pg else SqliteProcess
    name = "write" if pg else "commit"
    write = getattr(module, name)

    def counted(*args: Any, **kwargs: Any) -> Any:
        plans = args[1][-1] if pg else args[5]
        groups.append(len(plans))
        return write(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    theirs = await one_group(by_statement, db, offset=10_000)
    assert groups == []
    groups.clear()
    ours = await one_group(one_call, db, offset=20_000)
    assert 7 in groups  # the group of seven inputs went in one call
    if not pg:  # with its snapshot: written in the writer process, not here
        assert one_call._sqlite_process is not None and one_call._sqlite_process.pid is not None
    expected = await same_rows_and_answers(db, theirs, ours, (10_000, 20_000))
    (snapshot,) = expected["snapshots"]  # the newer one; the older is gone
    assert snapshot[:4] == (0, 2, "v1", '{"at":2,"名":"甲"}')
    assert [type(answer).__name__ for answer in ours[1]] == [
        "RecordResult", "RecordResult", "RecordResult", "SeqConflict", "RecordResult",
        "GameNotActive", "RecordResult",
    ]  # fmt: skip
    assert isinstance(ours[1][4], RecordResult) and ours[1][4].duplicate


async def inputs_at_once(repo: Repository, offset: int) -> tuple[list[int], list[Any]]:
    """Games with one input each in the group (current, stale, refused with no events, over)
    beside a game with two: each input's answer (or error)."""
    games = [await make_game(repo, effects=1) for _ in range(5)]
    a, b, c, d, e = games
    await repo.record(e, events=[{"type": "End"}], finish=True)
    answers = await asyncio.gather(
        repo.record(a, events=[{"type": "Added", "n": 1}], message_id=offset + 1, expected_seq=1),
        repo.record(b, events=[{"type": "Added", "n": 2}], expected_seq=1),
        repo.record(b, events=[{"type": "Added", "n": 3}, {"type": "Added", "n": 4}]),
        repo.record(c, events=[{"type": "Added", "n": 5}], expected_seq=9),  # stale
        repo.record(d, events=[], effects=[{"type": "Reply"}], message_id=offset + 2),
        repo.record(e, events=[{"type": "Added", "n": 6}]),  # over
        return_exceptions=True,
    )
    await repo.flush()
    return games, answers


async def test_the_bumps_shared_by_a_group_write_what_one_bump_each_writes(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    one_call, by_statement = repositories(db)
    theirs = await inputs_at_once(by_statement, offset=30_000)
    together: list[list[int]] = []
    commit = SqliteProcess.commit

    def counted(writer: SqliteProcess, *args: Any) -> Any:
        # the inputs the writer process bumps in one statement, as it picks them (none seen)
        together.append([a.game_id for a in sqlite_group._bumped_together(args[4], set())])
        return commit(writer, *args)

    monkeypatch.setattr(SqliteProcess, "commit", counted)
    ours = await inputs_at_once(one_call, offset=40_000)
    if db.engine.dialect.name == "sqlite":
        a, _, c, d, e = ours[0]
        assert [a, c, d, e] in together  # the second game has two inputs: one statement each
        # a small group: written in this process (no writer process was started)
        assert one_call._sqlite_process is not None and one_call._sqlite_process.pid is None
    await same_rows_and_answers(db, theirs, ours, (30_000, 40_000))
    assert [type(answer).__name__ for answer in ours[1]] == [
        "RecordResult", "RecordResult", "RecordResult", "SeqConflict", "RecordResult",
        "GameNotActive",
    ]  # fmt: skip
