"""The cyclic GC paused around a burst of allocations that all stay alive (a restart's rebuilt
games, their jobs): its full collections would find nothing to free and, with the heap large,
cost as much as the work itself."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


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
