"""/mod: the moderator's overrides, each an engine command (recorded and announced)."""

from __future__ import annotations

import datetime as dt
import re
import unicodedata
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import discord
from discord import app_commands
from discord.app_commands import locale_str as _
from discord.ext import commands

from bot.discord.cogs.mod_menus import REASON_LIMIT, after_replacement, substitute_refusal
from bot.discord.interactions import (
    NoGame,
    answer_command,
    is_moderator,
    locale_of,
    moderates,
    open_window,
    public_locale,
    respond,
    say,
    state_at_arrival,
    text,
    window_at_arrival,
)
from bot.discord.translator import power_name
from bot.records.render import error_text
from bot.runtime.schedule import SkippedTime, from_ms, moment_of, to_ms
from bot.runtime.standings import next_season_name
from bot.store.errors import GameNotFound
from engine.commands import (
    Command,
    EndGame,
    ExtendDeadline,
    ModKill,
    Pause,
    Penalize,
    ReplacePlayer,
    Resume,
    SetDeadline,
    VoidPost,
)
from engine.model import Camp, Instant, Power, Seat, Team
from engine.rulesets import RULESETS, Ruleset
from engine.state import GameState

if TYPE_CHECKING:
    from bot.discord.judge import Judge


SERVER_COMMANDS = frozenset({"log-channel", "new-season"})
"""/mod commands about the server, not a game: any moderator of the server may use them."""

Reason = app_commands.Range[str, 1, REASON_LIMIT]
"""A moderator's reason, as long as the forms take: it is announced, and an announcement longer
than Discord takes (2,000 characters) could never be posted (the game's posts would stop
behind it)."""

DAY_POWERS = frozenset({Power.CONFESS, Power.VETO})
"""Powers used by day in every ruleset: a penalty stops night powers, so it never names these."""

MESSAGE_LINK = re.compile(r"https?://(?:\w+\.)?discord(?:app)?\.com/channels/[^/\s]+/\d+/(\d+)/?")
"""A message link (Copy Message Link): its last number is the message's id."""


def game_here(judge: Judge, interaction: discord.Interaction[Any]) -> int:
    """The game of the channel (or thread, or forum post) the command is used in: /mod acts on
    that game alone, never on one found elsewhere (the asker's own game, another server's)."""
    routes = judge.runtime.routes.channel_games
    parent = getattr(interaction.channel, "parent_id", None)
    for channel_id in (interaction.channel_id, parent):
        if channel_id is not None and channel_id in routes:
            return routes[channel_id]
    raise NoGame("notice.no_game")


def unused_season_name(current: str, used: set[str]) -> str:
    """The default name of the season after `current` (`next_season_name`: the next number,
    or " 2" added) that no earlier season has used, its number counted on past the used ones:
    after "1", "3" when "2" has a table; after "春季", "春季 3" when "春季 2" has one."""
    name = next_season_name(current)
    while name in used:
        # `next_season_name` ends a name with ASCII digits: their last run is counted on
        head = name.rstrip("0123456789")
        name = f"{head}{int(name[len(head) :]) + 1}"
    return name


def holder_at(state: GameState, seat: int) -> str | None:
    """Who held `seat` in `state` (None: no such seat, which the engine says)."""
    return state.seats[seat - 1].player if 1 <= seat <= len(state.seats) else None


