"""The runtime: everything the judge does between the platform and the store, without Discord.

`Runtime` holds the game service and the parts around it — vote posts, deadlines, reminders,
the renderer's contexts, channel routes — and drives start-up: recover every game, catch up on
posts, reconcile permissions and deadlines. The platform (the Discord layer) builds one, gives it
a `ChatPort`, calls `start(service)` once the database is open and `resume_games()` after each
connect, and forwards its inputs to it.
"""

from __future__ import annotations

import datetime as dt
import logging
import secrets
from collections.abc import Awaitable, Callable
from typing import Any

from bot.config import ConfigError, Settings
from bot.runtime.backups import AutoBackups
from bot.runtime.catch_ups import CatchUps
from bot.runtime.collector import collections_paused, settle_started_heap
from bot.runtime.contexts import Contexts
from bot.runtime.deadlines import DeadlineRunner, backoff, fire_deadline
from bot.runtime.metrics import Metrics
from bot.runtime.port import ChatPort
from bot.runtime.reminders import Reminders
from bot.runtime.routes import ChannelRoutes
from bot.runtime.schedule import to_ms
from bot.runtime.service import GameService
from bot.runtime.timing import Clock, DeadlineScheduler
from bot.runtime.vote_hints import VoteHints
from bot.runtime.vote_posts import VotePosts
from bot.runtime.wakes import Wakes
from bot.store import GameInfo, LobbyInfo, Shards, resolve_url
from bot.store.claims import shard_ids
from engine.model import Instant, Seat, Team
from engine.rulesets import rules_for
from engine.state import GameState

log = logging.getLogger(__name__)

_RUNTIMES: dict[int, Runtime] = {}
"""Running runtimes by key, so the module-level start-up job finds its own."""


async def resume_games(runtime_key: int, attempt: int = 0) -> None:
    """The start-up job: recover the games and schedule their deadlines; if the database is
    away, try again with backoff, so no game is left without its timer."""
    runtime = _RUNTIMES.get(runtime_key)
    if runtime is None:
        return
    try:
        await runtime.resume_games()
    except Exception as exc:
        log.error("resuming games failed (attempt %s): %s", attempt + 1, type(exc).__name__)
        when = runtime.clock.now() + dt.timedelta(seconds=backoff(attempt + 1))
        runtime.scheduler.schedule("faguan:resume", when, resume_games, runtime_key, attempt + 1)


def shards_of(settings: Settings) -> Shards | None:
    """The shards a process with these settings runs (None: every shard, in one process)."""
    discord = settings.discord
    if discord.shard_count is None:
        return None
    return Shards(discord.shard_count, shard_ids(discord.shard_count, discord.shard_ids))


def _shown(shards: Shards | None) -> str:
    return "all" if shards is None else f"{list(shards.ids)} of {shards.count}"


