"""A player of a game in play who leaves the server, or comes back to it.

One who leaves keeps their seat (the game goes on, as for a player away), and the game's
moderators are told, by DM and in the override log, naming the seat as everyone knows it: they
may want to replace the player (`/mod replace`). Who left is public on the server; their role
is not said.

A player who left the server mid-game and came back is let back in as they were.

Leaving a server takes a member's roles and their private threads. A player of a game in play who
joins again would be without the game's players' role — in a forum game unable to post in its
posts at all, in a text game not shut out with the others at a 看表帖 — and out of their team's
thread. Their seat is still theirs (the game went on meanwhile, as for a player away), so the
role is given back, their overwrites and the game's team threads set from its state, as a start
sets them after a restart (`permissions.reconcile`). Under the game's lock, as every change of a
game's permissions: a lock closing the channels meanwhile is not undone by a state read before.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import discord

from bot.discord import permissions
from bot.discord.moderator_notices import tell_moderators
from bot.discord.permission_refusals import tell_refused
from bot.discord.start_effects import seat_holders

if TYPE_CHECKING:
    from bot.discord.judge import Judge

log = logging.getLogger(__name__)


async def member_back(judge: Judge, member: discord.Member) -> None:
    """`member` joined `member.guild`: for each game in play there they hold a seat of, the
    players' role back, their overwrites and the team threads as the game's state says."""
    service = judge.runtime.service
    held = await service.repo.games_of_user(member.id)
    for game_id in sorted({game for game, _ in held}):
        if (await service.info(game_id)).server_id != member.guild.id:
            continue
        async with service.holding(game_id):
            await _role_back(judge, game_id, member)
            state = await service.state(game_id)
            await permissions.sync_players(judge, game_id, state, [str(member.id)])
        # after the game's lock: who is in a team thread depends on roles, and the game's next
        # input must not wait a time that does (the private lane's rule)
        if not state.over:
            await permissions.set_team_threads(judge, game_id)
        log.info("game %s: a player back on the server was let in again", game_id)


async def _role_back(judge: Judge, game_id: int, member: discord.Member) -> None:
    """The game's players' role, if it still exists, given back (refused: the moderators are
    told once, as at the start)."""
    role_id = (await judge.runtime.service.info(game_id)).channels.get("players_role")
    role = member.guild.get_role(int(str(role_id))) if role_id else None
    if role is None or any(r.id == role.id for r in member.roles):
        return
    try:
        await member.add_roles(role, reason="faguan: a player of a game in play, back")
    except discord.Forbidden:
        await tell_refused(judge, game_id)


async def roles_back(judge: Judge, game_id: int) -> None:
    """On resume: each present holder of a seat of a game in play who is on the server (in the
    member cache) and lacks the players' role gets it back — one who came back while the bot
    was away, whose join it never saw. Under the game's lock, as a replacement moves the role."""
    service = judge.runtime.service
    async with service.holding(game_id):
        info = await service.info(game_id)
        guild = judge.client.get_guild(info.server_id)
        if guild is None:
            return
        for user_id in sorted(await seat_holders(judge, game_id)):  # a 5.0 player's cards: once
            member = guild.get_member(user_id)
            if member is not None:
                await _role_back(judge, game_id, member)


async def member_left(judge: Judge, server_id: int, user_id: int) -> None:
    """`user_id` left (or was removed from) server `server_id`: the moderators of each game in
    play there they hold a seat of are told, once per leaving."""
    service = judge.runtime.service
    held = await service.repo.games_of_user(user_id)
    for game_id in sorted({game for game, _ in held}):
        if (await service.info(game_id)).server_id != server_id:
            continue
        seats = sorted(seat for game, seat in held if game == game_id)
        ctx = await judge.runtime.contexts.context(game_id)
        text = ctx.t("log.player_left", game=game_id, seats=ctx.seats(",".join(map(str, seats))))
        await tell_moderators(judge, game_id, text)
