"""Deliveries when inputs interleave (issue 12), without Discord.

- the start's effects, a restart's pass over the outbox and a retry are performed under the
  game's lock, as an input's are: an input arriving meanwhile performs none of them a second
  time, and never one of its own before an earlier one still undone;
- a restart marks a game "in order" (its next input reads no undone effects) only if no input
  recorded effects for it while the restart read the outbox, and never replaces a newer state
  cached by an input with the one it rebuilt.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from fakes import Wired, performing
from sqlalchemy import select
from test_info_cache import read_held
from test_runtime import new_game, post, to_day

from bot.store import OutboxItem
from bot.store.models import Outbox

BLOCKED = 0.3
"""Seconds after which an input not blocked by the game's lock has long finished."""


class Platform:
    """The performer: the outbox ids it performed, in order; its `hold`-th call from now waits
    in flight until `released`; a call for which `failing` says so fails."""

    def __init__(self) -> None:
        self.performed: list[int] = []
        self.kinds: dict[int, str] = {}
        self.calls = 0
        self.hold_at: int | None = None
        self.inside = asyncio.Event()
        self.released = asyncio.Event()
        self.failing: Callable[[OutboxItem], bool] = lambda item: False

    def hold(self, nth: int = 1) -> None:
        self.hold_at, self.calls = nth, 0
        self.inside.clear()
        self.released.clear()

    async def __call__(self, item: OutboxItem) -> None:
        self.calls += 1
        if self.calls == self.hold_at:
            self.hold_at = None
            self.inside.set()
            await self.released.wait()
        if self.failing(item):
            raise RuntimeError("the platform refused it")
        self.performed.append(item.id)
        self.kinds[item.id] = str(item.payload.get("type"))


@pytest.fixture
async def wired(tmp_path: Path) -> AsyncIterator[tuple[Wired, Platform]]:
    async with performing(tmp_path, Platform()) as pair:
        yield pair


async def all_effects(w: Wired, game_id: int) -> list[int]:
    """Every outbox id of the game, done or not, in the order recorded."""
    repo = w.runtime.service.repo
    await repo.flush()  # the done marks asked for so far
    undone = {item.id for item in await repo.undone_effects(game_id)}
    assert not undone, f"effects left undone: {sorted(undone)}"
    async with w.database.sessions() as s:
        return list(
            await s.scalars(select(Outbox.id).where(Outbox.game_id == game_id).order_by(Outbox.id))
        )


def assert_once(platform: Platform, ids: list[int]) -> None:
    twice = [i for i, n in Counter(platform.performed).items() if n > 1]
    assert not twice, f"performed twice: {[(i, platform.kinds[i]) for i in twice]}"
    assert sorted(platform.performed) == ids


async def wait_blocked_or_done(task: asyncio.Task[Any]) -> None:
    """Give the task time to run to its end, unless it waits on something (the game's lock)."""
    await asyncio.wait({task}, timeout=BLOCKED)


async def refused_vote(w: Wired, game_id: int, author: int, n: int) -> Any:
    """A vote posted at night: refused, with a public reply to its post (an effect of its own)."""
    outcome = await w.runtime.votes.ingest(game_id, post(w, author, "投 2号", n=n))
    assert outcome is not None and outcome.error is not None
    return outcome


# -- the start ---------------------------------------------------------------------------------


async def test_an_input_during_the_starts_delivery_performs_none_of_its_effects_again(
    wired: tuple[Wired, Platform],
) -> None:
    w, platform = wired
    platform.hold(3)  # the start's third effect in flight
    starting = asyncio.create_task(new_game(w))
    await platform.inside.wait()
    (game_id,) = await w.runtime.service.active_games()
    replying = asyncio.create_task(refused_vote(w, game_id, 1001, 1))
    await wait_blocked_or_done(replying)
    platform.released.set()
    await asyncio.gather(starting, replying)
    assert_once(platform, await all_effects(w, game_id))


# -- a restart's pass over the outbox ----------------------------------------------------------


async def game_with_undone_effects(w: Wired, platform: Platform) -> int:
    """A game whose start's effects all wait in the outbox (the platform refused the first)."""
    platform.failing = lambda item: True
    game_id = await new_game(w)
    platform.failing = lambda item: False
    assert len(await w.runtime.service.repo.undone_effects(game_id)) > 3
    return game_id


@pytest.mark.parametrize("meanwhile", ["an input", "a retry"])
async def test_an_input_or_a_retry_during_a_restarts_outbox_pass_performs_nothing_twice(
    wired: tuple[Wired, Platform], meanwhile: str
) -> None:
    w, platform = wired
    game_id = await game_with_undone_effects(w, platform)
    platform.hold(2)
    recovering = asyncio.create_task(w.runtime.service.recover())
    await platform.inside.wait()
    other = (
        refused_vote(w, game_id, 1001, 1)
        if meanwhile == "an input"
        else w.runtime.service.retry(game_id)
    )
    racing = asyncio.create_task(other)
    await wait_blocked_or_done(racing)
    platform.released.set()
    await asyncio.gather(recovering, racing)
    assert_once(platform, await all_effects(w, game_id))