class Runtime:
    """The judge's orchestration: wired once the store is open (`start`), then driven by the
    platform's inputs and the scheduler's jobs."""

    service: GameService
    contexts: Contexts
    votes: VotePosts
    hints: VoteHints
    reminders: Reminders
    deadlines: DeadlineRunner
    catch_ups: CatchUps

    def __init__(
        self,
        settings: Settings,
        *,
        port: ChatPort,
        clock: Clock,
        scheduler: DeadlineScheduler,
        seed_source: Callable[[], str] | None = None,
    ) -> None:
        self.settings = settings
        self.port = port
        self.clock = clock
        self.scheduler = scheduler
        self.seed_source = seed_source or (lambda: secrets.token_hex(16))
        """Where a new game's seed comes from (fixed in tests)."""
        self.routes = ChannelRoutes()
        self.metrics: Metrics | None = None
        """The /metrics endpoint's figures, when `[metrics] port` is set."""
        self.backups: AutoBackups | None = None
        """The database's own backups, when `[backup] folder` is set."""
        self.wakes: Wakes | None = None
        """Performing the inputs other shard processes record for our games (PostgreSQL)."""
        self.shards = shards_of(settings)
        """The shards this process runs (None: all of them, one process); it recovers, schedules
        and performs for the games of their servers only."""
        self.key = id(self)
        _RUNTIMES[self.key] = self

    def start(self, service: GameService) -> None:
        """Wire the parts around the game service (the store is open)."""
        self.service = service
        service.shards = self.shards
        self.contexts = Contexts(service, self.port, self.settings.game.language)
        self.votes = VotePosts(service, self.contexts, self.port)
        self.hints = VoteHints(service, self.contexts)
        self.reminders = Reminders(
            service,
            scheduler=self.scheduler,
            clock=self.clock,
            contexts=self.contexts,
            port=self.port,
            lead=self.settings.game.reminder,
        )
        self.deadlines = DeadlineRunner(
            service,
            scheduler=self.scheduler,
            clock=self.clock,
            votes=self.votes,
            reminders=self.reminders,
            port=self.port,
        )
        service.on_delivery_failure(self.deadlines.schedule_retry)
        self.catch_ups = CatchUps(self._catch_up)
        metrics = self.settings.metrics
        if metrics.port is not None:
            self.metrics = Metrics()
            try:
                self.metrics.serve(metrics.host, metrics.port)
            except OSError as exc:  # a port in use, an address not this machine's: the config's
                why = exc.strerror or type(exc).__name__
                raise ConfigError(
                    [
                        f"metrics.host/metrics.port: cannot listen on {metrics.host}:"
                        f"{metrics.port} ({why}); allowed: a port no other program uses, on an "
                        "address of this machine"
                    ],
                    source=self.settings.source,
                ) from exc
            service.metrics = self.metrics
            self.metrics.refresh_every(self._backlog)
        url = resolve_url(self.settings.database.url)
        if self.shards is not None and url.get_backend_name() == "postgresql":
            self.wakes = Wakes(service, self.shards, url, self.scheduler)  # DMs: shard 0
            self.wakes.start()
        if self.settings.backup.folder is not None:
            self.backups = AutoBackups(url, self.settings.backup, self.clock, self.metrics)
            self.backups.start()

    async def _backlog(self) -> tuple[int, int]:
        """(active games this process owns, effects not yet performed) for the metrics."""
        owned = await self.service.active_games(self.shards)
        return len(owned), await self.service.repo.undone_count(self.shards)

    async def aclose(self) -> None:
        """`close`, then the deliveries under way finished (none starts any more: a stop
        cutting one would leave effects performed but not marked done, for the next owner to
        perform again) and the metrics' work under way ended (before the database closes)."""
        self.close()
        if self.started:
            await self.service.finish_deliveries()
        if self.wakes is not None:
            await self.wakes.aclose()
        if self.metrics is not None:
            await self.metrics.aclose()

    def close(self) -> None:
        """Jobs still scheduled for this runtime find nothing to do."""
        _RUNTIMES.pop(self.key, None)
        if self.wakes is not None:
            self.wakes.close()
        if self.backups is not None:
            self.backups.close()
        if self.metrics is not None:
            self.metrics.close()
        if hasattr(self, "deadlines"):
            self.catch_ups.close()
            self.deadlines.close()
            self.reminders.close()

    @property
    def started(self) -> bool:
        """Whether `start` has wired the parts (the store is open)."""
        return hasattr(self, "service")

    def now_ms(self) -> Instant:
        """Now, as the engine's Instant."""
        return Instant(to_ms(self.clock.now()))

    def team_of(self, state: GameState, seat: Seat) -> Team | None:
        """The team a seat acts with now."""
        return rules_for(state).team_of(state.seat(seat))

    async def resume_games(self) -> None:
        """Route every game's channels (`_route_games`), recover every game, then make each ready
        to serve at once: its channels routed (again, as recovery left them) and its deadline
        (and reminder) scheduled from its rebuilt state, the records read in one query each time.
        The catch-up on its vote channel, the reconcile of its permissions and, after the
        catch-up, an overdue lock are queued (`catch_ups`, worked a few games at a time;
        `caught_up` waits for them). Raises if the database is away."""
        with collections_paused():  # everything made here stays alive (frozen below)
            resumed = await self._resume_games()
            if not self.scheduler.manual:  # a started bot (tests drive a manual scheduler)
                settle_started_heap()
        log.info("resumed %s active games (shards: %s)", resumed, _shown(self.shards))

    async def _resume_games(self) -> int:
        await self._route_games()
        self.port.recovering(True)
        try:
            stopped = await self.service.recover(self.shards)
        finally:
            self.port.recovering(False)
        for game_id, reason in stopped.items():
            log.error("game %s stopped: %s", game_id, reason)
        infos = await self.service.active_infos(self.shards)
        now = self.now_ms()
        with self.scheduler.many():  # no await in here
            for info in infos:
                if not self.port.serves(info.server_id):
                    continue  # a server the bot is no longer on: nothing to post to
                self.routes.register(info.id, info.channels)
                state = self.service.cached_state(info.id)
                if state is None or (state.deadline is not None and state.deadline <= now):
                    self.catch_ups.add(info.id, overdue=True)  # locked after its catch-up
                    continue
                if state.deadline is not None:
                    self.deadlines.schedule_deadline(info.id, state.deadline)
                self.catch_ups.add(info.id)
        return len(infos)

    async def _route_games(self) -> None:
        """Route the games in play before recovery performs the outbox: an ended game's undone
        release then leaves the channels the next game holds as that game set them
        (`bot.discord.permissions.release`), not as if they were still its own."""
        for info in await self.service.active_infos(self.shards):
            if self.port.serves(info.server_id):
                self.routes.register(info.id, info.channels)

    async def caught_up(self) -> None:
        """Until the start-up work `resume_games` queued is done."""
        await self.catch_ups.wait()

    async def leave_server(self, server_id: int) -> None:
        """The bot is no longer on a server (kicked, or the server deleted): its games wait, as a
        start leaves the games of a server it is not on (`ChatPort.serves`), their timers
        dropped (each would lock and then retry its posts there for good); they resume when the
        bot is back (`rejoin_server`, or the next start), their overdue windows locked at once
        (votes are judged by their own times)."""
        waiting = await self._games_on(server_id)
        for info in waiting:
            self.deadlines.forget(info.id)
        if waiting:
            log.warning(
                "left server %s: %s games wait until the bot is back", server_id, len(waiting)
            )

    async def rejoin_server(self, server_id: int) -> None:
        """Back on a server (invited again): its waiting games resume as at a start — routed,
        caught up (an overdue window locked, else its deadline scheduled), their effects still
        undone tried again."""
        for info in await self._games_on(server_id):
            self.routes.register(info.id, info.channels)
            self.catch_ups.add(info.id, overdue=True)
            self.deadlines.schedule_retry(info.id, 0)

    async def _games_on(self, server_id: int) -> list[GameInfo]:
        """The games in play on a server (of this process's shards)."""
        return [i for i in await self.service.active_infos(self.shards) if i.server_id == server_id]

    async def stop_game(self, game_id: int, lost: str) -> None:
        """A game whose channel was deleted (`lost`: which one, "game" or "vote") cannot go on:
        stopped once, whoever finds it first (a channel's deletion, an effect Discord refuses
        for it, a start-up look), its timers dropped, its moderators and players told."""
        if not await self.service.stop(game_id, f"channel deleted: {lost}"):
            return
        self.deadlines.forget(game_id)
        log.warning("game %s stopped: its %s channel was deleted", game_id, lost)
        try:
            await self.port.tell_stopped(game_id, lost)
        except Exception as exc:  # the platform away: the game is stopped all the same
            log.warning("game %s: not told it stopped: %s", game_id, type(exc).__name__)

    async def _catch_up(self, game_id: int, overdue: bool) -> None:
        """One game's start-up work: stop it if a channel of it was deleted while the bot was
        away, else read its vote channel, set its permissions, then (if its deadline had
        passed, or its state is to be loaded) lock or schedule it."""
        try:
            lost = await self.port.lost_channel(game_id)
        except Exception as exc:  # the platform away: its effects find it later
            log.warning("game %s: channels not looked up: %s", game_id, type(exc).__name__)
            lost = None
        if lost is not None:
            await self.stop_game(game_id, lost)
            return
        try:
            await self.votes.catch_up(game_id)
        except Exception as exc:  # the platform away: the lock sweeps the channel again
            log.warning("game %s: catch-up failed: %s", game_id, type(exc).__name__)
        try:  # who may post, from the state: nothing a lost edit left behind stands
            await self.port.reconcile_permissions(game_id)
        except Exception as exc:  # the platform away: the effects and the next resume set it
            log.warning("game %s: permissions not reconciled: %s", game_id, type(exc).__name__)
        if overdue:  # locks now, or schedules it; tried again later if it cannot
            await fire_deadline(self.deadlines.key, game_id)

    async def start_game(
        self, lobby: LobbyInfo, started: Callable[[int], Awaitable[None]] | None = None
    ) -> int:
        """Deal a signed-up game. The sign-up is marked started and the game created in one
        transaction (a second start is refused, ``LobbyRefused``); then its channels are routed
        to it, ``started`` is awaited (the platform answers the start), and the players' role,
        the bot's own allow overwrite and the role DMs go out from the outbox (the start's
        steps, ``bot.runtime.start_steps``), so a crash half-way is finished by recovery,
        nothing twice."""

        async def created(game_id: int, channels: dict[str, Any]) -> None:
            self.routes.register(game_id, channels)
            if started is not None:
                await started(game_id)

        return await self.service.start_lobby(lobby.id, seed=self.seed_source(), created=created)
