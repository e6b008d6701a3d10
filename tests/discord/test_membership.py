"""A player of a game in play who leaves the server, or comes back to it.

One who leaves keeps their seat; the moderators are told (DM, override log). One who joins again
is let back in as they were: the game's players' role given back, their team thread rejoined.
Before, nobody was told, a forum game's player who came back could not post a vote at all
(Discord: 403), a killer was out of the killers' thread, and a text game's player was no longer
shut out of the discussion with the others (the players' role is how)."""

from __future__ import annotations

import pytest
from gamebot import Driver, Table, by_role, restarted
from simcord import MemberActor
from test_team_thread_faults import members_of, thread_id_of

from bot.discord.client import FaguanBot

pytestmark = pytest.mark.table(seed="back-seed")


async def left_and_back(t: Table, seat: int) -> MemberActor:
    """The holder of `seat` leaves the server and joins it again."""
    member = t.players[seat - 1]
    t.guild.remove_member(member)
    await t.env.settle()
    back = t.guild.add_member(member.user)
    await t.env.settle()
    t.players[seat - 1] = back
    return back


@pytest.mark.table(hosting="forum")
async def test_a_forum_player_back_on_the_server_votes_again(table: Table) -> None:
    t = table
    d = Driver(t, "basic")
    roles = await d.start()
    seat = by_role(roles, "civilian")[0]
    await left_and_back(t, seat)
    await d.quiet_night()
    posted = await d.post_vote(seat, "投1号", 1)
    last = list((await t.bot.runtime.service.state(d.game_id)).posts)[-1]
    assert (last.post_id, last.seat, last.target) == (str(posted.id), seat, 1)


async def test_a_killer_back_on_the_server_is_in_the_killers_thread_again(table: Table) -> None:
    t = table
    d = Driver(t, "basic")
    roles = await d.start()
    killer = by_role(roles, "killer")[0]
    thread = await thread_id_of(t, d, "killers")
    assert t.players[killer - 1].id in members_of(t, thread)
    await left_and_back(t, killer)
    assert t.players[killer - 1].id in members_of(t, thread)


async def test_a_text_game_player_back_on_the_server_holds_the_players_role_again(
    table: Table,
) -> None:
    """The role the game shuts its players out of the discussion by (after each 看表帖, until
    the next window) is theirs again; a passer-by who joins gets nothing."""
    t = table
    d = Driver(t, "basic")
    roles = await d.start()
    seat = by_role(roles, "civilian")[0]
    back = await left_and_back(t, seat)
    info = await t.bot.runtime.service.info(d.game_id, refresh=True)
    role = int(info.channels["players_role"])
    assert role in t.env.backend.get_member(t.guild.id, back.id).role_ids
    stranger = t.guild.add_member(t.env.create_user("路人"))
    await t.env.settle()
    assert role not in t.env.backend.get_member(t.guild.id, stranger.id).role_ids


async def test_a_player_back_while_the_bot_was_away_gets_the_role_at_its_start(
    table: Table, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bot never saw them join again (down, or a gateway gap): its next start gives the
    role back, as it sets the rest of the game's permissions."""
    t = table
    d = Driver(t, "basic")
    roles = await d.start()
    seat = by_role(roles, "civilian")[0]

    async def unseen(self: FaguanBot, member: object) -> None:
        return None

    monkeypatch.setattr(FaguanBot, "on_member_join", unseen)
    back = await left_and_back(t, seat)
    info = await t.bot.runtime.service.info(d.game_id, refresh=True)
    role = int(info.channels["players_role"])
    assert role not in t.env.backend.get_member(t.guild.id, back.id).role_ids
    await restarted(t)
    guild = t.bot.get_guild(t.guild.id)
    assert guild is not None
    await guild.chunk()  # as discord.py does at a start with the members intent (simcord: not)
    await t.bot.runtime.port.reconcile_permissions(d.game_id)  # what the start does per game
    await t.env.settle()
    assert role in t.env.backend.get_member(t.guild.id, back.id).role_ids


async def test_a_player_who_leaves_the_server_is_named_to_the_moderators(table: Table) -> None:
    """A player leaves mid-game: the moderators are told by DM (and in the override log) which
    seat's player left and that /mod replace can hand it on; the game channel says nothing,
    and a passer-by leaving tells no one."""
    t = table
    log = t.guild.create_text_channel("裁判记录")
    await t.moderator.slash(t.channel, "mod log-channel", channel=log)
    d = Driver(t, "basic")
    roles = await d.start()
    seat = by_role(roles, "civilian")[0]
    public = t.public()
    stranger = t.guild.add_member(t.env.create_user("路人"))
    await t.env.settle()
    t.guild.remove_member(stranger)
    t.guild.remove_member(t.players[seat - 1])
    await t.env.settle()
    text = (
        f"⚠ 第{d.game_id}局：{seat}号 {t.names[seat - 1]} 已离开服务器。其座位保留，游戏照常进行；"
        "如需换人，可用 /管理 替补（/mod replace）。"
    )
    assert [m.content for m in t.dms(t.moderator)][-1] == text
    assert [m.content for m in log.history()][-1] == text
    assert sum(m.content.startswith("⚠") for m in t.dms(t.moderator)) == 1
    assert t.public() == public