@pytest.mark.parametrize("restart", ["reads the outbox", "performs another game's effects"])
async def test_an_input_that_failed_during_a_restart_keeps_its_game_out_of_order(
    wired: tuple[Wired, Platform], restart: str
) -> None:
    """While the restart reads the outbox, or performs another game's effects, an input to this
    game is recorded and its reply fails. The restart must not mark this game in order: the next
    input performs that earlier reply first."""
    w, platform = wired
    other = await game_with_undone_effects(w, platform)
    game_id = await new_game(w, server_id=2, seed="b")
    assert not await w.runtime.service.repo.undone_effects(game_id)
    if restart == "reads the outbox":
        inside, released = read_held(w, "undone_effects")
    else:
        platform.hold(1)  # the other game's first effect in flight
        inside, released = platform.inside, platform.released
    recovering = asyncio.create_task(w.runtime.service.recover())
    await inside.wait()
    platform.failing = lambda item: item.game_id == game_id
    await refused_vote(w, game_id, 1001, 1)  # recorded; its reply fails
    platform.failing = lambda item: False
    failed = [item.id for item in await w.runtime.service.repo.undone_effects(game_id)]
    assert failed
    released.set()
    await recovering
    since = len(platform.performed)
    await refused_vote(w, game_id, 1002, 2)
    mine = set(await all_effects(w, game_id))
    after = [i for i in platform.performed[since:] if i in mine]
    assert after[: len(failed)] == failed, (after, failed)  # the earlier reply went out first
    assert_once(platform, sorted(platform.performed))
    assert await all_effects(w, other)


async def test_a_restart_keeps_the_newer_state_an_input_cached_meanwhile(
    wired: tuple[Wired, Platform],
) -> None:
    w, platform = wired
    other = await game_with_undone_effects(w, platform)
    game_id = await new_game(w, server_id=2, seed="b")
    platform.hold(1)
    recovering = asyncio.create_task(w.runtime.service.recover())
    await platform.inside.wait()  # every game rebuilt; the outbox pass under way
    window = await to_day(w, game_id)  # night 1 locked meanwhile
    platform.released.set()
    await recovering
    state = await w.runtime.service.state(game_id)
    assert state.window_index == window, "the restart put back the state it rebuilt"
    assert await all_effects(w, other)


async def test_a_restart_performs_another_games_effects_once_when_an_input_delivered_them_first(
    wired: tuple[Wired, Platform],
) -> None:
    """The restart reads every game's undone effects at once and performs them game by game.
    While it is at the first game, an input to the second performs that game's undone effects,
    then its own reply fails: when the restart reaches the second game, what it read is stale
    (and the game not in order); it performs the failed reply, and none of the others again."""
    w, platform = wired
    first = await game_with_undone_effects(w, platform)
    second = await game_with_undone_effects(w, platform)
    assert first < second  # the restart goes in game order
    platform.hold(1)
    recovering = asyncio.create_task(w.runtime.service.recover())
    await platform.inside.wait()  # the first game's first effect in flight
    platform.failing = lambda item: item.payload.get("type") == "ReplyToPost"
    await refused_vote(w, second, 1001, 1)  # the second game's undone effects, then its reply
    platform.failing = lambda item: False
    platform.released.set()
    await recovering
    assert_once(platform, sorted([*await all_effects(w, first), *await all_effects(w, second)]))


async def test_a_restart_reads_the_outbox_once_for_every_games_public_effects(
    wired: tuple[Wired, Platform],
) -> None:
    """A restart reads every game's undone effects in one query and performs each game's public
    ones from it (a game's outbox is read again only if a delivery of it began meanwhile, and
    by its private lane, which reads under its own lock)."""
    w, platform = wired
    games = [await game_with_undone_effects(w, platform) for _ in range(3)]
    repo = w.runtime.service.repo
    original = repo.undone_effects
    reads: list[int | None] = []

    async def counted(game_id: int | None = None, **kwargs: Any) -> list[OutboxItem]:
        reads.append(game_id)
        return await original(game_id, **kwargs)

    repo.undone_effects = counted  # type: ignore[method-assign]
    await w.runtime.service.recover()
    assert reads.count(None) == 1
    assert Counter(r for r in reads if r is not None) == dict.fromkeys(games, 1)  # the lanes'
    for game_id in games:
        assert await all_effects(w, game_id)
