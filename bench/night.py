"""One long night: the cost of a power submission late in a 5,000-submission night against one
early in a night.

A player may submit their power again and again during a night (`/act`, each replacing the one
before); a script can do thousands. One 16-player game in night 1 takes `submissions` power
submissions one after another through the bot's path for `/act` (`GameService.submit` of a
`SubmitPower`: decide, one transaction with the input, its event and its outbox rows, the
confirmation and the team's notice handed to a no-op performer), by the seats holding a night
power in turn, each on a target the engine accepts. As in the long day (`bench.day`, whose
measures this uses), its last `window` submissions are taken in turns with a second game's
submissions `window + 1` to `2 × window`, so both ends of a night are measured in the same
seconds; in turns, each submission is measured with the writes it leaves for later (a snapshot
goes with the next transaction: the other game's). The bytes written per submission are counted
per window of the long night, its last fifth against its first. Nothing in a submission's cost
should grow with the night.
"""

from __future__ import annotations

import random
import time
from itertools import cycle

from bench.day import ms_range, process_cpu, written_bytes
from bench.report import Row
from bench.stores import Bench, create_game
from bot.runtime.collector import collector_restored, settle_started_heap
from bot.runtime.schedule import to_ms
from engine.commands import SubmitPower
from engine.errors import EngineError
from engine.game import decide
from engine.model import Instant, Power, Seat
from engine.rulesets import rules_for
from engine.state import GameState, SeatState

GAME_BASE = 90_000
"""The bench's game number for the long night (the short one's is the next)."""


class _Night:
    """One of the bench's games taking power submissions in night 1: its power holders in turn,
    each on a target drawn among those the engine accepts of them."""

    def __init__(
        self, bench: Bench, game_id: int, choices: list[tuple[str, Power, list[Seat]]]
    ) -> None:
        self.bench, self.game_id = bench, game_id
        self.turns = cycle(choices)
        self.rng = random.Random(game_id)
        self.refused = 0

    @classmethod
    async def start(cls, bench: Bench, number: int) -> _Night:
        game_id = await create_game(bench.service, number)
        state = await bench.service.state(game_id)
        rules = rules_for(state)
        choices = []
        for seat in state.seats:
            for power in rules.night_powers(state, seat):
                targets = [t.seat for t in state.seats if _accepted(state, seat.player, power, t)]
                if targets:
                    choices.append((seat.player, power, targets))
        if not choices:
            raise RuntimeError(f"game {game_id}: nobody holds a night power")
        return cls(bench, game_id, choices)

    async def submit(self) -> None:
        player, power, targets = next(self.turns)
        at = Instant(to_ms(self.bench.service.clock.now()))
        command = SubmitPower(player=player, power=power, target=self.rng.choice(targets), at=at)
        outcome = await self.bench.service.submit(self.game_id, command)
        self.refused += not outcome.ok


def _accepted(state: GameState, player: str, power: Power, target: SeatState) -> bool:
    """Whether the engine takes `player`'s `power` on `target` now."""
    try:
        decide(state, SubmitPower(player=player, power=power, target=target.seat))
    except EngineError:
        return False
    return True


async def _in_turns(long: _Night, short: _Night, count: int) -> tuple[float, float]:
    """CPU seconds of `count` submissions to each game, taken in turns (one to each, then
    again), each with what it left to write (its snapshot, its done marks: `flush`). Otherwise
    a game's snapshot goes with the next transaction, the other game's."""
    spent = [0.0, 0.0]
    for _ in range(count):
        for n, game in enumerate((long, short)):
            cpu = process_cpu(game.bench)
            await game.submit()
            await game.bench.repo.flush()
            spent[n] += process_cpu(game.bench) - cpu
    return spent[0], spent[1]


async def measure(bench: Bench, *, submissions: int, window: int = 100) -> list[Row]:
    """The long-night rows for one backend."""
    night = await _Night.start(bench, GAME_BASE)
    fresh = await _Night.start(bench, GAME_BASE + 1)
    windows: list[tuple[float, float, int]] = []  # (cpu s, wall s, bytes) per window
    alone = max(0, submissions - window)  # the long night's submissions before the last
    done = 0
    with collector_restored():
        settle_started_heap()  # the games are running: the collector as a started bot has it
        for _ in range(window):  # the fresh night's first submissions: a warm-up
            await fresh.submit()
        while done < alone:
            n = min(window, alone - done)
            await bench.repo.flush()
            written, cpu, wall = await written_bytes(bench), process_cpu(bench), time.perf_counter()
            for _ in range(n):
                await night.submit()
            await bench.repo.flush()
            windows.append(
                (
                    process_cpu(bench) - cpu,
                    time.perf_counter() - wall,
                    await written_bytes(bench) - written,
                )
            )
            done += n
        last, early = await _in_turns(night, fresh, submissions - alone)
    taken = max(1, submissions - alone)
    cpu_ratio = last / early if early else None
    fifth = max(1, len(windows) // 5)  # bytes come in bursts (checkpoints): fifths of the night
    early_bytes = sum(w[2] for w in windows[:fifth]) / (fifth * window)
    late_bytes = sum(w[2] for w in windows[-fifth:]) / (fifth * window)
    bytes_ratio = late_bytes / early_bytes if early_bytes else None
    state = await bench.service.state(night.game_id)
    held = len(state.submissions)
    lock_start = time.perf_counter()
    info = await bench.service.info(night.game_id)
    outcome = await bench.service.submit(
        night.game_id, bench.service.lock_command(state, info, forced=True)
    )
    lock_ms = (time.perf_counter() - lock_start) * 1000
    what = f"{bench.backend}: one night of {submissions} power submissions"
    where = "write()s, bot and writer process" if bench.backend == "sqlite" else "PostgreSQL WAL"
    refused = night.refused + fresh.refused
    return [
        Row(
            section="day",
            what=f"{what}: CPU of the last {taken}",
            figure=f"{last / taken * 1000:.2f} ms/submission",
            baseline=f"submissions {window + 1}–{window + taken} of a fresh night, in turns with "
            f"them: {early / taken * 1000:.2f} ms/submission",
            ratio=cpu_ratio,
            target="ratio ≤ 1.2",
            met=cpu_ratio is not None and cpu_ratio <= 1.2,
            note="CPU of the bot's process (its threads too) and SQLite's writer process; the "
            f"long night's windows before, {window} submissions each: "
            f"{ms_range(windows, window)} ms/submission; the night's state held {held} "
            f"submissions; the lock that ends it took {lock_ms:.0f} ms"
            + ("" if outcome.ok else f" and was refused ({outcome.error})")
            + (f"; {refused} submissions refused" if refused else ""),
            values={
                "windows": [{"cpu_s": c, "wall_s": w, "bytes": b} for c, w, b in windows],
                "last_cpu_s": last,
                "fresh_cpu_s": early,
                "lock_ms": lock_ms,
                "held": held,
                "refused": refused,
                "games": [night.game_id, fresh.game_id],
            },
        ),
        Row(
            section="day",
            what=f"{what}: bytes written per submission, last fifth",
            figure=f"{late_bytes / 1024:.1f} KB/submission",
            baseline=f"first fifth: {early_bytes / 1024:.1f} KB/submission ({where})",
            ratio=bytes_ratio,
            target="ratio ≤ 1.2",
            met=bytes_ratio is not None and bytes_ratio <= 1.2,
            values={
                "early_bytes_per_submission": early_bytes,
                "late_bytes_per_submission": late_bytes,
            },
        ),
    ]
