"""Recovery at start: every active game rebuilt, undone effects performed, broken games stopped."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from sqlalchemy import delete, text, update

from bot.store.db import Database
from bot.store.models import Event, GameStatus
from bot.store.recovery import deliver, describe_failure, first_failing_seq, recover
from bot.store.repository import OutboxItem, Repository, SeatSpec
from bot.store.values import Shards

pytestmark = pytest.mark.asyncio

SECRET = "甲 is the killer"  # what an engine error message might say; must never reach a log


class IllegalEvent(Exception):
    """Stands for an engine error: a message naming hidden facts, and a message key."""

    key = "replay.illegal"


def fold(events: list[dict[str, Any]]) -> int:
    total = 0
    for event in events:
        if event["type"] == "Poison":
            raise IllegalEvent(SECRET)
        total += event.get("n", 0)
    return total


async def make_game(repo: Repository, *ns: int, effects: int = 0, server_id: int = 1) -> int:
    created = await repo.create_game(
        server_id=server_id,
        ruleset="v2",
        seed="seed",
        commitment="c",
        seats=[SeatSpec(1, "甲")],
        events=[{"type": "Started"}],
        effects=[{"type": "Announce", "i": i} for i in range(effects)],
    )
    for n in ns:
        await repo.record(created.game_id, events=[{"type": "Added", "n": n}])
    return created.game_id


class Performer:
    """Records what it is asked to do; fails on payloads marked ``fail``."""

    def __init__(self) -> None:
        self.keys: list[str] = []

    async def __call__(self, item: OutboxItem) -> None:
        if item.payload.get("fail"):
            raise ConnectionError("discord is down")
        self.keys.append(item.idempotency_key)


async def test_recover_rebuilds_and_performs_undone_effects(repo: Repository) -> None:
    one = await make_game(repo, 1, 2, effects=2)
    two = await make_game(repo, 5)
    done = await repo.record(two, events=[], effects=[{"type": "Whisper"}], message_id=77)
    await repo.mark_done(done.outbox[0].id)
    finished = await make_game(repo, effects=1)
    await repo.record(finished, events=[{"type": "End"}], effects=[{"type": "Reveal"}], finish=True)

    performer = Performer()
    report = await recover(repo, fold, performer)
    assert {gid: loaded.state for gid, loaded in report.games.items()} == {one: 3, two: 5}
    assert report.stopped == {}
    # The finished game's reveal goes out too; the done whisper does not.
    undone_before = [f"outbox:{i}" for i in report.delivery.performed]
    assert performer.keys == undone_before and len(performer.keys) == 4
    assert await repo.undone_effects() == []
    assert (await recover(repo, fold, performer)).delivery.performed == []


async def test_unreplayable_game_is_stopped_and_others_go_on(
    repo: Repository, caplog: pytest.LogCaptureFixture
) -> None:
    good = await make_game(repo, 1, effects=1)
    bad = await make_game(repo, 1, 2, effects=1)
    await repo.record(bad, events=[{"type": "Poison"}, {"type": "Added", "n": 3}])
    later = await make_game(repo, 4)

    performer = Performer()
    with caplog.at_level(logging.ERROR, logger="bot.store"):
        report = await recover(repo, fold, performer)

    reason = "replay failed at event 4: IllegalEvent[replay.illegal]"
    assert report.stopped == {bad: reason}
    assert set(report.games) == {good, later}
    info = await repo.get_game(bad)
    assert (info.status, info.status_error) == (GameStatus.STOPPED_ERROR, reason)
    assert f"game {bad} stopped: {reason}" in caplog.text
    assert SECRET not in caplog.text and SECRET not in reason
    # The stopped game's effects wait for a moderator; the others' went out.
    assert len(performer.keys) == 1
    assert len(await repo.undone_effects(bad, include_stopped=True)) == 1
    # Stopped games are not rebuilt again, nor silently: they are listed for moderators.
    assert (await recover(repo, fold, performer)).stopped == {}
    assert [g.id for g in await repo.list_games(statuses=[GameStatus.STOPPED_ERROR])] == [bad]


async def test_gap_in_the_log_is_a_corrupt_game(db: Database, repo: Repository) -> None:
    gid = await make_game(repo, 1, 2, 3)
    async with db.sessions() as s, s.begin():
        await s.execute(delete(Event).where(Event.game_id == gid, Event.seq == 3))
    report = await recover(repo, fold, Performer())
    assert report.stopped == {gid: "replay failed at event 3: CorruptLog"}


async def test_the_bulk_read_gives_what_each_game_alone_gives_and_leaves_out_a_broken_one(
    db: Database, repo: Repository
) -> None:
    clean = [await make_game(repo, *range(n)) for n in (0, 1, 5)]
    broken = await make_game(repo, 1, 2, 3)
    async with db.sessions() as s, s.begin():
        await s.execute(delete(Event).where(Event.game_id == broken, Event.seq == 2))
    loaded = await repo.load_active_games(fold)
    assert set(loaded) == set(clean)  # the broken game is for load_game and its stop
    for gid in clean:
        assert loaded[gid] == await repo.load_game(gid, fold)


async def test_missing_tail_is_a_corrupt_game(db: Database, repo: Repository) -> None:
    gid = await make_game(repo, 1)
    async with db.sessions() as s, s.begin():
        await s.execute(update(Event).where(Event.game_id == gid).values(seq=Event.seq + 10))
    report = await recover(repo, fold, Performer())
    assert report.stopped == {gid: "replay failed at event 1: CorruptLog"}


async def test_unreadable_payload_is_a_corrupt_game(db: Database, repo: Repository) -> None:
    gid = await make_game(repo, 1, 2)
    # PostgreSQL's json type refuses text that is not JSON; SQLite stores anything.
    bad = "{not json" if db.engine.dialect.name == "sqlite" else "[1, 2]"
    async with db.sessions() as s, s.begin():
        await s.execute(
            text("UPDATE events SET payload = :bad WHERE game_id = :gid AND seq = 2"),
            {"bad": bad, "gid": gid},
        )
    report = await recover(repo, fold, Performer())
    assert report.stopped[gid].startswith("replay failed at ")
    assert report.stopped[gid].endswith(": CorruptLog")
    assert set(report.games) == set()


async def test_the_bulk_read_leaves_out_only_the_game_with_an_unreadable_row(
    db: Database, repo: Repository
) -> None:
    """Each game's JSON is decoded with it: one game's unreadable row sends that game alone to
    ``load_game``, not every game."""
    before, bad, after = [await make_game(repo, 1, 2) for _ in range(3)]
    unreadable = "{not json" if db.engine.dialect.name == "sqlite" else "[1, 2]"
    async with db.sessions() as s, s.begin():
        await s.execute(
            text("UPDATE events SET payload = :bad WHERE game_id = :gid AND seq = 2"),
            {"bad": unreadable, "gid": bad},
        )
    loaded = await repo.load_active_games(fold)
    assert set(loaded) == {before, after}
    for gid in (before, after):
        assert loaded[gid] == await repo.load_game(gid, fold)


async def test_failed_effect_defers_the_rest_of_its_game(repo: Repository) -> None:
    one = await repo.create_game(
        server_id=1, ruleset="v2", seed="s", commitment="c", seats=[],
        events=[{"type": "Started"}],
        effects=[{"type": "A"}, {"type": "B", "fail": True}, {"type": "C"}],
    )  # fmt: skip
    two = await repo.create_game(
        server_id=1, ruleset="v2", seed="s", commitment="c", seats=[],
        events=[{"type": "Started"}], effects=[{"type": "D"}],
    )  # fmt: skip
    a, b, c = one.outbox
    performer = Performer()
    report = await deliver(repo, [*one.outbox, *two.outbox], performer)
    assert report.performed == [a.id, two.outbox[0].id]
    assert list(report.failed) == [b.id] and "ConnectionError" in report.failed[b.id]
    assert report.deferred == [c.id]
    undone = await repo.undone_effects()
    assert [(i.id, i.attempts) for i in undone] == [(b.id, 1), (c.id, 0)]
    assert undone[0].last_error == "ConnectionError: discord is down"


def hidden(item: OutboxItem) -> bool:
    return bool(item.payload.get("private"))


async def test_public_effects_go_first_and_a_private_failure_holds_up_no_public_one(
    repo: Repository,
) -> None:
    # What a failing (or slow) private effect may hold up must not depend on roles: every public
    # effect of the pass goes out before the private ones, and a private failure defers only
    # the private ones after it.
    game = await repo.create_game(
        server_id=1, ruleset="v2", seed="s", commitment="c", seats=[],
        events=[{"type": "Started"}],
        effects=[
            {"type": "Clock"},
            {"type": "Check", "private": True, "fail": True},
            {"type": "Menu", "private": True},
            {"type": "Window"},
        ],
    )  # fmt: skip
    clock, check, menu, window = game.outbox
    performer = Performer()
    report = await deliver(repo, game.outbox, performer, private=hidden)
    assert report.performed == [clock.id, window.id]
    assert list(report.failed) == [check.id] and report.deferred == [menu.id]
    assert report.failed_privately == {game.game_id}
    # a public failure defers everything after it, the private effects too
    again = await repo.create_game(
        server_id=1, ruleset="v2", seed="s", commitment="c", seats=[],
        events=[{"type": "Started"}],
        effects=[{"type": "Clock", "fail": True}, {"type": "Check", "private": True}],
    )  # fmt: skip
    report = await deliver(repo, again.outbox, Performer(), private=hidden)
    assert report.performed == [] and report.deferred == [again.outbox[1].id]
    assert report.failed_privately == set()


async def test_first_failing_seq_bisects() -> None:
    events: list[dict[str, Any]] = [{"type": "Added", "n": 1}] * 40
    assert first_failing_seq(events, fold) is None
    events[26] = {"type": "Poison"}
    assert first_failing_seq(events, fold) == 27
    assert describe_failure(IllegalEvent(SECRET), 27) == (
        "replay failed at event 27: IllegalEvent[replay.illegal]"
    )


async def test_a_shard_process_recovers_and_performs_only_its_servers_games(
    repo: Repository,
) -> None:
    """Discord's shard of a server is (id >> 22) % count: a process running shard 1 of 3
    rebuilds, lists and performs for the games of shard-1 servers only."""
    servers = {shard: (999 + shard) << 22 for shard in range(3)}  # (id >> 22) % 3 == shard
    games = {shard: await make_game(repo, 1, effects=1, server_id=server_id)
             for shard, server_id in servers.items()}  # fmt: skip
    mine = Shards(3, (1,))
    assert all(mine.owns(servers[1]) != mine.owns(servers[s]) for s in (0, 2))
    assert await repo.active_game_ids(mine) == [games[1]]
    assert sorted(await repo.active_game_ids()) == sorted(games.values())
    assert [i.game_id for i in await repo.undone_effects(shards=mine)] == [games[1]]
    assert set(await repo.load_active_games(fold, shards=mine)) == {games[1]}
    performer = Performer()
    report = await recover(repo, fold, performer, shards=mine)
    assert set(report.games) == {games[1]}
    assert len(performer.keys) == 1  # its effect only: the others are other processes'
    others = Shards(3, (0, 2))
    assert sorted(await repo.active_game_ids(others)) == sorted([games[0], games[2]])
    assert {i.game_id for i in await repo.undone_effects(shards=others)} == {games[0], games[2]}
