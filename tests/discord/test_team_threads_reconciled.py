"""A restart sets each team thread's members from the state (`permissions.reconcile` →
`set_team_threads`), as the moderators' notice of a refused change promises: a join Discord
refused is done, a player who left a team alive (basic's grief; 5.0's killer card out while
another card plays on) is taken out, the bot and non-players are left alone, and nothing is
asked where the members are right. The notices told once per game are told once when two
callers meet; and a team's first thread is looked for among a bounded number of archived
threads, not the channel's whole history. A lock performed while the restart's change is
awaited (a killer voted out, a replaced killer put back) is not undone by it: each change is
decided on the state as it is then, and checked again once done."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

import discord
import pytest
from envclock import EnvClock
from faultkit import drain
from gamebot import Driver, Table, by_role, running_table
from simcord.backend import serializers
from simcord.enums import ChannelType
from simcord.http import router
from test_team_thread_faults import (
    archive,
    killers_thread_found_again,
    members_of,
    refuse_members,
    refuse_while_archived,
    thread_id_of,
)

from bot.discord.judge import judge_of
from bot.discord.team_threads import tell_threads_refused
from engine.model import Seat

SEED = "server-seed"
MISSING_PERMISSIONS = 50013
pytestmark = pytest.mark.table(seed=SEED)


async def reconcile(t: Table, game_id: int) -> None:
    """What a restart does for the game's permissions (`Runtime._catch_up`)."""
    await t.bot.runtime.port.reconcile_permissions(game_id)
    await t.env.settle()


def players(t: Table, seats: list[int]) -> set[int]:
    return {t.player(s).id for s in seats}


def thread_requests(t: Table, since: int) -> list[tuple[str, str]]:
    """The requests about a thread's members made since the `since`-th."""
    return [
        (r.method, r.path)
        for r in t.env.backend.http_requests[since:]
        if "/thread-members" in r.path
    ]


def threads_refused_dms(t: Table) -> list[str]:
    return [m.content for m in t.dms(t.moderator) if "讨论串" in m.content]


def refuse_every_join(t: Table) -> None:
    """From now on (the deal on) Discord refuses (403) to add anyone to any thread."""
    t.env.inject_error(
        "PUT",
        "/channels/*/thread-members/*",
        status=403,
        code=MISSING_PERMISSIONS,
        message="Missing Permissions",
        times=None,
    )


async def test_a_restart_adds_the_team_members_discord_refused_and_touches_no_one_else(
    table: Table, caplog: pytest.LogCaptureFixture
) -> None:
    """Discord refused every join at the deal (403; the moderator told once). A restart adds
    each team's players to its thread (the killers' archived since, and out of the bot's cache:
    unarchived for it), takes out a civilian who was in one, and leaves the bot, a moderator and
    a passer-by who read along as they are. Done again, it only reads each thread's members.
    No log line above DEBUG speaks of it."""
    t = table
    caplog.set_level(logging.DEBUG, logger="bot")
    refuse_every_join(t)
    d = Driver(t, "basic")
    roles = await d.start()
    await drain(t)
    killers, police = by_role(roles, "killer"), by_role(roles, "police")
    civilian = by_role(roles, "civilian")[0]
    killers_thread = await thread_id_of(t, d, "killers")
    police_thread = await thread_id_of(t, d, "police")
    me = t.env.backend.bot_user.id
    assert members_of(t, killers_thread) == members_of(t, police_thread) == {me}
    assert len(threads_refused_dms(t)) == 1

    t.env.backend.faults.clear()
    refuse_while_archived(t)
    for user in (t.moderator.id, t.outside.id, t.player(civilian).id):
        t.env.backend.add_thread_member(killers_thread, user)
    archive(t, killers_thread, announced=True)
    await t.env.settle()
    await reconcile(t, d.game_id)
    readers = {me, t.moderator.id, t.outside.id}
    assert members_of(t, killers_thread) == readers | players(t, killers)
    assert members_of(t, police_thread) == {me} | players(t, police)
    assert len(threads_refused_dms(t)) == 1  # nothing refused this time: nothing told

    since = len(t.env.backend.http_requests)
    await reconcile(t, d.game_id)
    assert sorted(thread_requests(t, since)) == [
        ("GET", f"/channels/{killers_thread}/thread-members"),
        ("GET", f"/channels/{police_thread}/thread-members"),
    ]
    loud = [r.getMessage() for r in caplog.records if r.levelno > logging.DEBUG]
    assert not any("thread" in line.lower() for line in loud), loud


