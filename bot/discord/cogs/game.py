"""Sign-up and the game's public face: /game new, join, leave, start, status, record."""

from __future__ import annotations

import io
import json
import unicodedata
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import discord
from discord import app_commands
from discord.app_commands import locale_str as _
from discord.ext import commands

from bot.config import MAX_WINDOW, DailyAt, DeadlineRule, parse_deadline_rule
from bot.discord.forum_tags import required_tags
from bot.discord.interactions import (
    dm_notice,
    find_game,
    is_moderator,
    locale_of,
    respond,
    say,
    text,
)
from bot.discord.required_permissions import lacking_in, permission_names
from bot.records.record_html import record_page, with_links
from bot.records.render import (
    ZONE_NAMES,
    Context,
    deadline_text,
    duration_text,
    plain,
    public_roster,
)
from bot.records.replay import with_reason_text
from bot.runtime.game_options import (
    check_composition,
    check_deal,
    check_options,
    clipped,
    parse_options,
    suggestions,
)
from bot.runtime.hosting import forum_settings, vote_posts
from bot.runtime.schedule import GameSchedule
from bot.store import ChannelHeld, GameStatus, LobbyInfo, LobbyRefused, LobbyStatus
from engine.errors import EngineError
from engine.model import Seat
from engine.record import record_of
from engine.rulesets import RULESETS, get_ruleset
from engine.state import GameState
from engine.view import view_for
from engine.votes import tally

if TYPE_CHECKING:
    from zoneinfo import ZoneInfo

    from bot.discord.judge import Judge

TIE_CHOICES = [
    app_commands.Choice(
        name=_("lots (抽签): one of the tied is drawn by verifiable lots"), value="lots"
    ),
    app_commands.Choice(name=_("revote (PK): run-offs among the tied"), value="revote"),
    app_commands.Choice(name=_("none: nobody leaves that day"), value="none"),
    app_commands.Choice(
        name=_("victim_choice: one run-off, then last night's victim picks"), value="victim_choice"
    ),
]
"""The tie policies (docs/rules.md §1.2) by name in the client's language; the value is the id."""

LANGUAGE_CHOICES = [
    app_commands.Choice(name=_("zh-CN (简体中文)"), value="zh-CN"),
    app_commands.Choice(name=_("en (English)"), value="en"),
]
"""The game's languages, picked rather than typed: the value is the id stored ("zh-CN", "en")."""

GAME_ID = _(
    "A game of this server by its number (第N局); default: this channel's game, or your only one"
)
"""/game is used on a server only: its `game_id` names a game of that server (`find_game`)."""


def read_deadline(typed: str | None, default: DeadlineRule) -> DeadlineRule | None:
    """The deadline rule typed (none typed: the default), or None if it cannot be read.
    Full-width digits and colon (２２：００, as a Chinese keyboard types them) read as their
    ASCII forms, as `/mod set-deadline` reads them."""
    if not typed:
        return default
    try:
        return parse_deadline_rule(unicodedata.normalize("NFKC", typed))
    except ValueError:
        return None


def lobby_options(lobby: LobbyInfo) -> dict[str, Any]:
    """A sign-up as `bot.game_options.check_deal` reads it (ruleset, options, players)."""
    players = [[p.user_id, p.name] for p in lobby.players]
    return {**lobby.settings, "players": players}


def deadline_rule_text(locale: str, rule: DeadlineRule, timezone: ZoneInfo) -> str:
    """When a game's windows close, as its sign-up says it: a daily time with its timezone
    (「每天 22:00（北京时间）」, "daily at 22:00 (Beijing time)"), or a length after the window
    opens (「每轮开始后 1小时」, "1 h after the window opens") — never a bare `22:00` or `1h`."""
    ctx = Context(locale=locale, timezone=timezone, names={})
    if isinstance(rule, DailyAt):
        zone = ZONE_NAMES.get(timezone.key, {}).get(locale, timezone.key)
        return ctx.t("notice.daily_at", time=str(rule), zone=zone)
    length = duration_text(ctx, int(rule.duration.total_seconds() * 1000))
    return ctx.t("notice.window_length", length=length)


