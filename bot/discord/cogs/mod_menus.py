"""The moderators' actions on the thing itself: right-click a vote post or a player.

"Void this vote" (判为无效) on a post, "Replace" (替补) and "Modkill" (移出游戏) on a member each
open a short form: the reason, and for a replacement the substitute, picked from the server's
members in the form. They submit the same engine commands as `/mod void`, `/mod replace` and
`/mod modkill` (which stay, for scripts), under the same check: a moderator of the server who
holds no seat in the game.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import discord
from discord import app_commands
from discord.app_commands import locale_str as _
from discord.ext import commands

from bot.discord.cogs.game import sees_private_threads
from bot.discord.interactions import (
    FORM_TIMEOUT,
    AnswersFailures,
    NoGame,
    answer_command,
    find_game,
    form_custom_id,
    is_moderator,
    locale_of,
    moderates,
    respond,
    say,
    text,
)
from bot.records.render import error_text, plain
from bot.runtime.hosting import is_forum
from engine.commands import Command, ModKill, ReplacePlayer, VoidPost
from engine.errors import EngineError
from engine.game import decide
from engine.model import Seat

if TYPE_CHECKING:
    from bot.discord.judge import Judge

REASON_LIMIT = 200
"""The longest reason a moderator may give (forms and /mod alike): it is announced publicly."""


def substitute_refusal(
    judge: Judge, interaction: discord.Interaction[Any], member: discord.abc.User
) -> str | None:
    """Why `member` cannot take a seat as a substitute, in the asker's language (None: they
    may). A bot never plays. Nor does a moderator of the server: during the game each of them
    could read /mod pending (who still owes a power at night: the power holders) and was sent
    the moderators' notices, so taking a seat would carry that into the game. Both are facts
    about the member, never about any role."""
    if member.bot:
        return text(judge, interaction, "mod.substitute_is_bot", name=plain(member.display_name))
    if is_moderator(judge, member):
        return text(
            judge, interaction, "mod.substitute_is_moderator", name=plain(member.display_name)
        )
    return None


async def after_replacement(
    judge: Judge, interaction: discord.Interaction[Any], game_id: int, member: discord.abc.User
) -> None:
    """A substitute who can read every private thread of the channel the team threads are made
    in (Manage Threads or Administrator there) is named to the moderator, as the players are at
    `/game start`: by the permission alone, whatever the seat's role."""
    if interaction.guild is None or not isinstance(member, discord.Member):
        return
    channels = (await judge.runtime.service.info(game_id)).channels
    teams = channels.get("teams") if is_forum(channels) else channels.get("game")
    channel = interaction.guild.get_channel(int(teams)) if teams else None
    if channel is None or not sees_private_threads(channel, member):
        return
    warning = text(
        judge,
        interaction,
        "notice.players_see_private_threads",
        channel=f"<#{channel.id}>",
        players=member.mention,
    )
    await respond(interaction, warning, allowed_mentions=discord.AllowedMentions.none())


class ReasonForm(AnswersFailures, discord.ui.Modal):
    """A moderator's form with a reason; submits the command `command` builds from it.

    Its custom id names the interaction that opened it: discord.py keeps open forms by custom
    id alone, so two moderators' forms of one kind in one game must not share one (the second
    would replace the first, and the first's submit run the second's form). One sent after the
    bot dropped it (a restart, `FORM_TIMEOUT`) is answered that it expired
    (`client.FaguanBot.on_interaction`): the post or player it was about is not in its id.
    Worded in `locale`, the asker's (titled `mod.{kind}_form`)."""

    def __init__(self, judge: Judge, game_id: int, opened: int, kind: str, locale: str) -> None:
        super().__init__(
            title=say(locale, f"mod.{kind}_form"),
            custom_id=form_custom_id(kind, game_id, opened),
            timeout=FORM_TIMEOUT,
        )
        self.judge, self.game_id, self.locale = judge, game_id, locale
        self.extra_items()
        self.reason: discord.ui.TextInput[Any] = discord.ui.TextInput(
            label=say(locale, "mod.form_reason"),
            custom_id="reason",
            max_length=REASON_LIMIT,
            required=True,
        )
        self.add_item(self.reason)

    def extra_items(self) -> None:
        """Inputs shown above the reason (none by default)."""

    def command(self, by: str, reason: str) -> Command:
        raise NotImplementedError

    def name(self) -> str | None:
        """A substitute's display name, recorded with their seat (None: no one new)."""
        return None

    async def on_submit(self, interaction: discord.Interaction[Any]) -> None:
        command = self.command(str(interaction.user.id), str(self.reason.value).strip())
        outcome = await answer_command(
            self.judge, interaction, self.game_id, command, name=self.name()
        )
        if outcome.ok:
            await self.done(interaction)

    async def done(self, interaction: discord.Interaction[Any]) -> None:
        """After the command was taken (nothing more by default)."""


