"""The game service at its edges, without Discord: a failed effect counted for /metrics; a post's
reply that fails waits for the shell's retry and goes before the next post's; a lock
asked for when no window is open (a moderator's advance that read the state as the game ended)
names no next window and is refused, recording nothing; a C library without ``malloc_trim``
(not glibc) leaves the freed pages where they are, and the start goes on."""

from __future__ import annotations

import ctypes
from collections.abc import AsyncIterator
from pathlib import Path
from types import SimpleNamespace

import pytest
from fakes import Wired, performing
from test_delivery_races import Platform, all_effects, refused_vote
from test_runtime import new_game

from bot.runtime import service as service_module
from bot.runtime.metrics import Metrics
from bot.runtime.schedule import to_ms
from bot.store import GameStatus
from engine.commands import EndGame
from engine.model import Camp, Instant


@pytest.fixture
async def wired(tmp_path: Path) -> AsyncIterator[tuple[Wired, Platform]]:
    async with performing(tmp_path, Platform()) as pair:
        yield pair


async def test_a_failed_effect_is_counted_for_metrics(wired: tuple[Wired, Platform]) -> None:
    w, platform = wired
    service = w.runtime.service
    service.metrics = Metrics()
    errors = "faguan_discord_errors_total"
    platform.failing = lambda item: True  # Discord is away
    game_id = await new_game(w)
    assert service.metrics.registry.get_sample_value(errors) == 1  # the first; the rest wait
    (failed, *rest) = await service.repo.undone_effects(game_id)
    assert failed.attempts == 1 and rest and all(item.attempts == 0 for item in rest)
    platform.failing = lambda item: False
    await service.retry(game_id)
    assert service.metrics.registry.get_sample_value(errors) == 1  # nothing failed since
    await service.flush()
    assert await service.repo.undone_effects(game_id) == []


async def test_a_post_s_reply_that_fails_is_told_and_goes_before_the_next_post_s(
    wired: tuple[Wired, Platform],
) -> None:
    w, platform = wired
    service = w.runtime.service
    service.metrics = Metrics()
    told: list[tuple[int, int, bool]] = []
    service.on_delivery_failure(
        lambda game, tries, privately: told.append((game, tries, privately))
    )
    game_id = await new_game(w)  # every start effect out: the game is known in order
    platform.failing = lambda item: True  # Discord is away for the reply
    await refused_vote(w, game_id, 1001, 1)
    assert told == [(game_id, 1, False)]  # the shell retries it later
    assert service.metrics.registry.get_sample_value("faguan_discord_errors_total") == 1
    (failed,) = await service.repo.undone_effects(game_id)
    assert failed.attempts == 1 and failed.payload["type"] == "ReplyToPost"
    platform.failing = lambda item: False
    await refused_vote(w, game_id, 1002, 2)  # the next post: the failed reply goes first
    ids = await all_effects(w, game_id)
    assert platform.performed[-2:] == ids[-2:] == [failed.id, failed.id + 1]


async def test_a_lock_with_no_window_open_names_none_and_is_refused(
    wired: tuple[Wired, Platform],
) -> None:
    w, _ = wired
    service = w.runtime.service
    game_id = await new_game(w)
    info = await service.info(game_id)  # read while the game was active
    now = Instant(to_ms(w.clock.now()))
    ended = await service.submit(game_id, EndGame(winner=Camp.GOOD, by="9", at=now))
    assert ended.ok
    state = await service.state(game_id)
    assert state.window is None
    lock = service.lock_command(state, info, forced=True)
    assert (lock.at, lock.forced, lock.window) == (now, True, None)
    assert lock.next_deadline is None and lock.runoff_deadline is None
    last_seq = (await service.repo.get_game(game_id)).last_seq
    outcome = await service.submit(game_id, lock)
    assert outcome.error is not None and outcome.error.key == "phase.game_over"
    game = await service.repo.get_game(game_id)
    assert (game.status, game.last_seq) == (GameStatus.FINISHED, last_seq)  # nothing recorded


@pytest.mark.parametrize("missing", ["no symbol", "no library"])
def test_without_malloc_trim_freed_memory_stays_and_nothing_fails(
    monkeypatch: pytest.MonkeyPatch, missing: str
) -> None:
    def cdll(_name: object) -> object:
        if missing == "no library":
            raise OSError("no C library to open")
        return SimpleNamespace()  # a C library without malloc_trim (musl, macOS)

    service_module._malloc_trim.cache_clear()
    monkeypatch.setattr(ctypes, "CDLL", cdll)
    try:
        assert service_module._malloc_trim() is None
        service_module.give_back_freed_memory()  # does nothing, raises nothing
    finally:
        monkeypatch.undo()
        service_module._malloc_trim.cache_clear()  # the next start looks for the real one
