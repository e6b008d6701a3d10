"""Who may post in a game's channels, as the engine says of the game's state (`engine.speech`:
the channels open or shut, 森林老人's silence, the dead), and the Discord edits that make the
channels say so.

The engine's effects change these permissions one step at a time (SeatLeft, Silence, Unsilence,
ReleaseChannels); each performer here brings a player's overwrites in line with the state as it
is when it runs, so performing an effect again, late, or out of turn is harmless. `reconcile`
does the same for every player of a game at once: on resume, a lost or half-done edit can leave
no player out of the game posting and no living player silenced; and it sets each team thread's
members from the state (`set_team_threads`), a change Discord refused before done now.

A channel may see several games one after the other: a member's overwrite in a channel follows
the game that holds the channel now (`FaguanBot.channel_games`), so a late effect of an ended game
never lifts what the next game set. Only the fields in `OUT` are touched on a member's overwrite:
anything else a server's admins set there stays. Discord keeps a member's overwrites when they
leave the server: one the game no longer needs is lifted all the same (by their id), or it would
mute them when they come back, in the next game there too; and each window's opening brings
every player's overwrites in line (`bot.discord.effects`), so a deny an earlier game left behind
never mutes a living player of this one.

A forum game keeps its team threads in the text channel it was opened from (`teams`), a channel
of the server otherwise: there a player out of the game is denied only posting in threads
(`TEAMS_OUT`), so they no longer post in a team thread they have not left yet, as a text game's
overwrite on its game channel denies it in the threads it holds. Every player out of the game is
denied it, whatever their role. The bot keeps its own allow there too (`keep_bot_in_teams`).

At the end (`release`) the players' role is deleted, not kept for a next game: each game makes its
own (`bot.start_effects`), and a role left behind would be one more thing for a server to tidy.
The bot's own allow overwrite stays: it grants players nothing, and the next game sets the same.
"""

from __future__ import annotations

import contextlib
import logging
import weakref
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Literal

import discord

from bot.discord.permission_refusals import tell_refused, tell_role_gone
from bot.runtime.hosting import is_forum
from engine.model import Team
from engine.rulesets import rules_for
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

TEAMS_OUT = ("send_messages_in_threads",)
"""What a player out of a forum game is denied in its teams channel (`teams`: the text channel
holding its team threads, a channel of the server otherwise, where nothing else is touched)."""

TEAMS_BOT = (
    "read_messages",
    "create_private_threads",
    "send_messages_in_threads",
    "manage_threads",
)
"""What the bot's own overwrite on a forum game's teams channel allows: making the team threads,
posting in them and adding or taking out their members (the threads are private and not
invitable: Manage Threads), whatever the server's roles say later, as its overwrite on a text
game's channel does (`bot.discord.start_effects.BOT_ALLOW`)."""

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


async def set_member(
    client: discord.Client,
    channel: Hosting,
    player: str,
    deny: Iterable[str],
    fields: Iterable[str] = OUT,
) -> bool:
    """Make the player's overwrite in `channel` deny exactly `deny` among `fields` (`OUT`; a
    forum game's teams channel: `TEAMS_OUT`), other fields kept; an overwrite left empty is
    deleted. No request (not even for the member) when it already is so. For a member who left
    the server a new deny waits for them (none is set), but a deny lifted is lifted all the same,
    by their id: Discord keeps a member's overwrites when they leave, and one left behind would
    mute them when they come back. False: Discord refused the edit
    (`bot.discord.permission_refusals`)."""
    fields = tuple(fields)
    user_id = int(player)
    current = channel.overwrites_for(discord.Object(user_id))
    wanted = channel.overwrites_for(discord.Object(user_id))
    wanted.update(**{name: (False if name in deny else None) for name in fields})
    if wanted == current and (not wanted.is_empty() or not _has_overwrite(channel, user_id)):
        return True
    settled = _left_alone.setdefault(client, set())
    if (channel.id, user_id) in settled:
        if channel.guild.get_member(user_id) is None:
            return True  # Discord would not change it for them: not asked again (`_set_by_id`)
        settled.discard((channel.id, user_id))  # back on the server: set as for any member
    member = await _member(channel.guild, player)
    denies = any(getattr(wanted, f) is False and getattr(current, f) is not False for f in fields)
    try:
        if member is not None:
            await channel.set_permissions(member, overwrite=None if wanted.is_empty() else wanted)
        elif not denies:  # they left: a new deny waits for them, a lifted one goes now
            await _set_by_id(client, channel, user_id, wanted)
    except discord.Forbidden:
        return False
    return True


