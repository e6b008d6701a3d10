"""Performing effects from the outbox, and the restart that rebuilds every game.

Theory of operation: effects are performed at least once (after the commit that recorded them,
and again at start if they were not marked done: a done mark is written with the store's next
transaction, so a crash may lose the last ones). Each carries an idempotency key; the injected
performer uses it to make "at least once" into "once" (a Discord nonce, or a look at the bot's
recent messages). Within a game, effects go out in the order they were recorded, every public
one first (the caller says which are private: seen by one player or team only): how long
private work takes, or whether it fails, depends on roles, so it never holds up a public
effect. When an effect fails, the game's later effects wait for the next pass, so players never
see them out of order.

A game whose log cannot be replayed is stopped (``stopped_error``) with a reason moderators can
read, logged as an error, and never silently skipped; the other games go on. The reason names
only the game, the event seq and the exception's class (and ``key`` if it has one): an engine
message could name a hidden role.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from sqlalchemy.exc import DBAPIError

from bot.store.errors import CorruptLog
from bot.store.repository import Repository
from bot.store.values import Fold, JsonDict, Loaded, OutboxItem, Shards, SnapshotCodec

log = logging.getLogger(__name__)

S = TypeVar("S")
Perform = Callable[[OutboxItem], Awaitable[None]]
"""Performs one effect; must dedupe on ``item.idempotency_key``; raises if it failed."""


@dataclass
class Delivery:
    """What one pass over the outbox did."""

    performed: list[int] = field(default_factory=list)
    failed: dict[int, str] = field(default_factory=dict)
    deferred: list[int] = field(default_factory=list)
    blocked: set[int] = field(default_factory=set)
    """Games with an effect that failed or was deferred by a stop (theirs after it wait for
    the next pass)."""
    failed_privately: set[int] = field(default_factory=set)
    """Games whose failure was of a private effect (their public ones all went out first): who
    is told of it, and when, must not depend on roles."""


@dataclass
class RecoveryReport(Generic[S]):
    """The rebuilt games, the games stopped on an error (id → reason) and the outbox pass."""

    games: dict[int, Loaded[S]] = field(default_factory=dict)
    stopped: dict[int, str] = field(default_factory=dict)
    delivery: Delivery = field(default_factory=Delivery)


async def deliver(
    repo: Repository,
    items: Sequence[OutboxItem],
    perform: Perform,
    stopping: Callable[[], bool] = lambda: False,
    private: Callable[[OutboxItem], bool] = lambda item: False,
) -> Delivery:
    """Perform each effect and mark it done, in order, every public one before every private
    one (``private``); a failure defers the rest of its game (a private one's: only private
    ones are left). Once ``stopping`` says a clean stop has begun, every effect not yet started
    is deferred (it stays in the outbox, in order, for the next start): the stop waits for one
    platform call at most, not for a whole pass (a restart's may hold hundreds).

    The shell calls this with ``record(...).pending`` after each input, recovery with every
    undone effect; one code path for both.
    """
    report = Delivery()
    blocked = report.blocked
    public: list[OutboxItem] = []
    hidden: list[OutboxItem] = []
    for item in items:
        (hidden if private(item) else public).append(item)
    for item in public + hidden:
        if item.game_id not in blocked and stopping():
            blocked.add(item.game_id)
        if item.game_id in blocked:
            report.deferred.append(item.id)
            continue
        try:
            await perform(item)
        except Exception as exc:
            report.failed[item.id] = await attempt_failed(repo, item, exc)
            if private(item):
                report.failed_privately.add(item.game_id)
            blocked.add(item.game_id)
            continue
        repo.mark_done_soon(item.id)  # written with the next transaction, not waited for
        report.performed.append(item.id)
    return report


async def attempt_failed(repo: Repository, item: OutboxItem, exc: Exception) -> str:
    """Log that performing ``item`` raised ``exc`` (its name at ERROR; the message, which may
    name hidden things, at DEBUG only) and record the failed attempt; the reason recorded."""
    reason = f"{type(exc).__name__}: {exc}"
    log.error(
        "effect %s of game %s failed (attempt %s): %s",
        item.id,
        item.game_id,
        item.attempts + 1,
        type(exc).__name__,
    )
    log.debug("effect %s failed", item.id, exc_info=exc)  # may name hidden things: DEBUG only
    await repo.record_attempt_failure(item.id, reason)
    return reason


def first_failing_seq(events: list[JsonDict], fold: Fold[Any]) -> int | None:
    """The seq of the first event whose prefix ``fold`` rejects (bisection), or None.

    Every prefix of a valid log is valid, so failure is monotonic in the prefix length.
    """
    if not _fails(fold, events):
        return None
    good, bad = 0, len(events)  # fold(events[:good]) works (or good == 0), events[:bad] fails
    while bad - good > 1:
        mid = (good + bad) // 2
        if _fails(fold, events[:mid]):
            bad = mid
        else:
            good = mid
    return bad


def _fails(fold: Fold[Any], events: list[JsonDict]) -> bool:
    try:
        fold(events)
    except Exception:
        return True
    return False


def describe_failure(exc: BaseException, seq: int | None) -> str:
    """A reason safe to show moderators: no exception message, which may hold hidden roles."""
    kind = type(exc).__name__
    key = getattr(exc, "key", None)
    if isinstance(key, str):
        kind = f"{kind}[{key}]"
    where = f"event {seq}" if seq is not None else "an unreadable event"
    return f"replay failed at {where}: {kind}"


async def rebuild(
    repo: Repository,
    game_id: int,
    fold: Fold[S],
    *,
    snapshot: SnapshotCodec[S] | None = None,
) -> Loaded[S] | None:
    """Load one game; if its log is corrupt or unreplayable, stop it (logged) and return None.

    Database failures propagate: a lost connection is not a corrupt game.
    """
    try:
        return await repo.load_game(game_id, fold, snapshot=snapshot)
    except DBAPIError:
        raise
    except Exception as exc:
        seq: int | None
        if isinstance(exc, CorruptLog):
            seq = exc.seq
        else:
            seq = first_failing_seq(await repo.load_events(game_id), fold)
        reason = describe_failure(exc, seq)
        log.error("game %s stopped: %s", game_id, reason)
        await repo.stop_game(game_id, reason)
        return None


async def recover(
    repo: Repository,
    fold: Fold[S],
    perform: Perform,
    *,
    snapshot: SnapshotCodec[S] | None = None,
    shards: Shards | None = None,
    stopping: Callable[[], bool] = lambda: False,
    private: Callable[[OutboxItem], bool] = lambda item: False,
) -> RecoveryReport[S]:
    """At start: rebuild every active game, then perform every undone effect again (with
    ``shards``: of the games of the servers on them only; other processes own the rest; none
    started once ``stopping``, see ``deliver``).

    Effects of games just stopped stay undone (their state is in doubt) until a moderator
    resumes the game; finished games' last effects are performed. (The bot, whose inputs may
    come in meanwhile, performs them game by game under each game's lock: ``GameService``.)
    """
    report = await rebuild_games(repo, fold, snapshot=snapshot, shards=shards)
    undone = await repo.undone_effects(shards=shards)
    report.delivery = await deliver(repo, undone, perform, stopping, private)
    return report


async def rebuild_games(
    repo: Repository,
    fold: Fold[S],
    *,
    snapshot: SnapshotCodec[S] | None = None,
    shards: Shards | None = None,
) -> RecoveryReport[S]:
    """Rebuild every active game (of the servers on ``shards``, if given); a game whose log
    cannot be replayed is stopped (``rebuild``). Nothing is performed: a caller whose inputs
    may come in meanwhile performs each game's undone effects under that game's own lock."""
    report: RecoveryReport[S] = RecoveryReport()
    await repo.earlier_writes_landed()  # a group its writer process still commits: seen below
    clean = await repo.load_active_games(fold, snapshot=snapshot, shards=shards)  # bulk reads
    for game_id in await repo.active_game_ids(shards):
        loaded = clean.get(game_id)
        if loaded is None:
            loaded = await rebuild(repo, game_id, fold, snapshot=snapshot)
        if loaded is None:
            info = await repo.get_game(game_id)
            report.stopped[game_id] = info.status_error or ""
        else:
            report.games[game_id] = loaded
    return report
