"""The SQL the store sends, and the query plans the database makes for it (for tests that a
statement is served by the index meant for it)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import event

from bot.store import Database


@contextmanager
def statements_sent(db: Database, chosen: Callable[[str], bool]) -> Iterator[list[tuple[str, Any]]]:
    """The statements (and their parameters) SQLAlchemy sends the driver meanwhile, those
    ``chosen`` keeps."""
    sent: list[tuple[str, Any]] = []

    def capture(_conn: Any, _cursor: Any, statement: str, params: Any, *_: Any) -> None:
        if chosen(statement):
            sent.append((statement, params))

    event.listen(db.engine.sync_engine, "before_cursor_execute", capture)
    try:
        yield sent
    finally:
        event.remove(db.engine.sync_engine, "before_cursor_execute", capture)


async def sqlite_plan(db: Database, statement: str, params: Any) -> list[str]:
    """SQLite's plan for ``statement``: the detail of each step of ``EXPLAIN QUERY PLAN``."""
    async with db.engine.connect() as conn:
        raw = (await conn.get_raw_connection()).driver_connection
        cursor = await raw.execute(f"EXPLAIN QUERY PLAN {statement}", params)
        return [row[-1] for row in await cursor.fetchall()]


async def postgresql_plan(db: Database, statement: str, params: Any) -> str:
    """PostgreSQL's plan for ``statement`` (``EXPLAIN``), as text."""
    async with db.engine.connect() as conn:
        raw = (await conn.get_raw_connection()).driver_connection
        return "\n".join(row[0] for row in await raw.fetch(f"EXPLAIN {statement}", *params))