MEMBER_OVERWRITE: Literal[1] = 1
"""Discord's overwrite type for a member (0: a role)."""


_left_alone: weakref.WeakKeyDictionary[discord.Client, set[tuple[int, int]]] = (
    weakref.WeakKeyDictionary()
)
"""Per client (a process's bot): the (channel, member) overwrites of members who left the
server that Discord would not change (`_set_by_id`): left as they are, with no request, while
the member is away (each window's opening would otherwise ask again: the member, then the
edit, both refused)."""


async def _set_by_id(
    client: discord.Client,
    channel: Hosting,
    user_id: int,
    wanted: discord.PermissionOverwrite,
) -> None:
    """A member overwrite set (None: deleted) by the member's id, for one who left the server:
    discord.py's `set_permissions` takes a member or a user object, neither of which the bot
    has for them; the request is the one it would make.

    Discord may refuse it (404: Unknown Overwrite for one who is no member, or gone already):
    an overwrite holding nothing but the game's fields (`OUT`) is deleted instead (what is left
    of the game's waits for them, as a new deny does); otherwise (an admin's fields on it, or
    the deletion refused too) it is left as it is for good in this process (`_left_alone`),
    and not asked again while they are away: it settles, where each window would repeat both
    refused requests."""
    try:
        if wanted.is_empty():
            await client.http.delete_channel_permissions(channel.id, user_id)
        else:
            allow, deny = wanted.pair()
            await client.http.edit_channel_permissions(
                channel.id, user_id, str(allow.value), str(deny.value), MEMBER_OVERWRITE
            )
        return
    except discord.NotFound:
        pass
    if not wanted.is_empty() and all(v is None for name, v in wanted if name not in OUT):
        with contextlib.suppress(discord.NotFound):
            await client.http.delete_channel_permissions(channel.id, user_id)
            return
    _left_alone.setdefault(client, set()).add((channel.id, user_id))
    log.debug("channel %s: Discord would not change the overwrite of one who left", channel.id)


def _has_overwrite(channel: Hosting, target_id: int) -> bool:
    """Whether the channel holds an overwrite for this member or role (even an empty one)."""
    return any(target.id == target_id for target in channel.overwrites)


async def _member(guild: discord.Guild, player: str) -> discord.Member | None:
    """The member, or None when they left the server."""
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


def teams_channel(
    guild: discord.Guild, channels: Mapping[str, object]
) -> discord.TextChannel | None:
    """A forum game's teams channel (the text channel holding its team threads), if it is
    there; None for a text game (its team threads are in its game channel)."""
    if not is_forum(channels) or not channels.get("teams"):
        return None
    channel = guild.get_channel(int(str(channels["teams"])))
    return channel if isinstance(channel, discord.TextChannel) else None


def teams_denied(states: Iterable[GameState], player: str) -> frozenset[str]:
    """What the forum games in play keeping their team threads in one teams channel (`states`)
    deny `player` there: posting in threads, when one of them has the player out of the game and
    none has them in it (a living player of another of them posts in that game's thread: the
    dead player is taken out of this one's all the same, `LeaveTeamThreads`)."""
    playing = [s for s in states if not s.over and s.seats_of(player)]
    if playing and all(out_of_game(s, player) for s in playing):
        return frozenset(TEAMS_OUT)
    return frozenset()


