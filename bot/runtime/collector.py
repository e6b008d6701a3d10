"""The cyclic garbage collector, as a bot that keeps its games in memory needs it.

Nearly everything the bot allocates lives on (a game's state until its next input replaces it,
the caches) or is freed by reference counting; the collector's passes find almost nothing to
free (none at all over thousands of vote posts, `faguan bench`), but walk the heap and pause
the event loop while they do. So a burst that only builds (a restart's rebuilt games) runs with
collections paused, and once started what is alive is frozen out of them and the youngest
generation is collected less often.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

YOUNG_THRESHOLD = 10_000
"""Net new container objects between collections of the youngest generation once started
(CPython's default: 700). A vote post leaves about a dozen behind (its game's new state, which
frees the one before it): at 700 a collection came every ~60 posts, ~0.6 ms each, and pulled
the older generations' after it, an eighth of a post's CPU with 100 games taking posts. A
garbage cycle the bot does make (an exception with its traceback) waits longer to be freed:
10,000 objects at most, a few MB."""


@contextmanager
def collections_paused() -> Iterator[None]:
    """No cyclic collection inside; as it was after (nested uses keep it paused)."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


def settle_started_heap() -> None:
    """Once started: what is alive (the rebuilt games, the caches, the code) is kept out of
    every later collection — a full one paused the loop ~100 ms with a large heap and made
    deadline timers late — and the youngest generation is collected every `YOUNG_THRESHOLD`
    new objects. Called while collections are paused: the first one would otherwise walk every
    object the start made (1,000 games: 45–100 ms, nothing to free)."""
    gc.freeze()
    _, middle, oldest = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, middle, oldest)


@contextmanager
def collector_restored() -> Iterator[None]:
    """The collector as it was before, after a part that settles it as a started bot does
    (`settle_started_heap`): frozen objects thawed, thresholds back. For code that runs a
    started bot's part inside a longer process (the bench's sections, the tests)."""
    thresholds = gc.get_threshold()
    try:
        yield
    finally:
        gc.unfreeze()
        gc.set_threshold(*thresholds)
