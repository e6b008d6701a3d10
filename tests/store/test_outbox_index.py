"""The outbox's partial index of undone effects (migration 0003) serves the reads that ask for
them: SQLite's plan for each outbox read the repository runs searches the index, never scans the
table (a long-lived database's outbox holds every effect ever performed). And the writes that mark
effects done, which name their rows by id, never go through it: that would read every undone row
for each group commit (a backlog after a Discord outage)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy import text

from bot.store import Database, Repository, pg_group, sqlite_group
from bot.store import statements as sql
from bot.store.values import SeatSpec
from tests.store.plans import postgresql_plan, sqlite_plan, statements_sent

pytestmark = pytest.mark.asyncio
SQLITE = pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
POSTGRESQL = pytest.mark.parametrize("backend", ["postgresql"], indirect=True)


async def _outbox_reads(db: Database, repo: Repository) -> list[tuple[str, Any]]:
    """The SQL (and parameters) of every undone-effects read the repository makes."""
    with statements_sent(db, lambda s: "outbox" in s and "done_at IS NULL" in s) as seen:
        await repo.undone_effects()
        await repo.undone_effects(7)
        await repo.undone_count()
    return seen


@SQLITE
async def test_every_undone_effects_read_searches_the_partial_index(db: Database) -> None:
    repo = Repository(db.sessions)
    reads = await _outbox_reads(db, repo)
    assert len(reads) == 3
    for statement, params in reads:
        plan = await sqlite_plan(db, statement, params)
        outbox = [step for step in plan if " outbox " in f" {step} "]
        assert outbox, plan
        assert all("ix_outbox_undone" in step for step in outbox), plan
    async with db.engine.connect() as conn:
        index = await conn.scalar(
            text("SELECT sql FROM sqlite_master WHERE name = 'ix_outbox_undone'")
        )
    assert index is not None and index.endswith("WHERE done_at IS NULL")


async def _mark_done_as_sent(db: Database, ids: list[int]) -> tuple[str, Any]:
    """SQLAlchemy's done-mark statement (``MARK_DONE``) as the driver is sent it, and its
    parameters (run, then rolled back)."""
    with statements_sent(db, lambda statement: statement.startswith("UPDATE outbox")) as sent:
        async with db.engine.connect() as conn:
            await conn.execute(sql.MARK_DONE, {"ids": ids, "now": datetime.now(UTC)})
            await conn.rollback()
    (only,) = sent
    return only


@SQLITE
async def test_done_marks_find_their_rows_by_id_not_in_the_partial_index(db: Database) -> None:
    # Marking effects done names them by id: the plan looks each up by its rowid. Searching the
    # index of undone effects instead reads every undone row for every group commit (a backlog
    # of thousands after a Discord outage, each commit slower the more is left to send).
    statements = [
        (sqlite_group.MARK_DONE_SQL.format(holes="?,?,?"), ("now", 3, 5, 8)),  # the group's
        await _mark_done_as_sent(db, [3, 5, 8]),  # SQLAlchemy's (a memory database, marks apart)
    ]
    for statement, params in statements:
        plan = await sqlite_plan(db, statement, params)
        assert plan == ["SEARCH outbox USING INTEGER PRIMARY KEY (rowid=?)"], (statement, plan)


@POSTGRESQL
async def test_postgresql_done_marks_find_their_rows_by_id_when_a_backlog_grew_after_analyze(
    db: Database,
) -> None:
    # The statistics were taken when nothing was left to send (the usual case): the planner
    # believes the index of undone effects tiny, and would read the whole backlog through it.
    repo = Repository(db.sessions)
    sent = await repo.create_game(**_game(effects=300))
    async with db.engine.begin() as conn:
        await conn.execute(text("UPDATE outbox SET done_at = now()"))
        await conn.execute(text("ANALYZE outbox"))
    backlog = await repo.create_game(**_game(effects=3000))
    ids = [item.id for item in backlog.outbox[:3]]
    assert sent.outbox and len(backlog.outbox) == 3000
    group = pg_group.arguments(datetime.now(UTC), ids, [], {})[: pg_group._PLANS]
    statements = [(pg_group.GROUP, group), await _mark_done_as_sent(db, ids)]
    for statement, params in statements:
        plan = await postgresql_plan(db, statement, params)
        assert "pk_outbox" in plan and "ix_outbox_undone" not in plan, plan


def _game(effects: int) -> dict[str, Any]:
    return {
        "server_id": 1, "ruleset": "v2", "seed": "s", "commitment": "c",
        "seats": [SeatSpec(1, "甲")], "events": [{"type": "Started"}],
        "effects": [{"type": "Announce", "i": i} for i in range(effects)],
    }  # fmt: skip