async def _teams_states(
    judge: Judge, channel_id: int, game_id: int, state: GameState
) -> list[GameState] | None:
    """The states of the forum games keeping their team threads in this channel (this one's,
    `state`, and those in play of the others); None when a text game in play is played in the
    channel: its overwrites there are that game's (they deny its players out of it the threads
    too)."""
    holder = judge.runtime.routes.channel_games.get(channel_id)
    if holder is not None and holder != game_id and await judge.runtime.service.is_active(holder):
        return None
    states = [state]
    for other in sorted(judge.runtime.routes.teams_users(channel_id) - {game_id}):
        if await judge.runtime.service.is_active(other):
            states.append(await judge.runtime.service.state(other))
    return states


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
) -> None:
    """Bring the players' overwrites in the game's channels in line with the state of the game
    holding each channel. Team threads are not touched here: who is in one is private, and the
    engine orders their changes after the public effects (`LeaveTeamThreads`, `TeamJoin`);
    `reconcile` sets each team thread's members whole (`set_team_threads`)."""
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
            refused |= not await set_member(judge.client, channel, player, deny)
    teams = teams_channel(guild, info.channels)
    users = None if teams is None else await _teams_states(judge, teams.id, game_id, state)
    if teams is not None and users is not None:
        for player in players:
            deny = teams_denied(users, player)
            refused |= not await set_member(judge.client, teams, player, deny, TEAMS_OUT)
    if refused:
        await tell_refused(judge, game_id)


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


async def _stored_thread(judge: Judge, value: object) -> discord.Thread | None:
    """A team thread by its stored id: from the cache (the active threads), else asked of
    Discord (an archived one); None when it is gone."""
    thread = judge.client.get_channel(int(str(value)))
    if not isinstance(thread, discord.Thread):
        try:
            thread = await judge.client.fetch_channel(int(str(value)))
        except discord.NotFound:
            return None
    return thread if isinstance(thread, discord.Thread) else None


async def _leave_threads(judge: Judge, channels: dict[str, object], players: list[str]) -> None:
    """The players leave the team threads among `channels` (no longer reading the team's
    plans); a thread Discord archived is unarchived first (`bot.discord.team_threads`). A
    removal Discord refuses (403: the bot lacks Manage Threads) is skipped, and the game's
    moderators are told privately: retried, it would hold every later private effect of the
    game; `reconcile` (on resume) puts the threads right once Discord lets it
    (`set_team_threads`)."""
    from bot.discord.team_threads import tell_threads_refused, thread_member

    for key, value in channels.items():
        if not key.startswith(THREAD_KEY):
            continue
        thread = await _stored_thread(judge, value)
        if thread is None:
            continue
        present = {m.id for m in await thread.fetch_members()}
        for player in players:
            if int(player) not in present:
                continue
            try:
                with contextlib.suppress(discord.NotFound):
                    await thread_member(thread, discord.Object(int(player)), add=False)
            except discord.Forbidden:
                log.debug("a player not taken out of team thread %s (refused)", thread.id)
                infos = await judge.runtime.service.active_infos()
                held = (i.id for i in infos if str(i.channels.get(key)) == str(value))
                if (game_id := next(held, None)) is not None:
                    await tell_threads_refused(judge, game_id, thread)


THREAD_KEY = "thread_"
"""Game-row key prefix: a team's thread (`thread_killers`: the killers'), by its id."""


def team_players(state: GameState, team: Team) -> frozenset[str]:
    """The players who read `team`'s thread now: those holding a living card of the team (a
    player whose card of it is out, or whose role turned, does not, though another of their
    cards plays on)."""
    rules = rules_for(state)
    return frozenset(state.seat(s).player for s in rules.team_members(state, team))


