"""What a window is for and which window a lock of it opens next: the questions about the open
window that the resolution, the vote checks, the effects and the shell all ask, answered here once.

Windows alternate (docs/rules.md §1): the warm-up, if any, then night 1, day 1, night 2, …; a day
may add run-offs, a victim's choice and a last-act window (engine.resolve opens those, with the
lock's `runoff_deadline`), none of which changes the regular order `following` gives.
"""

from __future__ import annotations

from engine.model import PhaseKind
from engine.state import Window


def following(window: Window) -> Window:
    """The regular window a lock of `window` opens when the game goes on without a run-off, a
    victim's choice or a last-act window: a night's day; after a day (its run-offs and victim's
    choice included) or the warm-up, the next night. A last-act window extends the phase it
    follows: its successor is that phase's. The lock's `next_deadline` is this window's."""
    if window.kind is PhaseKind.NIGHT:
        return Window(kind=PhaseKind.DAY, number=window.number)
    return Window(kind=PhaseKind.NIGHT, number=window.number + 1)


def is_vote_window(window: Window) -> bool:
    """Whether votes are posted in `window` (docs/rules.md §1.1): a day's vote window or one of
    its run-offs — not a victim's choice (one player picks) nor a last-act window (no vote)."""
    return window.kind is PhaseKind.DAY and window.chooser is None and not window.last_act
