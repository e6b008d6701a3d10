"""The Discord application: `create_bot(settings)` builds the bot; `setup_hook` wires it.

At start the bot upgrades the database, rebuilds every active game and performs what the outbox
still holds, then (once connected) reads the channels' history for posts made while it was down,
locks every window whose deadline has passed and schedules the rest.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import datetime as dt
import gc
import logging
import secrets
from collections.abc import Awaitable, Callable
from typing import Any
from zoneinfo import ZoneInfo

import discord
from discord import app_commands
from discord.ext import commands

from bot.config import Settings
from bot.discord import permissions
from bot.discord.effects import DiscordEffects
from bot.discord.translator import FaguanTranslator
from bot.discord.views import ConfirmButton, PowerSelect
from bot.records.i18n import render
from bot.records.render import Context, error_text
from bot.runtime.schedule import from_ms, to_ms
from bot.runtime.service import GameService, Outcome
from bot.runtime.timing import Clock, DeadlineScheduler, SystemClock
from bot.store import Database, LobbyInfo, Repository, open_database, upgrade
from engine.commands import Command
from engine.model import Instant, Seat, Team
from engine.rulesets import rules_for
from engine.state import GameState

log = logging.getLogger(__name__)

REQUIRED_PERMISSIONS = (
    "manage_roles",
    "manage_channels",
    "manage_threads",
    "create_private_threads",
    "view_channel",
    "send_messages",
    "send_messages_in_threads",
    "read_message_history",
    "add_reactions",
)
"""What the bot does on a server: players' roles and channel overwrites (Manage Roles, Manage
Channels), the teams' private threads, the lock posts and results, reading vote posts back, the
✅ on a counted vote. The README's invite list is checked against this (tests/bot/test_docs.py)."""

_APPS: dict[int, FaguanBot] = {}
"""Running bots by id, so module-level deadline jobs can find theirs."""


RETRY_CAP_SECONDS = 300
STUCK_AFTER = 5
"""Attempts after which the moderators are told that something is stuck."""


def backoff(attempts: int) -> float:
    """Seconds before the next try: 2, 4, 8 … capped at five minutes."""
    return float(min(2**attempts, RETRY_CAP_SECONDS))


async def fire_deadline(bot_key: int, game_id: int) -> None:
    """The deadline job (module-level, as APScheduler wants): lock the game's window.

    If the lock cannot be done now (Discord or the database failing), it is tried again later:
    a deadline is never dropped, and votes are judged by their own times whenever it happens."""
    bot = _APPS.get(bot_key)
    if bot is None:
        return
    try:
        await bot.lock_due(game_id)
        bot.lock_failures.pop(game_id, None)
    except Exception as exc:
        tries = bot.lock_failures.get(game_id, 0) + 1
        bot.lock_failures[game_id] = tries
        log.error("game %s: lock failed (attempt %s): %s", game_id, tries, type(exc).__name__)
        bot.scheduler.schedule(
            f"game:{game_id}:deadline",
            bot.clock.now() + dt.timedelta(seconds=backoff(tries)),
            fire_deadline,
            bot_key,
            game_id,
        )
        await bot.tell_stuck(game_id, tries)


async def resume_games(bot_key: int, attempt: int = 0) -> None:
    """The startup job: recover the games and schedule their deadlines; if the database is away,
    try again with backoff, so no game is left without its timer."""
    bot = _APPS.get(bot_key)
    if bot is None:
        return
    try:
        await bot.resume_games()
    except Exception as exc:
        log.error("resuming games failed (attempt %s): %s", attempt + 1, type(exc).__name__)
        when = bot.clock.now() + dt.timedelta(seconds=backoff(attempt + 1))
        bot.scheduler.schedule("faguan:resume", when, resume_games, bot_key, attempt + 1)


async def retry_effects(bot_key: int, game_id: int) -> None:
    """The retry job: perform a game's undone effects again."""
    bot = _APPS.get(bot_key)
    if bot is not None:
        await bot.service.retry(game_id)


