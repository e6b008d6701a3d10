"""The application service: every input to a game goes through `GameService.submit`.

Theory of operation (DESIGN.md): load the game's state (cached, or rebuilt from its newest
snapshot and the events after it), let the engine decide, commit the events and their effects to
the outbox in one transaction, then perform the effects and mark them done. After an input that
opens a window (or, within a window, on the geometric cadence of ``bot.runtime.snapshots.due``) the
new state is stored as a snapshot.
A Discord message id makes an input idempotent: a redelivered post returns the first outcome and
writes nothing. Inputs to one game are serialized by a per-game lock, and every delivery of a
game's public effects (an input's, the start's, a retry's, a restart's) runs under it too, so
effects are performed once and in the order their events happened; its private effects follow in
a lane of their own, after the lock is released (their time depends on roles: the next input
must not wait for them). Inputs to different games recorded at the same time share one commit
(the store's group commit), each still committed before its effects are performed.
"""

from __future__ import annotations

import asyncio
import ctypes
import dataclasses
import logging
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from functools import cache
from typing import TYPE_CHECKING, Any

from bot.runtime.collector import collections_paused
from bot.runtime.deliveries import Deliveries
from bot.runtime.hosting import forum_channels, is_forum, vote_post_steps
from bot.runtime.metrics import Metrics
from bot.runtime.schedule import GameSchedule, from_ms, to_ms
from bot.runtime.snapshots import SNAPSHOTS, due
from bot.runtime.start_steps import start_effects
from bot.runtime.timing import Clock
from bot.store import (
    GameDraft,
    GameInfo,
    GameStatus,
    Loaded,
    LobbyInfo,
    OutboxItem,
    Repository,
    SeatSpec,
    SeqConflict,
    Shards,
    attempt_failed,
    deliver,
    rebuild_games,
)
from engine import codec
from engine.commands import Command, Lock, ReplacePlayer, SubmitPower
from engine.effects import PRIVATE, ReplyToPost, for_delivery, params
from engine.errors import EngineError
from engine.events import Event, GameEnded
from engine.game import decide, new_game, replay_events, start_events
from engine.model import Instant, Power
from engine.publish import effects_and_state, effects_for
from engine.rulesets import get_ruleset
from engine.setup import option_names
from engine.state import GameState
from engine.windows import following

log = logging.getLogger(__name__)

Perform = Callable[[OutboxItem], Awaitable[None]]
Recorded = Callable[["Outcome", Sequence[OutboxItem]], None]
"""Told an input's outcome and the effects it recorded as soon as it is recorded (or refused),
before they are performed (`GameService.submit`)."""


def fold(events: list[dict[str, Any]]) -> GameState:
    """A game's state from its stored events."""
    return replay_events(codec.load(e) for e in events)


@dataclass(frozen=True, kw_only=True, slots=True)
class Outcome:
    """What an input did: the new state and events, or the engine's refusal."""

    state: GameState | None
    events: Sequence[Event] = ()
    error: EngineError | None = None
    duplicate: bool = False

    @property
    def ok(self) -> bool:
        """True when the input was accepted (or was already, for a redelivered post)."""
        return self.error is None


if TYPE_CHECKING:  # mypy checks each call against the class
    _accepted = Outcome
else:  # the same object, built faster (`engine.replacing`): one for every input accepted
    from engine.replacing import maker

    _accepted = maker(Outcome)


@dataclass(frozen=True, kw_only=True)
class PlayerSpec:
    """A player joining a game: their Discord user id and display name."""

    user_id: int
    name: str


def seat_specs(cards: Sequence[str], players: Sequence[PlayerSpec]) -> tuple[SeatSpec, ...]:
    """The store's first seat rows of a game: one per seat as the engine numbers them (a card:
    5.0 deals two a player, `GameCreated.players` naming each card's holder), held by its
    player. Role confirmations and substitutes name a card, so a row per player would be
    another's row for every card but the first's."""
    by_user = {str(p.user_id): p for p in players}
    return tuple(
        SeatSpec(seat=card, name=by_user[user].name, user_id=by_user[user].user_id)
        for card, user in enumerate(cards, 1)
    )


