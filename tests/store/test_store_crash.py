"""Kill the work at every point between receiving an input and marking its effects done.

For each crash point of a scripted game (and a second crash right after the first one, so recovery
itself is crashed too; for the real engine's longer game, a spread of points), restart on the same database and prove: no accepted input lost, no effect
applied twice (nor lost), and the rebuilt state equal to the same game run without a crash.
"""

from __future__ import annotations

import pytest

from tests.store.crashkit import (
    CounterGame,
    Faults,
    Outcome,
    Scenario,
    SnapshottedCounterGame,
    World,
    observe,
    play,
    wipe,
)

pytestmark = pytest.mark.asyncio


async def _run(
    url: str, scenario: Scenario, plan: frozenset[int], *, redeliver: bool = False
) -> tuple[Outcome, Faults]:
    await wipe(url)
    faults = Faults(plan)
    world = World(faults)
    game_id = await play(url, scenario, faults, world, redeliver=redeliver)
    assert max(world.applications.values()) == 1
    return await observe(url, scenario, game_id, world), faults


def _spread(trace: list[str], per_kind: int | None) -> list[int]:
    """Crash points (1-based) to try: all, or ``per_kind`` evenly spread points of each kind."""
    if per_kind is None:
        return list(range(1, len(trace) + 1))
    chosen: set[int] = set()
    for kind in set(trace):
        where = [i + 1 for i, k in enumerate(trace) if k == kind]
        step = max(len(where) // per_kind, 1)
        chosen.update(where[step // 2 :: step][:per_kind])
    return sorted(chosen)


async def check_crash_points(
    url: str, scenario: Scenario, *, per_kind: int | None = None
) -> set[str]:
    """Run the reference game, then crash it at every point (or ``per_kind`` of each kind).

    One crash, with recovery alone finishing the inputs already committed; and, at every third
    point, two crashes in a row (the second often inside recovery) with inputs redelivered too.
    Returns the kinds of crash points that were hit.
    """
    reference, faults = await _run(url, scenario, frozenset())
    assert reference.undone == 0 and reference.status == "finished"
    points = _spread(faults.trace, per_kind)
    plans = [(frozenset({k}), False) for k in points]
    plans += [(frozenset({k, k + 1}), True) for k in points[::3]]
    kinds: set[str] = set()
    for plan, redeliver in plans:
        outcome, run = await _run(url, scenario, plan, redeliver=redeliver)
        where = f"{scenario.name}: crash plan {sorted(plan)} ({run.crashes})"
        assert run.crashes, where
        kinds.update(run.crashes)
        # No accepted input lost, none recorded twice: the same inputs, events and outcomes.
        assert outcome.inputs == reference.inputs, where
        assert outcome.events == reference.events, where
        # The rebuilt state is the state of the game run without a crash, and with snapshots
        # it is the state every event gives.
        assert (outcome.state, outcome.seq) == (reference.state, reference.seq), where
        assert outcome.state == outcome.replayed, where
        if scenario.snapshots is not None:
            assert outcome.snapshots == 1, where  # the newest (older ones are deleted)
        # Every effect applied once: the players saw exactly what they would have seen.
        assert outcome.applied == reference.applied, where
        assert (outcome.undone, outcome.status) == (0, reference.status), where
    return kinds


ALL_KINDS = {"before commit", "after commit", "after perform, before mark done"}


async def test_counter_game_survives_a_crash_anywhere(migrated_url: str) -> None:
    """Every crash point of a whole (small) game."""
    assert await check_crash_points(migrated_url, CounterGame()) == ALL_KINDS


async def test_engine_game_survives_crashes(migrated_url: str) -> None:
    """A whole v2 game through the real engine. It passes ~280 crash points; a spread of each
    kind keeps the run short (the counter game covers every point of the same code paths)."""
    from tests.store.enginegame import EngineGame

    assert await check_crash_points(migrated_url, EngineGame(), per_kind=4) == ALL_KINDS


async def test_snapshots_written_after_every_input_lose_nothing(migrated_url: str) -> None:
    """Every crash point of the small game, a snapshot stored after each input (so crashes fall
    between an input's commit and its snapshot's, and inside both): recovery from the newest
    snapshot gives the same game, and the same state as replaying every event."""
    assert await check_crash_points(migrated_url, SnapshottedCounterGame()) == ALL_KINDS


async def test_engine_game_with_the_bots_snapshots_survives_crashes(migrated_url: str) -> None:
    """The whole v2 game with the bot's snapshot codec, a spread of crash points of each kind."""
    from tests.store.enginegame import SnapshottedEngineGame

    assert await check_crash_points(migrated_url, SnapshottedEngineGame(), per_kind=4) == ALL_KINDS
