"""Discord sends every DM to shard 0: the process running it (A) records clicks for games whose
server another process (B) owns. A performs nothing of such a game (B may be performing its
earlier effects, or have performed them without its done marks written) and keeps nothing of it;
B, told by a PostgreSQL notice (or, when the notice is lost, by its sweep), performs the input's
effects, each outbox row once."""

from __future__ import annotations

import asyncio
import datetime as dt
import uuid
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from zoneinfo import ZoneInfo

import pytest
from pgserver import PgServer
from sqlalchemy import select

from bot.runtime.schedule import GameSchedule, WindowLength
from bot.runtime.service import GameService, PlayerSpec, is_private
from bot.runtime.timing import FakeClock
from bot.runtime.wakes import Wakes
from bot.store import Database, OutboxItem, Repository, Shards, open_database, upgrade
from bot.store.models import Outbox
from engine.commands import SubmitPower
from engine.model import Power

SERVER_OF_B = 1 << 22  # shard 1 of 2
A_SHARDS = Shards(2, (0,))
B_SHARDS = Shards(2, (1,))


@dataclass
class Ledger:
    """Who performed which outbox row; B's private deliveries may be held (a role DM in flight)."""

    performed: Counter[int] = field(default_factory=Counter)
    by: dict[int, list[str]] = field(default_factory=dict)
    hold: asyncio.Event = field(default_factory=asyncio.Event)
    inside: asyncio.Event = field(default_factory=asyncio.Event)

    def performer(self, name: str, holding: bool):  # type: ignore[no-untyped-def]
        async def perform(item: OutboxItem) -> None:
            if holding and is_private(item) and not self.hold.is_set():
                self.inside.set()
                await self.hold.wait()
            await asyncio.sleep(0.005)
            self.performed[item.id] += 1
            self.by.setdefault(item.id, []).append(name)

        return perform


@pytest.fixture
async def pg_url(pg_server: PgServer) -> AsyncIterator[str]:
    name = f"faguan_foreign_{uuid.uuid4().hex[:10]}"
    await pg_server.create_database(name)
    url = pg_server.url(name)
    await upgrade(url)
    try:
        yield url
    finally:
        await pg_server.drop_database(name)


def service_on(db: Database, clock: FakeClock, shards: Shards) -> GameService:
    service = GameService(Repository(db.sessions, clock=clock.now), clock)
    service.shards = shards
    return service


async def start_game(b: GameService) -> asyncio.Task[int]:
    schedule = GameSchedule(
        power=WindowLength(dt.timedelta(hours=1)),
        vote=WindowLength(dt.timedelta(hours=1)),
        timezone=ZoneInfo("UTC"),
    )
    players = [PlayerSpec(user_id=1000 + i, name=f"p{i}") for i in range(1, 9)]
    return asyncio.create_task(
        b.create_game(
            server_id=SERVER_OF_B,
            ruleset="v2",
            players=players,
            seed="foreign",
            options={"tie": "lots"},
            channels={"game": "11", "vote": "12"},
            schedule=schedule,
        )
    )


async def kill_by_dm(a: GameService, game_id: int) -> None:
    """The killer's night-power menu, clicked in a DM: handled by A."""
    state = await a.state(game_id)
    killer = next(s for s in state.seats if s.role.value == "killer")
    target = next(s for s in state.seats if s.role.value == "civilian")
    command = SubmitPower(player=killer.player, power=Power.KILL, target=target.seat, passed=False)
    assert (await a.submit(game_id, command)).ok


async def outbox_ids(db: Database, game_id: int) -> set[int]:
    async with db.sessions() as s:
        return set(await s.scalars(select(Outbox.id).where(Outbox.game_id == game_id)))


async def until(check, seconds: float = 5.0) -> None:  # type: ignore[no-untyped-def]
    for _ in range(int(seconds / 0.05)):
        if await check():
            return
        await asyncio.sleep(0.05)


