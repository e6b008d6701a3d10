"""The lookup of a user's seats, made on interactions (which games a DM's command may reach, which
game a command names by default), reads that user's rows by the index of user ids: never every
seat of every game ever played, which a community's history grows without end."""

from __future__ import annotations

import pytest

from bot.store import Database, GameStatus, Repository
from tests.store.plans import sqlite_plan, statements_sent

pytestmark = [pytest.mark.asyncio, pytest.mark.parametrize("backend", ["sqlite"], indirect=True)]


async def test_the_seats_of_a_user_are_found_by_their_user_id(db: Database) -> None:
    repo = Repository(db.sessions)
    with statements_sent(db, lambda statement: "FROM seats" in statement) as sent:
        await repo.games_of_user(7)
        await repo.games_of_user(7, statuses=tuple(GameStatus))
    assert len(sent) == 2
    for statement, params in sent:
        plan = await sqlite_plan(db, statement, params)
        assert "SEARCH seats USING INDEX ix_seats_user_id (user_id=?)" in plan, plan
        assert not any(step.startswith("SCAN seats") for step in plan), plan
