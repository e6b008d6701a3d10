"""/mod: the moderator's overrides, each an engine command (recorded and announced)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import discord
from discord import app_commands
from discord.app_commands import locale_str as _
from discord.ext import commands

from bot.discord.interactions import (
    NoGame,
    answer_command,
    find_game,
    is_moderator,
    locale_of,
    moderates,
    public_locale,
    respond,
    say,
    text,
    window_at_arrival,
)
from bot.records.render import error_text
from bot.runtime.schedule import from_ms, to_ms
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

if TYPE_CHECKING:
    from bot.discord.judge import Judge


SERVER_COMMANDS = frozenset({"log-channel", "new-season"})
"""/mod commands about the server, not a game: any moderator of the server may use them."""


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
            gid = await find_game(self.judge, interaction)
        except NoGame:
            return True  # the command itself says there is no game here
        return await moderates(self.judge, interaction, gid)

    async def _do(
        self,
        interaction: discord.Interaction[Any],
        command: Command,
        game_id: int | None = None,
        *,
        name: str | None = None,
    ) -> None:
        gid = await find_game(self.judge, interaction, game_id)
        await answer_command(self.judge, interaction, gid, command, name=name)

    async def _timed(
        self,
        interaction: discord.Interaction[Any],
        build: Callable[[int | None], Command],
        game_id: int | None = None,
    ) -> None:
        """A clock override (extend, shorten, set-deadline, pause, resume) for the open window."""
        gid = await find_game(self.judge, interaction, game_id)
        command = build(await window_at_arrival(self.judge, interaction, gid))
        await answer_command(self.judge, interaction, gid, command)

    @mod.command(name="extend", description=_("Extend the current deadline"))
    async def extend(
        self, interaction: discord.Interaction[Any], minutes: app_commands.Range[int, 1, 100000]
    ) -> None:
        by, now = str(interaction.user.id), self.judge.runtime.now_ms()
        await self._timed(
            interaction,
            lambda window: ExtendDeadline(delta_ms=minutes * 60_000, by=by, at=now, window=window),
        )

    @mod.command(name="shorten", description=_("Shorten the current deadline"))
    async def shorten(
        self, interaction: discord.Interaction[Any], minutes: app_commands.Range[int, 1, 100000]
    ) -> None:
        by, now = str(interaction.user.id), self.judge.runtime.now_ms()
        await self._timed(
            interaction,
            lambda window: ExtendDeadline(delta_ms=-minutes * 60_000, by=by, at=now, window=window),
        )

    @mod.command(
        name="set-deadline", description=_("Set the current deadline (YYYY-MM-DD HH:MM, game time)")
    )
    async def set_deadline(self, interaction: discord.Interaction[Any], time: str) -> None:
        by, now = str(interaction.user.id), self.judge.runtime.now_ms()
        gid = await find_game(self.judge, interaction)
        window = await window_at_arrival(self.judge, interaction, gid)
        ctx = await self.judge.runtime.contexts.context(gid)
        try:
            local = dt.datetime.strptime(time.strip(), "%Y-%m-%d %H:%M").replace(
                tzinfo=ctx.timezone
            )
            from_ms(to_ms(local))  # a deadline the scheduler can hold (not at year 1 or 9999)
        except (ValueError, OverflowError):
            await respond(interaction, text(self.judge, interaction, "notice.bad_time", value=time))
            return
        command = SetDeadline(deadline=Instant(to_ms(local)), by=by, at=now, window=window)
        await answer_command(self.judge, interaction, gid, command)

    @mod.command(name="advance", description=_("Lock the current window now"))
    async def advance(self, interaction: discord.Interaction[Any]) -> None:
        gid = await find_game(self.judge, interaction)
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
        await self._timed(interaction, lambda window: Pause(at=now, by=by, window=window))

    @mod.command(name="resume", description=_("Resume the clock"))
    async def resume(self, interaction: discord.Interaction[Any]) -> None:
        by, now = str(interaction.user.id), self.judge.runtime.now_ms()
        await self._timed(interaction, lambda window: Resume(at=now, by=by, window=window))

    @mod.command(name="replace", description=_("Replace a player with a substitute"))
    async def replace(
        self,
        interaction: discord.Interaction[Any],
        seat: int,
        member: discord.Member,
        reason: str | None = None,
    ) -> None:
        if member.bot:  # a bot never plays: refused before anything is submitted
            await respond(
                interaction,
                text(self.judge, interaction, "mod.substitute_is_bot", name=member.display_name),
            )
            return
        await self._do(
            interaction,
            ReplacePlayer(
                seat=Seat(seat),
                new_player=str(member.id),
                reason=(reason or "").strip(),
                by=str(interaction.user.id),
                at=self.judge.runtime.now_ms(),
            ),
            name=member.display_name,  # recorded with the seat: names never come from a cache
        )

    @mod.command(name="modkill", description=_("Remove a player for inactivity"))
    async def modkill(
        self, interaction: discord.Interaction[Any], seat: int, reason: str | None = None
    ) -> None:
        await self._do(
            interaction,
            ModKill(
                seat=Seat(seat),
                reason=(reason or "").strip(),
                by=str(interaction.user.id),
                at=self.judge.runtime.now_ms(),
            ),
        )

    @mod.command(name="void", description=_("Void a vote post"))
    async def void(
        self, interaction: discord.Interaction[Any], message_id: str, reason: str
    ) -> None:
        await self._do(
            interaction,
            VoidPost(
                post_id=message_id.strip(),
                reason=reason,
                by=str(interaction.user.id),
                at=self.judge.runtime.now_ms(),
            ),
        )

    @mod.command(name="end", description=_("End the game"))
    @app_commands.choices(winner=[app_commands.Choice(name=c.value, value=c.value) for c in Camp])
    async def end(self, interaction: discord.Interaction[Any], winner: str) -> None:
        await self._do(
            interaction,
            EndGame(
                winner=Camp(winner), by=str(interaction.user.id), at=self.judge.runtime.now_ms()
            ),
        )

    @mod.command(
        name="penalty",
        description=_("Penalty: a team's or a seat's night power does not act next night"),
    )
    @app_commands.describe(team=_("team"), seat=_("seat"), power=_("power"), reason=_("reason"))
    @app_commands.choices(
        team=[app_commands.Choice(name=t.value, value=t.value) for t in Team],
        power=[app_commands.Choice(name=p.value, value=p.value) for p in Power],
    )
    async def penalty(
        self,
        interaction: discord.Interaction[Any],
        reason: str,
        team: str | None = None,
        seat: int | None = None,
        power: str | None = None,
    ) -> None:
        await self._do(
            interaction,
            Penalize(
                team=Team(team) if team else None,
                seat=Seat(seat) if seat is not None else None,
                power=Power(power) if power else None,
                reason=reason,
                by=str(interaction.user.id),
                at=self.judge.runtime.now_ms(),
            ),
        )

    @mod.command(
        name="pending", description=_("Who has not confirmed their role, used a power, or voted")
    )
    async def pending(self, interaction: discord.Interaction[Any]) -> None:
        from bot.runtime.pending_report import pending_text

        gid = await find_game(self.judge, interaction)
        await respond(
            interaction, await pending_text(self.judge, gid, locale_of(self.judge, interaction))
        )

    @mod.command(name="log-channel", description=_("Where overrides are logged (empty: nowhere)"))
    @app_commands.describe(channel=_("channel"))
    async def log_channel(
        self, interaction: discord.Interaction[Any], channel: discord.TextChannel | None = None
    ) -> None:
        from bot.discord.override_log import LOG_CHANNEL

        assert interaction.guild is not None
        await self.judge.runtime.service.repo.update_settings(
            interaction.guild.id, {LOG_CHANNEL: str(channel.id) if channel else None}
        )
        key = "log.channel_set" if channel else "log.channel_cleared"
        await respond(
            interaction,
            text(self.judge, interaction, key, channel=channel.mention if channel else ""),
        )

    @mod.command(name="new-season", description=_("Start a new season of the standings"))
    @app_commands.describe(name=_("name"))
    async def new_season(
        self, interaction: discord.Interaction[Any], name: str | None = None
    ) -> None:
        from bot.runtime.standings import (
            SEASON,
            SEASON_LIMIT,
            current_season,
            next_season_name,
            season_of,
        )

        assert interaction.guild is not None
        repo = self.judge.runtime.service.repo
        old = await current_season(repo, interaction.guild.id)
        new = (next_season_name(old) if name is None else name.strip())[:SEASON_LIMIT]
        if not new or new == old:  # a blank name would be read back as season "1"
            await respond(
                interaction, text(self.judge, interaction, "standings.bad_season_name", season=old)
            )
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
