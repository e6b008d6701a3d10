"""The 4.x rulesets of seed 004: `v4_butterfly` 4.0 花蝴蝶 and `v4_lone` 4.0 独杀
(specifications in docs/rulesets/v4_butterfly.md and docs/rulesets/v4_lone.md).

4.0 花蝴蝶: a butterfly whose hugged player is untouchable tonight but shares whatever befalls the
butterfly; a sniper who shoots every night; a doctor whose empty needles add up (two kill); one
police; a forest elder who silences a player for the day; killers who win when the specials are
out or when they are as many as the rest.

4.0 独杀, the forum's own ruleset: three killers and a lone killer (独杀) who starts killing alone
once a killer is out; two police and a lone police (独警) who checks alone from night 2; a doctor
with consecutive needles. A kill between the lone killer and the killers, or a check between the
lone police and the police, merges the loner into the team. Checks tell the card dealt; every
death shows it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import ClassVar

from engine.model import Camp, CheckResult, PhaseId, PhaseKind, Power, Role, Seat
from engine.rulesets.base import (
    V3_SCORES,
    VOTE,
    Causes,
    Composition,
    LastWordsPolicy,
    LaterPower,
    Ruleset,
    WinClause,
    all_out,
    any_alive,
    coming_night,
    counts,
    sides_out,
)
from engine.state import Action, GameState, SeatState

KILLERS = frozenset({Role.KILLER})
SPECIALS = frozenset({Role.BUTTERFLY, Role.SNIPER, Role.DOCTOR, Role.POLICE, Role.ELDER})
SHARED_WITH_THE_HUGGED = frozenset({Power.KILL, Power.SHOOT, Power.SAVE, Power.SILENCE})
"""What befalls the butterfly befalls the player it hugs: 被杀，被狙，被扎针，被禁言."""

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


class V4Butterfly(Ruleset):
    """4.0 花蝴蝶版: a butterfly, a sniper, a doctor, a police, a forest elder, killers and
    civilians (3 killers with 3–5 civilians, then a killer and a civilian more at a time)."""

    id = "v4_butterfly"
    name_zh = "4.0 花蝴蝶版"
    min_players = 11
    max_players = 17
    third_tie = "none"
    one_shot: ClassVar[frozenset[Power]] = frozenset()
    self_target_forbidden: ClassVar[frozenset[Power]] = frozenset({Power.CHECK, Power.HUG})
    role_powers: ClassVar[Mapping[Role, tuple[Power, ...]]] = {
        Role.BUTTERFLY: (Power.HUG,),
        Role.SNIPER: (Power.SHOOT,),
        Role.DOCTOR: (Power.SAVE,),
        Role.KILLER: (Power.KILL,),
        Role.POLICE: (Power.CHECK,),
        Role.ELDER: (Power.SILENCE,),
    }
    scores: ClassVar[Mapping[Role, tuple[int, int, int]]] = {
        **V3_SCORES,
        Role.BUTTERFLY: V3_SCORES[Role.POLICE],
        Role.SNIPER: V3_SCORES[Role.POLICE],
        Role.ELDER: V3_SCORES[Role.POLICE],
    }

    def compositions(self, players: int) -> Sequence[Composition]:
        """The five specials; 11–13 players: 3 killers; 14: 3 (a civilian first); 15–16: 4;
        17: 5; the rest civilians."""
        killers = {11: 3, 12: 3, 13: 3, 14: 3, 15: 4, 16: 4, 17: 5}[players]
        return [
            counts(
                butterfly=1, sniper=1, doctor=1, police=1, elder=1, killer=killers,
                civilian=players - 5 - killers,
            )
        ]  # fmt: skip

    def last_words(self, players: int, initial: Counter[Role]) -> LastWordsPolicy:
        """Everyone who leaves, except a killer voted out (`has_last_words`)."""
        return LastWordsPolicy(kind="all")

    def has_last_words(
        self, state: GameState, seat: SeatState, phase: PhaseId, causes: Causes
    ) -> bool:
        """A killer voted out has none ("杀手被投死，没有遗言"); everyone else has, a player
        removed by a moderator too, whatever the role (no vote: no cause)."""
        return not (VOTE in causes and seat.role is Role.KILLER)

    def shown_at_death(
        self, state: GameState, seat: SeatState, phase: PhaseId, causes: Causes
    ) -> str | None:
        """By day the judge says whether a killer or a good player was voted out; at night,
        nothing."""
        if phase.kind is PhaseKind.DAY:
            return (Camp.KILLERS if seat.role is Role.KILLER else Camp.GOOD).value
        return None

    def actions_in_effect(self, state: GameState, actions: Sequence[Action]) -> list[Action]:
        """Whatever is aimed at the hugged player is void (a check answers `none`); whatever
        kills, shoots, treats or silences the butterfly does the same to the hugged player."""
        hug = next((a for a in actions if a.power is Power.HUG), None)
        if hug is None:
            return list(actions)
        butterfly, hugged = hug.actors[0], hug.target
        out: list[Action] = []
        for action in actions:
            if action is hug:
                out.append(action)
            elif action.target == hugged:
                out.append(replace(action, void=True))
            else:
                out.append(action)
                if action.target == butterfly and action.power in SHARED_WITH_THE_HUGGED:
                    out.append(replace(action, target=hugged))
        return out

    def treatment_saves(self, attacks: tuple[Power, ...]) -> bool:
        """The treatment saves from the kill or the shot, not from both."""
        return len(attacks) <= 1

    def needle_kills(self, seat: SeatState, night: int) -> bool:
        """Two empty needles in all kill anyone, the doctor too ("如某人累计两针空针，则死亡")."""
        return len(seat.needles) >= 1

    def camp_of(self, seat: SeatState) -> Camp | None:
        """The killers play for the killers; everyone else, the sniper too, for the good side."""
        return Camp.KILLERS if seat.original_role in KILLERS else Camp.GOOD

    def win(self, state: GameState) -> WinClause | None:
        """Killers and specials out together → draw; killers out → good; specials out →
        killers; killers as many as the others → killers."""
        clause = sides_out(
            state, KILLERS, SPECIALS,
            good_out="win.specials_out", both_out="win.killers_and_specials_out_draw",
        )  # fmt: skip
        if clause:
            return clause
        killers = sum(1 for s in state.seats if s.alive and s.role is Role.KILLER)
        if killers >= len(state.alive()) - killers:
            return WinClause(reason="win.killers_outnumber", winner=Camp.KILLERS)
        return None


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

    def later_powers(self, state: GameState, seat: SeatState) -> tuple[LaterPower, ...]:
        """The lone killer kills once a killer is out; the lone police checks from night 2."""
        if seat.role is Role.LONE_KILLER and not self.lone_killer_active(state):
            return (LaterPower(power=Power.KILL, when="killer_out"),)
        if seat.role is Role.LONE_POLICE and coming_night(state) < self.lone_police_from:
            return (LaterPower(power=Power.CHECK, when="from_night", night=self.lone_police_from),)
        return super().later_powers(state, seat)

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

    def shown_at_death(
        self, state: GameState, seat: SeatState, phase: PhaseId, causes: Causes
    ) -> str | None:
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