class ModeratorCog(commands.Cog, name="ModeratorCog"):
    """Overrides: only for the moderator role or Manage Server."""

    mod = app_commands.Group(name="mod", description=_("Moderator tools"), guild_only=True)

    def __init__(self, judge: Judge) -> None:
        self.judge = judge

    async def interaction_check(self, interaction: discord.Interaction[Any]) -> bool:  # type: ignore[override]
        """A moderator of the server, and for a game's command one who holds no seat in that
        game: a moderator who plays is a plain player there (no /mod pending, no overrides)."""
        command = interaction.command.name if interaction.command else ""
        if command in SERVER_COMMANDS or not is_moderator(self.judge, interaction.user):
            return await moderates(self.judge, interaction, None)
        try:
            gid = game_here(self.judge, interaction)
        except NoGame:
            return True  # the command itself says there is no game here
        return await moderates(self.judge, interaction, gid)

    async def _do(
        self, interaction: discord.Interaction[Any], command: Command, *, name: str | None = None
    ) -> None:
        gid = game_here(self.judge, interaction)
        await answer_command(self.judge, interaction, gid, command, name=name)

    async def _timed(
        self,
        interaction: discord.Interaction[Any],
        build: Callable[[int | None, Instant | None], Command],
    ) -> None:
        """A clock override (extend, shorten, set-deadline, pause, resume) for the window open,
        and the deadline in force, when the command arrived: a second moderator's at the same
        moment is told that it was moved meanwhile, instead of moving it twice."""
        gid = game_here(self.judge, interaction)
        arrived = await state_at_arrival(self.judge, interaction, gid)  # one state: never two
        window, seen = open_window(arrived), arrived.deadline
        await answer_command(self.judge, interaction, gid, build(window, seen))

    @mod.command(name="extend", description=_("Extend the current deadline"))
    @app_commands.describe(minutes=_("Minutes to add to the open window's deadline"))
    async def extend(
        self, interaction: discord.Interaction[Any], minutes: app_commands.Range[int, 1, 100000]
    ) -> None:
        by, now = str(interaction.user.id), self.judge.runtime.now_ms()
        await self._timed(
            interaction,
            lambda window, seen: ExtendDeadline(
                delta_ms=minutes * 60_000,
                by=by,
                at=now,
                window=window,
                seen=seen,
                saw_none=seen is None,  # paused, or none set: refused if one is set since
            ),
        )

    @mod.command(name="shorten", description=_("Shorten the current deadline"))
    @app_commands.describe(minutes=_("Minutes to take off the open window's deadline"))
    async def shorten(
        self, interaction: discord.Interaction[Any], minutes: app_commands.Range[int, 1, 100000]
    ) -> None:
        by, now = str(interaction.user.id), self.judge.runtime.now_ms()
        await self._timed(
            interaction,
            lambda window, seen: ExtendDeadline(
                delta_ms=-minutes * 60_000,
                by=by,
                at=now,
                window=window,
                seen=seen,
                saw_none=seen is None,  # paused, or none set: refused if one is set since
            ),
        )

    @mod.command(
        name="set-deadline", description=_("Set the current deadline (YYYY-MM-DD HH:MM, game time)")
    )
    @app_commands.describe(
        time=_("The new deadline: YYYY-MM-DD HH:MM in the game's timezone, e.g. 2026-12-02 22:00")
    )
    async def set_deadline(self, interaction: discord.Interaction[Any], time: str) -> None:
        by = str(interaction.user.id)
        gid = game_here(self.judge, interaction)
        arrived = await state_at_arrival(self.judge, interaction, gid)  # one state: never two
        window, seen = open_window(arrived), arrived.deadline
        ctx = await self.judge.runtime.contexts.context(gid)
        # stamped after the reads, with no await before it queues on the game's lock (as the
        # other clock commands are): a vote judged late meanwhile is never followed by a
        # command stamped before the deadline that voided it
        now = self.judge.runtime.now_ms()
        # full-width digits and colon (２０２６-１２-０２ ２２：００, as a Chinese keyboard types
        # them) read as their ASCII forms
        written = unicodedata.normalize("NFKC", time).strip()
        try:
            wall = dt.datetime.strptime(written, "%Y-%m-%d %H:%M")
            # a time the clocks skip is refused; one they repeat is the next time they show it
            moment = moment_of(wall, ctx.timezone, now=from_ms(now))
            from_ms(to_ms(moment))  # a deadline the scheduler can hold (not at year 1 or 9999)
        except SkippedTime as skipped:
            start, end = skipped.start, skipped.end
            shown_end = f"{end:%H:%M}" if end.date() == start.date() else f"{end:%Y-%m-%d %H:%M}"
            gap = {"date": f"{start:%Y-%m-%d}", "start": f"{start:%H:%M}", "end": shown_end}
            answer = text(
                self.judge,
                interaction,
                "notice.skipped_time",
                value=written,
                zone=ctx.timezone.key,
                **gap,
            )
            await respond(interaction, answer)
            return
        except (ValueError, OverflowError):
            await respond(interaction, text(self.judge, interaction, "notice.bad_time", value=time))
            return
        command = SetDeadline(
            deadline=Instant(to_ms(moment)),
            by=by,
            at=now,
            window=window,
            seen=seen,
            saw_none=seen is None,  # paused, or none set: refused if one is set since
        )
        await answer_command(self.judge, interaction, gid, command)

    @mod.command(name="advance", description=_("Lock the current window now"))
    async def advance(self, interaction: discord.Interaction[Any]) -> None:
        gid = game_here(self.judge, interaction)
        window = await window_at_arrival(self.judge, interaction, gid)  # not one opened since
        await interaction.response.defer(ephemeral=True, thinking=True)
        outcome = await self.judge.runtime.deadlines.lock_due(
            gid, forced=True, by=str(interaction.user.id), window=window
        )
        if outcome is None:  # the game has ended meanwhile
            await respond(interaction, text(self.judge, interaction, "phase.game_over"))
            return
        ctx = await self.judge.runtime.contexts.context(
            gid, locale=locale_of(self.judge, interaction)
        )
        if outcome.error is not None:
            answer = error_text(ctx, outcome.error.key, outcome.error.params)
        else:
            answer = ctx.t("notice.accepted")
        await respond(interaction, answer)

    @mod.command(name="pause", description=_("Pause the clock"))
    async def pause(self, interaction: discord.Interaction[Any]) -> None:
        by, now = str(interaction.user.id), self.judge.runtime.now_ms()
        await self._timed(interaction, lambda window, _: Pause(at=now, by=by, window=window))

    @mod.command(name="resume", description=_("Resume the clock"))
    async def resume(self, interaction: discord.Interaction[Any]) -> None:
        by, now = str(interaction.user.id), self.judge.runtime.now_ms()
        await self._timed(interaction, lambda window, _: Resume(at=now, by=by, window=window))

    @mod.command(name="replace", description=_("Replace a player with a substitute"))
    @app_commands.describe(
        seat=_("The seat number of the player to replace"),
        member=_("The substitute (替补) who takes the seat"),
        reason=_("Why, announced with the replacement (at most 200 characters)"),
    )
    async def replace(
        self,
        interaction: discord.Interaction[Any],
        seat: int,
        member: discord.Member,
        reason: Reason | None = None,
    ) -> None:
        refusal = substitute_refusal(self.judge, interaction, member)
        if refusal is not None:  # refused before anything is submitted
            await respond(interaction, refusal)
            return
        gid = game_here(self.judge, interaction)
        # the seat's holder as the command arrived: if another moderator's replacement gave
        # the seat away meanwhile, this one does nothing (as a form opened on the player)
        holder = holder_at(await state_at_arrival(self.judge, interaction, gid), seat)
        command = ReplacePlayer(
            seat=Seat(seat),
            player=holder,
            new_player=str(member.id),
            reason=(reason or "").strip(),
            by=str(interaction.user.id),
            at=self.judge.runtime.now_ms(),
        )
        # the name is recorded with the seat: names never come from a cache
        outcome = await answer_command(
            self.judge, interaction, gid, command, name=member.display_name
        )
        if outcome.ok:
            await after_replacement(self.judge, interaction, gid, member)

    @mod.command(name="modkill", description=_("Remove a player for inactivity"))
    @app_commands.describe(
        seat=_("The seat number of the player to remove from the game"),
        reason=_("Why, announced with the removal (at most 200 characters)"),
    )
    async def modkill(
        self, interaction: discord.Interaction[Any], seat: int, reason: Reason | None = None
    ) -> None:
        gid = game_here(self.judge, interaction)
        holder = holder_at(await state_at_arrival(self.judge, interaction, gid), seat)
        command = ModKill(
            seat=Seat(seat),
            player=holder,  # a seat replaced meanwhile: its substitute is not removed
            reason=(reason or "").strip(),
            by=str(interaction.user.id),
            at=self.judge.runtime.now_ms(),
        )
        await answer_command(self.judge, interaction, gid, command)

    @mod.command(name="void", description=_("Void a vote post"))
    @app_commands.describe(
        message_id=_(
            "The vote post's message ID, or its message link (Copy Message ID or Copy Message Link)"
        ),
        reason=_(
            "Why the vote is void; the bot replies to the post with it (at most 200 characters)"
        ),
    )
    async def void(
        self, interaction: discord.Interaction[Any], message_id: str, reason: Reason
    ) -> None:
        written = message_id.strip()
        link = MESSAGE_LINK.fullmatch(written)  # a message link ends with the message's id
        await self._do(
            interaction,
            VoidPost(
                post_id=link.group(1) if link else written,
                reason=reason.strip(),
                by=str(interaction.user.id),
                at=self.judge.runtime.now_ms(),
            ),
        )

    @mod.command(name="end", description=_("End the game"))
    @app_commands.describe(
        winner=_(
            "The result: the side that wins, or draw (suggested: those this game's ruleset has)"
        )
    )
    async def end(self, interaction: discord.Interaction[Any], winner: str) -> None:
        try:
            camp = Camp(winner.strip())
        except ValueError:  # typed, not picked: as the engine refuses a result of no side here
            rules = await self._rules_here(interaction)
            camps = rules.camps if rules is not None else frozenset(Camp)
            allowed = ", ".join(sorted(c.value for c in camps))
            await respond(
                interaction,
                text(self.judge, interaction, "mod.no_such_winner", winner=winner, allowed=allowed),
            )
            return
        await self._do(
            interaction,
            EndGame(winner=camp, by=str(interaction.user.id), at=self.judge.runtime.now_ms()),
        )

    @end.autocomplete("winner")
    async def _winners(
        self, interaction: discord.Interaction[Any], current: str
    ) -> list[app_commands.Choice[str]]:
        """The results this game's rules have (天下无贼's thieves only there), by name."""
        rules = await self._rules_here(interaction)
        camps = [c for c in Camp if rules is None or c in rules.camps]
        return self._named(interaction, "camp", camps, current)

    async def _rules_here(self, interaction: discord.Interaction[Any]) -> Ruleset | None:
        """The rules of the game of this channel, from its row (never its log: an autocomplete
        reads nothing more), or None where no game is."""
        try:
            gid = game_here(self.judge, interaction)
            info = await self.judge.runtime.service.info(gid)
        except (NoGame, GameNotFound):
            return None
        return RULESETS.get(info.ruleset)

    def _named(
        self,
        interaction: discord.Interaction[Any],
        section: str,
        values: list[Camp] | list[Team],
        current: str,
    ) -> list[app_commands.Choice[str]]:
        """Choices of ids shown by name in the asker's language, those matching what is typed
        (by name or id)."""
        typed = current.strip().lower()
        named = [(text(self.judge, interaction, f"{section}.{v.value}"), v.value) for v in values]
        return [
            app_commands.Choice(name=name, value=value)
            for name, value in named
            if typed in name.lower() or typed in value
        ][:25]

    @mod.command(
        name="penalty",
        description=_("Penalty: a team's or a seat's night power does not act next night"),
    )
    @app_commands.describe(
        team=_("The team whose night power is stopped (suggested); or give seat instead"),
        seat=_("Or the seat number whose night power is stopped"),
        power=_("Only this night power (default: every night power of the team or seat)"),
        reason=_("Why, announced with the penalty (at most 200 characters)"),
    )
    @app_commands.choices(  # by name in the client's language ("kill (杀人)", 杀人); the id is sent
        power=[
            app_commands.Choice(name=_(power_name(p)), value=p.value)
            for p in Power
            if p not in DAY_POWERS
        ],
    )
    async def penalty(
        self,
        interaction: discord.Interaction[Any],
        reason: Reason,
        team: str | None = None,
        seat: int | None = None,
        power: str | None = None,
    ) -> None:
        try:
            chosen = Team(team.strip()) if team else None
        except ValueError:  # typed, not picked
            await respond(interaction, text(self.judge, interaction, "mod.no_such_team", team=team))
            return
        await self._do(
            interaction,
            Penalize(
                team=chosen,
                seat=Seat(seat) if seat is not None else None,
                power=Power(power) if power else None,
                reason=reason.strip(),
                by=str(interaction.user.id),
                at=self.judge.runtime.now_ms(),
            ),
        )

    @penalty.autocomplete("team")
    async def _teams(
        self, interaction: discord.Interaction[Any], current: str
    ) -> list[app_commands.Choice[str]]:
        """The teams that use a power together in this game's rules, by name."""
        rules = await self._rules_here(interaction)
        teams = [t for t in Team if rules is None or rules.team_powers(t)]
        return self._named(interaction, "team_name", teams, current)

    @mod.command(
        name="pending", description=_("Who has not confirmed their role, used a power, or voted")
    )
    async def pending(self, interaction: discord.Interaction[Any]) -> None:
        from bot.runtime.pending_report import pending_text

        gid = game_here(self.judge, interaction)
        await respond(
            interaction, await pending_text(self.judge, gid, locale_of(self.judge, interaction))
        )

    @mod.command(name="log-channel", description=_("Where overrides are logged (empty: nowhere)"))
    @app_commands.describe(channel=_("Channel for the override log; left out: no log"))
    async def log_channel(
        self, interaction: discord.Interaction[Any], channel: discord.TextChannel | None = None
    ) -> None:
        from bot.discord.override_log import LOG_CHANNEL

        assert interaction.guild is not None
        await self.judge.runtime.service.repo.update_settings(
            interaction.guild.id, {LOG_CHANNEL: str(channel.id) if channel else None}
        )
        key = "log.channel_set" if channel else "log.channel_cleared"
        answer = text(self.judge, interaction, key, channel=channel.mention if channel else "")
        me = interaction.guild.me
        if channel is not None and me is not None:
            # the log is written by the bot: a channel it cannot post in would stay empty, each
            # line dropped with a warning in the bot's own log only
            perms = channel.permissions_for(me)
            if not (perms.view_channel and perms.send_messages):
                unwritable = "log.channel_unwritable"
                answer += "\n" + text(self.judge, interaction, unwritable, channel=channel.mention)
        await respond(interaction, answer)

    @mod.command(name="new-season", description=_("Start a new season of the standings"))
    @app_commands.describe(
        name=_("The new season's name, at most 32 characters (default: the next number)")
    )
    async def new_season(
        self, interaction: discord.Interaction[Any], name: str | None = None
    ) -> None:
        from bot.runtime.standings import (
            SEASON,
            SEASON_LIMIT,
            current_season,
            season_of,
        )

        assert interaction.guild is not None
        repo = self.judge.runtime.service.repo
        old = await current_season(repo, interaction.guild.id)
        # an earlier season's name would reopen its table, its old points counted on
        used = await repo.seasons(interaction.guild.id) - {old}
        fresh = unused_season_name(old, used)
        new = fresh if name is None else name.strip()
        if len(new) > SEASON_LIMIT:  # refused, not cut: a name cut short is not the one given
            answer = text(
                self.judge,
                interaction,
                "standings.season_name_too_long",
                max=SEASON_LIMIT,
                length=len(new),
            )
            await respond(interaction, answer)
            return
        if not new or new == old:  # a blank name would be read back as season "1"
            await respond(
                interaction, text(self.judge, interaction, "standings.bad_season_name", season=old)
            )
            return
        if new in used:
            answer = text(
                self.judge, interaction, "standings.season_name_used", season=new, next=fresh
            )
            await respond(interaction, answer)
            return
        moved: list[str] = []

        def begin(settings: dict[str, Any]) -> dict[str, Any]:
            # closes the season read above, only if it is still current: a second moderator's
            # new season at the same time is told, not a second announcement of the same
            if season_of(settings) != old:
                moved.append(season_of(settings))
                return {}
            return {SEASON: new}

        await repo.edit_settings(interaction.guild.id, begin)
        if moved:
            await respond(
                interaction, text(self.judge, interaction, "standings.season_moved", now=moved[0])
            )
            return
        await interaction.response.send_message(  # public: the server's language
            say(public_locale(self.judge), "standings.new_season", old=old, new=new)
        )
