"""Who may post in a game's channels, as the engine says of the game's state (`engine.speech`:
the channels open or shut, 森林老人's silence, the dead), and the Discord edits that make the
channels say so.

The engine's effects change these permissions one step at a time (SeatLeft, Silence, Unsilence,
ReleaseChannels); each performer here brings a player's overwrites in line with the state as it
is when it runs, so performing an effect again, late, or out of turn is harmless. `reconcile`
does the same for every player of a game at once: on resume, a lost or half-done edit can leave
no player out of the game posting and no living player silenced.

A channel may see several games one after the other: a member's overwrite in a channel follows
the game that holds the channel now (`FaguanBot.channel_games`), so a late effect of an ended game
never lifts what the next game set. Only the fields in `OUT` are touched on a member's overwrite:
anything else a server's admins set there stays.

At the end (`release`) the players' role is deleted, not kept for a next game: each game makes its
own (`bot.start_effects`), and a role left behind would be one more thing for a server to tidy.
The bot's own allow overwrite stays: it grants players nothing, and the next game sets the same.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

import discord

from bot.discord.permission_refusals import tell_refused
from bot.runtime.hosting import is_forum
from engine.model import Team
from engine.speech import channels_open, out_of_game, silenced
from engine.state import GameState

if TYPE_CHECKING:
    from bot.discord.judge import Judge

log = logging.getLogger(__name__)

OUT = (
    "send_messages",
    "send_messages_in_threads",
    "create_public_threads",
    "create_private_threads",
    "add_reactions",
)
"""What a player out of the game is denied in the game channels, their threads (the team threads
are private threads of the game channel: they inherit these overwrites) included: the dead are
silent."""

SILENCED = ("send_messages",)
"""森林老人's silence (docs/rules.md §1.6): no post in the discussion channel for the day; a vote
post in a separate vote channel, /vote and the team thread stay open."""

CHANNELS = ("game", "vote")

Hosting = discord.TextChannel | discord.ForumChannel
"""A channel whose overwrites the game sets: a text channel, or a forum (its posts, the main
post and the days' 投票帖s, are threads: they follow the forum's overwrites)."""


def denied(state: GameState, player: str, kinds: Iterable[str]) -> frozenset[str]:
    """What the game denies `player` in a channel that is its `kinds` ("game", "vote") now."""
    if state.over:
        return frozenset()
    if out_of_game(state, player):
        return frozenset(OUT)
    if "game" in kinds and any(s in silenced(state) for s in state.seats_of(player)):
        return frozenset(SILENCED)
    return frozenset()


def open_by_channel(channels: Mapping[str, object], game: bool, vote: bool) -> dict[int, bool]:
    """Each of the game's channels open or shut; a channel that is both the game and the vote
    channel follows the discussion (a vote posted there at night is answered as out of window),
    and so does a forum (its overwrite governs the main post and the day's 投票帖, which is
    locked outside its day)."""
    if is_forum(channels):
        return {int(str(channels["vote"])): game}
    opened = {int(str(channels["vote"])): vote}
    opened[int(str(channels["game"]))] = game
    return opened


def players_of(state: GameState) -> list[str]:
    """Every player who held a seat in the game (substitutes' predecessors too), once each."""
    found: dict[str, None] = {}
    for seat in state.seats:
        for player in (*seat.former_players, seat.player):
            if player.isdigit():
                found.setdefault(player)
    return list(found)


# -- Discord -------------------------------------------------------------------------------------


async def set_member(channel: Hosting, player: str, deny: Iterable[str]) -> bool:
    """Make the player's overwrite in `channel` deny exactly `deny` among `OUT` (other fields
    kept; an overwrite left empty is deleted). No request (not even for the member) when it
    already is so; none for a member who left the server (their overwrite can wait). False:
    Discord refused the edit (`bot.discord.permission_refusals`)."""
    user = discord.Object(int(player))
    current = channel.overwrites_for(user)
    wanted = channel.overwrites_for(user)
    wanted.update(**{name: (False if name in deny else None) for name in OUT})
    if wanted == current and (not wanted.is_empty() or not _has_overwrite(channel, user.id)):
        return True
    member = await _member(channel.guild, player)
    if member is None:
        return True
    try:
        await channel.set_permissions(member, overwrite=None if wanted.is_empty() else wanted)
    except discord.Forbidden:
        return False
    return True


def _has_overwrite(channel: Hosting, target_id: int) -> bool:
    """Whether the channel holds an overwrite for this member or role (even an empty one)."""
    return any(target.id == target_id for target in channel.overwrites)


async def _member(guild: discord.Guild, player: str) -> discord.Member | None:
    """The member, or None when they left the server (their overwrite can wait for them)."""
    member = guild.get_member(int(player))
    if member is not None:
        return member
    try:
        return await guild.fetch_member(int(player))
    except discord.NotFound:
        return None


def game_channels(guild: discord.Guild, channels: dict[str, object]) -> list[Hosting]:
    """The game's distinct channels whose overwrites it sets (the game and vote channel may be
    one; a forum game's main post is a thread of its forum: the forum alone)."""
    out: dict[int, Hosting] = {}
    for name in CHANNELS:
        channel = guild.get_channel(int(str(channels[name])))
        if isinstance(channel, discord.TextChannel | discord.ForumChannel):
            out[channel.id] = channel
    return list(out.values())


async def _holder(
    judge: Judge, channel_id: int, game_id: int, state: GameState
) -> tuple[GameState | None, frozenset[str]]:
    """The state of the game holding `channel_id` now (None: no game in play there) and what the
    channel is to it."""
    holder = judge.runtime.routes.channel_games.get(channel_id, game_id)
    if holder != game_id:
        if not await judge.runtime.service.is_active(holder):
            return None, frozenset()
        state = await judge.runtime.service.state(holder)
    info = await judge.runtime.service.info(holder)
    kinds = frozenset(n for n in CHANNELS if int(str(info.channels[n])) == channel_id)
    return state, kinds


async def sync_players(
    judge: Judge,
    game_id: int,
    state: GameState,
    players: Iterable[str],
    *,
    threads: bool = True,
) -> None:
    """Bring the players' overwrites in the game's channels in line with the state of the game
    holding each channel, and (`threads`) take a player out of the game out of its team
    threads. An effect leaves the threads alone: who is in one is private, and the engine
    orders that part after the public ones (`LeaveTeamThreads`)."""
    info = await judge.runtime.service.info(game_id)
    guild = judge.client.get_guild(info.server_id)
    if guild is None:
        return
    players = [p for p in players if p.isdigit()]  # Discord users (a replay's names are not)
    refused = False
    for channel in game_channels(guild, info.channels):
        holding, kinds = await _holder(judge, channel.id, game_id, state)
        for player in players:
            deny = denied(holding, player, kinds) if holding is not None else ()
            refused |= not await set_member(channel, player, deny)
    if refused:
        await tell_refused(judge, game_id)
    out = [p for p in players if not state.over and out_of_game(state, p)]
    if out and threads:
        await _leave_threads(judge, info.channels, out)


async def leave_team_threads(
    judge: Judge, game_id: int, player: str, team: Team | None = None
) -> None:
    """`player` leaves `team`'s thread (None: every team thread of the game)."""
    if not player.isdigit():  # a replay's names are no Discord users
        return
    info = await judge.runtime.service.info(game_id)
    channels = info.channels
    if team is not None:
        channels = {k: v for k, v in channels.items() if k == f"thread_{team.value}"}
    await _leave_threads(judge, channels, [player])


async def _leave_threads(judge: Judge, channels: dict[str, object], players: list[str]) -> None:
    """The players leave the team threads among `channels` (no longer reading the team's
    plans)."""
    for key, value in channels.items():
        if not key.startswith("thread_"):
            continue
        thread = judge.client.get_channel(int(str(value)))
        if not isinstance(thread, discord.Thread):
            try:
                thread = await judge.client.fetch_channel(int(str(value)))
            except discord.NotFound:
                continue
        if not isinstance(thread, discord.Thread):
            continue
        present = {m.id for m in await thread.fetch_members()}
        for player in players:
            if int(player) in present:
                with contextlib.suppress(discord.NotFound):
                    await thread.remove_user(discord.Object(int(player)))


async def set_role_open(channel: Hosting, role: discord.Role, open_: bool) -> bool:
    """The players' role's overwrite: closed (no post) or open, without a request if it is. In
    a forum, posting in its posts (threads) is what opens, explicitly: the forum's everyone
    overwrite denies it (`bot.discord.start_effects`), so non-players never post there. False:
    Discord refused the edit."""
    try:
        if isinstance(channel, discord.ForumChannel):
            wanted = open_
            if channel.overwrites_for(role).send_messages_in_threads is not wanted:
                await channel.set_permissions(role, send_messages_in_threads=wanted)
            return True
        wanted_text = None if open_ else False
        if channel.overwrites_for(role).send_messages is not wanted_text:
            await channel.set_permissions(role, send_messages=wanted_text)
    except discord.Forbidden:
        return False
    return True


async def open_channels(
    judge: Judge,
    game_id: int,
    role: discord.Role,
    channels: Iterable[Hosting],
    opened: Mapping[int, bool],
) -> None:
    """Open or close these channels of the game to its players' role, as `opened` says."""
    refused = False
    for channel in channels:
        refused |= not await set_role_open(channel, role, opened[channel.id])
    if refused:
        await tell_refused(judge, game_id)


async def set_everyone(forum: discord.ForumChannel, *, closed: bool) -> None:
    """A forum game's everyone overwrite: no new post and no post in its posts while the game
    is in play (the players' role is let in by day); left as it was otherwise."""
    everyone = forum.guild.default_role
    wanted = forum.overwrites_for(everyone)
    wanted.update(
        send_messages=False if closed else None, send_messages_in_threads=False if closed else None
    )
    if wanted != forum.overwrites_for(everyone):
        await forum.set_permissions(everyone, overwrite=None if wanted.is_empty() else wanted)


async def reconcile(judge: Judge, game_id: int) -> None:
    """Set every permission of a game in play from its state (on resume): each player's
    overwrites and team threads, and the players' role open or closed as the window says."""
    state = await judge.runtime.service.state(game_id)
    await sync_players(judge, game_id, state, players_of(state))
    info = await judge.runtime.service.info(game_id)
    guild = judge.client.get_guild(info.server_id)
    role_id = info.channels.get("players_role")
    role = guild.get_role(int(str(role_id))) if guild is not None and role_id else None
    now = channels_open(state)
    if guild is None or role is None or now is None:
        return
    held = [  # those another game holds now are left to it
        channel
        for channel in game_channels(guild, info.channels)
        if judge.runtime.routes.channel_games.get(channel.id, game_id) == game_id
    ]
    await open_channels(
        judge, game_id, role, held, open_by_channel(info.channels, now.game, now.vote)
    )


async def release(judge: Judge, game_id: int, state: GameState) -> None:
    """The game is over: its players' overwrites follow whatever game holds the channels now
    (none: removed), and the players' role goes, with its overwrites, unless a game in play in
    these channels uses it. A channel a game in play holds now is left as that game set it (a
    release retried late must not reopen the next game's forum to everyone)."""
    await sync_players(judge, game_id, state, players_of(state))
    info = await judge.runtime.service.info(game_id)
    guild = judge.client.get_guild(info.server_id)
    role_id = info.channels.get("players_role")
    if guild is None or not role_id:
        return
    role = guild.get_role(int(str(role_id)))
    if role is None:
        return  # deleted before (a repeat)
    held: list[Hosting] = []  # the channels no other game in play holds
    for channel in game_channels(guild, info.channels):
        holder = judge.runtime.routes.channel_games.get(channel.id, game_id)
        if holder == game_id or not await judge.runtime.service.is_active(holder):
            held.append(channel)
            continue
        other = await judge.runtime.service.info(holder)
        if str(other.channels.get("players_role")) == str(role_id):
            return  # reused by the game now in play: it is that game's to release
    try:
        for channel in held:
            if _has_overwrite(channel, role.id):
                await channel.set_permissions(role, overwrite=None)
            if isinstance(channel, discord.ForumChannel):  # its posts open to everyone again
                await set_everyone(channel, closed=False)
        await role.delete(reason=f"faguan: game {game_id} is over")
    except discord.NotFound:
        log.info("game %s: the players' role was already gone", game_id)
    except discord.Forbidden:  # left for the server's admins; the game is over all the same
        await tell_refused(judge, game_id)
