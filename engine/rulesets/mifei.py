"""`mifei` — 秘匪版完整攻略 (seeds 000 and 002).

Cumulative needles (the doctor's own never kill), a secret_killer immune to the kill until it
fires, whose shot kills anyone and cannot be saved; once fired it is a killer, but the police
still see it as `special` (seed 000 step 15).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import ClassVar

from engine.model import Camp, CheckResult, PhaseId, PhaseKind, Power, Role
from engine.rulesets.base import (
    Composition,
    LastWordsPolicy,
    Ruleset,
    WinClause,
    all_out,
    counts,
    sides_out,
)
from engine.state import GameState, SeatState

KILLERS_SIDE = frozenset({Role.KILLER, Role.SECRET_KILLER})
POLICE = frozenset({Role.POLICE})
CIVILIANS = frozenset({Role.CIVILIAN})


class Mifei(Ruleset):
    """秘匪版: 3 police, 2 killers, doctor, secret killer (15–16: 4/3/1/1)."""

    id = "mifei"
    name_zh = "秘匪版"
    min_players = 12
    max_players = 16
    needles = "cumulative"
    scores: ClassVar[Mapping[Role, tuple[int, int, int]]] = {
        Role.POLICE: (30, -10, 5),
        Role.KILLER: (-5, 40, 5),
        Role.DOCTOR: (30, -10, 5),
        Role.SECRET_KILLER: (-5, 40, 5),
        Role.CIVILIAN: (20, -5, 5),
    }

    def compositions(self, players: int) -> Sequence[Composition]:
        """12–14: 3 police, 2 killers · 15–16: 4/3; plus a doctor and a secret killer."""
        police, killers = (3, 2) if players <= 14 else (4, 3)
        rest = players - police - killers - 2
        return [counts(police=police, killer=killers, doctor=1, secret_killer=1, civilian=rest)]

    def last_words(self, players: int, initial: Counter[Role]) -> LastWordsPolicy:
        """Until night 2 (12–14 players) or day 2 (15–16), however many leave at once."""
        until = PhaseId(kind=PhaseKind.NIGHT if players <= 14 else PhaseKind.DAY, number=2)
        return LastWordsPolicy(kind="until", until=until)

    def kill_immune(self, seat: SeatState) -> bool:
        """An unspent secret killer cannot be killed by the killers."""
        return seat.role is Role.SECRET_KILLER

    def savable(self, power: Power) -> bool:
        """The secret killer's shot cannot be saved."""
        return power is not Power.SHOOT

    def role_after_spending(self, seat: SeatState, power: Power) -> Role | None:
        """A fired secret killer becomes a killer (and kills with the team from the next night)."""
        return Role.KILLER if power is Power.SHOOT else None

    def check_answer(self, seat: SeatState) -> CheckResult:
        """Killer → killer; secret killer (fired or not) and doctor → special; else good."""
        if seat.original_role in (Role.SECRET_KILLER, Role.DOCTOR):
            return CheckResult.SPECIAL
        return super().check_answer(seat)

    def win(self, state: GameState) -> WinClause | None:
        """Both sides out → draw; killers' side out → good; police out → killers;
        civilians out → draw."""
        if clause := sides_out(state, KILLERS_SIDE, POLICE):
            return clause
        if all_out(state, CIVILIANS):
            return WinClause(reason="win.civilians_out_draw", winner=Camp.DRAW)
        return None
