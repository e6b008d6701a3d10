"""Team threads Discord will not change, and a handover to a substitute who left: Discord
archives a thread after its auto-archive duration without a message and then adds or removes
no member (400, 50083; simcord models neither: emulated here), a server takes Manage Threads
from the bot mid-game (403 on a member's removal), a thread archived before its id was stored,
a substitute who left the server before the handover. None of them holds the game's later
effects back (a game's effects are delivered in order, each retried until done), and what the
moderators are told of a refusal reaches them privately, once, and nowhere public."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import pytest
from faultkit import drain
from gamebot import Driver, Table, by_role
from simcord.backend.errors import BackendError

from engine.model import PhaseKind

SEED = "server-seed"
THREAD_ARCHIVED = 50083
MISSING_PERMISSIONS = 50013
pytestmark = pytest.mark.table(seed=SEED)


def refuse_while_archived(t: Table) -> None:
    """Discord's rule for an archived thread: no member added or removed (400, 50083)."""
    backend = t.env.backend

    def refusing(change: Callable[[int, int], Any]) -> Callable[[int, int], Any]:
        def wrapped(thread_id: int, user_id: int) -> Any:
            if backend.get_thread(thread_id).thread_metadata.archived:
                raise BackendError(400, THREAD_ARCHIVED, "Thread is archived")
            return change(thread_id, user_id)

        return wrapped

    backend.add_thread_member = refusing(backend.add_thread_member)  # type: ignore[method-assign]
    backend.remove_thread_member = refusing(backend.remove_thread_member)  # type: ignore[method-assign]


def archive(t: Table, thread_id: int, *, announced: bool) -> None:
    """The thread goes quiet long enough for Discord to archive it. `announced`: the bot hears
    of it (THREAD_UPDATE: discord.py drops it from its cache of active threads, as a restart
    does); otherwise its cache is behind and still holds it as active."""
    t.env.backend.get_thread(thread_id).thread_metadata.archived = True
    if announced:
        t.env.backend.announce_channel_update(thread_id)


def members_of(t: Table, thread_id: int) -> set[int]:
    return set(t.env.backend.get_thread(thread_id).thread_members)


async def thread_id_of(t: Table, d: Driver, team: str) -> int:
    info = await t.bot.runtime.service.info(d.game_id, refresh=True)
    return int(info.channels[f"thread_{team}"])


def menus(t: Table, seat: int) -> int:
    """The DMs with a power menu the holder of `seat` got."""
    return sum(1 for m in t.dms(t.player(seat)) if m.components)


async def test_team_threads_are_made_to_archive_after_a_week(table: Table) -> None:
    """Discord archives a thread after its auto-archive duration without a message (its
    default: a day): each team thread is made with the longest, a week."""
    t = table
    d = Driver(t, "basic")
    await d.start()
    info = await t.bot.runtime.service.info(d.game_id, refresh=True)
    threads = [int(v) for k, v in info.channels.items() if k.startswith("thread_")]
    assert threads
    for thread_id in threads:
        assert t.env.backend.get_thread(thread_id).thread_metadata.auto_archive_duration == 10080


@pytest.mark.parametrize("announced", [True, False], ids=["cache-told", "cache-behind"])
async def test_a_substitute_joins_an_archived_killers_thread_and_the_replaced_one_leaves_it(
    table: Table, announced: bool
) -> None:
    """The killers' thread was archived (no message for long) when a killer is replaced: the
    bot unarchives it to add the substitute and take the replaced player out (whether its cache
    knew of the archiving or not); no effect stays undone, and night 2's power menus reach the
    police."""
    t = table
    refuse_while_archived(t)
    d = Driver(t, "basic")
    roles = await d.start()
    await d.quiet_night()
    thread_id = await thread_id_of(t, d, "killers")
    archive(t, thread_id, announced=announced)
    killer = by_role(roles, "killer")[0]
    police = by_role(roles, "police")
    before = {p: menus(t, p) for p in police}
    await t.moderator.slash(t.channel, "mod replace", seat=killer, member=t.outside)
    await d.lock()  # night 2: the menus by DM, behind the thread's changes
    await drain(t)
    members = members_of(t, thread_id)
    assert t.outside.id in members
    assert t.player(killer).id not in members
    assert not t.env.backend.get_thread(thread_id).thread_metadata.archived
    state = await t.bot.runtime.service.state(d.game_id)
    assert state.phase is not None and state.phase.label() == "night 2"
    assert all(menus(t, p) > before[p] for p in police)


async def test_a_dead_killer_leaves_an_archived_killers_thread(table: Table) -> None:
    """A killer voted out of a game whose killers' thread was archived leaves it all the same
    (unarchived on Discord's refusal: the bot's cache did not know)."""
    t = table
    refuse_while_archived(t)
    d = Driver(t, "basic")
    roles = await d.start()
    await d.quiet_night()
    thread_id = await thread_id_of(t, d, "killers")
    archive(t, thread_id, announced=False)
    killer = by_role(roles, "killer")[0]
    await d.vote_out(killer)
    await drain(t)
    assert t.player(killer).id not in members_of(t, thread_id)


