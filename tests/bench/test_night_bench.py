"""The long night of `faguan bench --only day` (`bench.night`) measures what it says: a night's
power submissions through the bot's path, every one accepted, the night's state holding them all
until the lock that ends it, and its two rows judged against their baselines (no timing is
asserted: the figures are the bench's business)."""

from __future__ import annotations

from bench import night
from bench.stores import open_bench
from engine.model import PhaseKind


async def test_the_long_night_submits_every_power_and_reports_its_two_rows() -> None:
    async with open_bench("sqlite") as bench:
        rows = await night.measure(bench, submissions=60, window=10)
        cpu, written = rows
        long_game, fresh_game = cpu.values["games"]
        long_night = await bench.service.state(long_game)
        fresh = await bench.service.state(fresh_game)
    assert [r.section for r in rows] == ["day", "day"]
    assert "one night of 60 power submissions" in cpu.what and "CPU of the last 10" in cpu.what
    assert "bytes written per submission" in written.what
    assert cpu.values["held"] == 60 and cpu.values["refused"] == 0
    assert len(cpu.values["windows"]) == 5  # submissions 1–50, ten at a time; the last ten in turns
    assert cpu.ratio is not None and written.ratio is not None
    assert cpu.target == written.target == "ratio ≤ 1.2" and cpu.met is not None
    # the long night was locked (day 1 now); the fresh one took its 20 and is still open
    assert long_night.window is not None and long_night.window.kind is PhaseKind.DAY
    assert fresh.window is not None and fresh.window.kind is PhaseKind.NIGHT
    assert len(fresh.submissions) == 20
