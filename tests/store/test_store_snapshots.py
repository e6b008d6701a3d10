"""The bot's own snapshots, on both backends: a game played through `GameService` is rebuilt from
its newest snapshot and the events after it into exactly the state a replay of every event gives,
at every point of the game; an unusable snapshot falls back to the events, logged without its
content."""

from __future__ import annotations

import datetime as dt
import logging
import random
from collections.abc import Awaitable, Callable
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import func, select, text, update

from bot.config import WindowLength
from bot.runtime.schedule import GameSchedule, to_ms
from bot.runtime.service import GameService, PlayerSpec, fold
from bot.runtime.snapshots import EVERY, SNAPSHOTS
from bot.runtime.timing import FakeClock
from bot.store.db import Database
from bot.store.models import Snapshot
from bot.store.repository import Loaded, OutboxItem, Repository
from engine import codec
from engine.commands import PostVote, SubmitPower
from engine.model import Instant, PhaseKind, Power
from engine.state import GameState

pytestmark = pytest.mark.asyncio

PLAYERS = 8
SEED = "snapshot-test-seed-7c1f"
DAY_ONLY = {Power.CONFESS, Power.VETO}


async def nothing(item: OutboxItem) -> None:
    """Effects go nowhere (Discord is not part of this)."""


def new_service(repo: Repository) -> GameService:
    service = GameService(repo, FakeClock())
    service.set_performer(nothing)
    return service


async def new_game(service: GameService) -> int:
    schedule = GameSchedule(
        power=WindowLength(dt.timedelta(hours=1)),
        vote=WindowLength(dt.timedelta(hours=1)),
        timezone=ZoneInfo("UTC"),
    )
    return await service.create_game(
        server_id=1,
        ruleset="v2",
        players=[PlayerSpec(user_id=1000 + i, name=f"p{i}") for i in range(1, PLAYERS + 1)],
        seed=SEED,
        options={"tie": "lots"},
        channels={},
        schedule=schedule,
    )


async def play(
    service: GameService, game_id: int, windows: int, after_each: Callable[[], Awaitable[None]]
) -> None:
    """Night powers and vote posts at random, each window but the last locked; `after_each`
    awaited after every input."""
    rng = random.Random(3)
    message_id = 10**15
    for window in range(windows):
        state = await service.state(game_id)
        if state.over or state.window is None:
            return
        at = Instant(to_ms(service.clock.now()))
        alive = state.alive()
        if state.window.kind is PhaseKind.NIGHT:
            commands = [
                SubmitPower(player=state.seat(seat).player, power=power,
                            target=rng.choice(alive), at=at)
                for seat in alive
                for power in Power
                if power not in DAY_ONLY
            ]  # fmt: skip
            for command in commands:
                if (await service.submit(game_id, command)).ok:
                    await after_each()
        else:
            for _ in range(24):
                message_id += 1
                post = PostVote(player=state.seat(rng.choice(alive)).player,
                                post_id=str(message_id), target=rng.choice(alive), at=at)  # fmt: skip
                await service.submit(game_id, post, message_id=message_id)
                await after_each()
        if window == windows - 1:
            return  # the last window stays open, as at a restart
        state = await service.state(game_id)
        lock = service.lock_command(state, await service.info(game_id), forced=True)
        assert (await service.submit(game_id, lock)).ok
        await after_each()


async def test_snapshot_and_later_events_give_the_state_of_a_full_replay(db: Database) -> None:
    repo = Repository(db.sessions)
    service = new_service(repo)
    game_id = await new_game(service)
    bases: list[int] = []

    async def restart_here() -> None:
        await repo.flush()  # what a closing bot writes (a crash is the crash tests' business)
        events = await repo.load_events(game_id)
        loaded = await repo.load_game(game_id, fold, snapshot=SNAPSHOTS)
        assert loaded == Loaded(fold(events), len(events))
        assert loaded.state == service.cached_state(game_id)
        posts = len(loaded.state.posts)
        assert len(events) - loaded.snapshot_seq <= max(EVERY, posts)  # the tail stays short
        bases.append(loaded.snapshot_seq)

    await play(service, game_id, windows=6, after_each=restart_here)
    assert not (await service.state(game_id)).over
    assert len(bases) > 2 * EVERY and len(set(bases)) > 3, bases  # snapshots at several points
    async with db.sessions() as s:
        assert await s.scalar(select(func.count()).select_from(Snapshot)) == 1  # newest only
    # A restarted bot: a fresh service rebuilds the game from its snapshot.
    restarted = new_service(repo)
    assert await restarted.recover() == {}
    assert restarted.cached_state(game_id) == service.cached_state(game_id)


async def _played(db: Database) -> tuple[Repository, GameService, int]:
    repo = Repository(db.sessions)
    service = new_service(repo)
    game_id = await new_game(service)

    async def nothing_more() -> None:
        return None

    await play(service, game_id, windows=3, after_each=nothing_more)
    await repo.flush()
    return repo, service, game_id


async def test_an_unusable_snapshot_falls_back_to_the_events(
    db: Database, caplog: pytest.LogCaptureFixture
) -> None:
    repo, service, game_id = await _played(db)
    state = service.cached_state(game_id)
    assert isinstance(state, GameState)
    roles = {str(seat.role) for seat in state.seats}
    secrets = [SEED, *roles]
    events = await repo.load_events(game_id)
    expected = Loaded(fold(events), len(events))
    broken_blobs = [
        # the wrong shape (a GameState missing its fields), holding hidden facts
        {"type": "GameState", "seed": SEED, "roles": sorted(roles)},
        # another engine value altogether
        codec.dump(state.seats[0]),
        # not an engine value
        {"seed": SEED},
    ]
    for blob in broken_blobs:
        async with db.sessions() as s, s.begin():
            await s.execute(update(Snapshot).where(Snapshot.game_id == game_id).values(state=blob))
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="bot.store.repository"):
            loaded = await repo.load_game(game_id, fold, snapshot=SNAPSHOTS)
            restarted = new_service(repo)
            assert await restarted.recover() == {}  # not stopped: the events are the truth
        assert loaded == expected and loaded.snapshot_seq == 0
        assert restarted.cached_state(game_id) == state
        warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
        assert warnings and all("unusable" in w and f"game {game_id}" in w for w in warnings)
        for secret in secrets:
            assert secret not in caplog.text, (secret, caplog.text)
    if db.engine.dialect.name == "sqlite":
        # SQLite keeps JSON as text: a snapshot that is not even JSON
        async with db.engine.begin() as conn:
            await conn.execute(
                text("UPDATE snapshots SET state = :junk WHERE game_id = :g"),
                {"junk": '{"type": "GameState", "seed": "' + SEED, "g": game_id},
            )
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="bot.store.repository"):
            loaded = await repo.load_game(game_id, fold, snapshot=SNAPSHOTS)
        assert loaded == expected
        assert "unreadable snapshot" in caplog.text and SEED not in caplog.text
