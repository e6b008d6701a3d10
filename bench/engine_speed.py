"""Engine: 16-player nights resolved per second, and whole recorded games replayed per second.

Nights: a 16-player game at night 1 with every power submitted (`bench.games.night_state`);
`decide(state, Lock)` resolves it and `evolve` applies the events, as the service does. The
baseline is applying the same events alone (`evolve`), the floor of any resolution.

Recorded games: the `bench/recorded/<ruleset>/*.toml` games (read once, outside the timing) played
by `bot.replay.run`, the engine behind `faguan replay` (decide every step, build the record). They
are the longest recorded game of each ruleset of `tests/games`, copied (tests/bench checks the
copies) so that the benchmark runs from an installed package without the test tree. The baseline
is folding the same games' events (`replay_events`), what a restart does per game.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from bench.games import night_state
from bench.report import Row, rate
from bot.records.replay import load_file, run
from engine.commands import Lock
from engine.game import decide, evolve, replay_events
from engine.model import Instant

GAMES_DIR = Path(__file__).resolve().parent / "recorded"


def _timed(seconds: float, step: Any) -> tuple[int, float]:
    """Run `step` repeatedly for about `seconds`; (runs, seconds taken)."""
    runs = 0
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        step()
        runs += 1
        now = time.perf_counter()
        if now >= deadline:
            return runs, now - start


def nights(seconds: float, ruleset: str = "v2") -> Row:
    """The nights row."""
    states = [night_state(ruleset, 16, f"night-{i}") for i in range(8)]
    locks = [Lock(at=Instant(s.deadline or 0), next_deadline=Instant((s.deadline or 0) + 3_600_000))
             for s in states]  # fmt: skip
    resolved = [decide(s, lock) for s, lock in zip(states, locks, strict=True)]
    i = 0

    def resolve() -> None:
        nonlocal i
        state, lock = states[i % 8], locks[i % 8]
        for event in decide(state, lock):
            state = evolve(state, event)
        i += 1

    def apply_only() -> None:
        nonlocal i
        state = states[i % 8]
        for event in resolved[i % 8]:
            state = evolve(state, event)
        i += 1

    base_runs, base_s = _timed(seconds / 3, apply_only)
    runs, took = _timed(seconds, resolve)
    per_s, base_per_s = rate(runs, took), rate(base_runs, base_s)
    submissions = sum(len(s.submissions) for s in states) / len(states)
    return Row(
        section="engine",
        what=f"16-player {ruleset} nights resolved (decide + evolve)",
        figure=f"{per_s:.0f} nights/s",
        baseline=f"{base_per_s:.0f}/s applying the same events only",
        ratio=per_s / base_per_s if base_per_s else None,
        note=f"{submissions:.0f} power submissions per night on average",
        values={"nights_per_s": per_s, "apply_per_s": base_per_s, "runs": runs},
    )


def recorded_games(seconds: float, games_dir: Path = GAMES_DIR) -> Row:
    """The recorded-games row (or a row saying why there is none)."""
    files = sorted(games_dir.glob("*/*.toml")) if games_dir.is_dir() else []
    if not files:
        return Row(section="engine", what="recorded games replayed", figure="—",
                   note=f"no recorded games under {games_dir}")  # fmt: skip
    data: list[dict[str, Any]] = []
    for path in files:
        try:
            loaded = load_file(path)
            run(loaded)
        except Exception:  # a file this version cannot play is left out (and counted)
            continue
        data.append(loaded)
    logs = [run(d).events for d in data]
    i = 0

    def replay() -> None:
        nonlocal i
        run(data[i % len(data)])
        i += 1

    def fold() -> None:
        nonlocal i
        replay_events(logs[i % len(logs)])
        i += 1

    base_runs, base_s = _timed(seconds / 3, fold)
    runs, took = _timed(seconds, replay)
    per_s, base_per_s = rate(runs, took), rate(base_runs, base_s)
    skipped = len(files) - len(data)
    events = sum(len(log) for log in logs) / len(logs)
    return Row(
        section="engine",
        what=f"recorded games replayed ({len(data)} games, one per ruleset, `faguan replay`)",
        figure=f"{per_s:.0f} games/s",
        baseline=f"{base_per_s:.0f}/s folding their events only",
        ratio=per_s / base_per_s if base_per_s else None,
        note=f"{events:.0f} events per game on average"
        + (f"; {skipped} file(s) could not be played and were left out" if skipped else ""),
        values={
            "games_per_s": per_s,
            "fold_per_s": base_per_s,
            "games": len(data),
            "skipped": skipped,
        },
    )


def measure(seconds: float = 2.0) -> list[Row]:
    """The engine rows."""
    return [nights(seconds), recorded_games(seconds)]
