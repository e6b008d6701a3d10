"""`engine.replacing.replace` builds what `dataclasses.replace` builds, `maker` what the class
builds, and `effects_and_state` folds the events to the state `evolve` folds them to."""

from __future__ import annotations

import dataclasses
import random

import pytest
from playouts import play, steps_of

from engine import codec
from engine.game import evolve
from engine.model import PhaseId, PhaseKind, Seat
from engine.publish import effects_and_state, effects_for
from engine.replacing import maker, replace, replacer
from engine.state import GameState, PostLog, VotePost


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


def _values(root: object) -> list[object]:
    """Every engine dataclass value inside `root` (itself included)."""
    found: list[object] = []
    todo = [root]
    while todo:
        value = todo.pop()
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            found.append(value)
            todo.extend(getattr(value, f.name) for f in dataclasses.fields(value))
        elif isinstance(value, tuple | frozenset):
            todo.extend(value)
    return found


def test_every_engine_value_made_as_its_class_makes_it() -> None:
    steps = steps_of(9, games=8)
    values = [v for step in steps for root in (step.after, *step.events) for v in _values(root)]
    classes = {type(v) for v in values}
    assert len(classes) >= 20
    for value in values:
        cls = type(value)
        given = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
        _same(maker(cls)(**given), cls(**given))
        needed = {k: v for k, v in given.items() if cls.__dataclass_fields__[k].default != v}
        _same(maker(cls)(**needed), cls(**needed))


def test_a_made_value_is_frozen_and_refuses_what_its_class_refuses() -> None:
    make = maker(VotePost)
    post = make(post_id="1", author="p1", seat=Seat(1), target=None, abstain=True, at=None)
    assert post == VotePost(post_id="1", author="p1", seat=Seat(1), target=None, abstain=True,
                            at=None)  # fmt: skip
    with pytest.raises(dataclasses.FrozenInstanceError):
        post.abstain = False  # type: ignore[misc]
    with pytest.raises(TypeError):
        make(post_id="1", author="p1", seat=Seat(1), target=None, abstain=True)  # no `at`
    with pytest.raises(TypeError):
        make(post_id="1", author="p1", seat=None, target=None, abstain=True, at=None, extra=1)
    assert maker(PhaseId) is PhaseId  # its __post_init__ checks: the class itself builds it


def test_a_call_sites_replacer_copies_as_replace_does() -> None:
    for state in _states(5):
        posts = PostLog((*state.posts, *state.posts[:1]))
        _same(replacer(GameState, "posts")(state, posts=posts), replace(state, posts=posts))
