"""Whole games played in memory through the engine, for the restart and engine benchmarks.

A game is played with the seeded randomness of `random.Random`: each night every living seat
with a night power uses it on a random living seat, each day some players post votes, and every
window is locked at its deadline. Commands the engine refuses are skipped, as the bot would
answer them and go on. The events are what the bot would have stored.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from engine import codec
from engine.commands import Command, Lock, PostVote, SubmitPower
from engine.errors import EngineError
from engine.events import Event, GameCreated
from engine.game import apply, new_game, replay_events, start_events
from engine.model import Instant, PhaseKind, Power, Seat
from engine.state import GameState

HOUR_MS = 3_600_000
START_MS = 1_767_225_600_000  # 2026-01-01T00:00:00Z
DAY_ONLY = frozenset({Power.CONFESS, Power.VETO})


@dataclass
class PlayedGame:
    """A game's events, and its state after them."""

    created: GameCreated
    events: list[Event] = field(default_factory=list)
    state: GameState | None = None

    def dumped(self) -> list[dict[str, object]]:
        """The events as the store keeps them."""
        return [codec.dump(e) for e in self.events]


def night_commands(state: GameState, rng: random.Random, at: int) -> list[Command]:
    """Every power for every living seat, on a random living seat (the engine refuses powers a
    seat does not hold; the caller skips those)."""
    alive = [s for s in state.seats if s.alive]
    return [
        SubmitPower(player=seat.player, power=power, target=rng.choice(alive).seat, at=Instant(at))
        for seat in alive
        for power in Power
        if power not in DAY_ONLY
    ]


def day_commands(
    state: GameState, rng: random.Random, at: int, posts: int, first_id: int
) -> list[Command]:
    """`posts` vote posts by random living players for random living players."""
    alive = [s for s in state.seats if s.alive]
    return [
        PostVote(
            player=rng.choice(alive).player,
            post_id=str(first_id + i),
            target=rng.choice(alive).seat,
            at=Instant(at + i),
        )
        for i in range(posts)
    ]


def play(
    ruleset: str,
    players: int,
    seed: str,
    *,
    windows: int,
    posts_per_day: int,
    end_open: bool = True,
) -> PlayedGame:
    """Play `windows` windows (night 1, day 1, night 2, …); with `end_open`, the last window is
    left open (an active game, as at a restart) with its commands submitted but not locked."""
    ids = [f"{1_400_000_000_000_000_000 + i}" for i in range(1, players + 1)]
    created = new_game(ruleset=ruleset, players=ids, seed=seed)
    rng = random.Random(seed)
    now = START_MS
    game = PlayedGame(created=created)
    game.events = start_events(created, Instant(now + HOUR_MS))
    state = replay_events(game.events)
    post_id = 1_000_000
    for window in range(windows):
        if state.over or state.window is None:
            break
        if state.window.kind is PhaseKind.NIGHT:
            commands = night_commands(state, rng, now + 1000)
        else:
            commands = day_commands(state, rng, now + 1000, posts_per_day, post_id)
            post_id += posts_per_day
        for command in commands:
            try:
                state, events = apply(state, command)
            except EngineError:
                continue
            game.events += events
        if end_open and window == windows - 1:
            break
        deadline = state.deadline if state.deadline is not None else now + HOUR_MS
        lock = Lock(
            at=Instant(deadline),
            next_deadline=Instant(deadline + HOUR_MS),
            runoff_deadline=Instant(deadline + HOUR_MS),
        )
        state, events = apply(state, lock)
        game.events += events
        now = deadline
    game.state = state
    return game


def night_state(ruleset: str, players: int, seed: str, night: int = 1) -> GameState:
    """A game at night `night` with every night power submitted, ready to be locked."""
    windows = 2 * (night - 1) + 1
    game = play(ruleset, players, seed, windows=windows, posts_per_day=players)
    assert game.state is not None
    return game.state


def seat_of(state: GameState, seat: int) -> Seat:
    """A seat number as the engine's type."""
    return state.seat(Seat(seat)).seat
