"""Sign-ups, confirmations and channel bindings under concurrency, on SQLite and PostgreSQL:
inputs fired together with asyncio.gather are each recorded once, against the rows as they are
(issue 12). On PostgreSQL the statements really run at once, on connections of their own."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from sqlalchemy import func, select

from bot.store import (
    ChannelHeld,
    GameDraft,
    LobbyInfo,
    LobbyRefused,
    LobbyStatus,
    Repository,
    SeatSpec,
)
from bot.store.db import Database
from bot.store.models import ChannelBinding, Game, Lobby

pytestmark = pytest.mark.asyncio

GUILD = 1_180_000_000_000_000_001
LOBBY_CHANNEL = 1_180_000_000_000_000_100
VOTE_CHANNEL = 1_180_000_000_000_000_101
OTHER_CHANNEL = 1_180_000_000_000_000_102
USER = 1_180_000_000_000_001_000


async def open_lobby(
    repo: Repository, channel: int = LOBBY_CHANNEL, vote: int = VOTE_CHANNEL, **kw: Any
) -> LobbyInfo:
    return await repo.lobbies.open(
        server_id=GUILD,
        channel_id=channel,
        vote_channel_id=vote,
        min_players=kw.get("low", 2),
        max_players=kw.get("high", 12),
        settings={"ruleset": "v2"},
    )


def deal(lobby: LobbyInfo) -> GameDraft:
    """A stand-in for the engine's deal: a seat per signed-up player, in seat order."""
    return GameDraft(
        ruleset="v2",
        seed="seed",
        commitment="c" * 64,
        seats=tuple(SeatSpec(i, p.name, p.user_id) for i, p in enumerate(lobby.players, 1)),
        events=({"type": "Started", "players": [p.user_id for p in lobby.players]},),
        effects=({"type": "faguan.start", "step": "role"}, {"type": "Whisper"}),
        options={},
        channels={"game": str(lobby.channel_id), "vote": str(lobby.vote_channel_id)},
        schedule={},
    )


async def _joins(repo: Repository, lobby: LobbyInfo, users: range) -> list[Any]:
    return await asyncio.gather(
        *(repo.lobbies.join(lobby.id, u, f"p{u}") for u in users), return_exceptions=True
    )


async def test_twelve_joins_at_once_give_twelve_seats(repo: Repository) -> None:
    lobby = await open_lobby(repo)
    results = await _joins(repo, lobby, range(USER, USER + 12))
    assert not [r for r in results if isinstance(r, BaseException)], results
    assert sorted(r.seat for r in results) == list(range(1, 13))
    assert sorted(r.count for r in results) == list(range(1, 13))  # each told the real count
    stored = await repo.lobbies.newest(LOBBY_CHANNEL)
    assert stored is not None and len(stored.players) == 12
    # the seat each was told is their place in the stored order
    order = {p.user_id: i for i, p in enumerate(stored.players, 1)}
    by_user = dict(zip(range(USER, USER + 12), results, strict=True))
    assert {u: j.seat for u, j in by_user.items()} == order


async def test_joins_at_once_never_pass_the_limit(repo: Repository) -> None:
    lobby = await open_lobby(repo, high=8)
    results = await _joins(repo, lobby, range(USER, USER + 12))
    refused = [r for r in results if isinstance(r, LobbyRefused)]
    assert len(refused) == 4 and {r.reason for r in refused} == {"full"}
    stored = await repo.lobbies.newest(LOBBY_CHANNEL)
    assert stored is not None and len(stored.players) == 8


async def test_the_same_player_joins_once(repo: Repository) -> None:
    lobby = await open_lobby(repo)
    results = await asyncio.gather(
        *(repo.lobbies.join(lobby.id, USER, "甲") for _ in range(4)), return_exceptions=True
    )
    assert len([r for r in results if not isinstance(r, BaseException)]) == 1
    assert {r.reason for r in results if isinstance(r, LobbyRefused)} == {"already_joined"}