class VoidForm(ReasonForm):
    """Why a vote post does not count."""

    def __init__(self, judge: Judge, game_id: int, opened: int, post_id: int, locale: str) -> None:
        self.post_id = post_id
        super().__init__(judge, game_id, opened, "void", locale)

    def command(self, by: str, reason: str) -> Command:
        return VoidPost(
            post_id=str(self.post_id), reason=reason, by=by, at=self.judge.runtime.now_ms()
        )


class ModKillForm(ReasonForm):
    """Why a player is removed from the game."""

    def __init__(
        self, judge: Judge, game_id: int, opened: int, seat: Seat, holder: str, locale: str
    ) -> None:
        self.seat, self.holder = seat, holder  # the seat's holder now: refused once replaced
        super().__init__(judge, game_id, opened, "modkill", locale)

    def command(self, by: str, reason: str) -> Command:
        return ModKill(
            seat=self.seat,
            player=self.holder,
            reason=reason,
            by=by,
            at=self.judge.runtime.now_ms(),
        )


class ReplaceForm(ReasonForm):
    """Who takes the seat over (a member picker inside the form), and why."""

    def __init__(
        self, judge: Judge, game_id: int, opened: int, seat: Seat, holder: str, locale: str
    ) -> None:
        self.seat, self.holder = seat, holder  # the seat's holder now: refused once replaced
        self.picker: discord.ui.UserSelect[Any] = discord.ui.UserSelect(
            custom_id="substitute", min_values=1, max_values=1
        )
        super().__init__(judge, game_id, opened, "replace", locale)

    def extra_items(self) -> None:
        label = say(self.locale, "mod.form_substitute")
        self.add_item(discord.ui.Label(text=label, component=self.picker))

    def command(self, by: str, reason: str) -> Command:
        return ReplacePlayer(
            seat=self.seat,
            player=self.holder,
            new_player=str(self.picker.values[0].id),
            reason=reason,
            by=by,
            at=self.judge.runtime.now_ms(),
        )

    def name(self) -> str | None:
        return self.picker.values[0].display_name

    async def on_submit(self, interaction: discord.Interaction[Any]) -> None:
        refusal = substitute_refusal(self.judge, interaction, self.picker.values[0])
        if refusal is not None:  # refused before anything is submitted
            await respond(interaction, refusal)
            return
        await super().on_submit(interaction)

    async def done(self, interaction: discord.Interaction[Any]) -> None:
        await after_replacement(self.judge, interaction, self.game_id, self.picker.values[0])


