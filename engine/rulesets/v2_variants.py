"""The 2.0 variants of seed 004 §2.x: `v2_mine` 地雷, `v2_mine_accomplice` 匪民地雷,
`v2_doctor_accomplice` 匪民医生 and `v2_sapper` 工兵地雷 (specifications in docs/rulesets/).

All play like `v2` (police and killers, majority choices, lots on ties) with:
- a mine (地雷) whose side is a game option: killed by the killers it takes every killer with
  it; voted out it takes everyone who voted for it;
- an accomplice (匪民) who plays for the killers without a night power — or, by option, knowing
  the killers, or checking one player a night for "killer or not";
- a doctor whose empty needles kill on two consecutive nights;
- 工兵地雷: a killers' mine (匪雷) the killers' kill cannot harm, whose voters leave when it tops
  the vote; a sapper (工兵) who digs for it at night (on a killer he is blown up himself); police
  checks that tell the true role (the sapper passes for a civilian); last words only at night.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import ClassVar

from engine.model import Camp, CheckResult, PhaseKind, Power, Role, Seat, Team
from engine.rulesets.base import (
    V3_SCORES,
    Composition,
    LastWordsPolicy,
    Ruleset,
    WinClause,
    all_out,
    counts,
)
from engine.rulesets.v2 import V2
from engine.state import GameState, SeatState

MINE_SIDES: Mapping[str, Camp | None] = {
    "neutral": None,
    "good": Camp.GOOD,
    "killers": Camp.KILLERS,
}
"""The `mine` option: 中立, 警雷 (plays for the good side), 匪雷 (plays for the killers)."""


class V2Mine(V2):
    """2.0 地雷版: v2 plus a mine whose side is the game option `mine`."""

    id = "v2_mine"
    name_zh = "2.0 地雷版"
    option_choices: ClassVar[Mapping[str, tuple[str, ...]]] = {
        "mine": ("neutral", "good", "killers")
    }
    extra_roles: ClassVar[Mapping[Role, int]] = {Role.MINE: 1}
    """Roles added to v2's table; each takes a civilian's place."""

    def compositions(self, players: int) -> Sequence[Composition]:
        """v2's police and killers (8–10: 2, 11–14: 3, 15–16: 4), the extra roles, civilians."""
        side = 2 if players <= 10 else 3 if players <= 14 else 4
        extra = sum(self.extra_roles.values())
        roles = {Role.POLICE: side, Role.KILLER: side, **self.extra_roles}
        return [{**roles, Role.CIVILIAN: players - 2 * side - extra}]

    def mine_camp(self) -> Camp | None:
        """The side the mine plays for (None: neutral)."""
        return MINE_SIDES[self.option("mine")]

    def side_note(self, seat: SeatState) -> str | None:
        """The mine is told its side: 中立, 警雷 (helps the police) or 匪雷 (helps the killers)."""
        if seat.role is not Role.MINE:
            return super().side_note(seat)
        camp = self.mine_camp()
        return "mine_" + (camp.value if camp is not None else "neutral")

    def attack_victims(
        self, state: GameState, power: Power, actors: tuple[Seat, ...], target: SeatState
    ) -> tuple[Seat, ...]:
        """The killers' kill on the mine: the mine and every killer leave."""
        if power is Power.KILL and target.role is Role.MINE:
            return (target.seat, *self.team_members(state, Team.KILLERS))
        return super().attack_victims(state, power, actors, target)

    def vote_leavers(
        self, state: GameState, chosen: SeatState, voters: tuple[Seat, ...]
    ) -> tuple[Seat, ...]:
        """The mine voted out: the mine and everyone who voted for it leave."""
        if chosen.role is Role.MINE:
            return (chosen.seat, *voters)
        return super().vote_leavers(state, chosen, voters)

    def camp_of(self, seat: SeatState) -> Camp | None:
        """The mine plays for the side the option names (none when neutral)."""
        if seat.original_role is Role.MINE:
            return self.mine_camp()
        return super().camp_of(seat)

    def score(self, role: Role, winner: Camp) -> int:
        """A side's mine scores as that side's civilian or killer; a neutral mine always 5."""
        if role is Role.MINE:
            camp = self.mine_camp()
            if camp is None:
                return 5
            role = Role.CIVILIAN if camp is Camp.GOOD else Role.KILLER
        return super().score(role, winner)


class V2MineAccomplice(V2Mine):
    """2.0 匪民地雷版: the mine always plays for the good side; an accomplice for the killers."""

    id = "v2_mine_accomplice"
    name_zh = "2.0 匪民地雷版"
    option_choices: ClassVar[Mapping[str, tuple[str, ...]]] = {}
    extra_roles: ClassVar[Mapping[Role, int]] = {Role.MINE: 1, Role.ACCOMPLICE: 1}
    scores: ClassVar[Mapping[Role, tuple[int, int, int]]] = {
        **V3_SCORES,
        Role.ACCOMPLICE: V3_SCORES[Role.KILLER],
    }

    def mine_camp(self) -> Camp | None:
        """警雷: the mine helps the good side."""
        return Camp.GOOD


