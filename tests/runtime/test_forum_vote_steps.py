"""A forum game's 投票帖 steps: each opening carries its window's deadline, so a retry performed
after the window closed shows the deadline the day opened with, not a later window's."""

from bot.runtime.hosting import VotePostStep, vote_post_step, vote_post_steps
from engine.events import WindowOpened
from engine.model import PhaseKind, Seat
from engine.state import Window
from engine.windows import is_vote_window


def test_a_day_opening_carries_its_deadline_and_reads_back() -> None:
    day = Window(kind=PhaseKind.DAY, number=2)
    night = Window(kind=PhaseKind.NIGHT, number=3)
    steps = vote_post_steps(
        [WindowOpened(window=night, deadline=5), WindowOpened(window=day, deadline=1_234_000)]
    )
    assert steps == [
        {"type": "faguan.vote_post", "action": "open", "day": 2, "deadline": 1_234_000}
    ]
    assert vote_post_step(steps[0]) == VotePostStep("open", 2, 1_234_000)


def test_a_victims_choice_opens_no_post_and_old_steps_read_without_a_deadline() -> None:
    choice = Window(kind=PhaseKind.DAY, number=1, chooser=Seat(3))
    assert vote_post_steps([WindowOpened(window=choice, deadline=9)]) == []
    old = {
        "type": "faguan.vote_post",
        "action": "open",
        "day": 1,
    }  # recorded before deadlines rode along
    assert vote_post_step(old) == VotePostStep("open", 1, None)
    assert vote_post_step({"type": "post"}) is None


def test_a_post_opens_exactly_with_the_windows_the_engine_says_take_votes() -> None:
    """The predicate is the engine's (`is_vote_window`): a run-off reopens the day's post; a
    last-act window, a night and the warm-up open none."""
    windows = [
        Window(kind=PhaseKind.WARMUP, number=0),
        Window(kind=PhaseKind.NIGHT, number=1),
        Window(kind=PhaseKind.DAY, number=1),
        Window(kind=PhaseKind.DAY, number=1, revote=1, candidates=(Seat(2), Seat(4))),
        Window(kind=PhaseKind.DAY, number=1, revote=2, candidates=(Seat(2),), chooser=Seat(5)),
        Window(kind=PhaseKind.DAY, number=1, last_act=True),
    ]
    for window in windows:
        steps = vote_post_steps([WindowOpened(window=window, deadline=7)])
        assert bool(steps) is is_vote_window(window), window
    opened = [w for w in windows if vote_post_steps([WindowOpened(window=w, deadline=7)])]
    assert [w.revote for w in opened] == [0, 1]
