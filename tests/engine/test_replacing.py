"""`engine.replacing.replace` builds what `dataclasses.replace` builds, and `effects_and_state`
folds the events to the state `evolve` folds them to."""

from __future__ import annotations

import dataclasses
import random

import pytest
from playouts import play, steps_of

from engine import codec
from engine.game import evolve
from engine.model import PhaseId, PhaseKind
from engine.publish import effects_and_state, effects_for
from engine.replacing import replace
from engine.state import GameState


def _states(seed: int) -> list[GameState]:
    played = None
    rnd = random.Random(seed)
    while played is None:
        played = play(rnd, steps=120)
    states = [step.after for step in played[1]]
    assert len(states) >= 20
    return states


def _same(a: object, b: object) -> None:
    assert type(a) is type(b)
    assert a == b and hash(a) == hash(b)
    assert codec.dump(a) == codec.dump(b)


def test_every_field_of_a_state_replaced_as_dataclasses_replaces_it() -> None:
    states = _states(7)
    for i, state in enumerate(states):
        other = states[(i * 7 + 3) % len(states)]
        for f in dataclasses.fields(GameState):
            change = {f.name: getattr(other, f.name)}
            made = replace(state, **change)
            _same(made, dataclasses.replace(state, **change))
            assert made is not state
        several = {f.name: getattr(other, f.name) for f in dataclasses.fields(GameState)[::3]}
        _same(replace(state, **several), dataclasses.replace(state, **several))
        _same(replace(state), state)


def test_seats_and_posts_replaced_as_dataclasses_replaces_them() -> None:
    for state in _states(11):
        for seat in state.seats:
            _same(
                replace(seat, alive=not seat.alive), dataclasses.replace(seat, alive=not seat.alive)
            )
        for post in state.posts:
            _same(replace(post, void_reason="x"), dataclasses.replace(post, void_reason="x"))


def test_the_copy_stays_frozen_and_the_original_unchanged() -> None:
    state = _states(3)[-1]
    before = codec.dump(state)
    made = replace(state, window_index=state.window_index + 1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.window_index = 0  # type: ignore[misc]
    assert codec.dump(state) == before
    assert made.window_index == state.window_index + 1


def test_an_unknown_field_is_refused() -> None:
    state = _states(3)[0]
    with pytest.raises(TypeError):
        replace(state, no_such_field=1)


def test_a_class_with_post_init_still_checks_its_values() -> None:
    phase = PhaseId(kind=PhaseKind.DAY, number=2)
    _same(replace(phase, number=3), dataclasses.replace(phase, number=3))
    with pytest.raises(ValueError):
        replace(phase, kind=PhaseKind.ENDED)


def test_effects_and_state_folds_the_events_once_to_what_evolve_folds_them_to() -> None:
    steps = steps_of(5, games=6)
    assert len(steps) >= 100
    for step in steps:
        effects, after = effects_and_state(step.before, step.events)
        folded = step.before
        for event in step.events:
            folded = evolve(folded, event)
        assert after == folded == step.after
        assert effects == effects_for(step.before, step.events)
