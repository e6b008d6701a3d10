"""The rules of the 杀人游戏 family: pure, deterministic, no I/O, no clock.

Public API: `new_game` and `start_events` set a game up; `decide(state, command)` returns the
events a command causes (or raises an `EngineError`); `evolve(state, event)` folds one;
`replay_events(events)` rebuilds a state; `effects_for` says what to tell whom; `view_for` is what
one player may know; `record_of` is the game record (docs/replay.md).
"""

from engine.errors import EngineError
from engine.game import apply, decide, evolve, replay_events, start_events
from engine.publish import effects_for
from engine.record import record_of
from engine.setup import new_game
from engine.view import view_for

__all__ = [
    "EngineError",
    "apply",
    "decide",
    "effects_for",
    "evolve",
    "new_game",
    "record_of",
    "replay_events",
    "start_events",
    "view_for",
]
