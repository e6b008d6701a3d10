"""A clock for the bot under test that reads simcord's virtual clock, so deadlines and posts agree.

Its own module (not `conftest`): test modules import it by name, and a module named `conftest`
is whichever conftest.py was imported last when tests of several folders run together.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from simcord import Env


class EnvClock:
    """A `bot.runtime.timing.Clock` that reads simcord's virtual clock."""

    def __init__(self) -> None:
        self._env: Env | None = None

    def bind(self, env: Env) -> None:
        """Follow this environment's clock from now on."""
        self._env = env

    def now(self) -> datetime:
        """simcord's current instant (aware, UTC); starts at 2026-01-01T00:00Z."""
        if self._env is None:
            raise RuntimeError("EnvClock used before the simcord environment exists")
        now: datetime = self._env.now()
        return now
