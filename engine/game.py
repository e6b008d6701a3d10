"""decide(state, command) → events; evolve(state, event) → state.

Theory of operation (after h11 and the eventsourcing examples). `decide` validates a command
against the state and returns the events it causes, or raises an `EngineError` and changes
nothing. Every rule lives in `decide` and the modules it calls (`night`, `votes`, `lastwords`,
the rulesets); `evolve` only applies what the events say. So a game's state is exactly the fold
of its events, which is what storage, restart recovery, replay and verification rely on.

The work is split in three modules: `engine.decide` (commands → events), `engine.resolve` (what a
lock settles) and `engine.evolve` (events → state). This module re-exports their public names,
which the bot, the tests and the benches import from here.
"""

from __future__ import annotations

from engine.decide import apply, decide, start_events
from engine.evolve import evolve, initial_state, replay_events
from engine.setup import new_game

__all__ = [
    "apply",
    "decide",
    "evolve",
    "initial_state",
    "new_game",
    "replay_events",
    "start_events",
]
