"""One error tree for everything the engine refuses.

Each error carries a message key and parameters, never prose: the shell renders them in zh-CN or
en (`engine.messages` has the English text used by `faguan replay`). Subclasses split by cause, like
python-chess's InvalidMoveError / IllegalMoveError.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType


class EngineError(Exception):
    """Base of every error the engine raises for bad input; the game state is unchanged."""

    def __init__(self, key: str, /, **params: object) -> None:
        super().__init__(key)
        self.key = key
        self.params: Mapping[str, object] = MappingProxyType(dict(params))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.key!r})"


class SetupError(EngineError):
    """The game cannot be set up: unknown ruleset, wrong player count, impossible roles."""


class PhaseError(EngineError):
    """The command does not fit the current phase or window (closed, paused, game over)."""


class ActorError(EngineError):
    """The one acting may not: not a player, out of the game, no such power, power spent."""


class TargetError(EngineError):
    """The target is not allowed: unknown, out of the game, or forbidden by the ruleset."""


class ModeratorError(EngineError):
    """A moderator command that cannot apply (no deadline to extend, unknown post…)."""