class V2DoctorAccomplice(V2):
    """2.0 匪民医生版: v2 plus a doctor (consecutive needles) and an accomplice whose variant is
    the game option `accomplice`: `plain`, `knows` (knows the killers) or `checks` (checks one
    player a night: killer or not)."""

    id = "v2_doctor_accomplice"
    name_zh = "2.0 匪民医生版"
    needles = "consecutive"
    option_choices: ClassVar[Mapping[str, tuple[str, ...]]] = {
        "accomplice": ("plain", "knows", "checks")
    }
    scores: ClassVar[Mapping[Role, tuple[int, int, int]]] = {
        **V3_SCORES,
        Role.ACCOMPLICE: V3_SCORES[Role.KILLER],
    }

    def compositions(self, players: int) -> Sequence[Composition]:
        """v2's police and killers, a doctor and an accomplice, the rest civilians."""
        side = 2 if players <= 10 else 3 if players <= 14 else 4
        return [
            counts(
                police=side, killer=side, doctor=1, accomplice=1, civilian=players - 2 * side - 2
            )
        ]

    def night_powers(self, state: GameState, seat: SeatState) -> tuple[Power, ...]:
        """Under `checks`, the accomplice checks one player a night (alone)."""
        if seat.role is Role.ACCOMPLICE and self.option("accomplice") == "checks":
            return (Power.CHECK,)
        return super().night_powers(state, seat)

    def knows_role(self, viewer: SeatState, other: SeatState) -> bool:
        """Under `knows`, the accomplice knows the killers (they do not know it)."""
        if (
            self.option("accomplice") == "knows"
            and viewer.role is Role.ACCOMPLICE
            and other.original_role is Role.KILLER
        ):
            return True
        return super().knows_role(viewer, other)


class V2Sapper(Ruleset):
    """2.0 工兵地雷版: 13 players; a killers' mine (匪雷) and a sapper (工兵); true-identity checks;
    no reveal at death; last words only for those who leave at night."""

    id = "v2_sapper"
    name_zh = "2.0 工兵地雷版"
    min_players = 13
    max_players = 13
    role_powers: ClassVar[Mapping[Role, tuple[Power, ...]]] = {
        **Ruleset.role_powers,
        Role.SAPPER: (Power.DEMINE,),
    }
    attack_powers = Ruleset.attack_powers | {Power.DEMINE}
    scores: ClassVar[Mapping[Role, tuple[int, int, int]]] = {
        **V3_SCORES,
        Role.KILLER_MINE: V3_SCORES[Role.KILLER],
        Role.SAPPER: V3_SCORES[Role.POLICE],
    }

    def compositions(self, players: int) -> Sequence[Composition]:
        """3 killers, a killers' mine, 3 police, a sapper, 5 civilians."""
        return [counts(killer=3, killer_mine=1, police=3, sapper=1, civilian=players - 8)]

    def last_words(self, players: int, initial: Counter[Role]) -> LastWordsPolicy:
        """Everyone who leaves at night; nobody who leaves by day."""
        return LastWordsPolicy(kind="all", only=PhaseKind.NIGHT)

    def kill_immune(self, seat: SeatState) -> bool:
        """The killers' kill has no effect on the killers' mine."""
        return seat.role is Role.KILLER_MINE

    def attack_victims(
        self, state: GameState, power: Power, actors: tuple[Seat, ...], target: SeatState
    ) -> tuple[Seat, ...]:
        """Digging at the mine removes it; digging at a killer blows the sapper up; anyone
        else: nothing."""
        if power is Power.DEMINE:
            if target.role is Role.KILLER_MINE:
                return (target.seat,)
            if target.role is Role.KILLER:
                return actors
            return ()
        return super().attack_victims(state, power, actors, target)

    def check_answer(self, seat: SeatState) -> CheckResult:
        """The true role, except the sapper, who passes for a civilian."""
        return {
            Role.KILLER: CheckResult.KILLER,
            Role.KILLER_MINE: CheckResult.KILLER_MINE,
            Role.POLICE: CheckResult.POLICE,
        }.get(seat.role, CheckResult.CIVILIAN)

    def vote_leavers(
        self, state: GameState, chosen: SeatState, voters: tuple[Seat, ...]
    ) -> tuple[Seat, ...]:
        """The killers' mine topping the vote stays; everyone who voted for it leaves."""
        if chosen.role is Role.KILLER_MINE:
            return voters
        return super().vote_leavers(state, chosen, voters)

    def win(self, state: GameState) -> WinClause | None:
        """Killers out → good; police out → killers (no civilians-out clause: 无全水一说)."""
        if all_out(state, frozenset({Role.KILLER})):
            return WinClause(reason="win.killers_out", winner=Camp.GOOD)
        if all_out(state, frozenset({Role.POLICE})):
            return WinClause(reason="win.police_out", winner=Camp.KILLERS)
        return None