class GameService:
    """Loads, decides, commits and delivers; knows nothing of Discord (effects go to `perform`)."""

    def __init__(self, repo: Repository, clock: Clock) -> None:
        self.repo = repo
        self.clock = clock
        self._loaded: dict[int, Loaded[GameState]] = {}
        self._info: dict[int, GameInfo] = {}
        self._info_writes: defaultdict[int, int] = defaultdict(int)
        """Per game, the writes to its row so far: a read that saw one happen while it ran may
        hold the row from before it, and is not cached."""
        self._locks: defaultdict[int, asyncio.Lock] = defaultdict(asyncio.Lock)
        """One per game, held by each input and each delivery of the game's public effects."""
        self._private_locks: defaultdict[int, asyncio.Lock] = defaultdict(asyncio.Lock)
        """One per game, held by each delivery of the game's private effects (`_private_lane`)."""
        self._lane_users: defaultdict[int, int] = defaultdict(int)
        """Per game, the deliveries of private effects under way or waiting for the lane
        (`_private_lane`): counted before any await, so a replacement under the game's turn sees
        one that left the turn and has not taken the lane yet."""
        self._private_due: dict[int, int] = {}
        """Per game, the outbox id up to which private effects may go out: their inputs' public
        effects are all out (set under the game's lock, taken by the turn that set it)."""
        self._perform: Perform | None = None
        self._in_order: set[int] = set()
        """Games whose every recorded public effect was performed: no earlier one to deliver
        first (private ones have a lane of their own)."""
        self._deliveries_begun: defaultdict[int, int] = defaultdict(int)
        """Per game, the deliveries begun: a restart that saw none begin while it read the
        outbox knows the game's effects are as it read them."""
        self._on_failure: Callable[[int, int, bool], None] | None = None
        self.metrics: Metrics | None = None
        """Where inputs and failed effects are counted (the /metrics endpoint), if it is on."""
        self.deliveries = Deliveries()
        """The deliveries under way: a clean stop ends them before the last done marks."""
        self.shards: Shards | None = None
        """The shards this process runs (None: every one). An input to a game of another
        process's server (a DM: Discord sends them all to shard 0) is recorded here and
        performed by its owner (``_submit``)."""
        self._owned: dict[int, bool] = {}
        """Per game, whether this process owns it (a game never changes server)."""
        self._tell_owner: Callable[[int], Awaitable[None]] | None = None

    def set_performer(self, perform: Perform) -> None:
        """Who performs effects (the Discord shell; a recorder in tests)."""
        self._perform = perform

    def on_foreign_input(self, tell: Callable[[int], Awaitable[None]]) -> None:
        """Who tells a game's owner that an input to it was recorded here (PostgreSQL's
        notices, ``bot.store.notices``)."""
        self._tell_owner = tell

    async def owns(self, game_id: int) -> bool:
        """Whether this process performs the game's effects (its server is on our shards)."""
        if self.shards is None:
            return True
        owned = self._owned.get(game_id)
        if owned is None:
            owned = self._owned[game_id] = self.shards.owns((await self.info(game_id)).server_id)
        return owned

    # -- reading ---------------------------------------------------------------------------------
    async def state(self, game_id: int) -> GameState:
        """The game's current state (another process's game: read, never kept, as its owner
        appends to it)."""
        loaded = await self._load(game_id)
        if self.shards is not None and not await self.owns(game_id):
            self._loaded.pop(game_id, None)
        return loaded.state

    async def info(self, game_id: int, *, refresh: bool = False) -> GameInfo:
        """The game's stored row (channels, schedule, status); cached. A read during which the
        row was written (``set_channels``) may have the row from before: it is read again, so
        no row older than a write is cached after it (a team thread remembered, then made again
        because a stale row did not name it). Another process's game is read every time: its
        owner writes the row, and nothing here would know."""
        cached = self._info.get(game_id)
        if cached is not None and not refresh:
            return cached
        while True:
            writes = self._info_writes[game_id]
            info = await self.repo.get_game(game_id)
            if self.shards is not None and not self.shards.owns(info.server_id):
                return info
            if self._info_writes[game_id] == writes:
                self._info[game_id] = info
                return info

    async def active_infos(self, shards: Shards | None = None) -> list[GameInfo]:
        """Every active game's stored row (of the servers on `shards`, if given), read in one
        query and cached: a restart's look-ups, not one per game. An entry cached meanwhile is
        kept; a row written during the query is read again (see ``info``)."""
        writes = dict(self._info_writes)
        infos = []
        for info in await self.repo.active_games_info(shards):
            if info.id in self._info:
                info = self._info[info.id]
            elif self._info_writes.get(info.id, 0) == writes.get(info.id, 0):
                self._info[info.id] = info
            else:
                info = await self.info(info.id)
            infos.append(info)
        return infos

    def _row_written(self, game_id: int) -> None:
        """After a write to the game's row has ended (committed or not): the cached row is
        dropped, and reads under way when it ended are not cached (``info``)."""
        self._info.pop(game_id, None)
        self._info_writes[game_id] += 1

    def cached_info(self, game_id: int) -> GameInfo | None:
        """The game's row if cached (what ``info`` would answer at once), without I/O."""
        return self._info.get(game_id)

    def cached_state(self, game_id: int) -> GameState | None:
        """The state if loaded, without I/O."""
        loaded = self._loaded.get(game_id)
        return loaded.state if loaded else None

    async def _load(self, game_id: int) -> Loaded[GameState]:
        loaded = self._loaded.get(game_id)
        if loaded is None:
            loaded = self._loaded[game_id] = await self.repo.load_game(
                game_id, fold, snapshot=SNAPSHOTS
            )
        return loaded

    def active_state(self, game_id: int) -> GameState | None:
        """The state of a game in play if its row and state are cached, else None (then ask
        ``is_active`` and ``state``): a vote post's look-up, with no await."""
        info = self._info.get(game_id)
        loaded = self._loaded.get(game_id)
        if info is None or loaded is None or info.status is not GameStatus.ACTIVE:
            return None
        return loaded.state

    def schedule(self, info: GameInfo) -> GameSchedule:
        """The game's schedule."""
        return GameSchedule.from_json(info.schedule)

    # -- creating ----------------------------------------------------------------------------------
    async def create_game(
        self,
        *,
        server_id: int,
        ruleset: str,
        players: Sequence[PlayerSpec],
        seed: str,
        options: dict[str, Any],
        channels: dict[str, Any],
        schedule: GameSchedule,
        message_id: int | None = None,
    ) -> int:
        """Deal and start a game; its first effects (role messages, night 1) are performed."""
        draft = self._draft(
            ruleset=ruleset,
            players=players,
            seed=seed,
            options=options,
            channels=channels,
            schedule=schedule,
        )
        result = await self.repo.create_game(
            server_id=server_id,
            ruleset=draft.ruleset,
            seed=draft.seed,
            commitment=draft.commitment,
            seats=draft.seats,
            events=draft.events,
            effects=draft.effects,
            options=draft.options,
            channels=draft.channels,
            schedule=draft.schedule,
            message_id=message_id,
        )
        game_id = result.game_id
        async with self._turn(game_id):  # an input to the new game comes after its start
            self._loaded.pop(game_id, None)
            # read back, not taken as recorded: a reconnect's `recover` may have read the new
            # rows and performed them between the commit and this lock
            self._in_order.discard(game_id)
            await self._deliver_in_order(game_id, result.pending)
        return game_id

    async def start_lobby(
        self,
        lobby_id: int,
        *,
        seed: str,
        created: Callable[[int, dict[str, Any]], Awaitable[None]] | None = None,
    ) -> int:
        """Deal a sign-up's game: the sign-up is marked started and the game created (with the
        start's platform steps first in its outbox, ``bot.runtime.start_steps``) in one transaction,
        then the effects are performed. Raises ``LobbyRefused`` (``started``, naming the game,
        for every start but one) or the engine's ``EngineError`` if the players cannot be dealt.
        ``created`` is awaited with the new game and its channels once it is committed, before
        any of its effects is performed (the shell routes the channels to it and answers the
        start; a refused start has answered nothing yet, so its refusal can be private).
        """

        def deal(lobby: LobbyInfo) -> GameDraft:
            settings = lobby.settings
            options = {"language": settings["language"], "tie": settings["tie"]}
            return self._draft(
                ruleset=str(settings["ruleset"]),
                players=[PlayerSpec(user_id=p.user_id, name=p.name) for p in lobby.players],
                seed=seed,
                options=options | dict(settings.get("options", {})),
                channels={"game": str(lobby.channel_id), "vote": str(lobby.vote_channel_id)}
                | forum_channels(settings),
                schedule=GameSchedule.from_json(settings["schedule"]),
                first=start_effects(),
            )

        result = await self.repo.lobbies.start(lobby_id, deal)
        # Held from before the game is routed (``created``) until its start's effects are
        # performed: an input to it (a post at night, a click in a role DM) waits for them, and
        # never performs one of them a second time.
        failed: Exception | None = None
        async with self._turn(result.game_id):
            self._loaded.pop(result.game_id, None)
            self._in_order.discard(result.game_id)  # read back, as `create_game` does
            if created is not None:
                try:
                    info = await self.info(result.game_id, refresh=True)
                    await created(result.game_id, dict(info.channels))
                except Exception as exc:  # answering the start failed (it expired, say)
                    failed = exc
            # committed: the deal goes out all the same, the private part too (after the turn)
            await self._deliver_in_order(result.game_id, result.pending)
        if failed is not None:
            raise failed
        return result.game_id

    def _draft(
        self,
        *,
        ruleset: str,
        players: Sequence[PlayerSpec],
        seed: str,
        options: dict[str, Any],
        channels: dict[str, Any],
        schedule: GameSchedule,
        first: Sequence[dict[str, Any]] = (),
    ) -> GameDraft:
        """A new game's first rows: the deal's events, and ``first`` then the engine's effects."""
        created = new_game(
            ruleset=ruleset,
            players=[str(p.user_id) for p in players],
            seed=seed,
            options={k: v for k, v in options.items() if k in option_names(get_ruleset(ruleset))},
        )
        now = self.clock.now()
        opening = (  # the warm-up (游戏热身) has a set length; night 1 follows the schedule
            now + timedelta(minutes=created.options.warmup)
            if created.options.warmup
            else schedule.deadline("night", now)
        )
        events = start_events(created, Instant(to_ms(opening)))
        effects = [e for part in for_delivery(effects_for(None, events)) for e in part]
        return GameDraft(
            ruleset=ruleset,
            seed=seed,
            commitment=created.commitment,
            seats=seat_specs(created.players, players),
            events=tuple(codec.dump(e) for e in events),
            effects=(*first, *(codec.dump(e) for e in effects)),
            options=options,
            channels=channels,
            schedule=schedule.to_json(),
        )

    async def set_channels(self, game_id: int, channels: dict[str, Any]) -> None:
        """Remember Discord objects made for a game (team threads, the players' role): merged
        into its row by the store, under the row's lock."""
        try:
            await self.repo.update_channels(game_id, channels)
        finally:  # even if it failed: it may have been committed
            self._row_written(game_id)

    async def take_channel(self, game_id: int, key: str) -> bool:
        """Remove a mark from the game's row (``set_channels``): whether this call removed it,
        so of callers at once exactly one acts on it."""
        try:
            return await self.repo.take_channel(game_id, key)
        finally:
            self._row_written(game_id)

    async def claim_channel(self, game_id: int, key: str, value: Any = True) -> bool:
        """Set a mark in the game's row unless it holds `value` already (``set_channels``):
        whether this call set it, so of callers at once exactly one acts on it."""
        try:
            return await self.repo.claim_channel(game_id, key, value)
        finally:
            self._row_written(game_id)

    # -- inputs ------------------------------------------------------------------------------------
    async def submit(
        self,
        game_id: int,
        command: Command,
        *,
        message_id: int | None = None,
        name: str | None = None,
        recorded: Recorded | None = None,
    ) -> Outcome:
        """Decide, commit, deliver. A refused command changes nothing (a refused vote post is
        remembered by its message id, with its reply, so a redelivery is answered once).
        `name`: a substitute's display name, recorded with their seat term (ReplacePlayer).
        `recorded`: told the outcome once it is recorded, before its effects are performed (a
        person's answer must not wait for them: what they do in private depends on roles)."""
        arrived = time.perf_counter()
        if isinstance(command, ReplacePlayer):
            return await self._replace(game_id, command, name, arrived, recorded)
        async with self._turn(game_id):
            return await self._submit(game_id, command, message_id, name, arrived, recorded)

    async def _replace(
        self,
        game_id: int,
        command: ReplacePlayer,
        name: str | None,
        arrived: float,
        recorded: Recorded | None,
    ) -> Outcome:
        """`submit` of a replacement, once no private delivery is under way. A private effect
        names its seat, and goes to whoever holds the seat when it is performed: those recorded
        before the substitute takes it go to the player they were for. The lane is waited for
        outside the game's turn (how long depends on who is DMed, so on roles: the game's other
        inputs and their public replies must not wait with it), then found idle under the turn:
        no delivery under way or waiting for it (`_lane_users`; none starts while the turn is
        held: each starts as its input leaves the turn). A private effect that failed and waits
        for its retry is not waited for: it goes to whoever holds the seat when it is retried."""
        lane = self._private_locks[game_id]
        while True:
            async with lane:
                pass
            async with self._turn(game_id):
                if not self._lane_users.get(game_id):
                    return await self._submit(game_id, command, None, name, arrived, recorded)

    async def submit_posted(
        self,
        game_id: int,
        post: Callable[[GameState], Awaitable[tuple[Command, int] | None]],
    ) -> Outcome | None:
        """An input the bot publishes for a person before it is recorded (``/vote``: the vote
        posted for the voter, stamped by its post). ``post`` is given the state as it is now,
        under the game's lock, and returns the command and its post's message id, or None
        (nothing posted, nothing submitted). No other input comes between the state it judged,
        its post and its record: a lock's catch-up never reads the bot's own posts, so a lock
        in between would close the window without the vote its post shows."""
        arrived = time.perf_counter()
        async with self._turn(game_id):
            made = await post(await self.state(game_id))
            if made is None:
                return None
            command, message_id = made
            return await self._submit(game_id, command, message_id, None, arrived)

    async def _submit(
        self,
        game_id: int,
        command: Command,
        message_id: int | None,
        name: str | None,
        arrived: float,
        recorded: Recorded | None = None,
    ) -> Outcome:
        """`submit` under the game's lock (a replacement's: with no private delivery under way,
        `_replace`)."""
        foreign = self.shards is not None and not await self.owns(game_id)
        if foreign:
            self._loaded.pop(game_id, None)  # its owner appends: read it as it is now
        for attempt in (1, 2):
            # a cached state without a coroutine (`_load`'s first step): every vote post's
            loaded = self._loaded.get(game_id) or await self._load(game_id)
            if isinstance(command, SubmitPower) and command.power is Power.CONFESS:
                command = await self._with_next_deadline(game_id, loaded.state, command)
            try:
                outcome, pending = await self._commit(game_id, loaded, command, message_id, name)
            except SeqConflict:
                self._loaded.pop(game_id, None)  # someone else appended: rebuild and retry
                self._in_order.discard(game_id)  # and recorded effects: read them back
                if attempt == 2:
                    raise
                continue
            if self.metrics is not None:
                self.metrics.input(_outcome_name(outcome), time.perf_counter() - arrived)
            if recorded is not None:
                recorded(outcome, pending)
            if foreign:
                await self._recorded_for_owner(game_id, pending)
            elif pending:
                await self._deliver_in_order(game_id, pending)
            return outcome
        raise AssertionError("unreachable")

    async def _recorded_for_owner(self, game_id: int, pending: Sequence[OutboxItem]) -> None:
        """An input to another process's game is recorded: none of its effects is performed
        here (the owner may be performing the game's earlier ones, or have performed them
        without its done marks written), nothing of it is kept, and the owner is told. A notice
        lost is an effect delayed, never lost: the owner's sweep finds it."""
        self._loaded.pop(game_id, None)
        self._info.pop(game_id, None)
        self._in_order.discard(game_id)
        if not pending or self._tell_owner is None:
            return
        try:
            await self._tell_owner(game_id)
        except Exception as exc:  # recorded all the same; the owner's sweep performs it
            log.warning("game %s: owner not told (%s)", game_id, type(exc).__name__)

    async def _commit(
        self,
        game_id: int,
        loaded: Loaded[GameState],
        command: Command,
        message_id: int | None,
        name: str | None = None,
    ) -> tuple[Outcome, Sequence[OutboxItem]]:
        state = loaded.state
        try:
            events = decide(state, command)
        except EngineError as error:
            if message_id is None:
                return Outcome(state=state, error=error), ()
            post_id = str(message_id)
            reply = ReplyToPost(
                post_id=post_id, key=error.key, params=params(**_flat(error.params))
            )
            result = await self.repo.record(
                game_id,
                events=[],
                effects=[codec.dump(reply)],
                message_id=message_id,
                outcome={"error": error.key},
            )
            if result.duplicate and not (result.outcome or {}).get("error"):
                # Redelivered after it was accepted (the engine, seeing it in the state, says
                # duplicate_post): the outcome of any redelivery, not a refusal.
                return Outcome(state=state, duplicate=True), result.pending
            return Outcome(state=state, error=error, duplicate=result.duplicate), result.pending
        published, after = effects_and_state(state, events)  # the events folded once
        public, private = for_delivery(published)
        # a forum game's vote posts: opened and locked after the engine's public effects (its
        # 看表帖), before any private one
        info = self.cached_info(game_id) or await self.info(game_id)
        shell = vote_post_steps(events) if is_forum(info.channels) else []
        finished = any(isinstance(e, GameEnded) for e in events)
        subs: list[SeatSpec] = []
        if isinstance(command, ReplacePlayer) and command.new_player.isdigit():
            # the substitute's seat terms, for standings and /game join lookups: one for each
            # card they took (the engine gives them every card of the player: 5.0, two), never
            # only the card named
            user = int(command.new_player)
            named = name or command.new_player
            subs.extend(
                SeatSpec(seat=int(card), name=named, user_id=user)
                for card in after.seats_of(command.new_player)
            )
        result = await self.repo.record(
            game_id,
            events=list(map(codec.dump, events)),
            effects=[*map(codec.dump, public), *shell, *map(codec.dump, private)],
            message_id=message_id,
            expected_seq=loaded.seq,
            substitutes=subs,
            finish=finished,
        )
        if result.duplicate:
            return Outcome(state=state, duplicate=True), result.pending
        state = after
        last_seq = result.last_seq
        assert last_seq is not None
        snapshot_seq = loaded.snapshot_seq
        if not finished and due(state, events, last_seq - snapshot_seq):
            # after the commit of the events it covers; written with the next transaction
            self.repo.save_snapshot_soon(
                game_id, last_seq, SNAPSHOTS.version, SNAPSHOTS.dump(state)
            )
            snapshot_seq = last_seq
        self._loaded[game_id] = Loaded(state=state, seq=last_seq, snapshot_seq=snapshot_seq)
        if finished:
            self._row_written(game_id)  # its status changed (nothing else in it did)
        return _accepted(state=state, events=events), result.pending

    def holding(self, game_id: int) -> _Turn:
        """The game's lock, for the shell's own work on the game that must not interleave with
        its inputs and deliveries (a deleted 投票帖 replaced): `async with`."""
        return self._turn(game_id)

    def _turn(self, game_id: int) -> _Turn:
        """The game's lock, for an input or a delivery; once it is released, the private
        effects its delivery let through go out in the game's private lane. How long they take
        depends on roles (a check result at dawn), so the game's next input never waits for
        them: its public effects go out meanwhile."""
        return _Turn(self, game_id)

    async def _deliver_in_order(
        self,
        game_id: int,
        pending: Sequence[OutboxItem],
        *,
        undone: Sequence[OutboxItem] | None = None,
    ) -> None:
        """Under the game's lock: perform the public effects of `pending` (what an input just
        recorded) after every earlier public effect of the game still undone (read back unless
        the game is known in order, or given as `undone`: an earlier failure goes out first).
        Once they are all out, the private effects recorded with them may go (`_private_lane`,
        after the lock)."""
        self._deliveries_begun[game_id] += 1
        if len(pending) == 1 and game_id in self._in_order and not is_private(pending[0]):
            await self._deliver_one(game_id, pending[0])  # a vote post's ✅ reply
            return
        if game_id not in self._in_order:
            pending = undone if undone is not None else await self.repo.undone_effects(game_id)
        self._in_order.discard(game_id)
        public = [item for item in pending if not is_private(item)]
        if await self._deliver(public):
            self._in_order.add(game_id)
            if len(public) < len(pending):  # private ones among them
                self._private_due[game_id] = max(item.id for item in pending)

    async def _deliver_one(self, game_id: int, item: OutboxItem) -> None:
        """`_deliver_in_order` of one public effect of a game known in order (every vote post's
        ✅ reply), as its general path does it (`_deliver`, `deliver`) in fewer steps: with 100
        games posting, those steps were ~10 % of the event loop's time a post (measured)."""
        self._in_order.discard(game_id)  # until it is out: cancelled meanwhile, it is read back
        if self._perform is None:
            return
        with self.deliveries.delivering() as allowed:
            if not allowed:  # stopping: committed, left in the outbox for the next start
                return
            try:
                await self._perform(item)
            except Exception as exc:
                await attempt_failed(self.repo, item, exc)
                performed = False
            else:
                self.repo.mark_done_soon(item.id)  # written with the next transaction
                performed = True
        if performed:
            self._in_order.add(game_id)
        else:
            self._failed([item], set())  # the shell retries it; the game is read back then

    async def _private_lane(self, game_id: int, upto: int) -> None:
        """Perform the game's undone private effects up to outbox id ``upto`` whose inputs'
        public effects are out, in the order they were recorded, one delivery at a time (read
        again under the lane's lock: an earlier one that failed goes first, and none goes
        twice)."""
        self._lane_users[game_id] += 1
        try:
            async with self._private_locks[game_id]:
                undone = await self.repo.undone_effects(game_id)
                await self._deliver(
                    [item for item in undone if is_private(item) and item.id <= upto]
                )
        finally:
            self._lane_users[game_id] -= 1
            if not self._lane_users[game_id]:
                del self._lane_users[game_id]

    async def _deliver(self, items: Sequence[OutboxItem]) -> bool:
        """Perform the effects in order and mark them done; True if every one was."""
        if not items or self._perform is None:
            return not items
        with self.deliveries.delivering() as allowed:
            if not allowed:  # stopping: committed, left in the outbox for the next start
                return False
            report = await deliver(
                self.repo, items, self._perform, self.deliveries.is_stopping, is_private
            )
        if report.failed:
            self._failed(
                [item for item in items if item.id in report.failed], report.failed_privately
            )
        return not report.failed and not report.deferred

    def _failed(self, failed: Sequence[OutboxItem], privately: set[int]) -> None:
        """Count effects that failed and tell the shell, per game (``privately``: the games
        whose failed effect was a private one), so it retries later."""
        if self.metrics is not None:
            self.metrics.discord_errors.inc(len(failed))
        if self._on_failure is not None:
            for game_id, tries in {item.game_id: item.attempts + 1 for item in failed}.items():
                self._on_failure(game_id, tries, game_id in privately)

    def on_delivery_failure(self, callback: Callable[[int, int, bool], None]) -> None:
        """Called with (game id, attempts so far, whether only a private effect failed) when an
        effect fails: the shell retries later."""
        self._on_failure = callback

    async def retry(self, game_id: int) -> None:
        """Perform the game's undone effects again, in order (after a failure: a private one's
        leaves the game's public effects in order, and is found by reading them all back)."""
        async with self._turn(game_id):
            self._in_order.discard(game_id)
            await self._deliver_in_order(game_id, ())

    async def wake(self, game_id: int) -> None:
        """Another process recorded an input to this game (a click in a DM): its state is read
        again, and its undone effects performed in order, as a retry does."""
        async with self._turn(game_id):
            self._loaded.pop(game_id, None)
            self._in_order.discard(game_id)
            await self._deliver_in_order(game_id, ())

    # -- deadlines ---------------------------------------------------------------------------------
    def lock_command(
        self, state: GameState, info: GameInfo, *, forced: bool = False, window: int | None = None
    ) -> Lock:
        """The lock of the window open in `state` — the state read when the deadline job or the
        moderator's command started, so the lock names that window (`window`, by default the one
        open in `state`) and can never close the next one — at its deadline (or now, when
        forced), with the deadlines of whatever window opens next computed from the schedule:
        the regular next window, of the kind the engine says (`engine.windows.following`), and a
        run-off, a victim's choice or a last-act window (`runoff_deadline`: a day's schedule)."""
        now = self.clock.now()
        if window is None and state.window is not None:
            window = state.window_index
        if state.window is None:  # nothing open: the engine says why (locked, or game over)
            return Lock(at=Instant(to_ms(now)), forced=forced, window=window)
        at = now if forced or state.deadline is None else from_ms(state.deadline)
        start = max(now, at)
        schedule = self.schedule(info)
        next_kind = following(state.window).kind
        return Lock(
            at=Instant(to_ms(at)),
            next_deadline=Instant(to_ms(schedule.deadline(next_kind, start))),
            runoff_deadline=Instant(to_ms(schedule.deadline("day", start))),
            forced=forced,
            window=window,
        )

    async def _with_next_deadline(
        self, game_id: int, state: GameState, command: SubmitPower
    ) -> SubmitPower:
        """A day power that closes the day (认匪) with the deadline of the window it opens,
        from the schedule as a lock's (`lock_command`), counted from now: without one the next
        window would wait for a moderator. None while the game is paused: the clock stays
        stopped, as a moderator stopped it, until one sets a deadline or advances."""
        if state.window is None or state.paused or command.next_deadline is not None:
            return command
        now = self.clock.now()
        next_kind = following(state.window).kind
        deadline = self.schedule(await self.info(game_id)).deadline(next_kind, now)
        return dataclasses.replace(command, next_deadline=Instant(to_ms(deadline)))

    # -- start -------------------------------------------------------------------------------------
    async def recover(self, shards: Shards | None = None) -> dict[int, str]:
        """Rebuild every active game (of the servers on `shards`, if given: this process's) and
        perform what the outbox still holds for them; returns the games stopped because their
        events could not be replayed (id → reason)."""
        # Rebuilding allocates the states that stay cached: the cyclic GC finds nothing to free
        # among them, and its full collections while they pile up cost a fifth of the rebuild.
        # Inputs may come in meanwhile (a click in a DM names its game; after a reconnect every
        # game is routed): each game's effects are performed under its lock, as theirs are.
        with collections_paused(), self.deliveries.under_way():
            report = await rebuild_games(self.repo, fold, snapshot=SNAPSHOTS, shards=shards)
            for game_id in report.stopped:
                self._row_written(game_id)  # stopped: its cached row says active
            for game_id, loaded in report.games.items():
                cached = self._loaded.get(game_id)
                if cached is None or cached.seq < loaded.seq:  # an input's newer state stays
                    self._loaded[game_id] = loaded
            begun = dict(self._deliveries_begun)
            waiting: defaultdict[int, list[OutboxItem]] = defaultdict(list)
            for item in await self.repo.undone_effects(shards=shards):  # every game's, at once
                waiting[item.game_id].append(item)
            for game_id in report.games.keys() - waiting.keys():
                if self._deliveries_begun.get(game_id, 0) == begun.get(game_id, 0):
                    # every effect recorded for it was performed, and no input has recorded
                    # (or failed to deliver) one since: its next input needs no look-up
                    self._in_order.add(game_id)
            for game_id in sorted(waiting):
                if self.deliveries.is_stopping():
                    break
                async with self._turn(game_id):
                    # as read, unless a delivery of the game began since (an input recorded
                    # more, a retry performed some): then read again, under the lock
                    unchanged = self._deliveries_begun.get(game_id, 0) == begun.get(game_id, 0)
                    await self._deliver_in_order(
                        game_id, (), undone=waiting[game_id] if unchanged else None
                    )
        give_back_freed_memory()
        return report.stopped

    async def flush(self) -> None:
        """Write what the store keeps for its next transaction (done marks, snapshots)."""
        await self.repo.flush()

    async def finish_deliveries(self) -> None:
        """At a clean stop, first: no delivery starts any more, and those under way end (so
        every effect performed has its done mark asked for before ``close`` flushes them)."""
        await self.deliveries.finish()

    async def close(self) -> None:
        """At a clean stop: the deliveries under way ended (``finish_deliveries``), ``flush``,
        then let the store close its own connections."""
        await self.finish_deliveries()
        await self.repo.close()

    async def active_games(self, shards: Shards | None = None) -> list[int]:
        """Ids of the games in play (of the servers on `shards`, if given)."""
        return await self.repo.active_game_ids(shards)

    async def stop(self, game_id: int, reason: str) -> bool:
        """Stop a game in play for good (`reason`: why, kept on its row), once its input or
        delivery under way is done (under its lock); True if this stopped it, False if it was
        not in play, so of two callers that find the cause at once, one alone goes on."""
        async with self._turn(game_id):
            try:
                stopped = await self.repo.stop_game(game_id, reason)
            finally:
                self._row_written(game_id)  # its cached row says active
            self._in_order.discard(game_id)
        return stopped

    async def is_active(self, game_id: int) -> bool:
        """Whether the game is in play."""
        return (await self.info(game_id)).status is GameStatus.ACTIVE


