"""The only code that turns engine effects into Discord calls.

Each effect comes from the outbox with an idempotency key. Discord gives no way to make a send
idempotent, so when an effect is performed again (a retry, or recovery after a crash between the
send and marking it done), the performer first looks for its own earlier send among the bot's
messages in the target channel (`bot.discord.resends`) and skips the send if it is there.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import discord

from bot.discord import lost_channels, permissions
from bot.discord.answering import take
from bot.discord.automod import tell_if_blocked
from bot.discord.channels import channel_of
from bot.discord.judge import judge_of
from bot.discord.permission_refusals import tell_refused
from bot.discord.resends import MAYBE_AGAIN, Attempt
from bot.discord.start_effects import perform as perform_start
from bot.discord.team_threads import team_thread_name, tell_threads_refused, thread_member
from bot.discord.vote_threads import deadline_post
from bot.discord.vote_threads import perform as perform_vote_post
from bot.records.i18n import LOCALES
from bot.records.render import (
    render_posts,
    render_private,
    render_reply,
    render_vote_channel,
    split_post,
)
from bot.runtime.hosting import is_forum, vote_channel_id, vote_channel_of, vote_post_step
from bot.runtime.start_steps import start_step
from bot.runtime.vote_posts import VOTES_FROM, VOTES_WINDOW
from bot.store import OutboxItem
from engine import codec
from engine.effects import (
    Announce,
    Bulletin,
    ClockPost,
    LeaveTeamThreads,
    OverrideLogged,
    ReleaseChannels,
    ReplyToPost,
    ScheduleDeadline,
    SeatHandover,
    SeatLeft,
    SetChannelsOpen,
    Silence,
    TeamJoin,
    TeamNotice,
    Unsilence,
    UpdateStandings,
    VoteChannelPost,
    Whisper,
)
from engine.model import Seat, Team
from engine.state import GameState

if TYPE_CHECKING:
    from bot.discord.judge import Judge

log = logging.getLogger(__name__)

VOTES_FROM_BY = "votes_from_by"
"""Game-row key: the outbox id of the opening that set ``VOTES_FROM`` (a repeat keeps it)."""
CANNOT_DM = 50007
UNKNOWN_MEMBER = 10007
"""Discord's error code for a user who is not a member of the server (has left it)."""


