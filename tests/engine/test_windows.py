"""The windows' order and purpose (`engine.windows`): which window a lock opens next — whose kind
the shell's deadline job reads to pick the schedule of `Lock.next_deadline` — and which windows
take votes (the vote checks, the channels, a forum's 投票帖)."""

from __future__ import annotations

import random

import pytest
from gamekit import Game
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from playouts import play

from engine.commands import Lock, PostVote
from engine.errors import EngineError, PhaseError
from engine.events import WindowOpened
from engine.game import apply, decide
from engine.model import Instant, PhaseKind, Seat
from engine.state import Window
from engine.windows import following, is_vote_window

NIGHT, DAY, WARMUP = PhaseKind.NIGHT, PhaseKind.DAY, PhaseKind.WARMUP
NEXT, RUNOFF = Instant(111), Instant(222)


@pytest.mark.parametrize(
    ("window", "then"),
    [
        (Window(kind=WARMUP, number=0), Window(kind=NIGHT, number=1)),
        (Window(kind=NIGHT, number=1), Window(kind=DAY, number=1)),
        (Window(kind=DAY, number=1), Window(kind=NIGHT, number=2)),
        (
            Window(kind=DAY, number=3, revote=2, candidates=(Seat(2), Seat(5))),
            Window(kind=NIGHT, number=4),
        ),
        (Window(kind=DAY, number=2, revote=2, chooser=Seat(4)), Window(kind=NIGHT, number=3)),
        (Window(kind=NIGHT, number=2, last_act=True), Window(kind=DAY, number=2)),
        (Window(kind=DAY, number=2, last_act=True), Window(kind=NIGHT, number=3)),
    ],
)
def test_following_is_the_regular_next_window(window: Window, then: Window) -> None:
    assert following(window) == then


@pytest.mark.parametrize(
    ("window", "votes"),
    [
        (Window(kind=DAY, number=1), True),
        (Window(kind=DAY, number=1, revote=1, candidates=(Seat(2), Seat(5))), True),
        (
            Window(kind=DAY, number=1, revote=2, candidates=(Seat(2), Seat(5)), chooser=Seat(3)),
            False,
        ),
        (Window(kind=DAY, number=1, last_act=True), False),
        (Window(kind=NIGHT, number=1), False),
        (Window(kind=WARMUP, number=0), False),
    ],
)
def test_only_a_day_vote_window_and_its_run_offs_take_votes(window: Window, votes: bool) -> None:
    assert is_vote_window(window) is votes


def test_a_vote_outside_a_vote_window_is_refused_as_the_window_says() -> None:
    game = Game("v2", ["killer", "killer", "police", "police", *["civilian"] * 4])
    vote = PostVote(player="p3", post_id="1", target=Seat(1))
    assert game.state.window is not None and not is_vote_window(game.state.window)
    with pytest.raises(PhaseError):
        apply(game.state, vote)
    game.lock()
    assert game.state.window is not None and is_vote_window(game.state.window)
    apply(game.state, vote)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**32))
def test_a_lock_opens_the_following_window_at_next_deadline_and_any_other_at_runoff_deadline(
    seed: int,
) -> None:
    """What `GameService.lock_command` relies on: the window opened with `next_deadline` is
    always `following(window)` (so the schedule of its kind is the right one), and every other
    window a lock opens — a run-off, a victim's choice, a last-act window — gets `runoff_deadline`."""
    game = play(random.Random(seed))
    assume(game is not None)
    assert game is not None
    _, steps = game
    opened = 0
    for step in steps:
        window = step.before.window
        if window is None:
            continue
        try:
            events = decide(step.before, Lock(next_deadline=NEXT, runoff_deadline=RUNOFF))
        except EngineError:
            continue
        for event in events:
            if not isinstance(event, WindowOpened):
                continue
            opened += 1
            if event.window == following(window):
                assert event.deadline == NEXT, (window, event)
                continue
            assert event.deadline == RUNOFF, (window, event)
            extra = event.window
            same_day = extra.kind is DAY and extra.number == window.number
            assert extra.last_act or (same_day and extra.revote > window.revote), (window, extra)
    assume(opened > 0)
