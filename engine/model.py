"""Ids and small value types shared by the whole engine: roles, powers, camps, phases, time."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import NewType

Seat = NewType("Seat", int)
"""A seat number, 1..N, fixed at the start of the game."""

Instant = NewType("Instant", int)
"""A point in time: milliseconds since the Unix epoch, UTC (a post's own timestamp)."""


class Role(StrEnum):
    """Role ids (docs/rules.md §2)."""

    CIVILIAN = "civilian"
    KILLER = "killer"
    POLICE = "police"
    DOCTOR = "doctor"
    SECRET_KILLER = "secret_killer"
    SECRET_POLICE = "secret_police"
    SPECIAL_POLICE = "special_police"
    INSPECTOR = "inspector"
    MINE = "mine"
    KILLER_MINE = "killer_mine"
    SAPPER = "sapper"
    ACCOMPLICE = "accomplice"
    LONE_KILLER = "lone_killer"
    LONE_POLICE = "lone_police"
    BUTTERFLY = "butterfly"
    SNIPER = "sniper"
    ELDER = "elder"
    SHERIFF = "sheriff"
    COVERT_POLICE = "covert_police"
    MOLE = "mole"
    GOOD_THIEF = "good_thief"
    BAD_THIEF = "bad_thief"
    GANGSTER = "gangster"
    POLICE_LEADER = "police_leader"
    POLICE_CONFIDANT = "police_confidant"
    POLICE_MOLE = "police_mole"
    GANG_LEADER = "gang_leader"
    GANG_CONFIDANT = "gang_confidant"
    GANG_MOLE = "gang_mole"


class Power(StrEnum):
    """Power ids (docs/rules.md §2)."""

    KILL = "kill"
    CHECK = "check"
    SAVE = "save"
    SHOOT = "shoot"
    EXECUTE = "execute"
    CONFESS = "confess"
    VETO = "veto"
    DEMINE = "demine"
    HUG = "hug"
    SILENCE = "silence"
    ATTACK = "attack"
    GUARD = "guard"
    ROB = "rob"


UNPASSABLE = frozenset({Power.CONFESS})
"""Powers with no explicit pass: not to confess (认匪) is to do nothing."""


class Camp(StrEnum):
    """Sides that can win, and `draw` as a result."""

    GOOD = "good"
    KILLERS = "killers"
    DRAW = "draw"
    GOOD_THIEVES = "good_thieves"
    BAD_THIEVES = "bad_thieves"


class Team(StrEnum):
    """Teams that act together at night and know each other."""

    KILLERS = "killers"
    POLICE = "police"
    GOOD_THIEVES = "good_thieves"
    BAD_THIEVES = "bad_thieves"


class CheckResult(StrEnum):
    """What a check answers (docs/rules.md §2): a sign, or a role id where the true identity is
    told."""

    KILLER = "killer"
    GOOD = "good"
    SPECIAL = "special"
    NONE = "none"
    CIVILIAN = "civilian"
    POLICE = "police"
    KILLER_MINE = "killer_mine"
    LONE_KILLER = "lone_killer"
    LONE_POLICE = "lone_police"
    DOCTOR = "doctor"
    SECRET_POLICE = "secret_police"
    THIEF = "thief"
    BAD_THIEF = "bad_thief"
    OTHER = "other"
    """Not what was asked (5.0: the mole asks whether a card is a secret police)."""


class PhaseKind(StrEnum):
    """The kind of the current phase: a night power window, a day vote window, the end, or the
    warm-up (游戏热身, seed 004 §2.2 step 2: discussion before night 1, when the game has one)."""

    NIGHT = "night"
    DAY = "day"
    ENDED = "ended"
    WARMUP = "warmup"


class TiePolicy(StrEnum):
    """How a tied vote is settled (docs/rules.md §1.2)."""

    LOTS = "lots"
    REVOTE = "revote"
    NONE = "none"
    VICTIM_CHOICE = "victim_choice"


class Reveal(StrEnum):
    """What is shown of a player who leaves the game during play."""

    ROLE = "role"
    CAMP = "camp"
    NONE = "none"


@dataclass(frozen=True, kw_only=True, slots=True)
class PhaseId:
    """A phase of the game: night n or day n; orders as night 1 < day 1 < night 2 < …"""

    number: int
    kind: PhaseKind

    def __post_init__(self) -> None:
        if self.kind is PhaseKind.ENDED:
            raise ValueError("an ended game has no phase id")

    @property
    def rank(self) -> int:
        """A number that orders phases in play order."""
        return self.number * 2 + (1 if self.kind is PhaseKind.DAY else 0)

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, PhaseId):
            return NotImplemented
        return self.rank < other.rank

    def __le__(self, other: object) -> bool:
        if not isinstance(other, PhaseId):
            return NotImplemented
        return self.rank <= other.rank

    def label(self) -> str:
        """`night 2`, `day 3`: the form used in records and lot labels."""
        return f"{self.kind.value} {self.number}"