class DiscordEffects:
    """Performs one outbox item on Discord."""

    def __init__(self, client: discord.Client) -> None:
        self.client = client
        self.recovering = False
        """Set while recovery performs the outbox's undone effects: each may have been done."""

    @property
    def judge(self) -> Judge:
        """The client's judge (built after this performer: the runtime needs its port first)."""
        return judge_of(self.client)

    async def __call__(self, item: OutboxItem) -> None:
        try:
            await self._perform(item)
        except discord.HTTPException as exc:  # retried; AutoMod's block is told at once
            await tell_if_blocked(self.judge, item.game_id, exc)
            raise

    async def _perform(self, item: OutboxItem) -> None:
        if (step := start_step(item.payload)) is not None:  # the shell's own: the start's work
            await perform_start(self.judge, item.game_id, step)
            return
        if (post := vote_post_step(item.payload)) is not None:  # a forum game's 投票帖
            await perform_vote_post(self.judge, self.send_once, item.game_id, post)
            return
        effect = codec.load(item.payload)
        game_id = item.game_id
        state = await self.judge.runtime.service.state(game_id)
        attempt = Attempt.of(item, self.recovering)
        match effect:
            case Announce() | ClockPost() | Bulletin():
                ctx = await self.judge.runtime.contexts.context(game_id, state)
                channel = await self._channel(game_id, "game")
                texts = render_posts(ctx, effect)
                for text in texts:
                    await self._send(channel, text, attempt)
                if isinstance(effect, Announce) and (
                    vote_post := await deadline_post(self.judge, game_id, state, effect)
                ):  # a forum game's notice of the clock: in the open 投票帖 too
                    for text in texts:
                        await self._send(vote_post, text, attempt)
            case Whisper():
                await self._whisper(game_id, state, effect, attempt)
            case TeamNotice():
                ctx = await self.judge.runtime.contexts.context(game_id, state)
                thread = await self._team_thread(game_id, effect.team)
                for text in split_post(ctx, render_private(ctx, effect)):
                    await self._send(thread, text, attempt)
            case ReplyToPost():
                await self._reply(game_id, state, effect, attempt)
            case VoteChannelPost():  # the forum draws lots in the vote post
                ctx = await self.judge.runtime.contexts.context(game_id, state)
                channel = await self._channel(game_id, "vote")
                for text in split_post(ctx, render_vote_channel(ctx, effect)):
                    await self._send(channel, text, attempt)
            case SetChannelsOpen():
                await self._set_open(item, effect)
            case SeatLeft():
                await self._silence(game_id, state, effect.seat)
            case Silence() | Unsilence():
                await self._member_posting(game_id, state, effect.seat)
            case TeamJoin():
                await self._team_join(game_id, state, effect)
            case LeaveTeamThreads():
                await permissions.leave_team_threads(
                    self.judge, game_id, effect.player, effect.team
                )
            case SeatHandover():
                await self._handover(game_id, state, effect)
            case ScheduleDeadline():
                self.judge.runtime.deadlines.schedule_deadline(game_id, effect.deadline)
            case OverrideLogged():
                await self._override_log(game_id, state, effect, attempt)
            case UpdateStandings():
                await self._standings(game_id, state)
            case ReleaseChannels():
                await permissions.release(self.judge, game_id, state)
            case _:
                log.warning("game %s: no performer for %s", game_id, type(effect).__name__)

    async def _team_join(self, game_id: int, state: GameState, effect: TeamJoin) -> None:
        """The seat's holder joins the team's thread (unarchived first if Discord archived it:
        `thread_member`). One who has left the server cannot (Discord: Unknown Member): skipped
        for good, as the start skips giving them the players' role; retried, it would hold every
        later private effect of the game, and so tell the team's other members and the log that
        the one who left holds a team role. One Discord will not add (403: the bot lacks Manage
        Threads) is skipped too, the game's moderators told privately
        (`tell_threads_refused`). Logged at DEBUG only: who joins a team thread is hidden."""
        thread = await self._team_thread(game_id, effect.team)
        try:
            user = discord.Object(int(state.seat(effect.seat).player))
            await thread_member(thread, user, add=True)
        except discord.Forbidden:
            log.debug("game %s: seat %s not added to its team thread", game_id, effect.seat)
            await tell_threads_refused(self.judge, game_id, thread)
        except discord.NotFound as exc:
            if exc.code != UNKNOWN_MEMBER:
                raise
            log.debug("game %s: seat %s left the server: not in its team thread", game_id,
                      effect.seat)  # fmt: skip

    # -- channels ------------------------------------------------------------------------------
    async def _channel(self, game_id: int, name: str) -> discord.abc.Messageable:
        info = await self.judge.runtime.service.info(game_id)
        channel_id = int(info.channels[name])
        if name == "vote" and is_forum(info.channels):  # the day's 投票帖, not the forum itself
            channel_id = vote_channel_id(info.channels) or int(info.channels["game"])
        try:
            channel = await channel_of(self.judge.client, channel_id)
        except discord.NotFound as exc:  # deleted: the game stops if it was one of its own
            lost_channels.refused_as_gone(self.judge, channel_id, exc, self.send_once)
            raise
        assert isinstance(channel, discord.abc.Messageable)
        return channel

    async def _send(
        self, channel: discord.abc.Messageable, content: str, attempt: Attempt, **kwargs: Any
    ) -> discord.Message:
        if attempt.again:
            async for message in attempt.earlier(channel):
                if (
                    self.judge.client.user
                    and message.author.id == self.judge.client.user.id
                    and message.content == content
                ):
                    return message  # sent before the crash or failure: do not post twice
        return await channel.send(content, **kwargs)

    async def _set_open(self, item: OutboxItem, effect: SetChannelsOpen) -> None:
        """A window opens (the game's first too, at its start): the players' role let into the
        channels as the effect says. Before that, every player's overwrites are brought in line
        with the state (`permissions.sync_players`; no request where they are), so a deny an
        earlier game in these channels left behind (one who had left the server then) does not
        mute a living player; and a forum game's bot keeps its own overwrite on the teams
        channel (`permissions.keep_bot_in_teams`). A role an admin deleted is not made again:
        the game's moderators are told (`permissions.players_role`)."""
        game_id = item.game_id
        service = self.judge.runtime.service
        if effect.vote_open and await self._votes_from_unset(item):
            # a vote window opens: catch-up reads the vote channel from here on
            start = discord.utils.time_snowflake(self.judge.runtime.clock.now()) - 1
            # the window it opens for (a run-off's posts made before it do not count there)
            marks = {VOTES_FROM: str(start), VOTES_FROM_BY: item.id, VOTES_WINDOW: effect.window}
            await service.set_channels(game_id, marks)
        info = await service.info(game_id)
        guild = self.judge.client.get_guild(info.server_id)
        if guild is None:
            return
        state = await service.state(game_id)
        players = permissions.players_of(state)
        await permissions.sync_players(self.judge, game_id, state, players)
        await permissions.keep_bot_in_teams(self.judge, game_id, guild, info.channels)
        role = await permissions.players_role(self.judge, game_id, guild, state)
        if role is None:
            return
        opened = permissions.open_by_channel(info.channels, effect.open, effect.vote_open)
        channels = permissions.game_channels(guild, info.channels)
        await permissions.open_channels(self.judge, game_id, role, channels, opened)

    async def _votes_from_unset(self, item: OutboxItem) -> bool:
        """Whether this opening has not set where catch-up reads from yet. Performed again (a
        restart before its done mark, a retry after a later step failed), it keeps the mark it
        set: moved to the time of the repeat, the posts made in between (while the bot was
        down) would never be read. Only this effect writes the mark, one delivery of a game at
        a time."""
        info = await self.judge.runtime.service.info(item.game_id, refresh=True)
        return info.channels.get(VOTES_FROM_BY) != item.id

    async def _silence(self, game_id: int, state: GameState, seat: Seat) -> None:
        """A player out of the game may no longer post in the game channels nor in any thread
        of them (the team threads; leaving those is a private effect of its own)."""
        await permissions.sync_players(self.judge, game_id, state, [state.seat(seat).player])

    async def _member_posting(self, game_id: int, state: GameState, seat: Seat) -> None:
        """森林老人's silence: the player may not post in the discussion channel for the day
        (votes still count through /vote); lifted at the day's end. Set from the state now, so a
        player out of the game stays closed and a late `Silence` silences nobody."""
        await permissions.sync_players(self.judge, game_id, state, [state.seat(seat).player])

    async def _team_thread(self, game_id: int, team: Team) -> discord.Thread:
        info = await self.judge.runtime.service.info(game_id)
        key = f"thread_{team.value}"
        if key in info.channels:
            stored = await channel_of(self.judge.client, int(info.channels[key]))
            assert isinstance(stored, discord.Thread)
            return stored
        parent = await self._channel(game_id, "teams" if is_forum(info.channels) else "game")
        assert isinstance(parent, discord.TextChannel)
        locale = self.judge.runtime.contexts.locale_of(info)
        name = team_thread_name(game_id, team, locale)
        # found by its name in any language (one made by a version that named it in Chinese)
        names = {team_thread_name(game_id, team, other) for other in LOCALES}
        # made before its id was stored (the database away, a crash): found, not made twice;
        # archived since, it is not among the cached active threads. Only the 100 newest
        # archived private threads the bot joined there are looked through (Discord lists them
        # newest first, 100 a request: one request): such a thread was made just before its
        # id's write failed, so it is among the newest, while the team threads of every earlier
        # game in the channel are older; paging through all of them, at each game's first join
        # per team, would read the channel's whole history of games
        thread = next((t for t in parent.threads if t.name in names), None)
        if thread is None:
            recent = parent.archived_threads(private=True, joined=True, limit=100)
            async for archived in recent:
                if archived.name in names:
                    thread = archived
                    break
        if thread is None:  # archived after a week without a message (Discord's longest; its
            # default is a day): it still takes messages, but no member change (`thread_member`)
            thread = await parent.create_thread(
                name=name,
                type=discord.ChannelType.private_thread,
                invitable=False,
                auto_archive_duration=10080,
            )
        await self.judge.runtime.service.set_channels(game_id, {key: str(thread.id)})
        return thread

    # -- private messages --------------------------------------------------------------------------
    async def _whisper(
        self, game_id: int, state: GameState, effect: Whisper, attempt: Attempt
    ) -> None:
        from bot.discord.views import views_for_whisper

        if take(game_id, state.seat(effect.seat).player, effect):
            return  # confirmed in the answer to the player's own command: no DM as well
        ctx = await self.judge.runtime.contexts.context(game_id, state)
        user_id = int(state.seat(effect.seat).player)
        text = render_private(ctx, effect)
        view = views_for_whisper(game_id, state, effect, ctx)
        extra: dict[str, Any] = {} if view is None else {"view": view}
        if effect.key == "role.dealt":  # the role message is an embed (with the confirm button)
            from bot.discord.embeds import role_content, role_embed

            text = role_content(ctx, game_id, int(effect.seat))
            extra["embed"] = role_embed(ctx, game_id, effect)
        try:
            user = self.judge.client.get_user(user_id) or await self.judge.client.fetch_user(
                user_id
            )
            dm = user.dm_channel or await user.create_dm()
            *first, last = split_post(ctx, text)  # a long one (a check history) in several
            for part in first:
                await self._send(dm, part, attempt)
            await self._send(dm, last, attempt, **extra)  # the menu or the embed goes last
        except discord.Forbidden as exc:
            if exc.code != CANNOT_DM:
                raise
            await self._dm_blocked(
                game_id, state, effect.seat, attempt, dealt=effect.key == "role.dealt"
            )

    async def _dm_blocked(
        self, game_id: int, state: GameState, seat: Seat, attempt: Attempt, *, dealt: bool
    ) -> None:
        """Record a player who does not accept DMs, and tell it once per player (and once
        more for a role message, whatever failed before): the marks are written once the
        notices are out (a notice that failed is sent again with the retry, and one sent before
        a crash is found, not sent twice).

        Who is DMed when depends on roles (the police's result at dawn, the killers' menu at
        dusk), so a notice must not: only a failure at the deal, where every player gets a role
        message, is said in the game channel. Every failure goes to the moderators of the game
        (by DM; never one who plays in it); the public notice says "moderators have been told"
        only if one of those DMs went through. Any other reaches the player with their next
        answer from the bot (`dm_unseen:` mark). Which seats refuse DMs is in no public post or
        INFO log line."""
        from bot.discord.interactions import DM_UNSEEN, moderators_of

        info = await self.judge.runtime.service.info(game_id)
        player = state.seat(seat).player  # per player: a substitute is told of their own DMs
        key = f"dm_blocked:{player}"
        # A role message's failure has a mark of its own: a player's earlier private failure
        # (their check result at dawn) must not keep the public notice of a role message (a
        # seat taken back after a replacement) from being posted, or the post would tell it.
        public_key = f"dm_blocked_dealt:{player}"
        if info.channels.get(public_key if dealt else key):
            return
        marks: dict[str, Any] = {key: True}
        if dealt:  # the deal DMs everyone: its failure depends on no role
            marks[public_key] = True
            log.warning("game %s: a player does not accept DMs", game_id)
        else:
            marks[f"{DM_UNSEEN}{player}"] = True
        # later, who is DMed when depends on roles: not even the time of a failure at INFO
        log.debug("game %s: seat %s does not accept DMs", game_id, seat)
        ctx = await self.judge.runtime.contexts.context(game_id, state)
        mention = f"<@{player}>"
        notice = ctx.t("notice.dm_blocked_mod", game=game_id, seat=ctx.seat(seat), mention=mention)
        told = 0
        for moderator in await moderators_of(self.judge, game_id):
            try:
                quiet = discord.AllowedMentions.none()
                await self._send(moderator, notice, attempt, allowed_mentions=quiet)
                told += 1
            except discord.Forbidden:  # a moderator's closed DMs stop nothing
                # (its time is the player's failure's: at WARNING only for a role message's)
                log.log(
                    logging.WARNING if dealt else logging.DEBUG,
                    "game %s: a moderator does not accept DMs",
                    game_id,
                )
        if dealt:  # "moderators have been told" only when a moderator's DM went through
            channel = await self._channel(game_id, "game")
            pinged = discord.Object(int(player))  # pings that player only
            public = ctx.t("notice.dm_blocked", seat=ctx.seat(seat), mention=mention)
            await self._send(
                channel,
                public + (ctx.t("notice.dm_blocked_told") if told else ""),
                attempt,
                allowed_mentions=discord.AllowedMentions(users=[pinged]),
            )
        await self.judge.runtime.service.set_channels(game_id, marks)

    async def _reply(
        self, game_id: int, state: GameState, effect: ReplyToPost, attempt: Attempt
    ) -> None:
        ctx = await self.judge.runtime.contexts.context(game_id, state)
        info = await self.judge.runtime.service.info(game_id)
        where = vote_channel_of(info.channels, int(effect.post_id))
        if where is None:  # a forum game's post older than its first vote post: none of ours
            return
        channel = await channel_of(self.judge.client, where)
        assert isinstance(channel, discord.TextChannel | discord.Thread)
        message = channel.get_partial_message(int(effect.post_id))
        text = render_reply(ctx, effect)
        try:
            if text is None:
                await message.add_reaction("✅")
            else:
                if attempt.again:
                    async for old in attempt.earlier(channel):
                        if (
                            old.content == text
                            and old.reference
                            and old.reference.message_id == message.id
                        ):
                            return
                await message.reply(text, mention_author=False)
        except discord.NotFound:
            log.info("game %s: vote post %s was deleted before the reply", game_id, effect.post_id)

    async def send_once(self, channel: discord.abc.Messageable, content: str) -> None:
        """Send unless the bot's recent messages there already hold this text (a resend)."""
        await self._send(channel, content, MAYBE_AGAIN)

    async def _override_log(
        self, game_id: int, state: GameState, effect: OverrideLogged, attempt: Attempt
    ) -> None:
        """Who did what, when: a line in the server's override log channel, if one is set."""
        from bot.discord.override_log import log_channel, log_line

        info = await self.judge.runtime.service.info(game_id)
        channel = await log_channel(self.judge, info.server_id)
        if channel is None:
            return
        ctx = await self.judge.runtime.contexts.context(game_id, state)
        try:
            await self._send(
                channel,
                log_line(ctx, game_id, effect),
                attempt,
                allowed_mentions=discord.AllowedMentions.none(),
            )
        except discord.Forbidden:  # the log is a convenience: a closed channel stops no game
            log.warning("game %s: cannot write to the override log channel", game_id)

    async def _standings(self, game_id: int, state: GameState) -> None:
        """Add the finished game's scores to the season (once: the repository keeps count)."""
        from bot.runtime.standings import apply_game

        info = await self.judge.runtime.service.info(game_id)
        await apply_game(self.judge.runtime.service.repo, game_id, info.server_id, state)

    async def _handover(self, game_id: int, state: GameState, effect: SeatHandover) -> None:
        """The public part of a handover: the players' role and the channels' overwrites move
        from the old player to the new one (the team thread follows in private effects)."""
        # The substitute must confirm their role again: their term has no confirmation row yet.
        info = await self.judge.runtime.service.info(game_id)
        guild = self.judge.client.get_guild(info.server_id)
        if guild is None:
            return
        role_id = info.channels.get("players_role")
        old, new = int(effect.old_player), int(effect.new_player)
        role = guild.get_role(int(role_id)) if role_id is not None else None
        refused = False
        if role is not None:
            for player, give in ((old, False), (new, True)):
                try:
                    # not cached is not gone: after a restart the cache holds only those
                    # seen since (the old player too must lose the role)
                    member = guild.get_member(player) or await guild.fetch_member(player)
                    await (member.add_roles(role) if give else member.remove_roles(role))
                except discord.Forbidden:  # the game goes on: see bot.discord.permission_refusals
                    refused = True
                except discord.NotFound as exc:
                    # left the server since /mod replace (the substitute) or since the cache
                    # saw them: no role to move (retried, it would hold every later public
                    # effect of the game); their overwrites wait for them, as in `_team_join`
                    if exc.code != UNKNOWN_MEMBER:
                        raise
                    log.info("game %s: a player of a handover left the server", game_id)
        if refused:
            await tell_refused(self.judge, game_id)
        # the seat's standing (森林老人's silence) goes with it; the old player keeps none
        await permissions.sync_players(self.judge, game_id, state, [str(old), str(new)])