class _Turn:
    """``GameService._turn``: a class, not a generator, as it is taken by every input (a
    generator-based context manager cost a vote post ~3 µs of the event loop's time)."""

    __slots__ = ("_game_id", "_lock", "_service")

    def __init__(self, service: GameService, game_id: int) -> None:
        self._service = service
        self._game_id = game_id
        self._lock = service._locks[game_id]

    async def __aenter__(self) -> None:
        await self._lock.acquire()

    async def __aexit__(self, kind: type[BaseException] | None, *_: object) -> None:
        self._lock.release()
        if kind is None:  # as after a generator's yield: not when the turn raised
            upto = self._service._private_due.pop(self._game_id, None)
            if upto is not None:
                await self._service._private_lane(self._game_id, upto)


@cache
def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's `malloc_trim`, or None where the C library has none."""
    try:
        trim: Callable[[int], int] = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return None
    return trim


def give_back_freed_memory() -> None:
    """Return to the system the heap pages a start's reads used and freed. glibc keeps them
    otherwise (the rows and JSON of every active game, read at once): ~45 KB of RSS per game
    rebuilt, held for the life of the process, against ~16 KB the states themselves keep."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


def _outcome_name(outcome: Outcome) -> str:
    if outcome.duplicate:
        return "duplicate"
    return "refused" if outcome.error is not None else "accepted"


def _flat(values: Any) -> dict[str, str | int | bool | None]:
    return {
        k: v if isinstance(v, str | int | bool) or v is None else str(v) for k, v in values.items()
    }


_PRIVATE_TYPES = frozenset(kind.__name__ for kind in PRIVATE)


def is_private(item: OutboxItem) -> bool:
    """Whether an outbox item is an effect only one player or team sees (`engine.effects.PRIVATE`):
    delivered after every public one, so its time or failure never holds one up."""
    return item.payload.get("type") in _PRIVATE_TYPES