class ModMenusCog(commands.Cog, name="ModMenusCog"):
    """Registers the three context menus (they cannot live inside a cog's class body)."""

    def __init__(self, judge: Judge) -> None:
        self.judge = judge
        self.menus = [
            app_commands.ContextMenu(name=_("Void this vote"), callback=self.void_vote),
            app_commands.ContextMenu(name=_("Replace"), callback=self.replace),
            app_commands.ContextMenu(name=_("Modkill"), callback=self.modkill),
        ]
        for menu in self.menus:
            menu.guild_only = True

    async def cog_load(self) -> None:
        for menu in self.menus:
            self.judge.client.tree.add_command(menu)

    async def cog_unload(self) -> None:
        for menu in self.menus:
            self.judge.client.tree.remove_command(menu.name, type=menu.type)

    async def _game(
        self, interaction: discord.Interaction[Any], member: discord.abc.User | None = None
    ) -> int | None:
        """The game acted on (this channel's, else the member's only game) if the asker may
        moderate it; otherwise they are told why not and None is returned."""
        try:
            gid = await find_game(self.judge, interaction)
        except NoGame as none:
            held = await self.judge.runtime.service.repo.games_of_user(member.id) if member else []
            server = interaction.guild.id if interaction.guild else None
            games = sorted(  # the member's games on this server: never another server's
                {
                    game
                    for game, _seat in held
                    if (await self.judge.runtime.service.info(game)).server_id == server
                }
            )
            if len(games) != 1:
                if await moderates(self.judge, interaction, None):
                    await respond(interaction, text(self.judge, interaction, none.key))
                return None
            gid = games[0]
        return gid if await moderates(self.judge, interaction, gid) else None

    async def void_vote(
        self, interaction: discord.Interaction[Any], message: discord.Message
    ) -> None:
        gid = await self._game(interaction)
        if gid is None:
            return
        # what the form would be refused for (the game over, no vote post of the open window,
        # one already void) is said before it is filled in: the engine's own checks, on a copy
        probe = VoidPost(post_id=str(message.id), reason="")
        if await self._refused(interaction, gid, probe):
            return
        locale = locale_of(self.judge, interaction)
        form = VoidForm(self.judge, gid, interaction.id, message.id, locale)
        await interaction.response.send_modal(form)

    async def _refused(
        self, interaction: discord.Interaction[Any], game_id: int, command: Command
    ) -> bool:
        """Whether the engine would refuse `command` now (the asker is then told why)."""
        state = await self.judge.runtime.service.state(game_id)
        try:
            decide(state, command)
        except EngineError as error:
            ctx = await self.judge.runtime.contexts.context(
                game_id, state, locale=locale_of(self.judge, interaction)
            )
            await respond(interaction, error_text(ctx, error.key, error.params))
            return True
        return False

    async def _seat(
        self, interaction: discord.Interaction[Any], member: discord.Member | discord.User
    ) -> tuple[int, Seat] | None:
        """The game and the living seat of the member acted on, or None (the asker is told)."""
        gid = await self._game(interaction, member)
        if gid is None:
            return None
        state = await self.judge.runtime.service.state(gid)
        if state.over:  # said before the form, not after it is filled in
            await respond(interaction, text(self.judge, interaction, "phase.game_over"))
            return None
        seat = state.seat_of(str(member.id))
        if seat is None:
            await respond(
                interaction,
                text(self.judge, interaction, "notice.not_seated", name=plain(member.display_name)),
            )
            return None
        if not state.seat(seat).alive:  # said before the form, not after it is filled in
            await respond(
                interaction, text(self.judge, interaction, "mod.seat_out_of_game", seat=int(seat))
            )
            return None
        return gid, seat

    async def replace(
        self, interaction: discord.Interaction[Any], member: discord.Member | discord.User
    ) -> None:
        found = await self._seat(interaction, member)
        if found is not None:
            gid, seat = found
            locale = locale_of(self.judge, interaction)
            form = ReplaceForm(self.judge, gid, interaction.id, seat, str(member.id), locale)
            await interaction.response.send_modal(form)

    async def modkill(
        self, interaction: discord.Interaction[Any], member: discord.Member | discord.User
    ) -> None:
        found = await self._seat(interaction, member)
        if found is not None:
            gid, seat = found
            locale = locale_of(self.judge, interaction)
            form = ModKillForm(self.judge, gid, interaction.id, seat, str(member.id), locale)
            await interaction.response.send_modal(form)
