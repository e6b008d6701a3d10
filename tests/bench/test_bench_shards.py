"""The shards section judges each process on the least figures of its runs (`bench.shards.least`)."""

from __future__ import annotations

import pytest

from bench.shards import REPEATS, SHARD_COUNT, layouts, least, rotated


def test_each_figure_is_the_least_of_the_runs_of_one_process() -> None:
    runs = [
        {"games": 25, "wall": 2.0, "cpu": 1.4, "rss": 50, "heap": 46},
        {"games": 25, "wall": 1.5, "cpu": 1.0, "rss": 52, "heap": 46},
        {"games": 25, "wall": 1.7, "cpu": 1.2, "rss": 49, "heap": 45},
    ]
    assert least(runs) == {"games": 25, "wall": 1.5, "cpu": 1.0, "rss": 49, "heap": 45}


def test_runs_that_rebuilt_different_games_are_not_one_process() -> None:
    with pytest.raises(ValueError, match="different games"):
        least([{"games": 25, "cpu": 1.0}, {"games": 24, "cpu": 0.9}])


def test_each_round_starts_one_shard_later_and_runs_every_shard_once() -> None:
    rounds = [[rotated(k, r) for k in range(SHARD_COUNT)] for r in range(REPEATS)]
    for one in rounds:
        assert sorted(s.ids for s in one) == sorted(s.ids for s in layouts())
    firsts = [one[0] for one in rounds]
    # each shard the first process of a round in turn: none more than once before all have been
    assert firsts == [layouts()[r % SHARD_COUNT] for r in range(REPEATS)]
    assert len(set(firsts)) == min(REPEATS, SHARD_COUNT)
