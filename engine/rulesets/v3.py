"""`v3`, `v3m`, `v3t`, `v3mt` — 3.0 高级 (seeds 001 and 004 §3.0).

A doctor with consecutive needles (two nights in a row kill, the doctor too). `m` swaps a killer
for a secret_killer (one savable shot that cannot harm killers; never killed by the killers;
a killer once fired). `t` swaps a police for a secret_police (one execution that only works on
killers and the secret killer; a civilian once spent).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import ClassVar

from engine.model import Camp, CheckResult, PhaseId, PhaseKind, Power, Role
from engine.rulesets.base import (
    V3_SCORES,
    Composition,
    LastWordsPolicy,
    Ruleset,
    WinClause,
    all_out,
    counts,
    sides_out,
)
from engine.state import GameState, SeatState

KILLERS = frozenset({Role.KILLER})
POLICE = frozenset({Role.POLICE})
CIVILIANS = frozenset({Role.CIVILIAN})


class V3(Ruleset):
    """3.0 基本版: killers, police, a doctor."""

    id = "v3"
    name_zh = "3.0 基本版"
    min_players = 11
    max_players = 16
    needles = "consecutive"
    scores = V3_SCORES
    with_secret_killer: ClassVar[bool] = False
    with_secret_police: ClassVar[bool] = False

    def compositions(self, players: int) -> Sequence[Composition]:
        """11–14: 3 killers, 3 police · 15–16: 4/4; a doctor; `m`/`t` swap one of each side."""
        side = 3 if players <= 14 else 4
        sk, sp = int(self.with_secret_killer), int(self.with_secret_police)
        return [
            counts(
                killer=side - sk,
                secret_killer=sk,
                police=side - sp,
                secret_police=sp,
                doctor=1,
                civilian=players - 2 * side - 1,
            )
        ]

    def last_words(self, players: int, initial: Counter[Role]) -> LastWordsPolicy:
        """Until night 2 (11–14) or day 2 (15–16); none when two or more leave at once."""
        until = PhaseId(kind=PhaseKind.NIGHT if players <= 14 else PhaseKind.DAY, number=2)
        return LastWordsPolicy(kind="until", until=until, not_if_multiple=True)

    def kill_immune(self, seat: SeatState) -> bool:
        """The secret killer is never killed by the killers, fired or not."""
        return seat.original_role is Role.SECRET_KILLER

    def attack_effective(self, power: Power, target: SeatState) -> bool:
        """The shot cannot harm killers; the execution works only on killers and secret killers."""
        if power is Power.SHOOT:
            return target.role is not Role.KILLER
        if power is Power.EXECUTE:
            return target.role in (Role.KILLER, Role.SECRET_KILLER)
        return super().attack_effective(power, target)

    def role_after_spending(self, seat: SeatState, power: Power) -> Role | None:
        """A fired secret killer is a killer; a spent secret police is a civilian."""
        if power is Power.SHOOT:
            return Role.KILLER
        if power is Power.EXECUTE:
            return Role.CIVILIAN
        return None

    def check_answer(self, seat: SeatState) -> CheckResult:
        """Unspent secret police / secret killer and the doctor → special; killer (a fired secret
        killer too) → killer; else (a spent secret police too) → good."""
        if seat.role in (Role.SECRET_POLICE, Role.SECRET_KILLER, Role.DOCTOR):
            return CheckResult.SPECIAL
        return super().check_answer(seat)

    def win(self, state: GameState) -> WinClause | None:
        """Killers and police out together → draw; killers out → good; police out → killers;
        civilians (a spent secret police too) out → killers."""
        if clause := sides_out(state, KILLERS, POLICE):
            return clause
        if all_out(state, CIVILIANS):
            return WinClause(reason="win.civilians_out", winner=Camp.KILLERS)
        return None


class V3M(V3):
    """3.0M 秘匪版."""

    id = "v3m"
    name_zh = "3.0M 秘匪版"
    with_secret_killer = True


class V3T(V3):
    """3.0T 秘警版."""

    id = "v3t"
    name_zh = "3.0T 秘警版"
    with_secret_police = True


class V3MT(V3):
    """3.0MT 秘警秘匪版."""

    id = "v3mt"
    name_zh = "3.0MT 秘警秘匪版"
    with_secret_killer = True
    with_secret_police = True
