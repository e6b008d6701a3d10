"""The deadline a forum day's 投票帖 shows: the open vote's own (an extension counts) while that
day's vote is open, else the one its step carried, so a late retry never shows another window's."""

from types import SimpleNamespace
from typing import Any, cast

from bot.discord.vote_threads import _deadline_shown
from bot.runtime.hosting import VotePostStep
from engine.model import PhaseKind
from engine.state import GameState, Window


def state_of(window: Window | None, deadline: int | None) -> GameState:
    return cast(Any, SimpleNamespace(window=window, deadline=deadline))


def test_the_open_days_vote_shows_its_current_deadline() -> None:
    step = VotePostStep("open", 2, 1_000)
    extended = state_of(Window(kind=PhaseKind.DAY, number=2), 9_000)
    assert _deadline_shown(extended, step) == 9_000


def test_a_retry_after_the_day_shows_the_deadline_it_opened_with() -> None:
    step = VotePostStep("open", 2, 1_000)
    next_night = state_of(Window(kind=PhaseKind.NIGHT, number=3), 50_000)
    assert _deadline_shown(next_night, step) == 1_000
    old_step = VotePostStep("open", 2, None)  # recorded before the deadline rode in the step
    assert _deadline_shown(next_night, old_step) == 50_000