async def test_a_restart_takes_out_the_police_the_sheriffs_death_made_civilians(
    tmp_path: Path,
) -> None:
    """Basic with a sheriff: voted out, his death makes the other police civilians; Discord
    refuses to take them (and him) out of the police's thread (403). They play on, in no team:
    a restart takes them out all the same."""
    async with running_table(tmp_path / "g.db", 12, EnvClock(), SEED) as t:
        d = Driver(t, "basic", options="police_special=sheriff")
        roles = await d.start()
        sheriff = by_role(roles, "sheriff")[0]
        police = by_role(roles, "police")
        assert police
        police_thread = await thread_id_of(t, d, "police")
        assert players(t, [sheriff, *police]) <= members_of(t, police_thread)
        await d.quiet_night()  # day 1
        refuse_members(t, "DELETE", police_thread)
        state = await t.bot.runtime.service.state(d.game_id)
        for voter in (int(s.seat) for s in state.seats if int(s.seat) != sheriff):
            await d.post_vote(voter, f"投 {sheriff}", sheriff)
        await d.lock()  # night 2
        await drain(t)
        state = await t.bot.runtime.service.state(d.game_id)
        assert not state.seat(Seat(sheriff)).alive and state.result is None
        cards = [state.seat(Seat(p)) for p in police]
        assert all(card.alive and card.role.value == "civilian" for card in cards)
        assert players(t, police) <= members_of(t, police_thread)  # refused: still there

        t.env.backend.faults.clear()
        await reconcile(t, d.game_id)
        assert members_of(t, police_thread) == {t.env.backend.bot_user.id}


async def test_a_restart_takes_out_a_5_0_player_whose_killer_card_is_out(tmp_path: Path) -> None:
    """5.0: a player's killer card is voted out while their other card plays on; Discord
    refuses to take them out of the killers' thread (403). A restart does."""
    async with running_table(tmp_path / "g.db", 8, EnvClock(), "v5-threads") as t:
        d = Driver(t, "v5")
        roles = await d.start()
        holder = next(i for i in range(8) if "killer" in (roles[2 * i + 1], roles[2 * i + 2]))
        killer = 2 * holder + (1 if roles[2 * holder + 1] == "killer" else 2)
        other = 2 * holder + 2 if killer % 2 else 2 * holder + 1
        killers_thread = await thread_id_of(t, d, "killers")
        await d.lock()  # a quiet night: day 1
        refuse_members(t, "DELETE", killers_thread)
        for i in (i for i in range(8) if i != holder):
            await d.post_vote(2 * i + 1, f"投 {killer}", killer)
        await d.lock()  # night 2
        await drain(t)
        state = await t.bot.runtime.service.state(d.game_id)
        assert not state.seat(Seat(killer)).alive and state.seat(Seat(other)).alive
        assert state.result is None
        assert t.players[holder].id in members_of(t, killers_thread)  # refused: still there

        t.env.backend.faults.clear()
        await reconcile(t, d.game_id)
        assert t.players[holder].id not in members_of(t, killers_thread)
        killers = {int(s.player) for s in state.seats if s.alive and s.role.value == "killer"}
        assert killers <= members_of(t, killers_thread)