async def test_a_dm_input_to_another_process_game_is_performed_once_by_its_owner(
    pg_url: str,
) -> None:
    clock = FakeClock()
    dba, dbb = open_database(pg_url), open_database(pg_url)
    ledger = Ledger()
    a, b = service_on(dba, clock, A_SHARDS), service_on(dbb, clock, B_SHARDS)
    a.set_performer(ledger.performer("A", False))
    b.set_performer(ledger.performer("B", True))
    wakes_a, wakes_b = Wakes(a, A_SHARDS, pg_url), Wakes(b, B_SHARDS, pg_url)
    wakes_a.start()
    wakes_b.start()
    try:
        await wakes_a.tick()  # listening (the scheduler's first tick, run here)
        await wakes_b.tick()
        assert wakes_b.notices.listening.is_set()
        starting = await start_game(b)
        await ledger.inside.wait()  # B: the deal's public posts out, a role DM in flight
        (game_id,) = await b.active_games()
        await kill_by_dm(a, game_id)
        kept = a.cached_state(game_id)
        ledger.hold.set()
        await starting
        everything = await outbox_ids(dbb, game_id)

        async def all_out() -> bool:
            return set(ledger.performed) >= everything

        await until(all_out)
        await a.flush()
        await b.flush()
        twice = {i: who for i, who in ledger.by.items() if len(who) > 1}
        assert twice == {}
        assert [i for i, who in ledger.by.items() if "A" in who] == []
        assert set(ledger.performed) == everything  # A's input's effects too, by B
        assert await b.repo.undone_effects(game_id) == []
        assert kept is None  # B appends meanwhile: A keeps nothing of its game
    finally:
        await wakes_a.aclose()
        await wakes_b.aclose()
        await dba.dispose()
        await dbb.dispose()


async def test_a_lost_notice_is_caught_by_the_owners_sweep(pg_url: str) -> None:
    clock = FakeClock()
    dba, dbb = open_database(pg_url), open_database(pg_url)
    ledger = Ledger()
    ledger.hold.set()
    a, b = service_on(dba, clock, A_SHARDS), service_on(dbb, clock, B_SHARDS)
    a.set_performer(ledger.performer("A", False))  # and no notices: A's is lost
    b.set_performer(ledger.performer("B", True))
    wakes_b = Wakes(b, B_SHARDS, pg_url)
    try:
        game_id = await (await start_game(b))
        await b.flush()
        dealt = set(ledger.performed)
        await kill_by_dm(a, game_id)
        await asyncio.sleep(0.2)
        assert set(ledger.performed) == dealt  # nobody performed it yet
        recorded = await outbox_ids(dbb, game_id) - dealt
        assert recorded

        await wakes_b.sweep(everything=True)

        async def all_out() -> bool:
            return set(ledger.performed) >= dealt | recorded

        await until(all_out)
        assert {i: who for i, who in ledger.by.items() if who != ["B"]} == {}
        assert set(ledger.performed) == dealt | recorded
    finally:
        await wakes_b.aclose()
        await dba.dispose()
        await dbb.dispose()


async def test_another_process_game_row_is_read_as_it_is_now(pg_url: str) -> None:
    """A reads B's game's row (a DM command finding its game); B then changes it (a thread
    made, the game ended): A's next read sees the change. A keeps nothing of B's game, its row
    no more than its state."""
    clock = FakeClock()
    dba, dbb = open_database(pg_url), open_database(pg_url)
    ledger = Ledger()
    ledger.hold.set()
    a, b = service_on(dba, clock, A_SHARDS), service_on(dbb, clock, B_SHARDS)
    a.set_performer(ledger.performer("A", False))
    b.set_performer(ledger.performer("B", True))
    try:
        game_id = await (await start_game(b))
        assert (await a.info(game_id)).channels.get("killer_thread") is None
        await b.set_channels(game_id, {"killer_thread": "77"})
        assert (await a.info(game_id)).channels.get("killer_thread") == "77"
        assert await a.is_active(game_id)
        await b.repo.finish_game(game_id)
        assert not await a.is_active(game_id)
    finally:
        await dba.dispose()
        await dbb.dispose()
