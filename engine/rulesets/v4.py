"""The 4.x rulesets of seed 004: `v4_lone` 4.0 独杀 (specification in docs/rulesets/v4_lone.md).

4.0 独杀, the forum's own ruleset: three killers and a lone killer (独杀) who starts killing alone
once a killer is out; two police and a lone police (独警) who checks alone from night 2; a doctor
with consecutive needles. A kill between the lone killer and the killers, or a check between the
lone police and the police, merges the loner into the team. Checks tell the card dealt; every
death shows it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import ClassVar

from engine.model import Camp, CheckResult, PhaseId, Power, Role, Seat
from engine.rulesets.base import (
    V3_SCORES,
    Composition,
    LastWordsPolicy,
    Ruleset,
    WinClause,
    all_out,
    any_alive,
    coming_night,
    counts,
)
from engine.state import GameState, SeatState

KILLERS_SIDE = frozenset({Role.KILLER, Role.LONE_KILLER})
GOOD_SPECIALS = frozenset({Role.POLICE, Role.LONE_POLICE, Role.DOCTOR})

TRUE_IDENTITY: Mapping[Role, CheckResult] = {
    Role.KILLER: CheckResult.KILLER,
    Role.LONE_KILLER: CheckResult.LONE_KILLER,
    Role.POLICE: CheckResult.POLICE,
    Role.LONE_POLICE: CheckResult.LONE_POLICE,
    Role.DOCTOR: CheckResult.DOCTOR,
    Role.CIVILIAN: CheckResult.CIVILIAN,
}


class V4Lone(Ruleset):
    """4.0 独杀版: 3 killers, a lone killer, 2 police, a lone police, a doctor, 8 civilians."""

    id = "v4_lone"
    name_zh = "4.0 独杀版"
    min_players = 16
    max_players = 16
    needles = "consecutive"
    third_tie = "none"
    role_powers: ClassVar[Mapping[Role, tuple[Power, ...]]] = {
        Role.KILLER: (Power.KILL,),
        Role.POLICE: (Power.CHECK,),
        Role.DOCTOR: (Power.SAVE,),
        Role.LONE_KILLER: (Power.KILL,),
        Role.LONE_POLICE: (Power.CHECK,),
    }
    scores: ClassVar[Mapping[Role, tuple[int, int, int]]] = {
        **V3_SCORES,
        Role.LONE_KILLER: V3_SCORES[Role.KILLER],
        Role.LONE_POLICE: V3_SCORES[Role.POLICE],
    }
    lone_police_from: ClassVar[int] = 2
    """The first night the lone police checks."""

    def compositions(self, players: int) -> Sequence[Composition]:
        """3 killers, a lone killer, 2 police, a lone police, a doctor, 8 civilians."""
        return [
            counts(killer=3, lone_killer=1, police=2, lone_police=1, doctor=1, civilian=players - 8)
        ]

    def last_words(self, players: int, initial: Counter[Role]) -> LastWordsPolicy:
        """Every player who leaves, until the next death list is published."""
        return LastWordsPolicy(kind="all", window="next_death")

    # -- powers --------------------------------------------------------------------------------
    @staticmethod
    def lone_killer_active(state: GameState) -> bool:
        """The lone killer kills once a player dealt `killer` is out of the game."""
        return any(s.original_role is Role.KILLER and not s.alive for s in state.seats)

    def night_powers(self, state: GameState, seat: SeatState) -> tuple[Power, ...]:
        """The lone killer kills once active; the lone police checks from night 2."""
        if seat.role is Role.LONE_KILLER and not self.lone_killer_active(state):
            return ()
        if seat.role is Role.LONE_POLICE and coming_night(state) < self.lone_police_from:
            return ()
        return super().night_powers(state, seat)

    def target_error(
        self, state: GameState, actor: SeatState, power: Power, target: SeatState
    ) -> str | None:
        """The lone killer may not kill himself."""
        if power is Power.KILL and actor.role is Role.LONE_KILLER and actor.seat == target.seat:
            return "target.self_forbidden"
        return super().target_error(state, actor, power, target)

    # -- night ---------------------------------------------------------------------------------
    def _merging(
        self, state: GameState, power: Power, actors: tuple[Seat, ...], target: SeatState
    ) -> Mapping[Seat, Role]:
        actor = state.seat(actors[0]).role
        if power is Power.KILL:
            if actor is Role.KILLER and target.role is Role.LONE_KILLER:
                if self.lone_killer_active(state):
                    return {target.seat: Role.KILLER}
            elif actor is Role.LONE_KILLER and target.role is Role.KILLER:
                return {actors[0]: Role.KILLER}
        if power is Power.CHECK:
            if actor is Role.POLICE and target.role is Role.LONE_POLICE:
                return {target.seat: Role.POLICE}
            if actor is Role.LONE_POLICE and target.role is Role.POLICE:
                return {actors[0]: Role.POLICE}
        return {}

    def attack_victims(
        self, state: GameState, power: Power, actors: tuple[Seat, ...], target: SeatState
    ) -> tuple[Seat, ...]:
        """A kill between the active lone killer and the killers merges instead of killing."""
        if self._merging(state, power, actors, target):
            return ()
        return super().attack_victims(state, power, actors, target)

    def conversions(
        self, state: GameState, power: Power, actors: tuple[Seat, ...], target: SeatState
    ) -> Mapping[Seat, Role]:
        """The lone killer becomes a killer, the lone police a police, when they merge."""
        return self._merging(state, power, actors, target)

    def check_answer(self, seat: SeatState) -> CheckResult:
        """The true identity: the card dealt."""
        return TRUE_IDENTITY[seat.original_role]

    def shown_at_death(self, state: GameState, seat: SeatState, phase: PhaseId) -> str | None:
        """The card dealt, merged or not."""
        return seat.original_role.value

    # -- end -----------------------------------------------------------------------------------
    def win(self, state: GameState) -> WinClause | None:
        """Killers and lone killer out → good; police, lone police and doctor out → killers;
        three players or fewer left with a killer among them → killers."""
        if all_out(state, KILLERS_SIDE):
            return WinClause(reason="win.killers_out", winner=Camp.GOOD)
        if all_out(state, GOOD_SPECIALS):
            return WinClause(reason="win.good_specials_out", winner=Camp.KILLERS)
        if len(state.alive()) <= 3 and any_alive(state, KILLERS_SIDE):
            return WinClause(reason="win.three_left", winner=Camp.KILLERS)
        return None