async def test_two_refusals_at_once_tell_the_moderators_once(table: Table) -> None:
    """A restart's reconcile and the private lane meet on a refused change of the same cause:
    the game's moderators get one notice."""
    t = table
    d = Driver(t, "basic")
    await d.start()
    thread_id = await thread_id_of(t, d, "killers")
    thread = t.bot.get_channel(thread_id) or await t.bot.fetch_channel(thread_id)
    assert isinstance(thread, discord.Thread)
    judge = judge_of(t.bot)
    await asyncio.gather(
        tell_threads_refused(judge, d.game_id, thread),
        tell_threads_refused(judge, d.game_id, thread),
    )
    await t.env.settle()
    assert len(threads_refused_dms(t)) == 1
    await tell_threads_refused(judge, d.game_id, thread)  # and never again
    await t.env.settle()
    assert len(threads_refused_dms(t)) == 1


JOINED_ARCHIVED = ["channels", "{channel_id}", "users", "@me", "threads", "archived", "private"]


def page_joined_archived_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    """Discord's listing of the archived private threads the bot joined: newest first (by id),
    `limit` of them (at most 100) a request after `before`, `has_more` while more are left
    (simcord answers every one at once, in the order they were made)."""

    def paged(ctx: router.RequestContext) -> Any:
        backend = ctx.backend
        found = backend.archived_threads(ctx.int_arg("channel_id"), private=True)
        found = [th for th in found if backend.bot_user.id in th.thread_members]
        found.sort(key=lambda th: th.id, reverse=True)
        if ctx.params.get("before"):
            found = [th for th in found if th.id < int(ctx.params["before"])]
        limit = min(100, int(ctx.params.get("limit", 50)))
        return serializers.thread_list_payload(backend, found[:limit], has_more=len(found) > limit)

    handlers = [
        (template, paged if template == JOINED_ARCHIVED else handler)
        for template, handler in router._ROUTES["GET"]
    ]
    monkeypatch.setitem(router._ROUTES, "GET", handlers)


