"""The Discord client: `create_bot(settings)` builds it; it wires the parts and forwards events.

The client holds no game logic. It builds the runtime (`bot.runtime`) with a port on itself
(`bot.discord.port`), opens the database in `setup_hook`, adds the cogs and the persistent views,
and after every connect checks its permissions and resumes the games: the runtime rebuilds every
active game, performs what the outbox still holds, reads the channels' history for posts made
while it was down, locks every window whose deadline has passed and schedules the rest.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import discord
from discord import app_commands
from discord.ext import commands

from bot.config import Settings
from bot.discord import lost_channels, membership
from bot.discord.authority import warn_missing_moderator_role
from bot.discord.cogs.game import GameCog
from bot.discord.cogs.mod_menus import ModMenusCog
from bot.discord.cogs.moderator import ModeratorCog
from bot.discord.cogs.play import LAST_WORDS_FORM, PlayCog, late_last_words
from bot.discord.cogs.season import SeasonCog
from bot.discord.effects import DiscordEffects
from bot.discord.interactions import (
    FORM_PREFIX,
    JudgeTree,
    answer_failure,
    answered_no_game,
    respond,
    text,
)
from bot.discord.judge import Judge
from bot.discord.port import DiscordPort
from bot.discord.required_permissions import lacking
from bot.discord.translator import FaguanTranslator
from bot.discord.views import ConfirmButton, PowerSelect
from bot.runtime import runtime as runtime_jobs
from bot.runtime.runtime import Runtime
from bot.runtime.service import GameService
from bot.runtime.timing import Clock, DeadlineScheduler, SystemClock
from bot.store import Database, Repository, open_database, upgrade

log = logging.getLogger(__name__)

LAST_WORDS = f"{FORM_PREFIX}{LAST_WORDS_FORM}:"
"""How a last words box's custom id begins (`play.LastWordsModal`)."""


def form_id(interaction: discord.Interaction[Any]) -> str:
    """The custom id an interaction carries ("" if none)."""
    data: Mapping[str, Any] = interaction.data or {}
    return str(data.get("custom_id", ""))


def dropped_form(client: discord.Client, interaction: discord.Interaction[Any]) -> bool:
    """Whether `interaction` is a form of the bot's sent after discord.py dropped it (opened
    before a restart, or kept past `FORM_TIMEOUT`): no live form of its custom id took it up.

    discord.py hands a form's submit to the live form of its custom id
    (`ViewStore.dispatch_modal`: a task, started) before it dispatches `on_interaction` (a task
    started after that one): when this runs, a live form that took the submit is still in the
    store, or has finished and answered. So one neither in the store nor answered was taken up
    by none — decided without waiting, and never answered twice."""
    if interaction.type is not discord.InteractionType.modal_submit:
        return False
    custom_id = form_id(interaction)
    if not custom_id.startswith(FORM_PREFIX):
        return False
    live = client._connection._view_store._modals
    return custom_id not in live and not interaction.response.is_done()


