"""An input that loses the race for its game's next seq twice (another writer of the same game
appended before its record, and again after it rebuilt): it is refused with ``SeqConflict``,
recorded nowhere, and its cached state dropped; its post is not lost, since nothing names it
recorded, the next catch-up counts it, once."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from fakes import FakePort, Wired, runtime_on, wire
from sqlalchemy import func, select
from test_runtime import new_game, post, snowflake, to_day

from bot.store import SeqConflict
from bot.store.models import Input, Outbox


@pytest.fixture
async def two_writers(tmp_path: Path) -> AsyncIterator[tuple[Wired, Wired]]:
    """Two runtimes on one database: `ours`, and `theirs` writing to the same game."""
    ours = await runtime_on(tmp_path)
    theirs = await wire(ours.runtime.settings, ours.database, ours.clock, FakePort())
    yield ours, theirs
    theirs.runtime.close()
    ours.runtime.close()
    await ours.database.dispose()


async def rows_of(w: Wired, message_id: int) -> tuple[int, int]:
    """(inputs, outbox rows) recorded for a message."""
    async with w.database.sessions() as s:
        inputs = await s.scalar(select(func.count()).where(Input.message_id == message_id))
        effects = await s.scalar(select(func.count()).where(Outbox.message_id == message_id))
    return int(inputs or 0), int(effects or 0)


async def test_an_input_that_loses_the_race_twice_is_refused_and_counted_by_the_catch_up(
    two_writers: tuple[Wired, Wired],
) -> None:
    ours, theirs = two_writers
    service = ours.runtime.service
    game_id = await new_game(ours)
    await to_day(ours, game_id)  # our state is cached
    # what the performer of the vote window's opening remembers: catch-up reads from here
    await service.set_channels(game_id, {"votes_from": str(snowflake(ours.clock.now()) - 1)})
    ours.clock.advance(60)
    mine = post(ours, 1001, "投 3号", n=1)
    first = post(ours, 1002, "投 4号", n=2)
    second = post(ours, 1003, "投 5号", n=3)
    outcome = await theirs.runtime.votes.ingest(game_id, first)  # our cache is now behind
    assert outcome is not None and outcome.ok
    repo = service.repo
    load_game = repo.load_game
    rebuilt: list[int] = []

    async def then_they_append(*args: Any, **kwargs: Any) -> Any:
        loaded = await load_game(*args, **kwargs)
        rebuilt.append(loaded.seq)
        if len(rebuilt) == 1:  # and again, between our rebuild and our record
            again = await theirs.runtime.votes.ingest(game_id, second)
            assert again is not None and again.ok
        return loaded

    repo.load_game = then_they_append  # type: ignore[method-assign]
    try:
        with pytest.raises(SeqConflict):
            await ours.runtime.votes.ingest(game_id, mine)
    finally:
        del repo.load_game
    assert len(rebuilt) == 1  # one rebuild, one retry, then the conflict is raised
    assert service.cached_state(game_id) is None  # the stale state is not kept
    assert await rows_of(ours, mine.id) == (0, 0)  # nothing of it recorded
    state = await service.state(game_id)
    assert [p.author for p in state.posts] == ["1002", "1003"]

    await ours.runtime.votes.catch_up(game_id)  # reads the channel again: the post counts
    state = await service.state(game_id)
    assert sorted(p.author for p in state.posts) == ["1001", "1002", "1003"]
    assert await rows_of(ours, mine.id) == await rows_of(ours, first.id)  # once, as theirs
    again = await ours.runtime.votes.ingest(game_id, mine)  # redelivered: recorded already
    assert again is not None and again.duplicate