async def test_leave_then_join_keeps_seats_distinct(repo: Repository) -> None:
    lobby = await open_lobby(repo)
    for u in range(USER, USER + 3):
        await repo.lobbies.join(lobby.id, u, f"p{u}")
    left = await repo.lobbies.leave(lobby.id, USER + 1)
    assert left.count == 2
    again = await repo.lobbies.join(lobby.id, USER + 1, "back")
    assert (again.seat, again.count) == (3, 3)
    stored = await repo.lobbies.newest(LOBBY_CHANNEL)
    assert stored is not None
    assert [p.user_id for p in stored.players] == [USER, USER + 2, USER + 1]
    with pytest.raises(LobbyRefused) as err:
        await repo.lobbies.leave(lobby.id, USER + 9)
    assert err.value.reason == "not_joined"


async def test_two_starts_at_once_create_one_game(repo: Repository, db: Database) -> None:
    lobby = await open_lobby(repo)
    for u in range(USER, USER + 4):
        await repo.lobbies.join(lobby.id, u, f"p{u}")
    results = await asyncio.gather(
        *(repo.lobbies.start(lobby.id, deal) for _ in range(3)), return_exceptions=True
    )
    games = [r for r in results if not isinstance(r, BaseException)]
    refused = [r for r in results if isinstance(r, LobbyRefused)]
    assert len(games) == 1 and len(refused) == 2, results
    game_id = games[0].game_id
    assert {(r.reason, r.game_id) for r in refused} == {("started", game_id)}
    assert [item.payload["type"] for item in games[0].outbox] == ["faguan.start", "Whisper"]
    async with db.sessions() as s:
        assert await s.scalar(select(func.count()).select_from(Game)) == 1
        row = await s.get(Lobby, lobby.id)
        assert row is not None and (row.status, row.game_id) == ("started", game_id)
    # a join after the start is told which game it became
    with pytest.raises(LobbyRefused) as err:
        await repo.lobbies.join(lobby.id, USER + 50, "late")
    assert (err.value.reason, err.value.game_id) == ("started", game_id)
    assert await repo.lobbies.held_channels() == {LOBBY_CHANNEL: game_id, VOTE_CHANNEL: game_id}


async def test_a_start_with_too_few_or_a_refused_deal_records_nothing(
    repo: Repository, db: Database
) -> None:
    lobby = await open_lobby(repo, low=3)
    await repo.lobbies.join(lobby.id, USER, "甲")
    with pytest.raises(LobbyRefused) as err:
        await repo.lobbies.start(lobby.id, deal)
    assert (err.value.reason, err.value.count, err.value.limit) == ("too_few", 1, 3)
    for u in range(USER + 1, USER + 3):
        await repo.lobbies.join(lobby.id, u, f"p{u}")

    def refuse(_: LobbyInfo) -> GameDraft:
        raise ValueError("cannot deal")

    with pytest.raises(ValueError):
        await repo.lobbies.start(lobby.id, refuse)
    stored = await repo.lobbies.newest(LOBBY_CHANNEL)
    assert stored is not None and stored.status is LobbyStatus.OPEN and stored.game_id is None
    async with db.sessions() as s:
        assert await s.scalar(select(func.count()).select_from(Game)) == 0
    assert (await repo.lobbies.start(lobby.id, deal)).game_id > 0