class FaguanBot(commands.Bot):
    """The judge on Discord: the discord.py client, the runtime it serves, and their wiring."""

    def __init__(
        self,
        settings: Settings,
        *,
        clock: Clock | None = None,
        scheduler: DeadlineScheduler | None = None,
        database: Database | None = None,
        seed_source: Any = None,
        **options: Any,
    ) -> None:
        intents = discord.Intents.default()
        intents.message_content = True
        intents.members = True
        # The bot relays players' words (vote posts, last words, names): it pings nobody unless a
        # message says whom (a player's own notice, the moderators' role when stuck).
        options.setdefault("allowed_mentions", discord.AllowedMentions.none())
        options.setdefault("tree_cls", JudgeTree)
        super().__init__(command_prefix=commands.when_mentioned, intents=intents, **options)
        self.settings = settings
        clock = clock or SystemClock()
        self._database = database
        self._owns_database = database is None
        self.effects = DiscordEffects(self)
        self.runtime = Runtime(
            settings,
            port=DiscordPort(self, self.effects),
            clock=clock,
            scheduler=scheduler or DeadlineScheduler(clock),
            seed_source=seed_source,
        )
        self.judge = Judge(self, self.runtime)
        self.missing_permissions: dict[int, list[str]] = {}
        """Per server, the permissions the bot lacks there (checked at every connect)."""
        self._role_checked: set[int] = set()
        """Servers whose moderator role was checked since start."""

    # -- lifecycle ---------------------------------------------------------------------------------
    async def setup_hook(self) -> None:
        """Database, runtime, commands, persistent views."""
        url = self.settings.database.url
        if self._database is None:
            await upgrade(url)
            self._database = open_database(url)
        # one clock for the bot: an effect's record time bounds a repeat's look for its own
        # earlier send among the channel's messages (`DiscordEffects`)
        repo = Repository(self._database.sessions, clock=self.runtime.clock.now)
        service = GameService(repo, self.runtime.clock)
        service.set_performer(self.effects)
        self.runtime.start(service)
        for cog in (GameCog, PlayCog, ModeratorCog, ModMenusCog, SeasonCog):
            await self.add_cog(cog(self.judge))
        self.add_dynamic_items(ConfirmButton, PowerSelect)
        self.tree.error(self.on_app_command_error)
        await self.tree.set_translator(FaguanTranslator())
        await self.tree.sync()
        if not self.runtime.scheduler.manual:
            self.runtime.scheduler.start()

    async def on_ready(self) -> None:
        """After every connect: check permissions and the moderator role, then resume the games."""
        self.check_permissions()
        for guild in self.guilds:
            if guild.id not in self._role_checked:  # once per server, not at every reconnect
                self._role_checked.add(guild.id)
                await warn_missing_moderator_role(self.judge, guild)
        await runtime_jobs.resume_games(self.runtime.key)

    async def on_guild_join(self, guild: discord.Guild) -> None:
        """A new server: say if the configured moderator role is not one of its roles. A server
        the bot is back on: its games waiting for it resume."""
        await warn_missing_moderator_role(self.judge, guild)
        await self.runtime.rejoin_server(guild.id)

    async def on_member_join(self, member: discord.Member) -> None:
        """A player of a game in play back on its server: let in again as they were."""
        await membership.member_back(self.judge, member)

    async def on_raw_member_remove(self, payload: discord.RawMemberRemoveEvent) -> None:
        """A player of a game in play left its server: its moderators are told."""
        await membership.member_left(self.judge, payload.guild_id, payload.user.id)

    async def on_guild_remove(self, guild: discord.Guild) -> None:
        """Kicked from a server, or the server deleted: its games wait for the bot's return."""
        await self.runtime.leave_server(guild.id)

    async def on_guild_channel_delete(self, channel: discord.abc.GuildChannel) -> None:
        """A game's own channel deleted: the game stops (`bot.discord.lost_channels`)."""
        await lost_channels.channel_deleted(self.judge, channel.id, self.effects.send_once)

    async def on_raw_thread_delete(self, payload: discord.RawThreadDeleteEvent) -> None:
        """A forum game's main post deleted: the game stops; its open day's 投票帖: a new one
        (`bot.discord.lost_channels`)."""
        await lost_channels.channel_deleted(self.judge, payload.thread_id, self.effects.send_once)

    async def resume_games(self) -> None:
        """Recover, catch up, reconcile deadlines (raises if the database is away)."""
        await self.runtime.resume_games()

    async def close(self) -> None:
        """Stop timers and the database with the bot. In this order: no job or delivery starts
        and those under way finish (`runtime.aclose`: the scheduler's shutdown cancels the jobs
        still running, and the platform must still be there for their calls), then Discord,
        then the store flushes the last done marks; the caller releases the shard claim after."""
        await self.runtime.aclose()
        if not self.runtime.scheduler.manual:
            self.runtime.scheduler.shutdown()
        await super().close()
        if self.runtime.started:
            try:
                await self.runtime.service.close()  # the last done marks and snapshots
            except Exception as exc:  # recovery performs those effects again, idempotently
                log.warning("closing: the store's last writes failed (%s)", type(exc).__name__)
        if self._owns_database and self._database is not None:
            await self._database.dispose()

    async def on_interaction(self, interaction: discord.Interaction[Any]) -> None:
        """A form of the bot's that discord.py dropped (`dropped_form`) would leave the person
        with "Something went wrong": last words typed in it are submitted all the same (its
        custom id names the game); a moderator's form is answered that it expired, nothing
        done, to be opened again (it is about a post or a player its id does not name)."""
        if not dropped_form(self, interaction):
            return
        try:
            if form_id(interaction).startswith(LAST_WORDS):
                await late_last_words(self.judge, interaction)
            else:
                await respond(interaction, text(self.judge, interaction, "notice.form_expired"))
        except Exception as exc:  # answered as a command's failure is: never left unanswered
            await answer_failure(self.judge, interaction, exc, "a form sent after it expired")

    async def on_app_command_error(
        self, interaction: discord.Interaction[Any], error: app_commands.AppCommandError
    ) -> None:
        """A command about no game: say why. An unexpected failure (Discord or the database
        away): log it, ask to try again."""
        if isinstance(error, app_commands.CheckFailure):
            return  # the check answered
        if await answered_no_game(self.judge, interaction, error):
            return
        original = getattr(error, "original", error)
        name = interaction.command.qualified_name if interaction.command else "?"
        await answer_failure(self.judge, interaction, original, f"command /{name}")

    def check_permissions(self) -> None:
        """Say, per guild, which permissions the bot lacks."""
        for guild in self.guilds:
            me = guild.me
            perms = me.guild_permissions if me else discord.Permissions.none()
            missing = lacking(perms)
            if not self.intents.message_content:
                missing.append("message_content intent")
            self.missing_permissions[guild.id] = missing
            if missing:
                log.warning("guild %s: missing permissions: %s", guild.id, ", ".join(missing))


def create_bot(
    settings: Settings,
    *,
    clock: Clock | None = None,
    scheduler: DeadlineScheduler | None = None,
    database: Database | None = None,
    **options: Any,
) -> FaguanBot:
    """Build the bot; sharded (AutoShardedBot) when the settings ask for shards."""
    shards = settings.discord
    if shards.shard_count is not None:
        cls: type[FaguanBot] = type("ShardedFaguanBot", (FaguanBot, commands.AutoShardedBot), {})
        options.setdefault("shard_count", shards.shard_count)
        if shards.shard_ids is not None:
            options.setdefault("shard_ids", list(shards.shard_ids))
        return cls(settings, clock=clock, scheduler=scheduler, database=database, **options)
    return FaguanBot(settings, clock=clock, scheduler=scheduler, database=database, **options)