class FaguanBot(commands.Bot):
    """The judge on Discord."""

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
        super().__init__(command_prefix=commands.when_mentioned, intents=intents, **options)
        self.settings = settings
        self.clock: Clock = clock or SystemClock()
        self.scheduler = scheduler or DeadlineScheduler(self.clock)
        self._database = database
        self._owns_database = database is None
        self.seed_source = seed_source or (lambda: secrets.token_hex(16))
        self.effects = DiscordEffects(self)
        from bot.runtime.reminders import Reminders

        self.reminders = Reminders(self)
        self.service: GameService
        self._caught_up = False
        self.missing_permissions: dict[int, list[str]] = {}
        self.channel_games: dict[int, int] = {}
        """Game and vote channel ids → the game played there."""
        self.vote_channels: set[int] = set()
        self.lock_failures: dict[int, int] = {}
        self._stuck_told: set[int] = set()
        self._names: dict[int, dict[str, str]] = {}
        self._role_checked: set[int] = set()
        """Servers whose moderator role was checked since start."""
        """Per game, user id → the name recorded for them (sign-up, /mod replace)."""
        _APPS[id(self)] = self

    # -- lifecycle ---------------------------------------------------------------------------------
    async def setup_hook(self) -> None:
        """Database, service, commands, persistent views; then recovery of the outbox."""
        url = self.settings.database.url
        if self._database is None:
            await upgrade(url)
            self._database = open_database(url)
        repo = Repository(self._database.sessions)
        self.service = GameService(repo, self.clock)
        self.service.set_performer(self.effects)
        self.service.on_delivery_failure(self.schedule_retry)
        from bot.discord.cogs.game import GameCog
        from bot.discord.cogs.moderator import ModeratorCog
        from bot.discord.cogs.play import PlayCog

        await self.add_cog(GameCog(self))
        await self.add_cog(PlayCog(self))
        await self.add_cog(ModeratorCog(self))
        from bot.discord.cogs.season import SeasonCog

        await self.add_cog(SeasonCog(self))
        self.add_dynamic_items(ConfirmButton, PowerSelect)
        self.tree.error(self.on_app_command_error)
        await self.tree.set_translator(FaguanTranslator())
        await self.tree.sync()
        if not self.scheduler.manual:
            self.scheduler.start()

    async def on_ready(self) -> None:
        """After every connect: check permissions and the moderator role, then resume the games."""
        self.check_permissions()
        from bot.discord.authority import warn_missing_moderator_role

        for guild in self.guilds:
            if guild.id not in self._role_checked:  # once per server, not at every reconnect
                self._role_checked.add(guild.id)
                await warn_missing_moderator_role(self, guild)
        await resume_games(id(self))

    async def on_guild_join(self, guild: discord.Guild) -> None:
        """A new server: say if the configured moderator role is not one of its roles."""
        from bot.discord.authority import warn_missing_moderator_role

        await warn_missing_moderator_role(self, guild)

    async def resume_games(self) -> None:
        """Recover, catch up, reconcile deadlines (raises if the database is away)."""
        self.effects.recovering = True
        try:
            stopped = await self.service.recover()
        finally:
            self.effects.recovering = False
        for game_id, reason in stopped.items():
            log.error("game %s stopped: %s", game_id, reason)
        for game_id in await self.service.active_games():
            info = await self.service.info(game_id, refresh=True)
            if self.get_guild(info.server_id) is None:
                continue  # another shard's game
            self.register_channels(game_id, info.channels)
            try:
                await self.catch_up(game_id)
            except Exception as exc:  # Discord away: the lock sweeps the channel again
                log.warning("game %s: catch-up failed: %s", game_id, type(exc).__name__)
            try:  # who may post, from the state: nothing a lost edit left behind stands
                await permissions.reconcile(self, game_id)
            except Exception as exc:  # Discord away: the effects and the next resume set it again
                log.warning("game %s: permissions not reconciled: %s", game_id, type(exc).__name__)
            await self.reconcile(game_id)
        self._caught_up = True
        if not self.scheduler.manual:
            # What is alive once started (rebuilt games, caches) stays alive: keep it out of the
            # cyclic GC's full collections, which pause the event loop (~100 ms with a large heap)
            # and make deadline timers late (faguan bench, deadlines).
            gc.freeze()

    async def close(self) -> None:
        """Stop timers and the database with the bot."""
        _APPS.pop(id(self), None)
        if not self.scheduler.manual:
            self.scheduler.shutdown()
        await super().close()
        if hasattr(self, "service"):
            try:
                await self.service.flush()  # the last done marks and snapshots
            except Exception as exc:  # recovery performs those effects again, idempotently
                log.warning("closing: the store's last writes failed (%s)", type(exc).__name__)
        if self._owns_database and self._database is not None:
            await self._database.dispose()

    async def on_app_command_error(
        self, interaction: discord.Interaction[Any], error: app_commands.AppCommandError
    ) -> None:
        """An unexpected failure (Discord or the database away): log it, ask to try again."""
        from bot.discord.interactions import NoGame

        original = getattr(error, "original", error)
        if isinstance(original, NoGame) or isinstance(error, app_commands.CheckFailure):
            return  # answered by the cog
        name = interaction.command.qualified_name if interaction.command else "?"
        log.error("command /%s failed: %s", name, type(original).__name__)
        log.debug("command /%s failed", name, exc_info=original)
        with contextlib.suppress(discord.HTTPException):
            await respond(interaction, render(self.locale_of(interaction), "notice.try_again"))

    def check_permissions(self) -> None:
        """Say, per guild, which permissions the bot lacks."""
        for guild in self.guilds:
            me = guild.me
            perms = me.guild_permissions if me else discord.Permissions.none()
            missing = [p for p in REQUIRED_PERMISSIONS if not getattr(perms, p)]
            if not self.intents.message_content:
                missing.append("message_content intent")
            self.missing_permissions[guild.id] = missing
            if missing:
                log.warning("guild %s: missing permissions: %s", guild.id, ", ".join(missing))

    # -- time ------------------------------------------------------------------------------------
    def now_ms(self) -> Instant:
        """Now, as the engine's Instant."""
        return Instant(to_ms(self.clock.now()))

    def schedule_deadline(self, game_id: int, deadline: int | None) -> None:
        """Wake at `deadline` to lock the game's window (None: no timer)."""
        job = f"game:{game_id}:deadline"
        self.reminders.schedule(game_id, deadline)
        if deadline is None:
            self.scheduler.cancel(job)
            return
        self.scheduler.schedule(job, from_ms(deadline), fire_deadline, id(self), game_id)

    def schedule_retry(self, game_id: int, attempts: int) -> None:
        """Try a game's failed effects again later, backing off; tell moderators if stuck."""
        when = self.clock.now() + dt.timedelta(seconds=backoff(attempts))
        self.scheduler.schedule(f"game:{game_id}:retry", when, retry_effects, id(self), game_id)
        if attempts >= STUCK_AFTER:
            asyncio.get_running_loop().create_task(self.tell_stuck(game_id, attempts))

    async def tell_stuck(self, game_id: int, attempts: int) -> None:
        """Once per game, tell the moderators that the judge keeps failing (no details)."""
        if attempts < STUCK_AFTER or game_id in self._stuck_told:
            return
        self._stuck_told.add(game_id)
        log.error("game %s: stuck after %s attempts; moderators told", game_id, attempts)
        try:
            info = await self.service.info(game_id)
            channel = self.get_channel(int(info.channels["game"]))
            if isinstance(channel, discord.TextChannel):
                language = str(info.options.get("language", "zh-CN"))
                text = render(language, "notice.stuck", {"attempts": attempts})
                wanted = self.settings.discord.moderator_role
                role = next((r for r in channel.guild.roles if wanted.matches(r.id, r.name)), None)
                pings = discord.AllowedMentions(roles=[role] if role else False)  # that role only
                content = f"{role.mention} {text}" if role else text
                await channel.send(content, allowed_mentions=pings)
        except Exception as exc:  # the channel may be what is failing; the log line stands
            log.error("game %s: could not tell moderators: %s", game_id, type(exc).__name__)

    async def lock_due(
        self, game_id: int, *, forced: bool = False, by: str = "", window: int | None = None
    ) -> Outcome | None:
        """The deadline is reached (or a moderator advances): sweep the vote channel, then lock.

        The lock names the window open when this started (`window`: the one the moderator's
        command saw; by default the one open now, before the catch-up's awaits), so whichever of
        the deadline job, a moderator, a retried job or recovery comes second is refused by the
        engine (`phase.window_locked`) instead of locking the window opened by the first."""
        if not await self.service.is_active(game_id):
            return None
        state = await self.service.state(game_id)
        if window is None and state.window is not None:
            window = state.window_index
        if not forced and (state.window is None or state.deadline is None):
            return None
        if not forced and state.deadline is not None and self.now_ms() < state.deadline:
            self.schedule_deadline(game_id, state.deadline)
            return None
        if state.window is not None:
            await self.catch_up(game_id)
        info = await self.service.info(game_id)
        command = self.service.lock_command(state, info, forced=forced, window=window)
        if by:  # a moderator's advance: recorded and announced as an override
            command = dataclasses.replace(command, by=by)
        return await self.service.submit(game_id, command)

    async def reconcile(self, game_id: int) -> None:
        """Lock an overdue window now (votes are judged by their own times); schedule the rest.

        A failure touches this game only: one game's trouble never keeps the others' deadlines
        from being scheduled."""
        state = await self.service.state(game_id)
        if state.deadline is None:
            return
        if state.deadline <= self.now_ms():
            await fire_deadline(id(self), game_id)  # retried later if it cannot lock now
        else:
            self.schedule_deadline(game_id, state.deadline)

    async def catch_up(self, game_id: int) -> None:
        """Ingest vote posts made while the bot was away (history after the last one processed)."""
        cog = self.get_cog("PlayCog")
        if cog is not None:
            await cog.catch_up(game_id)  # type: ignore[attr-defined]

    # -- games ---------------------------------------------------------------------------
    def register_channels(self, game_id: int, channels: dict[str, Any]) -> None:
        """Route posts and commands in a game's channels to it."""
        self.channel_games[int(channels["game"])] = game_id
        self.channel_games[int(channels["vote"])] = game_id
        self.vote_channels.add(int(channels["vote"]))

    def is_vote_channel(self, game_id: int, channel_id: int) -> bool:
        """Whether posts in this channel are read as votes."""
        return channel_id in self.vote_channels and self.channel_games.get(channel_id) == game_id

    async def start_game(
        self, lobby: LobbyInfo, started: Callable[[int], Awaitable[None]] | None = None
    ) -> int:
        """Deal a signed-up game. The sign-up is marked started and the game created in one
        transaction (a second start is refused, ``LobbyRefused``); then its channels are routed
        to it, ``started`` is awaited (the cog answers the start), and the players' role, the
        bot's own allow overwrite and the role DMs go out from the outbox
        (``bot.start_effects``), so a crash half-way is finished by recovery, nothing twice."""

        async def created(game_id: int, channels: dict[str, Any]) -> None:
            self.register_channels(game_id, channels)
            if started is not None:
                await started(game_id)

        return await self.service.start_lobby(lobby.id, seed=self.seed_source(), created=created)

    def render(self, locale: str, key: str, **params: object) -> str:
        """A catalog text."""
        return render(locale, key, params)

    # -- helpers for cogs and views ----------------------------------------------------
    async def context(
        self, game_id: int, state: GameState | None = None, locale: str | None = None
    ) -> Context:
        """How to render for a game: its language, timezone and seat names."""
        info = await self.service.info(game_id)
        state = state or await self.service.state(game_id)
        return Context(
            locale=locale or str(info.options.get("language", self.settings.game.language)),
            timezone=ZoneInfo(str(info.schedule.get("timezone", "Asia/Shanghai"))),
            names=await self.seat_names(game_id, state),
        )

    async def seat_names(self, game_id: int, state: GameState) -> dict[int, str]:
        """Seat (card) → the name recorded for its present holder at sign-up or at `/mod
        replace` (the store's seat terms, read once per new holder and cached), so names never
        depend on the member cache and a restart shows the same ones. Only a holder recorded
        without a name (a substitute recorded by id) is named from the member cache, if there."""
        recorded = self._names.get(game_id, {})
        if any(s.player not in recorded for s in state.seats):
            terms = await self.service.repo.seats(game_id)  # by seat then term: the last wins
            recorded = {str(t.user_id): t.name for t in terms if t.user_id is not None}
            self._names[game_id] = recorded
        guild: discord.Guild | None = None
        names: dict[int, str] = {}
        for seat in state.seats:
            who = seat.player
            name = recorded.get(who, "")
            if not name or name == who:  # no name recorded for this holder
                if guild is None:
                    guild = self.get_guild((await self.service.info(game_id)).server_id)
                member = guild.get_member(int(who)) if guild and who.isdigit() else None
                name = member.display_name if member else name or who
            names[int(seat.seat)] = name
        return names

    def team_of(self, state: GameState, seat: Seat) -> Team | None:
        """The team a seat acts with now."""
        return rules_for(state).team_of(state.seat(seat))

    def locale_of(self, interaction: discord.Interaction[Any], default: str | None = None) -> str:
        """The language to answer a person in: theirs if we speak it, else the game's."""
        tag = str(interaction.locale)
        if tag.startswith("zh"):
            return "zh-CN"
        if tag.startswith("en"):
            return "en"
        return default or self.settings.game.language

    async def answer_command(
        self,
        interaction: discord.Interaction[Any],
        game_id: int,
        command: Command,
        *,
        name: str | None = None,
    ) -> Outcome:
        """Submit a player's command and answer them privately: done, or exactly why not
        (`name`: a substitute's display name, recorded with their seat)."""
        outcome = await self.service.submit(game_id, command, name=name)
        ctx = await self.context(game_id, locale=self.locale_of(interaction))
        if outcome.error is not None:
            text = error_text(ctx, outcome.error.key, outcome.error.params)
        else:
            text = ctx.t("notice.accepted")
        from bot.discord.interactions import dm_notice

        notice = await dm_notice(self, interaction, game_id)  # a DM of theirs failed: say so
        await respond(interaction, f"{text}\n{notice}" if notice else text)
        return outcome

    async def confirm_role(
        self, interaction: discord.Interaction[Any], game_id: int, seat: int
    ) -> None:
        """Record that a player has seen their role: a row per seat and term, written only for
        the seat's present holder (a replaced player is refused), a repeat changing nothing."""
        if not await self.service.repo.lobbies.confirm(game_id, seat, interaction.user.id):
            await respond(interaction, render(self.locale_of(interaction), "actor.not_player"))
            return
        ctx = await self.context(game_id, locale=self.locale_of(interaction))
        await respond(interaction, ctx.t("notice.confirmed"))


async def respond(interaction: discord.Interaction[Any], text: str, **kwargs: Any) -> None:
    """Answer privately (ephemeral in a guild), whether or not the interaction was deferred."""
    if interaction.response.is_done():
        await interaction.followup.send(text, ephemeral=True, **kwargs)
    else:
        await interaction.response.send_message(text, ephemeral=True, **kwargs)


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
