"""A game's Discord objects (its team threads, the players' role, DM marks…) are merged into its
row under the row's lock, on SQLite and PostgreSQL: a merge never starts from a read of the row
taken before another write of it commits, so two writes of different keys keep both (a team
thread's id lost would have the next team notice make a second thread), and a mark is taken by
one caller only (a player told twice that the bot could not DM them)."""

from __future__ import annotations

import asyncio

import pytest
from test_store_repository import new_game

from bot.store import Repository
from bot.store.db import Database
from bot.store.models import Game

pytestmark = pytest.mark.asyncio

STILL_WAITING = 0.3
"""Seconds after which a merge that did not wait for the row has long returned."""


async def test_a_merge_waits_for_a_write_of_the_row_under_way_and_keeps_its_keys(
    repo: Repository, db: Database
) -> None:
    game_id = (await new_game(repo)).game_id
    async with db.sessions() as s, s.begin():
        row = await s.get(Game, game_id, with_for_update=True)
        assert row is not None
        row.channels = {**row.channels, "thread_killers": "1"}
        await s.flush()  # written, not committed: the row is this transaction's
        merging = asyncio.create_task(repo.update_channels(game_id, {"players_role": "2"}))
        await asyncio.wait({merging}, timeout=STILL_WAITING)
        assert not merging.done(), "the merge did not wait for the row"
    merged = await merging
    assert merged["thread_killers"] == "1" and merged["players_role"] == "2"
    assert (await repo.get_game(game_id)).channels == merged


async def test_merges_at_once_keep_every_key(repo: Repository) -> None:
    game_id = (await new_game(repo)).game_id
    keys = {f"dm_blocked:{n}": True for n in range(12)}
    await asyncio.gather(*(repo.update_channels(game_id, {k: v}) for k, v in keys.items()))
    channels = (await repo.get_game(game_id)).channels
    assert {k: channels.get(k) for k in keys} == keys


async def test_of_takes_at_once_exactly_one_removes_the_mark_and_other_keys_stay(
    repo: Repository,
) -> None:
    game_id = (await new_game(repo)).game_id
    await repo.update_channels(game_id, {"dm_unseen:7": True, "dm_blocked:7": True})
    taken = await asyncio.gather(*(repo.take_channel(game_id, "dm_unseen:7") for _ in range(6)))
    assert taken.count(True) == 1
    channels = (await repo.get_game(game_id)).channels
    assert "dm_unseen:7" not in channels and channels["dm_blocked:7"] is True
    assert not await repo.take_channel(game_id, "dm_unseen:7")  # gone: nothing to take


async def test_a_take_waits_for_a_write_of_the_row_under_way_and_sees_it(
    repo: Repository, db: Database
) -> None:
    game_id = (await new_game(repo)).game_id
    await repo.update_channels(game_id, {"dm_unseen:7": True})
    async with db.sessions() as s, s.begin():
        row = await s.get(Game, game_id, with_for_update=True)
        assert row is not None
        row.channels = {k: v for k, v in row.channels.items() if k != "dm_unseen:7"}
        await s.flush()  # taken, not committed: the row is this transaction's
        taking = asyncio.create_task(repo.take_channel(game_id, "dm_unseen:7"))
        await asyncio.wait({taking}, timeout=STILL_WAITING)
        assert not taking.done(), "the take did not wait for the row"
    assert await taking is False


async def test_of_claims_at_once_exactly_one_sets_the_mark_and_other_keys_stay(
    repo: Repository,
) -> None:
    game_id = (await new_game(repo)).game_id
    await repo.update_channels(game_id, {"players_role": "5"})
    claims = (repo.claim_channel(game_id, "players_role_gone", "5") for _ in range(6))
    claimed = await asyncio.gather(*claims)
    assert claimed.count(True) == 1
    channels = (await repo.get_game(game_id)).channels
    assert channels["players_role_gone"] == "5" and channels["players_role"] == "5"
    assert not await repo.claim_channel(game_id, "players_role_gone", "5")  # held: not again
    assert await repo.claim_channel(game_id, "players_role_gone", "6")  # another role's: set
    assert await repo.claim_channel(game_id, "threads_refused:Manage Threads")  # True, absent
    assert (await repo.get_game(game_id)).channels["threads_refused:Manage Threads"] is True
