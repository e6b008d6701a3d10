"""One confirmation per choice: a command answered in its interaction confirms there, not by DM.

A power, a pass or a victim's choice is confirmed by a private message (the engine's `Whisper`).
Made with a slash command, the player already gets a private answer (ephemeral), which carries
the confirmation (read from what the input recorded: `interactions.answer_command`): the
performer, seeing the mark, does not send it as a DM too. Made from a
menu in the DM, the DM is the confirmation and the click gets no second one. Only the effects
performed inside the command's own submission see the mark (a context variable): a confirmation
performed later (a retry, recovery after a crash) goes by DM as before.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass

from engine.effects import Whisper

CONFIRMATIONS = frozenset({"power.accepted", "choice.accepted", "lastact.passed"})
"""Whisper keys that confirm the player's own submission."""


@dataclass(frozen=True)
class Answering:
    """A command being answered in its interaction: its game and its player."""

    game_id: int
    player: str


_answering: ContextVar[Answering | None] = ContextVar("faguan_answering", default=None)


@contextlib.contextmanager
def answering(game_id: int, player: str) -> Iterator[Answering]:
    """While a player's command is submitted: its confirmation is in its answer, not DMed."""
    mark = Answering(game_id=game_id, player=player)
    token = _answering.set(mark)
    try:
        yield mark
    finally:
        _answering.reset(token)


def take(game_id: int, player: str, effect: Whisper) -> bool:
    """Whether this whisper confirms the command being answered in an interaction (its answer
    carries it, read from what the input recorded: the caller sends no DM)."""
    mark = _answering.get()
    if mark is None or mark.game_id != game_id or mark.player != player:
        return False
    return effect.key in CONFIRMATIONS