async def test_a_held_channel_is_refused_naming_its_holder(repo: Repository) -> None:
    lobby = await open_lobby(repo)
    with pytest.raises(ChannelHeld) as held:
        await open_lobby(repo, channel=OTHER_CHANNEL, vote=VOTE_CHANNEL)
    assert held.value.channel_id == VOTE_CHANNEL
    assert (held.value.game_id, held.value.lobby_channel_id) == (None, LOBBY_CHANNEL)
    for u in range(USER, USER + 2):
        await repo.lobbies.join(lobby.id, u, f"p{u}")
    game_id = (await repo.lobbies.start(lobby.id, deal)).game_id
    with pytest.raises(ChannelHeld) as held:
        await open_lobby(repo, channel=OTHER_CHANNEL, vote=LOBBY_CHANNEL)
    assert (held.value.channel_id, held.value.game_id) == (LOBBY_CHANNEL, game_id)
    # nothing of the refused sign-up stays
    assert await repo.lobbies.newest(OTHER_CHANNEL) is None
    # the game's end releases its channels
    await repo.record(game_id, events=[{"type": "Ended"}], finish=True)
    assert await repo.lobbies.held_channels() == {}
    assert (await open_lobby(repo, channel=OTHER_CHANNEL, vote=LOBBY_CHANNEL)).id > lobby.id


async def test_two_sign_ups_at_once_naming_one_vote_channel(repo: Repository) -> None:
    results = await asyncio.gather(
        open_lobby(repo, channel=LOBBY_CHANNEL, vote=VOTE_CHANNEL),
        open_lobby(repo, channel=OTHER_CHANNEL, vote=VOTE_CHANNEL),
        return_exceptions=True,
    )
    opened = [r for r in results if isinstance(r, LobbyInfo)]
    held = [r for r in results if isinstance(r, ChannelHeld)]
    assert len(opened) == 1 and len(held) == 1, results
    assert held[0].channel_id == VOTE_CHANNEL
    assert held[0].lobby_channel_id == opened[0].channel_id


async def test_a_new_sign_up_in_the_channel_replaces_the_open_one(
    repo: Repository, db: Database
) -> None:
    first = await open_lobby(repo, vote=VOTE_CHANNEL)
    second = await open_lobby(repo, vote=OTHER_CHANNEL)  # the old vote channel is let go
    assert second.id != first.id
    async with db.sessions() as s:
        row = await s.get(Lobby, first.id)
        assert row is not None and row.status == "cancelled"
        held = dict(
            (await s.execute(select(ChannelBinding.channel_id, ChannelBinding.lobby_id))).all()
        )
    assert held == {LOBBY_CHANNEL: second.id, OTHER_CHANNEL: second.id}
    with pytest.raises(LobbyRefused) as err:
        await repo.lobbies.join(first.id, USER, "甲")
    assert err.value.reason == "cancelled"


async def test_eight_confirms_at_once_are_eight(repo: Repository) -> None:
    lobby = await open_lobby(repo)
    for u in range(USER, USER + 8):
        await repo.lobbies.join(lobby.id, u, f"p{u}")
    game_id = (await repo.lobbies.start(lobby.id, deal)).game_id
    results = await asyncio.gather(
        *(repo.lobbies.confirm(game_id, seat, USER + seat - 1) for seat in range(1, 9))
    )
    assert results == [True] * 8
    assert await repo.lobbies.confirmed_seats(game_id) == set(range(1, 9))
    assert await repo.lobbies.confirm(game_id, 1, USER)  # a repeat: still confirmed, no error
    assert not await repo.lobbies.confirm(game_id, 2, USER)  # not the holder of seat 2
    # a substitute takes seat 3: it is unconfirmed until they confirm; the old player cannot
    await repo.record(game_id, events=[{"type": "Replaced"}], substitutes=[SeatSpec(3, "丙", 77)])
    assert await repo.lobbies.confirmed_seats(game_id) == set(range(1, 9)) - {3}
    assert not await repo.lobbies.confirm(game_id, 3, USER + 2)
    assert await repo.lobbies.confirm(game_id, 3, 77)
    assert await repo.lobbies.confirmed_seats(game_id) == set(range(1, 9))