async def test_a_refused_team_thread_change_holds_nothing_up_and_only_moderators_hear_once(
    table: Table, caplog: pytest.LogCaptureFixture
) -> None:
    """Discord refuses (403) to take a dead killer out of the killers' thread: the server took
    Manage Threads from the bot there (emulated: the bot's own overwrite on the game channel
    grants it whatever its role loses, so simcord would let it). That is skipped, not retried:
    night 2's power menus reach the police. The game's moderator is told by DM what the bot
    lacks; a later refusal of the same cause (a police substitute neither added to nor taken
    out of the police's thread) tells no one again. Nothing public, and no log line above
    DEBUG, says it: when it fails depends on who holds a team role."""
    t = table
    caplog.set_level(logging.DEBUG, logger="bot")
    d = Driver(t, "basic")
    roles = await d.start()
    await d.quiet_night()
    killer = by_role(roles, "killer")[0]
    police = by_role(roles, "police")
    killers_thread = await thread_id_of(t, d, "killers")
    refuse_members(t, "DELETE", killers_thread)
    earlier = {m.id for m in t.dms(t.moderator)}
    before = {p: menus(t, p) for p in police}
    await d.vote_out(killer)  # night 2
    await drain(t)
    state = await t.bot.runtime.service.state(d.game_id)
    assert state.window is not None and state.window.kind is PhaseKind.NIGHT
    assert all(menus(t, p) > before[p] for p in police)
    assert t.player(killer).id in members_of(t, killers_thread)  # refused: the moderator's
    told = [m.content for m in t.dms(t.moderator) if m.id not in earlier]
    assert len(told) == 1 and "Manage Threads" in told[0], told
    assert f"第{d.game_id}局" in told[0] and "讨论串" in told[0]  # which game, and what

    # the same cause again, adding and removing: not told twice
    police_thread = await thread_id_of(t, d, "police")
    refuse_members(t, "PUT", police_thread)
    refuse_members(t, "DELETE", police_thread)
    await t.moderator.slash(t.channel, "mod replace", seat=police[0], member=t.outside)
    await drain(t)
    assert t.outside.id not in members_of(t, police_thread)
    assert t.player(police[0]).id in members_of(t, police_thread)
    assert len(t.dms(t.moderator)) == len(earlier) + 1

    assert not any("Manage Threads" in p for p in t.public())
    loud = [r.getMessage() for r in caplog.records if r.levelno > logging.DEBUG]
    assert not any("thread" in line.lower() for line in loud), loud


def refuse_members(t: Table, method: str, thread_id: int) -> None:
    """From now on Discord refuses to add (PUT) or remove (DELETE) a member of the thread."""
    t.env.inject_error(
        method,
        f"/channels/{thread_id}/thread-members/*",
        status=403,
        code=MISSING_PERMISSIONS,
        message="Missing Permissions",
        times=None,
    )


async def test_a_substitute_who_left_the_server_before_the_handover_holds_nothing_up(
    table: Table,
) -> None:
    """A substitute leaves the server between `/mod replace` and the handover (its first try
    failed): the handover is done without the players' role for them (Discord: Unknown
    Member), not retried for good, and the game's later public effects follow."""
    t = table
    d = Driver(t, "basic")
    roles = await d.start()
    await d.quiet_night()
    info = await t.bot.runtime.service.info(d.game_id, refresh=True)
    role_id = int(info.channels["players_role"])
    t.env.inject_error(
        "PUT", f"/guilds/{t.guild.id}/members/{t.outside.id}/roles/{role_id}", times=1
    )
    civilian = by_role(roles, "civilian")[0]
    await t.moderator.slash(t.channel, "mod replace", seat=civilian, member=t.outside)
    t.guild.remove_member(t.outside)
    await t.env.settle()
    await drain(t)
    state = await t.bot.runtime.service.state(d.game_id)
    assert state.seat(civilian).player == str(t.outside.id)
    await d.lock()  # the day's lock and the night's posts come after the handover
    await drain(t)
    state = await t.bot.runtime.service.state(d.game_id)
    assert state.phase is not None and state.phase.label() == "night 2"
    assert any(p.startswith("【看表】") for p in t.public())


async def killers_thread_found_again(t: Table, d: Driver, roles: dict[int, str]) -> int:
    """The killers' thread archived and its stored id lost (a crash before it was stored, then a
    week's quiet); a killer is replaced: the substitute is added to that same thread, found among
    the archived ones. Its id."""
    thread_id = await thread_id_of(t, d, "killers")
    archive(t, thread_id, announced=True)
    assert await t.bot.runtime.service.take_channel(d.game_id, "thread_killers")
    killer = by_role(roles, "killer")[0]
    await t.moderator.slash(t.channel, "mod replace", seat=killer, member=t.outside)
    await drain(t)
    assert await thread_id_of(t, d, "killers") == thread_id
    assert t.outside.id in members_of(t, thread_id)
    return thread_id


async def test_a_team_thread_archived_before_its_id_was_stored_is_found_not_made_again(
    table: Table,
) -> None:
    """The killers' thread was made but its id not stored (a crash, the database away), and it
    has been archived since (out of the bot's cache of active threads, as after a restart): the
    next team change finds it among the archived private threads, and no second thread of the
    same name is made."""
    t = table
    d = Driver(t, "basic")
    roles = await d.start()
    await d.quiet_night()
    thread_id = await killers_thread_found_again(t, d, roles)
    name = t.env.backend.get_thread(thread_id).name
    same = [c for c in t.env.backend.channels.values() if c.is_thread and c.name == name]
    assert len(same) == 1
