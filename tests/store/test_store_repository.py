"""The repository, on both backends: appends, idempotency, status, seats, settings, standings."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from sqlalchemy import select

from bot.store.db import Database
from bot.store.models import Game, GameStatus, Server
from bot.store.repository import (
    GameInfo,
    GameNotActive,
    GameNotFound,
    Loaded,
    RecordResult,
    Repository,
    SeatSpec,
    SeedSealed,
    SeqConflict,
    SnapshotCodec,
)

pytestmark = pytest.mark.asyncio

GUILD = 1_180_000_000_000_000_001  # snowflakes exceed 2**53 and JSON-safe floats
ALICE, BOB, CAROL = 1_180_000_000_000_000_101, 1_180_000_000_000_000_102, 1_180_000_000_000_000_103


def added(n: int) -> dict[str, Any]:
    return {"type": "Added", "n": n}


def total(events: list[dict[str, Any]]) -> int:
    return sum(event.get("n", 0) for event in events)


async def new_game(repo: Repository, **overrides: Any) -> RecordResult:
    kwargs: dict[str, Any] = {
        "server_id": GUILD,
        "ruleset": "v2",
        "seed": "the secret seed",
        "commitment": "c0ffee" * 10,
        "seats": [SeatSpec(1, "甲", ALICE), SeatSpec(2, "乙", BOB)],
        "events": [{"type": "Started", "players": ["甲", "乙"]}],
        "effects": [{"type": "Announce", "key": "game.start"}],
        "channels": {"day": 1_180_000_000_000_000_201},
    }
    kwargs.update(overrides)
    return await repo.create_game(**kwargs)


async def test_create_record_and_load(repo: Repository) -> None:
    created = await new_game(repo)
    gid = created.game_id
    assert (created.first_seq, created.last_seq) == (1, 1)
    assert [item.payload for item in created.outbox] == [{"type": "Announce", "key": "game.start"}]

    first = await repo.record(
        gid, events=[added(2), added(3)], effects=[{"type": "Announce", "total": 5}],
        message_id=1001, outcome={"ok": True}, expected_seq=1,
    )  # fmt: skip
    assert (first.first_seq, first.last_seq, first.duplicate) == (2, 3, False)
    assert first.outbox[0].seq == 3
    assert first.outbox[0].idempotency_key == f"outbox:{first.outbox[0].id}"

    assert await repo.load_events(gid) == [
        {"type": "Started", "players": ["甲", "乙"]},
        added(2),
        added(3),
    ]
    loaded = await repo.load_game(gid, total)
    assert loaded == Loaded(5, 3)
    rows = await repo.event_rows(gid, after_seq=1)
    assert [(row.seq, row.type, row.message_id) for row in rows] == [
        (2, "Added", 1001),
        (3, "Added", 1001),
    ]
    info = await repo.get_game(gid)
    assert (info.status, info.last_seq, info.channels) == (
        GameStatus.ACTIVE,
        3,
        {"day": 1_180_000_000_000_000_201},
    )


async def test_repeated_message_id_is_a_no_op_returning_the_original(repo: Repository) -> None:
    gid = (await new_game(repo)).game_id
    first = await repo.record(
        gid, events=[added(1)], effects=[{"type": "Announce"}], message_id=7, outcome={"ok": 1}
    )
    again = await repo.record(
        gid, events=[added(100)], effects=[{"type": "Other"}], message_id=7, outcome={"ok": 2}
    )
    assert again.duplicate
    assert (again.first_seq, again.last_seq, again.outcome) == (2, 2, {"ok": 1})
    assert [item.id for item in again.outbox] == [item.id for item in first.outbox]
    assert again.pending == again.outbox  # not yet marked done: the redelivery may finish it
    await repo.mark_done(first.outbox[0].id)
    assert (await repo.record(gid, events=[], message_id=7)).pending == ()
    assert await repo.load_events(gid) == [{"type": "Started", "players": ["甲", "乙"]}, added(1)]
    assert len(await repo.undone_effects(gid)) == 1  # only the start announcement


async def test_rejected_input_is_recorded_once_without_events(repo: Repository) -> None:
    gid = (await new_game(repo)).game_id
    reply = {"type": "Whisper", "key": "error.dead_cannot_vote"}
    result = await repo.record(
        gid, events=[], effects=[reply], message_id=9, outcome={"rejected": "dead"}
    )
    assert (result.first_seq, result.last_seq) == (None, None)
    assert result.outbox[0].seq == 1  # the state it answered
    again = await repo.record(gid, events=[], effects=[reply], message_id=9, outcome=None)
    assert again.duplicate and again.outcome == {"rejected": "dead"}
    assert len(await repo.undone_effects(gid)) == 2
    assert (await repo.get_game(gid)).last_seq == 1


async def test_repeated_message_id_wins_over_a_finished_game(repo: Repository) -> None:
    """A redelivery after the game ended still returns the original outcome, not an error."""
    gid = (await new_game(repo)).game_id
    await repo.record(gid, events=[added(1)], message_id=11, outcome={"ok": True}, finish=True)
    assert (await repo.record(gid, events=[added(1)], message_id=11)).duplicate
    with pytest.raises(GameNotActive) as raised:
        await repo.record(gid, events=[added(1)], message_id=12)
    assert raised.value.status is GameStatus.FINISHED


async def test_create_game_is_idempotent_on_its_message(repo: Repository) -> None:
    first = await new_game(repo, message_id=5)
    again = await new_game(repo, message_id=5)
    assert again.duplicate and again.game_id == first.game_id
    assert [g.id for g in await repo.list_games()] == [first.game_id]


async def test_stale_state_is_refused(repo: Repository) -> None:
    gid = (await new_game(repo)).game_id
    await repo.record(gid, events=[added(1)], expected_seq=1)
    with pytest.raises(SeqConflict) as raised:
        await repo.record(gid, events=[added(1)], expected_seq=1)
    assert (raised.value.expected, raised.value.actual) == (1, 2)
    with pytest.raises(GameNotFound):
        await repo.record(999_999, events=[added(1)])
    with pytest.raises(ValueError, match="type"):
        await repo.record(gid, events=[{"n": 1}])
    assert (await repo.get_game(gid)).last_seq == 2


async def test_concurrent_appends_are_serialized_and_gap_free(db: Database) -> None:
    """Many writers on one game (separate sessions, separate connections): seqs 1..n, no loss."""
    repo = Repository(db.sessions)
    gid = (await new_game(repo)).game_id
    results = await asyncio.gather(
        *(
            repo.record(gid, events=[added(i), added(i)], message_id=100 + i, outcome={"i": i})
            for i in range(12)
        ),
        # Redeliveries of message 100 race its first delivery: whichever lands first is the
        # input, the others return its outcome (so they carry the same content, as Discord's do).
        *(
            repo.record(gid, events=[added(0), added(0)], message_id=100, outcome={"i": 0})
            for _ in range(3)
        ),
    )
    fresh = [r for r in results if not r.duplicate]
    assert len(fresh) == 12 and sum(r.duplicate for r in results) == 3
    seqs = sorted(seq for r in fresh for seq in range(r.first_seq or 0, (r.last_seq or 0) + 1))
    assert seqs == list(range(2, 26))
    events = await repo.load_events(gid)
    assert len(events) == 25 and total(events) == 2 * sum(range(12))


async def test_datetimes_are_utc_aware_on_every_backend(db: Database) -> None:
    shanghai = timezone(timedelta(hours=8))
    at = datetime(2026, 12, 2, 22, 0, 0, 123456, tzinfo=shanghai)
    repo = Repository(db.sessions, clock=lambda: at)
    gid = (await new_game(repo)).game_id
    info = await repo.get_game(gid)
    assert info.created_at == at
    assert info.created_at.tzinfo is UTC and info.created_at.hour == 14
    (row,) = await repo.event_rows(gid)
    assert row.created_at.tzinfo is UTC
    naive = Repository(db.sessions, clock=lambda: datetime(2026, 1, 1))
    with pytest.raises(Exception, match="naive datetime"):
        await naive.record(gid, events=[added(1)])


async def test_snowflakes_round_trip_exactly(db: Database, repo: Repository) -> None:
    big = 2**63 - 1
    gid = (await new_game(repo, server_id=big, seats=[SeatSpec(1, "甲", big)])).game_id
    await repo.record(gid, events=[added(1)], effects=[{"type": "X", "to": big}], message_id=big)
    assert (await repo.get_game(gid)).server_id == big
    assert (await repo.current_seats(gid))[1].user_id == big
    assert (await repo.undone_effects(gid))[-1].payload == {"type": "X", "to": big}
    assert (await repo.record(gid, events=[], message_id=big)).duplicate
    async with db.sessions() as s:
        assert await s.scalar(select(Server.id)) == big


async def test_the_seed_is_sealed_until_the_end(repo: Repository) -> None:
    gid = (await new_game(repo)).game_id
    info = await repo.get_game(gid)
    assert "seed" not in GameInfo.__dataclass_fields__
    assert "the secret seed" not in repr(info)
    with pytest.raises(SeedSealed):
        await repo.reveal_seed(gid)
    assert await repo.sealed_seed(gid) == "the secret seed"
    await repo.record(gid, events=[{"type": "Ended"}], finish=True)
    assert await repo.reveal_seed(gid) == "the secret seed"
    assert (await repo.get_game(gid)).finished_at is not None


async def test_status_changes(repo: Repository) -> None:
    gid = (await new_game(repo)).game_id
    other = (await new_game(repo)).game_id
    assert await repo.stop_game(gid, "replay failed at event 3: IllegalVote")
    assert not await repo.stop_game(gid, "channel deleted: game")  # stopped once, first reason
    info = await repo.get_game(gid)
    assert (info.status, info.status_error) == (
        GameStatus.STOPPED_ERROR,
        "replay failed at event 3: IllegalVote",
    )
    assert await repo.active_game_ids() == [other]
    with pytest.raises(GameNotActive):
        await repo.record(gid, events=[added(1)])
    await repo.resume_game(gid)
    assert (await repo.get_game(gid)).status_error is None
    await repo.finish_game(other)
    listed = await repo.list_games(server_id=GUILD, statuses=[GameStatus.FINISHED])
    assert [g.id for g in listed] == [other]
    assert not await repo.stop_game(other, "channel deleted: game")  # a finished game stays so
    assert (await repo.get_game(other)).status is GameStatus.FINISHED
    with pytest.raises(GameNotFound):
        await repo.stop_game(424242, "x")


async def test_seats_and_substitutes(repo: Repository) -> None:
    gid = (await new_game(repo)).game_id
    await repo.record(
        gid,
        events=[{"type": "Replaced", "seat": 2}],
        substitutes=[SeatSpec(2, "丙", CAROL)],
    )
    terms = await repo.seats(gid)
    assert [(t.seat, t.term, t.name, t.since_seq) for t in terms] == [
        (1, 0, "甲", 1),
        (2, 0, "乙", 1),
        (2, 1, "丙", 2),
    ]
    assert (await repo.current_seats(gid))[2].user_id == CAROL
    assert await repo.games_of_user(CAROL) == [(gid, 2)]
    assert await repo.games_of_user(BOB) == []  # replaced
    assert await repo.games_of_user(ALICE) == [(gid, 1)]


async def test_outbox_done_and_failures(repo: Repository) -> None:
    created = await new_game(repo, effects=[{"type": "A"}, {"type": "B"}])
    a, b = created.outbox
    await repo.record_attempt_failure(a.id, "HTTPException: 503")
    first, _ = await repo.undone_effects()
    assert (first.id, first.attempts, first.last_error) == (a.id, 1, "HTTPException: 503")
    assert await repo.mark_done(a.id)
    assert not await repo.mark_done(a.id)
    assert [item.id for item in await repo.undone_effects()] == [b.id]
    await repo.stop_game(created.game_id, "broken")
    assert await repo.undone_effects() == []
    assert [i.id for i in await repo.undone_effects(include_stopped=True)] == [b.id]


async def test_server_settings(repo: Repository) -> None:
    assert await repo.get_settings(GUILD) == {}
    assert await repo.update_settings(GUILD, {"locale": "zh-CN", "season": "2026"}) == {
        "locale": "zh-CN",
        "season": "2026",
    }
    assert await repo.update_settings(GUILD, {"season": None, "tz": "Asia/Shanghai"}) == {
        "locale": "zh-CN",
        "tz": "Asia/Shanghai",
    }
    assert await repo.get_settings(GUILD) == {"locale": "zh-CN", "tz": "Asia/Shanghai"}


async def test_standings_count_each_game_once(repo: Repository) -> None:
    one = (await new_game(repo)).game_id
    two = (await new_game(repo)).game_id
    assert await repo.apply_scores(one, season="S1", scores={ALICE: 30, BOB: -10}, winners={ALICE})
    assert not await repo.apply_scores(one, season="S1", scores={ALICE: 30, BOB: -10})
    assert await repo.apply_scores(two, season="S1", scores={ALICE: -5, BOB: 40}, winners={BOB})
    table = await repo.standings(GUILD, "S1")
    assert [(r.user_id, r.points, r.games, r.wins) for r in table] == [
        (BOB, 30, 2, 1),
        (ALICE, 25, 2, 1),
    ]
    assert await repo.standings(GUILD, "S2") == []
    with pytest.raises(GameNotFound):
        await repo.apply_scores(777_777, season="S1", scores={})


COUNTER = SnapshotCodec[int](
    version="counter-1",
    dump=lambda state: {"total": state},
    load=lambda blob: int(blob["total"]),
    resume=lambda state, events: state + total(events),
)


async def test_snapshot_plus_tail(repo: Repository) -> None:
    gid = (await new_game(repo)).game_id
    for n in (1, 2, 3):
        await repo.record(gid, events=[added(n)])
    calls: list[int] = []

    def fold(events: list[dict[str, Any]]) -> int:
        calls.append(len(events))
        return total(events)

    loaded = await repo.load_game(gid, fold, snapshot=COUNTER)
    assert loaded == Loaded(6, 4) and calls == [4]
    await repo.save_snapshot(gid, loaded, COUNTER)
    await repo.record(gid, events=[added(10)])
    assert await repo.load_game(gid, fold, snapshot=COUNTER) == Loaded(16, 5)
    assert calls == [4]  # snapshot + tail: the fold did not run

    # A snapshot of another version is ignored; an unreadable one falls back to the events.
    other = SnapshotCodec[int]("counter-2", COUNTER.dump, COUNTER.load, COUNTER.resume)
    assert await repo.load_game(gid, fold, snapshot=other) == Loaded(16, 5)
    broken = SnapshotCodec[int](
        "counter-1", COUNTER.dump, lambda blob: blob["nope"], COUNTER.resume
    )
    assert await repo.load_game(gid, fold, snapshot=broken) == Loaded(16, 5)
    assert calls == [4, 5, 5]


async def test_game_rows_have_a_status_constraint(db: Database, repo: Repository) -> None:
    gid = (await new_game(repo)).game_id
    with pytest.raises(Exception, match=r"(?i)check|constraint"):
        async with db.sessions() as s, s.begin():
            game = await s.get(Game, gid)
            assert game is not None
            game.status = "paused-ish"
