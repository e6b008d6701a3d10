"""The outbox's partial index of undone effects (migration 0003) serves the reads that ask for
them: SQLite's plan for each outbox read the repository runs searches the index, never scans the
table (a long-lived database's outbox holds every effect ever performed)."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import event, text

from bot.store import Database, Repository

pytestmark = [pytest.mark.asyncio, pytest.mark.parametrize("backend", ["sqlite"], indirect=True)]


async def _outbox_reads(db: Database, repo: Repository) -> list[tuple[str, Any]]:
    """The SQL (and parameters) of every undone-effects read the repository makes."""
    seen: list[tuple[str, Any]] = []

    def capture(_conn: Any, _cursor: Any, statement: str, params: Any, *_: Any) -> None:
        if "outbox" in statement and "done_at IS NULL" in statement:
            seen.append((statement, params))

    event.listen(db.engine.sync_engine, "before_cursor_execute", capture)
    try:
        await repo.undone_effects()
        await repo.undone_effects(7)
        await repo.undone_count()
    finally:
        event.remove(db.engine.sync_engine, "before_cursor_execute", capture)
    return seen


async def test_every_undone_effects_read_searches_the_partial_index(db: Database) -> None:
    repo = Repository(db.sessions)
    reads = await _outbox_reads(db, repo)
    assert len(reads) == 3
    async with db.engine.connect() as conn:
        raw = (await conn.get_raw_connection()).driver_connection
        for statement, params in reads:
            cursor = await raw.execute(f"EXPLAIN QUERY PLAN {statement}", params)
            plan = [row[-1] for row in await cursor.fetchall()]
            outbox = [step for step in plan if " outbox " in f" {step} "]
            assert outbox, plan
            assert all("ix_outbox_undone" in step for step in outbox), plan
        index = await conn.scalar(
            text("SELECT sql FROM sqlite_master WHERE name = 'ix_outbox_undone'")
        )
    assert index is not None and index.endswith("WHERE done_at IS NULL")
