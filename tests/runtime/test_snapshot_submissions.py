"""Snapshots of a night with many power submissions (a player submitting again and again): the
state read back is the state written (its submissions a `SubmissionLog`, their latest per seat and
power the same), a tail of events folds onto it as onto the state itself, and the cadence spaces
snapshots by the night's submissions as by the day's posts, so what is written per submission does
not grow with the night."""

from __future__ import annotations

import json

from bot.runtime.snapshots import EVERY, SNAPSHOTS, due
from engine import codec
from engine.commands import SubmitPower
from engine.events import Event, PowerSubmitted, WindowOpened
from engine.game import apply, evolve, new_game, replay_events, start_events
from engine.model import Instant, Power, Seat
from engine.state import GameState, SubmissionLog

ROLES = ["killer", "killer", "police", "police", "civilian", "civilian", "civilian", "civilian"]


def _night(submissions: int) -> tuple[list[Event], GameState]:
    """A v2 game's night 1 with `submissions` submissions by the killers and the police."""
    players = [f"p{i}" for i in range(1, 9)]
    created = new_game(
        ruleset="v2", players=players, seed="snapshot-night",
        roles=dict(zip(players, ROLES, strict=True)),
    )  # fmt: skip
    events: list[Event] = start_events(created)
    state = replay_events(events)
    for n in range(submissions):
        seat = n % 4 + 1
        power = Power.KILL if seat <= 2 else Power.CHECK
        command = SubmitPower(
            player=f"p{seat}", power=power, target=Seat(5 + n % 4), at=Instant(1_000 + n)
        )
        state, new = apply(state, command)
        events.extend(new)
    return events, state


def test_a_long_nights_snapshot_reads_back_as_the_state_and_the_tail_folds_onto_it() -> None:
    events, state = _night(300)
    blob = json.loads(json.dumps(SNAPSHOTS.dump(state)))  # as stored
    loaded = SNAPSHOTS.load(blob)
    assert loaded == state and isinstance(loaded.submissions, SubmissionLog)
    assert loaded.submissions.latest() == state.submissions.latest()
    assert len(blob["submissions"]) == 300
    # a snapshot taken part way, and the events after it: the state a fold of them all gives
    cut = 200
    part = replay_events(events[:cut])
    tail = [codec.dump(e) for e in events[cut:]]
    resumed = SNAPSHOTS.resume(SNAPSHOTS.load(json.loads(json.dumps(SNAPSHOTS.dump(part)))), tail)
    assert resumed == state and resumed.submissions.latest() == state.submissions.latest()


def test_snapshots_of_a_night_are_spaced_by_its_submissions() -> None:
    """Over a night of 5,000 submissions, the submissions the snapshots hold add up to a few
    times the night's (not one snapshot of the whole night every `EVERY`), and a restart's tail
    stays within the submissions the newest snapshot holds."""
    count = 5_000
    events, _ = _night(count)
    opened = next(i for i, e in enumerate(events) if isinstance(e, WindowOpened))
    state = replay_events(events[: opened + 1])
    since, written, taken = 0, 0, 0
    for event in events[opened + 1 :]:
        assert isinstance(event, PowerSubmitted)
        state = evolve(state, event)
        since += 1
        if due(state, [event], since):
            written += len(state.submissions)
            taken += 1
            since = 0
        assert since <= max(EVERY, len(state.submissions))
    assert len(state.submissions) == count
    assert written <= 3 * count, written  # a fixed cadence: count² / (2 × EVERY) = 625,000
    assert taken < 20, taken
