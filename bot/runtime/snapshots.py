"""Snapshots of a game's engine state, so a restart replays only the events after the newest.

The state is stored as ``engine.codec`` JSON beside the events, which stay the truth: a snapshot
that cannot be read, or was written by other engine code, is ignored and the events replayed. The
version is a digest of the engine's source, so a snapshot is only ever loaded by the rules that
made it (after an upgrade, each game is replayed once and snapshotted again).

Cadence (``due``): after every input that changes the phase (its events open a window), and within
a window once the events since the last snapshot are at least ``EVERY`` and at least as many as the
window's vote posts and power submissions the state holds. A snapshot's size grows with them, so
this spaces them geometrically: the bytes written per post (or per submission: a player may submit
again and again in one night) stay the same however long the window (a fixed cadence wrote the
whole day again every ``EVERY`` posts, ~1 MB at 5,000 posts), and the tail a restart replays stays
within the window's posts and submissions.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

import engine
from bot.store import SnapshotCodec
from engine import codec
from engine.events import Event, WindowOpened
from engine.game import evolve
from engine.state import GameState

EVERY = 20
"""Events after which a snapshot is written even without a phase change."""


@cache
def engine_digest() -> str:
    """A digest of the engine's source files (their paths and contents)."""
    root = Path(engine.__file__).parent
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(path.relative_to(root).as_posix().encode())
        digest.update(b"\0")
        digest.update(path.read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()[:16]


def _load(blob: dict[str, Any]) -> GameState:
    state = codec.load(blob)
    if not isinstance(state, GameState):
        raise TypeError("a snapshot holds a GameState")
    return state


def _resume(state: GameState, tail: list[dict[str, Any]]) -> GameState:
    for payload in tail:
        state = evolve(state, codec.load(payload))
    return state


def _dump(state: GameState) -> dict[str, Any]:
    blob = codec.dump(state)
    assert isinstance(blob, dict)
    return blob


SNAPSHOTS: SnapshotCodec[GameState] = SnapshotCodec(
    version=f"engine-{engine_digest()}", dump=_dump, load=_load, resume=_resume
)
"""How the bot stores a game's state and continues from it."""


def due(state: GameState, events: Sequence[Event], since_snapshot: int) -> bool:
    """Whether to snapshot ``state`` after an input's ``events``: they opened a window, or the
    events since the last snapshot (``since_snapshot``, these included) are at least ``EVERY``
    and at least the vote posts and power submissions ``state`` holds."""
    if since_snapshot >= max(EVERY, len(state.posts) + len(state.submissions)):
        return True
    return any(isinstance(e, WindowOpened) for e in events)