async def set_team_threads(judge: Judge, game_id: int) -> None:
    """Each team thread of a game in play holds, of its players, exactly those holding a living
    card of the team (`team_players`; on resume: `reconcile`): a join or a removal Discord
    refused (403: the game's moderators were told the next start puts it right), or one lost,
    is done now, a player who left a team alive (basic's grief; 5.0, a killer card out while
    another card plays on) taken out too. The bot itself and whoever is no player of the game
    (a moderator reading along) are left as they are. Each thread's members are asked once, and
    nothing more where they are right; an archived thread is unarchived only for a change
    (`thread_member`).

    A restart's reconcile runs beside the game's deadlines: a lock may change who reads a team
    while a change is awaited, and its private effects (`LeaveTeamThreads`, `TeamJoin`) change
    the thread then, finding it as it was. So each change is decided on the state as it is right
    before it (read again: it is cached), and the state is read again once it is done: a player
    the lock took out of the team (or let in) meanwhile is put as the state says now, never left
    as an older state said (`_set_team_member`).

    Who is in a team is hidden: a change is logged at DEBUG only, a refusal told to the game's
    moderators privately (`tell_threads_refused`), any other failure of a change (one who left
    the server: Unknown Member) skipped at DEBUG, left to the next start."""

    info = await judge.runtime.service.info(game_id)
    for key, value in info.channels.items():
        try:
            team = Team(key.removeprefix(THREAD_KEY)) if key.startswith(THREAD_KEY) else None
        except ValueError:
            team = None
        if team is None:
            continue
        thread = await _stored_thread(judge, value)
        if thread is None:
            continue
        present = {m.id for m in await thread.fetch_members()}
        state = await judge.runtime.service.state(game_id)
        if state.over:  # the end leaves the threads as they are
            return
        for player in players_of(state):
            if not await _set_team_member(judge, game_id, thread, team, player, present):
                return  # the game ended meanwhile


async def _set_team_member(
    judge: Judge,
    game_id: int,
    thread: discord.Thread,
    team: Team,
    player: str,
    present: set[int],
) -> bool:
    """`player` in `team`'s thread or out of it as the state says (`set_team_threads`;
    `present`: the thread's members as last known, kept up to date here). The state is read
    right before each change, and again after it: a lock performed while the change was awaited
    may have changed who reads the team, its own effect finding the thread as it was then; the
    change is undone when the state says so now. A refusal or another failure ends it (told,
    logged at DEBUG). False: the game ended (the end leaves the threads as they are)."""
    from bot.discord.team_threads import tell_threads_refused, thread_member

    while True:
        state = await judge.runtime.service.state(game_id)
        if state.over:
            return False
        add = player in team_players(state, team)
        if add == (int(player) in present):
            return True
        log.debug("game %s: changing a member of team thread %s", game_id, thread.id)
        try:
            await thread_member(thread, discord.Object(int(player)), add=add)
        except discord.Forbidden:
            log.debug("game %s: team thread %s not changed (refused)", game_id, thread.id)
            await tell_threads_refused(judge, game_id, thread)
            return True
        except discord.HTTPException as exc:
            log.debug("game %s: team thread %s not changed (%s)", game_id, thread.id, exc.code)
            return True
        if add:
            present.add(int(player))
        else:
            present.discard(int(player))


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


async def keep_bot_in_teams(
    judge: Judge, game_id: int, guild: discord.Guild, channels: Mapping[str, object]
) -> None:
    """The bot's own allow overwrite on a forum game's teams channel (`TEAMS_BOT`), added to
    what its overwrite there allows already (a text game played there set more): it keeps
    making the team threads and taking the players out of the game out of them if the server's
    roles stop granting that, as in a text game's channel. No request when it is there."""
    teams = teams_channel(guild, channels)
    if teams is None or guild.me is None:
        return
    wanted = teams.overwrites_for(guild.me)
    wanted.update(**dict.fromkeys(TEAMS_BOT, True))
    if wanted == teams.overwrites_for(guild.me):
        return
    try:
        await teams.set_permissions(guild.me, overwrite=wanted)
    except discord.Forbidden:  # no Manage Roles there: the game goes on
        await tell_refused(judge, game_id)