async def test_a_teams_first_thread_is_looked_for_among_the_newest_archived_threads_only(
    table: Table, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The game channel holds the archived team threads of 250 earlier games (the bot joined
    them). Each team's first thread is looked for among the newest 100 (one request), not the
    whole history; one made before its id was stored, archived since, is still found."""
    t = table
    page_joined_archived_threads(monkeypatch)
    backend = t.env.backend
    for n in range(250):
        old = backend.create_thread(
            t.channel.id,
            f"第{1000 + n}局·杀手",
            backend.bot_user.id,
            type=ChannelType.PRIVATE_THREAD,
            broadcast=False,
        )
        assert old.thread_metadata is not None
        old.thread_metadata.archived = True
    since = len(backend.http_requests)
    d = Driver(t, "basic")
    roles = await d.start()
    listing = f"/channels/{t.channel.id}/users/@me/threads/archived/private"
    asked = [r for r in backend.http_requests[since:] if r.path == listing]
    assert len(asked) == 2  # the killers' and the police's first threads
    assert all(r.params.get("limit") == 100 and not r.params.get("before") for r in asked)

    await killers_thread_found_again(t, d, roles)  # within the newest 100


def hold_first_change(
    monkeypatch: pytest.MonkeyPatch, thread_id: int, user_id: int | None = None
) -> tuple[asyncio.Event, asyncio.Event]:
    """From now on, the first request adding a member to the thread or taking one out (that
    member: `user_id`; None: any) waits (`reached` set) until `release` is set; every other one
    goes through at once."""
    reached, release = asyncio.Event(), asyncio.Event()
    for name in ("add_user", "remove_user"):
        change = getattr(discord.Thread, name)

        async def held(self: discord.Thread, user: Any, *, change: Any = change) -> None:
            chosen = user_id is None or user.id == user_id
            if self.id == thread_id and chosen and not reached.is_set():
                reached.set()
                await release.wait()
            await change(self, user)

        monkeypatch.setattr(discord.Thread, name, held)
    return reached, release


async def held_reconcile(t: Table, game_id: int, reached: asyncio.Event) -> asyncio.Task[None]:
    """A restart's reconcile, begun and left waiting on its held change."""
    task = asyncio.create_task(t.bot.runtime.port.reconcile_permissions(game_id))
    waiting = asyncio.create_task(reached.wait())
    await asyncio.wait({task, waiting}, return_when=asyncio.FIRST_COMPLETED)
    waiting.cancel()
    assert reached.is_set() and not task.done(), "reconcile made no change to the thread"
    return task


@pytest.mark.parametrize("held", ["the-other-killer", "their-own"])
async def test_a_killer_voted_out_during_a_restarts_change_is_not_left_in_the_thread(
    table: Table, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, held: str
) -> None:
    """Discord refused the killers' joins at the deal. A restart adds them to their thread; while
    it adds the first (or the second, the one voted out: their own join), day 1 locks on the
    second voted out, whose leaving the thread finds them not in it. The restart leaves the dead
    killer out of it all the same (it added them, from the state it read before its first
    change: in the killers' thread until the next restart). No log line above DEBUG speaks of
    it."""
    t = table
    caplog.set_level(logging.DEBUG, logger="bot")
    refuse_every_join(t)
    d = Driver(t, "basic")
    roles = await d.start()
    await drain(t)
    first, dead = by_role(roles, "killer")
    killers_thread = await thread_id_of(t, d, "killers")
    me = t.env.backend.bot_user.id
    assert members_of(t, killers_thread) == {me}
    t.env.backend.faults.clear()
    await d.quiet_night()  # day 1

    own = t.player(dead).id if held == "their-own" else None
    reached, release = hold_first_change(monkeypatch, killers_thread, own)
    restart = await held_reconcile(t, d.game_id, reached)
    await d.vote_out(dead)  # night 2, meanwhile
    await drain(t)
    state = await t.bot.runtime.service.state(d.game_id)
    assert not state.seat(Seat(dead)).alive and state.result is None
    added = {t.player(first).id} if own else set()  # the first killer's join went through
    assert members_of(t, killers_thread) == {me} | added  # the leaving had no one to take out
    release.set()
    await restart
    await t.env.settle()
    assert members_of(t, killers_thread) == {me, t.player(first).id}
    loud = [r.getMessage() for r in caplog.records if r.levelno > logging.DEBUG]
    assert not any("thread" in line.lower() for line in loud), loud


async def test_a_player_back_in_a_team_during_a_restarts_change_is_not_taken_out(
    table: Table, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A killer was replaced by a substitute, and Discord refused to take them out of the
    killers' thread; a civilian of a lower seat reads it too. A restart takes the civilian out;
    while it does, the moderator puts the replaced killer back in their seat: the substitute
    leaves the thread, the killer is in it already. The restart leaves both as they are now (it
    took the killer out and added the substitute, from the state it read before its first
    change)."""
    t = table
    d = Driver(t, "basic")
    roles = await d.start()
    await d.quiet_night()  # day 1
    killer = by_role(roles, "killer")[-1]
    other = by_role(roles, "killer")[0]
    civilian = by_role(roles, "civilian")[0]
    assert civilian < killer  # the civilian's change comes first
    back = t.player(killer)
    killers_thread = await thread_id_of(t, d, "killers")
    refuse_members(t, "DELETE", killers_thread)
    await t.moderator.slash(t.channel, "mod replace", seat=killer, member=t.outside)
    await drain(t)
    me = t.env.backend.bot_user.id
    readers = {me, t.player(other).id}
    assert members_of(t, killers_thread) == readers | {back.id, t.outside.id}  # refused
    t.env.backend.faults.clear()
    t.env.backend.add_thread_member(killers_thread, t.player(civilian).id)

    reached, release = hold_first_change(monkeypatch, killers_thread)
    restart = await held_reconcile(t, d.game_id, reached)
    await t.moderator.slash(t.channel, "mod replace", seat=killer, member=back)  # meanwhile
    await drain(t)
    state = await t.bot.runtime.service.state(d.game_id)
    assert state.seat(Seat(killer)).player == str(back.id)
    assert members_of(t, killers_thread) == readers | {back.id, t.player(civilian).id}
    release.set()
    await restart
    await t.env.settle()
    assert members_of(t, killers_thread) == readers | {back.id}