async def test_the_migration_moves_json_held_sign_ups_and_confirmations(database_url: str) -> None:
    """0002 turns an open sign-up in the server settings, an active game's channels and its
    ``confirmed`` list into rows; the sign-up key leaves the settings."""
    from datetime import UTC, datetime

    from sqlalchemy import insert

    from bot.store import migrate
    from bot.store.db import create_engine, open_database
    from bot.store.models import Game, Seat, Server

    await migrate.upgrade(database_url, "0001")
    now = datetime(2026, 1, 1, tzinfo=UTC)
    lobby = {
        "ruleset": "v2", "min": 8, "max": 12, "tie": "lots", "language": "zh-CN",
        "schedule": {}, "vote": OTHER_CHANNEL, "options": {},
        "players": [[USER + 1, "乙"], [USER, "甲"]],
    }  # fmt: skip
    engine = create_engine(database_url)
    try:
        async with engine.begin() as conn:
            settings = {f"lobby:{LOBBY_CHANNEL}": lobby, "season": "s1"}
            await conn.execute(
                insert(Server.__table__).values(
                    id=GUILD, settings=settings, created_at=now, updated_at=now
                )
            )
            channels = {"game": str(VOTE_CHANNEL), "vote": str(VOTE_CHANNEL), "confirmed": [2]}
            await conn.execute(
                insert(Game.__table__).values(
                    id=1, server_id=GUILD, ruleset="v2", options={}, channels=channels,
                    schedule={}, status="active", commitment="c", last_seq=0,
                    created_at=now, updated_at=now,
                )
            )  # fmt: skip
            await conn.execute(
                insert(Seat.__table__),
                [
                    {"game_id": 1, "seat": s, "term": 0, "user_id": USER + s, "name": f"p{s}",
                     "since_seq": 1, "since": now}
                    for s in (1, 2)
                ],
            )  # fmt: skip
    finally:
        await engine.dispose()
    await migrate.upgrade(database_url)
    db = open_database(database_url)
    try:
        repo = Repository(db.sessions)
        moved = await repo.lobbies.newest(LOBBY_CHANNEL)
        assert moved is not None and moved.status is LobbyStatus.OPEN
        assert [p.user_id for p in moved.players] == [USER + 1, USER]
        assert (moved.min_players, moved.max_players, moved.vote_channel_id) == (
            8, 12, OTHER_CHANNEL,
        )  # fmt: skip
        assert moved.settings["ruleset"] == "v2" and "players" not in moved.settings
        assert await repo.get_settings(GUILD) == {"season": "s1"}
        assert await repo.lobbies.held_channels() == {VOTE_CHANNEL: 1}
        with pytest.raises(ChannelHeld) as held:
            await open_lobby(repo, channel=OTHER_CHANNEL + 1, vote=OTHER_CHANNEL)
        assert held.value.lobby_channel_id == LOBBY_CHANNEL
        assert await repo.lobbies.confirmed_seats(1) == {2}
    finally:
        await db.dispose()


async def test_a_stopped_game_lets_its_channels_go_and_takes_them_back(repo: Repository) -> None:
    lobby = await open_lobby(repo)
    for u in range(USER, USER + 2):
        await repo.lobbies.join(lobby.id, u, f"p{u}")
    game_id = (await repo.lobbies.start(lobby.id, deal)).game_id
    await repo.stop_game(game_id, "corrupt log")
    assert await repo.lobbies.held_channels() == {}
    await repo.resume_game(game_id)
    assert await repo.lobbies.held_channels() == {LOBBY_CHANNEL: game_id, VOTE_CHANNEL: game_id}
    await repo.stop_game(game_id, "corrupt log")
    taken = await open_lobby(repo, channel=OTHER_CHANNEL, vote=VOTE_CHANNEL)
    with pytest.raises(ChannelHeld) as held:
        await repo.resume_game(game_id)
    assert (held.value.channel_id, held.value.lobby_channel_id) == (VOTE_CHANNEL, taken.channel_id)
    assert (await repo.get_game(game_id)).status.value == "stopped_error"  # nothing changed
