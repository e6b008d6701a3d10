"""Asked about a game that does not exist, the store says so (``GameNotFound``) and writes
nothing; asked to read a log it cannot decode, it says the log is corrupt (``CorruptLog``, which
stops the game at start) rather than failing on a decoder's error."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select, text

from bot.store.db import Database
from bot.store.models import Event, GameStatus, Seat
from bot.store.recovery import rebuild_games
from bot.store.repository import (
    CorruptLog,
    GameNotFound,
    Repository,
    SeatSpec,
    SnapshotCodec,
)
from tests.store.test_store_recovery import fold, make_game

pytestmark = pytest.mark.asyncio

MISSING = 424242

COUNTER = SnapshotCodec[int](
    version="counter-1",
    dump=lambda state: {"total": state},
    load=lambda blob: int(blob["total"]),
    resume=lambda state, events: state + fold(events),
)


async def test_a_game_that_does_not_exist_is_not_found_and_nothing_is_written(
    repo: Repository,
) -> None:
    gid = await make_game(repo)
    with pytest.raises(GameNotFound):
        await repo.update_channels(MISSING, {"thread": "1"})
    with pytest.raises(GameNotFound):
        await repo.take_channel(MISSING, "thread")
    with pytest.raises(GameNotFound):
        await repo.reveal_seed(MISSING)
    with pytest.raises(GameNotFound):
        await repo.sealed_seed(MISSING)
    assert [g.id for g in await repo.list_games()] == [gid]
    assert await repo.sealed_seed(gid) == "seed"


async def test_one_seat_substituted_twice_in_one_input_is_refused_before_anything_is_written(
    db: Database, repo: Repository
) -> None:
    gid = await make_game(repo)
    twice = [SeatSpec(1, "乙", user_id=2), SeatSpec(1, "丙", user_id=3)]
    with pytest.raises(ValueError, match="one substitute per seat"):
        await repo.record(gid, events=[{"type": "Replaced"}], substitutes=twice, message_id=9)
    assert await repo.load_events(gid) == [{"type": "Started"}]
    async with db.sessions() as s:
        assert await s.scalar(select(func.count()).select_from(Seat)) == 1
    # the same input, with one substitute, is recorded as new
    result = await repo.record(
        gid, events=[{"type": "Replaced"}], substitutes=twice[:1], message_id=9
    )
    assert not result.duplicate
    assert [(t.seat, t.term, t.name) for t in await repo.seats(gid)] == [(1, 0, "甲"), (1, 1, "乙")]


async def unreadable(db: Database, game_id: int, seq: int) -> None:
    """Store text that is not JSON as an event's payload (SQLite stores any text)."""
    async with db.engine.begin() as conn:
        await conn.execute(
            text("UPDATE events SET payload = '{not json' WHERE game_id = :g AND seq = :s"),
            {"g": game_id, "s": seq},
        )


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
async def test_an_unreadable_event_is_a_corrupt_log_to_every_reader(
    db: Database, repo: Repository
) -> None:
    gid = await make_game(repo, 1, 2)
    fine = await make_game(repo, 3)
    await unreadable(db, gid, 2)
    with pytest.raises(CorruptLog, match="unreadable event payload"):
        await repo.event_rows(gid)
    with pytest.raises(CorruptLog, match="unreadable event payload"):
        await repo.load_events(gid)
    # with a snapshot codec, the events are read again from the first: still unreadable
    with pytest.raises(CorruptLog, match="unreadable event payload"):
        await repo.load_game(gid, fold, snapshot=COUNTER)
    # at start the game is stopped with a reason, the others go on
    report = await rebuild_games(repo, fold, snapshot=COUNTER)
    assert report.stopped == {gid: "replay failed at an unreadable event: CorruptLog"}
    assert {g: loaded.state for g, loaded in report.games.items()} == {fine: 3}
    assert (await repo.get_game(gid)).status is GameStatus.STOPPED_ERROR
    async with db.sessions() as s:  # nothing was rewritten: the log is as it was
        count = await s.scalar(select(func.count()).where(Event.game_id == gid))
    assert count == 3