async def players_role(
    judge: Judge, game_id: int, guild: discord.Guild, state: GameState
) -> discord.Role | None:
    """The game's players' role; None when there is none: never made (the bot lacked Manage
    Roles: told at the start), or deleted since, by an admin tidying the server's roles. Then
    its players are shut out of a forum game's posts for good, and the channels of a text game
    are never shut again: the game's moderators are told (`tell_role_gone`; not once the game
    is over). The role is not made again: an admin deleted it, and the bot does not undo what
    a server's admins do to it (see `tell_role_gone` for why)."""
    role_id = (await judge.runtime.service.info(game_id)).channels.get("players_role")
    if not role_id:
        return None
    role = guild.get_role(int(str(role_id)))
    if role is not None:
        return role
    # the cache may not hold a role made a moment ago (discord.py's `create_role` does not cache
    # it; its gateway event may come late): Discord says, and the role it has is the one used
    role = discord.utils.get(await guild.fetch_roles(), id=int(str(role_id)))
    if role is not None:
        return role
    if not state.over:
        await tell_role_gone(judge, game_id)
    return None


async def reconcile(judge: Judge, game_id: int) -> None:
    """Set every permission of a game in play from its state (on resume): each player's
    overwrites, the bot's own on a forum game's teams channel, the players' role open or closed
    as the window says (deleted by an admin: the moderators are told, `players_role`), and
    last, each team thread's members (`set_team_threads`)."""
    state = await judge.runtime.service.state(game_id)
    await sync_players(judge, game_id, state, players_of(state))
    info = await judge.runtime.service.info(game_id)
    guild = judge.client.get_guild(info.server_id)
    if guild is None:
        return
    await keep_bot_in_teams(judge, game_id, guild, info.channels)
    role = await players_role(judge, game_id, guild, state)
    now = channels_open(state)
    if role is not None and now is not None:
        held = [  # those another game holds now are left to it
            channel
            for channel in game_channels(guild, info.channels)
            if judge.runtime.routes.channel_games.get(channel.id, game_id) == game_id
        ]
        opened = open_by_channel(info.channels, now.game, now.vote)
        await open_channels(judge, game_id, role, held, opened)
    if not state.over:
        await set_team_threads(judge, game_id)


async def release(judge: Judge, game_id: int, state: GameState) -> None:
    """The game is over: its players' overwrites follow whatever game holds the channels now
    (none: removed), and the players' role goes, with its overwrites, unless a game in play in
    these channels uses it. A forum is opened to everyone again, the role gone or not (deleted
    by an admin mid-game, or by this release performed before): what the start closed, the end
    opens. A channel a game in play holds now is left as that game set it (a release retried
    late must not reopen the next game's forum to everyone)."""
    await sync_players(judge, game_id, state, players_of(state))
    info = await judge.runtime.service.info(game_id)
    guild = judge.client.get_guild(info.server_id)
    if guild is None:
        return
    role_id = info.channels.get("players_role")
    role = guild.get_role(int(str(role_id))) if role_id else None  # None: deleted before
    held: list[Hosting] = []  # the channels no other game in play holds
    for channel in game_channels(guild, info.channels):
        holder = judge.runtime.routes.channel_games.get(channel.id, game_id)
        if holder == game_id or not await judge.runtime.service.is_active(holder):
            held.append(channel)
            continue
        other = await judge.runtime.service.info(holder)
        if role_id and str(other.channels.get("players_role")) == str(role_id):
            return  # reused by the game now in play: it is that game's to release
    try:
        for channel in held:
            if role is not None and _has_overwrite(channel, role.id):
                await channel.set_permissions(role, overwrite=None)
            if isinstance(channel, discord.ForumChannel):  # its posts open to everyone again
                await set_everyone(channel, closed=False)
        if role is not None:
            await role.delete(reason=f"faguan: game {game_id} is over")
    except discord.NotFound:
        log.info("game %s: the players' role was already gone", game_id)
    except discord.Forbidden:  # left for the server's admins; the game is over all the same
        await tell_refused(judge, game_id)
