"""The moderators' actions on the thing itself: right-click a vote post or a player.

"Void this vote" (判为无效) on a post, "Replace" (替补) and "Modkill" (处决) on a member each open a
short form: the reason, and for a replacement the substitute, picked from the server's members
in the form. They submit the same engine commands as `/mod void`, `/mod replace` and `/mod
modkill` (which stay, for scripts), under the same check: a moderator of the server who holds no
seat in the game.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import discord
from discord import app_commands
from discord.app_commands import locale_str as _
from discord.ext import commands

from bot.discord.interactions import (
    FORM_TIMEOUT,
    AnswersFailures,
    NoGame,
    answer_command,
    find_game,
    moderates,
    respond,
    text,
)
from engine.commands import Command, ModKill, ReplacePlayer, VoidPost
from engine.model import Seat

if TYPE_CHECKING:
    from bot.discord.judge import Judge

REASON_LIMIT = 200


class ReasonForm(AnswersFailures, discord.ui.Modal):
    """A moderator's form with a reason; submits the command `command` builds from it.

    Its custom id names the interaction that opened it: discord.py keeps open forms by custom
    id alone, so two moderators' forms of one kind in one game must not share one (the second
    would replace the first, and the first's submit run the second's form)."""

    def __init__(self, judge: Judge, game_id: int, opened: int, title: str, kind: str) -> None:
        super().__init__(
            title=title, custom_id=f"faguan:{kind}:{game_id}:{opened}", timeout=FORM_TIMEOUT
        )
        self.judge, self.game_id = judge, game_id
        self.extra_items()
        self.reason: discord.ui.TextInput[Any] = discord.ui.TextInput(
            label="理由 / Reason", custom_id="reason", max_length=REASON_LIMIT, required=True
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
        await answer_command(self.judge, interaction, self.game_id, command, name=self.name())


class VoidForm(ReasonForm):
    """Why a vote post does not count."""

    def __init__(self, judge: Judge, game_id: int, opened: int, post_id: int) -> None:
        self.post_id = post_id
        super().__init__(judge, game_id, opened, "判为无效 / Void this vote", "void")

    def command(self, by: str, reason: str) -> Command:
        return VoidPost(
            post_id=str(self.post_id), reason=reason, by=by, at=self.judge.runtime.now_ms()
        )


class ModKillForm(ReasonForm):
    """Why a player is removed from the game."""

    def __init__(self, judge: Judge, game_id: int, opened: int, seat: Seat, holder: str) -> None:
        self.seat, self.holder = seat, holder  # the seat's holder now: refused once replaced
        super().__init__(judge, game_id, opened, "处决 / Modkill", "modkill")

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

    def __init__(self, judge: Judge, game_id: int, opened: int, seat: Seat, holder: str) -> None:
        self.seat, self.holder = seat, holder  # the seat's holder now: refused once replaced
        self.picker: discord.ui.UserSelect[Any] = discord.ui.UserSelect(
            custom_id="substitute", min_values=1, max_values=1
        )
        super().__init__(judge, game_id, opened, "替补 / Replace", "replace")

    def extra_items(self) -> None:
        self.add_item(discord.ui.Label(text="替补 / Substitute", component=self.picker))

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
        picked = self.picker.values[0]
        if picked.bot:  # a bot never plays: refused before anything is submitted
            await respond(
                interaction,
                text(self.judge, interaction, "mod.substitute_is_bot", name=picked.display_name),
            )
            return
        await super().on_submit(interaction)


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
            games = sorted({game for game, _seat in held})
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
        await interaction.response.send_modal(VoidForm(self.judge, gid, interaction.id, message.id))

    async def _seat(
        self, interaction: discord.Interaction[Any], member: discord.Member | discord.User
    ) -> tuple[int, Seat] | None:
        """The game and the living seat of the member acted on, or None (the asker is told)."""
        gid = await self._game(interaction, member)
        if gid is None:
            return None
        state = await self.judge.runtime.service.state(gid)
        seat = state.seat_of(str(member.id))
        if seat is None:
            await respond(
                interaction,
                text(self.judge, interaction, "notice.not_seated", name=member.display_name),
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
            form = ReplaceForm(self.judge, gid, interaction.id, seat, str(member.id))
            await interaction.response.send_modal(form)

    async def modkill(
        self, interaction: discord.Interaction[Any], member: discord.Member | discord.User
    ) -> None:
        found = await self._seat(interaction, member)
        if found is not None:
            gid, seat = found
            form = ModKillForm(self.judge, gid, interaction.id, seat, str(member.id))
            await interaction.response.send_modal(form)
