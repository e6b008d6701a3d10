"""/standings (the season table) and /remind (turn one's deadline reminders on or off)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import discord
from discord import app_commands
from discord.app_commands import locale_str as _
from discord.ext import commands

from bot.discord.interactions import public_locale, respond, say, text
from bot.records.render import MESSAGE_LIMIT, plain
from bot.runtime.reminders import REMIND_OFF
from bot.runtime.standings import SEASON_LIMIT, current_season

if TYPE_CHECKING:
    from bot.discord.judge import Judge


SHOWN = 30
"""Rows shown by /standings at most: fewer when long names would pass the 2,000 characters of
one Discord message (`fitted`)."""


def fitted(head: list[str], rows: list[str], total: int, more: Callable[[int], str]) -> str:
    """The season table as one message of at most MESSAGE_LIMIT characters: `head`, then as
    many of `rows` as fit, in rank order and each whole, then `more(n)` for the `n` of the
    `total` players not listed (those past SHOWN too).

    One message, cut, rather than the table split over several: /standings answers one
    command in a channel where games are played, and a community reads a 积分榜 for its top;
    a run of posts would flood the channel (another post could even land between them), while
    the line saying how many are left out keeps anyone from taking the list for complete."""
    shown = len(rows)
    while True:
        lines = head + rows[:shown]
        if shown < total:
            lines.append(more(total - shown))
        message = "\n".join(lines)
        # Discord counts code points, as len() does; the head and that line alone are short
        if len(message) <= MESSAGE_LIMIT or shown == 0:
            return message
        shown -= 1


class SeasonCog(commands.Cog, name="SeasonCog"):
    """The long game: standings across games, and reminders."""

    def __init__(self, judge: Judge) -> None:
        self.judge = judge

    @app_commands.command(
        name="standings", description=_("The season standings: rank, player, games, wins, points")
    )
    @app_commands.describe(season=_("An earlier season's name (default: the current season)"))
    @app_commands.guild_only()
    async def standings(
        self, interaction: discord.Interaction[Any], season: str | None = None
    ) -> None:
        guild = interaction.guild
        assert guild is not None
        if season is not None and len(season) > SEASON_LIMIT:  # no season is named so
            await respond(
                interaction,
                text(self.judge, interaction, "standings.season_too_long", max=SEASON_LIMIT),
            )
            return
        repo = self.judge.runtime.service.repo
        name = season or await current_season(repo, guild.id)
        rows = await repo.standings(guild.id, name)
        locale = public_locale(self.judge)  # a public post
        head = [say(locale, "standings.title", season=name)]
        if not rows:
            head.append(say(locale, "standings.empty"))
        head.append(say(locale, "standings.header"))
        lines: list[str] = []
        for rank, row in enumerate(rows[:SHOWN], 1):
            member = guild.get_member(row.user_id)
            if member is None:
                if not interaction.response.is_done():
                    # a member not in the cache (left the server) is asked of Discord, one
                    # request each: answered "thinking…" first, or 3 s would not do for many
                    await interaction.response.defer(thinking=True)
                try:
                    member = await guild.fetch_member(row.user_id)
                except discord.HTTPException:
                    member = None
            # a name is shown as it reads: "~~" or a link in one must not reshape the table
            player = plain(member.display_name) if member else str(row.user_id)
            lines.append(
                say(
                    locale,
                    "standings.line",
                    rank=rank,
                    player=player,
                    games=row.games,
                    wins=row.wins,
                    points=row.points,
                )
            )
        table = fitted(
            head, lines, len(rows), lambda count: say(locale, "standings.more", count=count)
        )
        if interaction.response.is_done():
            await interaction.followup.send(table, allowed_mentions=discord.AllowedMentions.none())
        else:
            await interaction.response.send_message(
                table, allowed_mentions=discord.AllowedMentions.none()
            )

    @app_commands.command(
        name="remind", description=_("Turn your private deadline reminders on or off")
    )
    @app_commands.describe(
        state=_(
            "on or off: DM reminders before deadlines, on this server (from a DM: where you play)"
        )
    )
    @app_commands.choices(  # by name in the client's language; the value sent stays on / off
        state=[
            app_commands.Choice(name=_("on: remind me before deadlines"), value="on"),
            app_commands.Choice(name=_("off: no reminders"), value="off"),
        ]
    )
    async def remind(self, interaction: discord.Interaction[Any], state: str) -> None:
        repo = self.judge.runtime.service.repo
        if interaction.guild is not None:
            servers = {interaction.guild.id}
        else:  # in a DM: every server where this player is in a game
            games = {g for g, _seat in await repo.games_of_user(interaction.user.id)}
            servers = {(await self.judge.runtime.service.info(g)).server_id for g in games}
        if not servers:  # no game to find a server by: reminders are kept per server
            await respond(interaction, text(self.judge, interaction, "remind.no_server"))
            return
        user = interaction.user.id

        def switched(settings: dict[str, Any]) -> dict[str, Any]:
            off = {int(u) for u in settings.get(REMIND_OFF, [])}
            if state == "off":
                off.add(user)
            else:
                off.discard(user)
            return {REMIND_OFF: sorted(off)}

        for server in servers:  # the list edited as stored: two players at once both count
            await repo.edit_settings(server, switched)
        key = "remind.off" if state == "off" else "remind.on"
        await respond(interaction, text(self.judge, interaction, key))