class GameCog(commands.Cog, name="GameCog"):
    """/game: sign-up, start, status, record."""

    game = app_commands.Group(
        name="game", description=_("Games of 杀人游戏 (Mafia) judged by the bot"), guild_only=True
    )

    def __init__(self, judge: Judge) -> None:
        self.judge = judge

    async def _lobby(self, interaction: discord.Interaction[Any]) -> LobbyInfo | None:
        """The sign-up of this channel: the newest one opened here, unless it was cancelled
        (a started one is kept, so a late join or start is told which game it became)."""
        assert interaction.channel is not None
        lobby = await self.judge.runtime.service.repo.lobbies.newest(interaction.channel.id)
        return None if lobby is None or lobby.status is LobbyStatus.CANCELLED else lobby

    async def _refused(self, interaction: discord.Interaction[Any], err: LobbyRefused) -> None:
        """Tell the person privately why the sign-up did not take their join, leave or start."""
        if err.reason == "started":
            key, params = "notice.lobby_started", {"game": err.game_id}
        elif err.reason == "full":
            key, params = "notice.lobby_full", {"max": err.limit}
        elif err.reason == "too_few":
            key, params = "notice.too_few", {"count": err.count, "min": err.limit}
        elif err.reason in ("already_joined", "not_joined"):
            key, params = f"notice.{err.reason}", {}
        else:  # cancelled: replaced by a new sign-up meanwhile
            key, params = "notice.no_lobby", {}
        await respond(interaction, text(self.judge, interaction, key, **params))

    def _held_text(self, interaction: discord.Interaction[Any], held: ChannelHeld) -> str:
        """ "#game-1 is held by game 7" (or by the sign-up in another channel)."""
        if held.game_id is None and held.lobby_channel_id is None:  # released meanwhile
            return text(self.judge, interaction, "notice.try_again")
        if held.game_id is not None:
            return text(
                self.judge,
                interaction,
                "notice.channel_held",
                channel=f"<#{held.channel_id}>",
                game=held.game_id,
            )
        return text(
            self.judge,
            interaction,
            "notice.channel_held_lobby",
            channel=f"<#{held.channel_id}>",
            lobby=f"<#{held.lobby_channel_id}>",
        )

    async def _teams_held(self, channel_ids: Sequence[int]) -> tuple[int, int] | None:
        """(channel, game) if one of these text channels keeps the team threads of a forum game
        in play. A text game may not use it: its overwrites for a player out of it (no post in
        threads, `bot.discord.permissions.OUT`) would reach those threads too, muting a living
        player of the forum game in their team's thread. (Several forum games may share one:
        none of them mutes there a player another one has in play.)"""
        for channel_id in channel_ids:
            for game_id in sorted(self.judge.runtime.routes.teams_users(channel_id)):
                if await self.judge.runtime.service.is_active(game_id):
                    return channel_id, game_id
        return None

    async def _start_refusal(self, lobby: LobbyInfo) -> tuple[str, dict[str, Any]] | None:
        """Why this sign-up may not start now, as to channels: a forum game and a text game
        opened meanwhile must not share the text channel holding the forum game's team threads
        (`_teams_held`), whichever started first."""
        routes = self.judge.runtime.routes
        if not lobby.settings.get("hosting"):
            held = await self._teams_held([lobby.channel_id, lobby.vote_channel_id])
            if held is None:
                return None
            return "notice.teams_channel_held_start", {"channel": f"<#{held[0]}>", "game": held[1]}
        teams = teams_channel_id(lobby)
        running = routes.channel_games.get(teams)
        if running is not None and await self.judge.runtime.service.is_active(running):
            return "notice.teams_channel_in_text_game", {"channel": f"<#{teams}>", "game": running}
        return None

    async def _thread_readers(
        self, guild: discord.Guild, lobby: LobbyInfo, user_ids: Sequence[int]
    ) -> list[int]:
        """Those of these members who may read every private thread of the channel the game's
        team threads are made in (`sees_private_threads`)."""
        channel = guild.get_channel(teams_channel_id(lobby))
        if channel is None:
            return []
        readers = []
        for user_id in user_ids:
            member = guild.get_member(user_id)
            if member is None:
                try:
                    member = await guild.fetch_member(user_id)
                except discord.HTTPException:  # left the server, or Discord away: not warned
                    continue
            if sees_private_threads(channel, member):
                readers.append(user_id)
        return readers

    @game.command(
        name="new", description=_("Open sign-up for a new game in this channel (moderators)")
    )
    @app_commands.describe(
        ruleset=_("Ruleset id such as basic or v2 (suggested as you type)"),
        min_players=_(
            "Fewest players to start, within the ruleset's range (default: the ruleset's minimum)"
        ),
        max_players=_(
            "Most players who can join, within the ruleset's range (default: the ruleset's maximum)"
        ),
        tie=_("How a tied vote (平票) is settled (default: lots, 抽签)"),
        power_deadline=_(
            "Night power deadline: HH:MM daily (bot's timezone) or a length such as 24h, 90m, 1h30m"
        ),
        vote_deadline=_(
            "Day vote deadline: HH:MM daily (bot's timezone) or a length such as 24h, 90m, 1h30m"
        ),
        vote_channel=_(
            "Channel where vote posts count (default: this channel; not used with forum)"
        ),
        language=_("Language of everything the bot posts in this game (default: the bot's config)"),
        options=_(
            "Options as name=value, separated by spaces or commas, e.g. composition=2 (suggested)"
        ),
        forum=_(
            "Host the game in this forum channel: a main post, and a 投票帖 (vote post) each day"
        ),
    )
    @app_commands.choices(tie=TIE_CHOICES, language=LANGUAGE_CHOICES)
    async def new(
        self,
        interaction: discord.Interaction[Any],
        ruleset: str,
        min_players: int | None = None,
        max_players: int | None = None,
        tie: str = "lots",
        power_deadline: str | None = None,
        vote_deadline: str | None = None,
        vote_channel: discord.TextChannel | None = None,
        language: str | None = None,
        options: str | None = None,
        forum: discord.ForumChannel | None = None,
    ) -> None:
        if not is_moderator(self.judge, interaction.user):
            await respond(interaction, text(self.judge, interaction, "notice.moderators_only"))
            return
        assert interaction.channel is not None
        if (
            not isinstance(interaction.channel, discord.TextChannel)
            or interaction.channel.is_news()
        ):
            # the teams' private threads are made where this is run (a forum game too): a
            # thread (a forum post), a voice channel's chat or an announcement channel holds
            # none (Discord refuses a private thread there), and every team notice would fail
            key = "notice.needs_text_channel"
            await respond(interaction, text(self.judge, interaction, key))
            return
        running = self.judge.runtime.routes.channel_games.get(interaction.channel.id)
        if running is not None and await self.judge.runtime.service.is_active(running):
            await respond(interaction, text(self.judge, interaction, "notice.game_running"))
            return
        if forum is None:  # a text game: not where a forum game keeps its team threads
            used_ids = [interaction.channel.id] + ([vote_channel.id] if vote_channel else [])
            teams = await self._teams_held(used_ids)
            if teams is not None:
                channel_held, forum_game = teams
                await respond(
                    interaction,
                    text(
                        self.judge,
                        interaction,
                        "notice.teams_channel_held",
                        channel=f"<#{channel_held}>",
                        game=forum_game,
                    ),
                )
                return
        try:
            rules = get_ruleset(ruleset)
        except EngineError as err:
            await respond(interaction, text(self.judge, interaction, err.key, **err.params))
            return
        low = rules.min_players if min_players is None else min_players  # 0 is no default
        high = rules.max_players if max_players is None else max_players
        if not rules.min_players <= low <= high <= rules.max_players:
            await respond(
                interaction,
                text(
                    self.judge,
                    interaction,
                    "setup.player_count",
                    ruleset=ruleset,
                    min=rules.min_players,
                    max=rules.max_players,
                    players=f"{low}–{high}",
                ),
            )
            return
        try:
            chosen = parse_options(options)
            check_options(rules, tie, chosen)
            check_composition(rules, chosen, low, high)
        except EngineError as err:
            await respond(interaction, text(self.judge, interaction, err.key, **err.params))
            return
        defaults = self.judge.runtime.settings.game
        power = read_deadline(power_deadline, defaults.schedule.power)
        vote = read_deadline(vote_deadline, defaults.schedule.vote)
        if power is None or vote is None:  # the config's own message is English, for operators
            bad = str(power_deadline if power is None else vote_deadline)
            days = MAX_WINDOW.days
            await respond(
                interaction,
                text(self.judge, interaction, "notice.bad_deadline", value=clipped(bad), days=days),
            )
            return
        lang = language or defaults.language
        if lang not in ("zh-CN", "en"):
            await respond(
                interaction, text(self.judge, interaction, "notice.bad_language", value=lang)
            )
            return
        schedule = GameSchedule(power=power, vote=vote, timezone=defaults.timezone)
        assert interaction.guild is not None
        named = say(lang, f"ruleset.{ruleset}")
        shown = " ".join([ruleset, named, *(f"{k}={v}" for k, v in chosen.items())])
        opening = say(
            lang,
            "notice.lobby_open",
            ruleset=shown,
            players=(
                say(lang, "notice.players_exactly", count=low)
                if low == high
                else say(lang, "notice.players_between", min=low, max=high)
            ),
            power=deadline_rule_text(lang, power, defaults.timezone),
            vote=deadline_rule_text(lang, vote, defaults.timezone),
        )
        settings: dict[str, Any] = {
            "ruleset": ruleset,
            "tie": tie,
            "language": lang,
            "schedule": schedule.to_json(),
            "options": chosen,
        }
        channel_id, vote_id = interaction.channel.id, (vote_channel or interaction.channel).id
        main: discord.Thread | None = None
        if forum is not None:  # hosted in a forum: the sign-up is its new main post
            title = say(lang, "forum.lobby_title", ruleset=f"{ruleset} {named}")
            made = await forum.create_thread(
                name=title, content=opening, applied_tags=required_tags(forum)
            )
            main = made.thread
            channel_id, vote_id = main.id, forum.id
            settings |= forum_settings(interaction.channel.id)
        try:  # both channels are bound to the sign-up by the database, or it is refused
            lobby = await self.judge.runtime.service.repo.lobbies.open(
                server_id=interaction.guild.id,
                channel_id=channel_id,
                vote_channel_id=vote_id,
                min_players=low,
                max_players=high,
                settings=settings,
            )
        except ChannelHeld as held:
            if main is not None:  # the forum holds a game already: no stray main post
                await main.delete()
            await respond(interaction, self._held_text(interaction, held))
            return
        if lobby.replaced:  # they had joined the sign-up this one replaced: told, by mention
            players = " ".join(f"<@{p.user_id}>" for p in lobby.replaced)
            opening += "\n" + say(lang, "notice.lobby_replaced", players=players)
        await interaction.response.send_message(
            opening if main is None else f"{opening}\n{main.mention}"
        )
        used = [
            c
            for c in (interaction.channel, vote_channel, forum)
            if isinstance(c, discord.abc.GuildChannel | discord.Thread)
        ]
        missing = lacking_in(used, interaction.guild.me)
        if missing:  # the game can be played; the moderator learns now what it will lack
            lang = locale_of(self.judge, interaction)
            notice = say(
                lang, "notice.lacking_permissions", missing=permission_names(lang, missing)
            )
            await respond(interaction, notice)

    @new.autocomplete("ruleset")
    async def _rulesets(
        self, interaction: discord.Interaction[Any], current: str
    ) -> list[app_commands.Choice[str]]:
        locale = locale_of(self.judge, interaction)
        named = {r.id: say(locale, f"ruleset.{r.id}") for r in RULESETS.values()}
        return [
            app_commands.Choice(
                name=f"{r.id} {named[r.id]} ({r.min_players}–{r.max_players})", value=r.id
            )
            for r in RULESETS.values()
            if current.lower() in f"{r.id} {named[r.id]} {r.name_zh}".lower()
        ][:25]

    @new.autocomplete("options")
    async def _options(
        self, interaction: discord.Interaction[Any], current: str
    ) -> list[app_commands.Choice[str]]:
        rules = RULESETS.get(str(getattr(interaction.namespace, "ruleset", "")))
        if rules is None:
            return []
        return [app_commands.Choice(name=s, value=s) for s in suggestions(rules, current)]

    @game.command(name="join", description=_("Join the game being signed up in this channel"))
    async def join(self, interaction: discord.Interaction[Any]) -> None:
        lobby = await self._lobby(interaction)
        if lobby is None:
            await respond(interaction, text(self.judge, interaction, "notice.no_lobby"))
            return
        name = interaction.user.display_name
        try:
            joined = await self.judge.runtime.service.repo.lobbies.join(
                lobby.id, interaction.user.id, name
            )
        except LobbyRefused as err:
            await self._refused(interaction, err)
            return
        # Several cards a player (5.0): the cards are numbered at the deal (player k holds cards
        # 2k-1 and 2k, published at the start), so "N号" here would name another player's card:
        # the notice says the join order instead.
        several = get_ruleset(str(lobby.settings["ruleset"])).cards_per_player > 1
        await interaction.response.send_message(
            say(
                str(lobby.settings["language"]),
                "notice.joined_order" if several else "notice.joined",
                seat=joined.seat,
                order=joined.seat,
                name=plain(name),  # text, never Markdown, as every post names a player
                count=joined.count,
                max=joined.max_players,
            )
        )
        # Discord shows every private thread of a channel to whoever has Manage Threads (or
        # Administrator) there, the teams' threads too: such a player reads the killers' plans.
        # Warned, not refused: docs/moderators.md lets a moderator play, and in many servers the
        # moderator role carries Manage Threads; the bot cannot take the permission away, nor
        # tell an honest player from one who would look. So they are told privately (and the
        # moderator at `/game start`) to play without it. Asked of everyone who joins, by the
        # permission alone: no role is dealt yet, and none would be asked about.
        assert interaction.guild is not None
        if await self._thread_readers(interaction.guild, lobby, [interaction.user.id]):
            channel = f"<#{teams_channel_id(lobby)}>"
            await respond(
                interaction,
                text(self.judge, interaction, "notice.sees_private_threads", channel=channel),
            )

    @game.command(name="leave", description=_("Leave the sign-up"))
    async def leave(self, interaction: discord.Interaction[Any]) -> None:
        lobby = await self._lobby(interaction)
        if lobby is None:
            await respond(interaction, text(self.judge, interaction, "notice.not_joined"))
            return
        try:
            left = await self.judge.runtime.service.repo.lobbies.leave(
                lobby.id, interaction.user.id
            )
        except LobbyRefused as err:
            await self._refused(interaction, err)
            return
        await interaction.response.send_message(
            say(
                str(lobby.settings["language"]),
                "notice.left_lobby",
                name=plain(interaction.user.display_name),
                count=left.count,
                max=left.max_players,
            )
        )

    @game.command(name="start", description=_("Deal the roles and start (moderators)"))
    async def start(self, interaction: discord.Interaction[Any]) -> None:
        if not is_moderator(self.judge, interaction.user):
            await respond(interaction, text(self.judge, interaction, "notice.moderators_only"))
            return
        lobby = await self._lobby(interaction)
        if lobby is None:
            await respond(interaction, text(self.judge, interaction, "notice.no_lobby"))
            return
        if lobby.status is LobbyStatus.STARTED:
            started = LobbyRefused(lobby.id, "started", game_id=lobby.game_id)
            await self._refused(interaction, started)
            return
        count = len(lobby.players)
        if count < lobby.min_players:  # checked again when the start is recorded
            await respond(
                interaction,
                text(self.judge, interaction, "notice.too_few", count=count, min=lobby.min_players),
            )
            return
        try:
            check_deal(lobby_options(lobby))  # before anything is recorded or done on Discord
        except EngineError as err:
            await respond(interaction, text(self.judge, interaction, err.key, **err.params))
            return
        refusal = await self._start_refusal(lobby)
        if refusal is not None:
            key, params = refusal
            await respond(interaction, text(self.judge, interaction, key, **params))
            return

        async def recorded(_game_id: int) -> None:  # dealt: the role DMs take a while
            await interaction.response.defer(ephemeral=True, thinking=True)

        try:
            game_id = await self.judge.runtime.start_game(lobby, recorded)
        except LobbyRefused as err:  # another start (or a leave) came first: told privately
            await self._refused(interaction, err)
            return
        except EngineError as err:  # the players changed since the check: nothing recorded
            await respond(interaction, text(self.judge, interaction, err.key, **err.params))
            return
        # to the moderator alone: the channel reads the deal notice (【开局】) the game posts
        await respond(interaction, text(self.judge, interaction, "notice.started", game=game_id))
        # players who may read every team's private thread (`join`), checked again: they may
        # have got the permission since they joined. Every player is asked, whatever their role.
        assert interaction.guild is not None
        readers = await self._thread_readers(
            interaction.guild, lobby, [p.user_id for p in lobby.players]
        )
        if readers:
            await respond(
                interaction,
                text(
                    self.judge,
                    interaction,
                    "notice.players_see_private_threads",
                    channel=f"<#{teams_channel_id(lobby)}>",
                    players=", ".join(f"<@{user_id}>" for user_id in readers),
                ),
                allowed_mentions=discord.AllowedMentions.none(),
            )
        if isinstance(interaction.channel, discord.Thread) and lobby.settings.get("hosting"):
            lang, ruleset = str(lobby.settings["language"]), str(lobby.settings["ruleset"])
            shown = f"{ruleset} {say(lang, f'ruleset.{ruleset}')}"
            title = say(lang, "forum.main_title", game=game_id, ruleset=shown)
            await interaction.channel.edit(name=title)  # the main post: 第N局 …

    @game.command(name="status", description=_("Phase, deadline, who is in, who has voted"))
    @app_commands.describe(game_id=GAME_ID)
    async def status(
        self, interaction: discord.Interaction[Any], game_id: int | None = None
    ) -> None:
        gid = await find_game(self.judge, interaction, game_id)
        state = await self.judge.runtime.service.state(gid)
        ctx = await self.judge.runtime.contexts.context(
            gid, state, locale=locale_of(self.judge, interaction)
        )
        view = view_for(state, None)
        phase = (
            ctx.t("notice.phase_over")
            if view.over
            else (
                ctx.t(f"record.{view.phase_kind.value}", number=view.phase.split()[1])
                if view.phase and view.phase_kind
                else "—"
            )
        )
        alive = ctx.seats(",".join(str(s.seat) for s in view.seats if s.alive))
        voted = ctx.seats(",".join(str(s) for s in view.voted)) or "—"
        stopped = (await self.judge.runtime.service.info(gid)).status is GameStatus.STOPPED_ERROR
        head = (
            ctx.t("notice.status_stopped", game=gid, ruleset=state.ruleset)
            if stopped  # its channel deleted, or its log unreadable: it will not go on
            else ctx.t(  # no deadline while paused: how long is left once the clock runs again
                "notice.status_paused",
                game=gid,
                ruleset=state.ruleset,
                phase=phase,
                left=duration_text(ctx, state.paused_remaining or 0),
            )
            if view.paused
            else ctx.t("notice.status_over", game=gid, ruleset=state.ruleset)
            if view.over  # no deadline to give, and none missing
            else ctx.t(
                "notice.status",
                game=gid,
                ruleset=state.ruleset,
                phase=phase,
                deadline=deadline_text(ctx, view.deadline),
            )
        )
        lines = [
            head,
            ctx.t("notice.alive", names=alive),
        ]
        roster = ",".join(f"{i.seat}:{i.public.value}" for i in view.seats if i.public and i.alive)
        if roster:  # 无间道: everyone's public identity (公开身份), never a hidden role
            lines.append(ctx.t("role_msg.roster_line", lines=public_roster(ctx, roster)))
        if view.phase_kind is not None and view.phase_kind.value == "day":
            lines.append(ctx.t("notice.voted", names=voted))
            mine = state.seats_of(str(interaction.user.id))
            if mine:  # to a player only: the seat their vote counts for now
                lines.append(your_vote(ctx, state, mine))
        notice = await dm_notice(self.judge, interaction, gid)
        await respond(interaction, "\n".join([*lines, notice] if notice else lines))

    @game.command(name="record", description=_("The record and the seed of a finished game"))
    @app_commands.describe(game_id=GAME_ID)
    async def record(
        self, interaction: discord.Interaction[Any], game_id: int | None = None
    ) -> None:
        gid = await find_game(self.judge, interaction, game_id)
        state = await self.judge.runtime.service.state(gid)
        info = await self.judge.runtime.service.info(gid)
        if info.status is GameStatus.STOPPED_ERROR:  # never over: its roles stay unsaid
            await respond(interaction, text(self.judge, interaction, "notice.stopped_no_record"))
            return
        if not state.over:
            await respond(interaction, text(self.judge, interaction, "notice.not_over"))
            return
        ctx = await self.judge.runtime.contexts.context(gid, state)
        names = await self.judge.runtime.contexts.player_names(gid, state)
        data = with_links(
            with_reason_text(record_of(state, player_names=names)),
            info.server_id,
            info.channels["vote"],
            vote_posts(info.channels),
        )
        blob = json.dumps(data, ensure_ascii=False, indent=2).encode("utf-8")
        page = record_page(data, ctx.locale, title=ctx.t("html.game_title", game=gid)).encode()
        await interaction.response.send_message(  # public: in the game's language
            ctx.t("notice.record", seed=state.seed, commitment=state.commitment),
            files=[
                discord.File(io.BytesIO(blob), filename=f"faguan-game-{gid}.json"),
                discord.File(io.BytesIO(page), filename=f"faguan-game-{gid}.html"),
            ],
        )


def teams_channel_id(lobby: LobbyInfo) -> int:
    """The text channel the sign-up's team threads will be made in: its own channel, or the
    one a forum game's sign-up was opened from."""
    teams = lobby.settings.get("teams") if lobby.settings.get("hosting") else None
    return int(teams) if teams else lobby.channel_id


def sees_private_threads(channel: discord.abc.GuildChannel, member: discord.Member) -> bool:
    """Whether Discord shows `member` every private thread of `channel` (Manage Threads there,
    or Administrator, which no channel overwrite takes away)."""
    perms = channel.permissions_for(member)
    return perms.view_channel and perms.manage_threads


def your_vote(ctx: Context, state: GameState, cards: Sequence[Seat]) -> str:
    """Which seat the player's vote counts for in the open window, as the lock would count it
    now (their last valid post): a vote read from a name can always be checked privately."""
    votes = tally(state, state.posts, None).votes
    cast = next((card for card in cards if card in votes), None)
    if cast is None:
        return ctx.t("notice.your_vote_none")
    target = votes[cast]
    return ctx.t(
        "notice.your_vote",
        target=ctx.t("notice.abstain") if target is None else ctx.seat(target),
    )
