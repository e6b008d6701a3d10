"""The steps of a game's start that are the platform's own (its players' role, the bot's own
overwrite, the members added to the role), as outbox payloads written with the game.

They are not engine effects (a replay does not reproduce them, and ``engine.codec`` never sees
them): the runtime writes them first in the new game's outbox, and the Discord layer performs
them (``bot.discord.start_effects``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

TYPE: Final = "faguan.start"
"""The payload ``type`` of a start step (engine effect types never contain a dot)."""
STEPS: Final = ("overwrites", "role", "members")


def start_effects() -> list[dict[str, Any]]:
    """The start's steps, as outbox payloads, in the order they must be performed."""
    return [{"type": TYPE, "step": step} for step in STEPS]


def start_step(payload: Mapping[str, Any]) -> str | None:
    """The start step this payload asks for, or None for an engine effect."""
    if payload.get("type") != TYPE:
        return None
    step = payload.get("step")
    if step not in STEPS:
        raise ValueError(f"unknown start step {step!r}")
    return str(step)
