"""`wujiandao` — 无间道 (seed 004, "无间道规则"); the specification is docs/rulesets/wujiandao.md.

Two factions of equal public size, police (警) and gang (匪), whose public identities everyone
knows. Hidden in each: a leader (首领), known to his confidant and his mole; a confidant (亲信),
known to the leader; a mole (卧底), who sits publicly in the other faction, known to his leader.
Each night each faction's leader (his confidant once he is dead) assassinates a member of the
other faction; each day each faction votes among its own public members for the mole, sparing
its leader and confidant. A faction loses when its leader and its mole are both dead.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import ClassVar

from engine.errors import SetupError
from engine.model import Camp, Power, Role, Seat
from engine.rulesets.base import (
    Composition,
    LastWordsPolicy,
    LaterPower,
    Ruleset,
    VoteGroup,
    WinClause,
    coming_night,
    counts,
)
from engine.state import GameState, SeatState

POLICE, GANG = "police", "gang"

FACTION: Mapping[Role, str] = {
    Role.POLICE: POLICE,
    Role.POLICE_LEADER: POLICE,
    Role.POLICE_CONFIDANT: POLICE,
    Role.POLICE_MOLE: POLICE,
    Role.GANGSTER: GANG,
    Role.GANG_LEADER: GANG,
    Role.GANG_CONFIDANT: GANG,
    Role.GANG_MOLE: GANG,
}
"""The faction a role plays for."""

PUBLIC: Mapping[Role, str] = {
    **FACTION,
    Role.POLICE_MOLE: GANG,
    Role.GANG_MOLE: POLICE,
}
"""The faction a role belongs to in everyone's eyes (a mole sits in the other one)."""

LEADER = {POLICE: Role.POLICE_LEADER, GANG: Role.GANG_LEADER}
CONFIDANT = {POLICE: Role.POLICE_CONFIDANT, GANG: Role.GANG_CONFIDANT}
MOLE = {POLICE: Role.POLICE_MOLE, GANG: Role.GANG_MOLE}
SPARED_BY_THE_VOTE = frozenset({*LEADER.values(), *CONFIDANT.values()})
CAMP = {POLICE: Camp.GOOD, GANG: Camp.KILLERS}


class Wujiandao(Ruleset):
    """无间道: two factions, public identities, hidden leaders, confidants and moles."""

    id = "wujiandao"
    name_zh = "无间道"
    min_players = 8
    max_players = 16
    option_choices: ClassVar[Mapping[str, tuple[str, ...]]] = {
        "first_night": ("assassinate", "virtual")
    }
    one_shot = frozenset()
    self_target_forbidden = frozenset({Power.KILL})
    role_powers: ClassVar[Mapping[Role, tuple[Power, ...]]] = {}
    scores: ClassVar[Mapping[Role, tuple[int, int, int]]] = {}

    def check_player_count(self, players: int) -> None:
        """An even number from 8 to 16: both factions the same size ("两派人数相等")."""
        super().check_player_count(players)
        if players % 2:
            raise SetupError("setup.even_players", ruleset=self.id, players=players)

    def compositions(self, players: int) -> Sequence[Composition]:
        """Each public half: its leader, its confidant, the other faction's mole, ordinary
        members."""
        ordinary = players // 2 - 3
        return [
            counts(
                police_leader=1, police_confidant=1, gang_mole=1, police=ordinary,
                gang_leader=1, gang_confidant=1, police_mole=1, gangster=ordinary,
            )
        ]  # fmt: skip

    def last_words(self, players: int, initial: Counter[Role]) -> LastWordsPolicy:
        """Everyone who leaves."""
        return LastWordsPolicy(kind="all")

    # -- who knows what ------------------------------------------------------------------------
    def public_role(self, seat: SeatState) -> Role | None:
        """Everyone's public identity: a police or a gangster (a mole shows the other side)."""
        return Role.POLICE if PUBLIC[seat.role] == POLICE else Role.GANGSTER

    def team_of(self, seat: SeatState) -> None:
        """No teams: nobody shares a thread, and an ordinary member knows no one's hidden role
        (not even that another member is ordinary)."""
        return None

    def knows_role(self, viewer: SeatState, other: SeatState) -> bool:
        """The leader knows his confidant and his mole; the confidant and the mole know their
        leader."""
        side = FACTION[viewer.role]
        if viewer.role is LEADER[side]:
            return other.role in (CONFIDANT[side], MOLE[side]) or super().knows_role(viewer, other)
        if viewer.role in (CONFIDANT[side], MOLE[side]):
            return other.role is LEADER[side] or super().knows_role(viewer, other)
        return super().knows_role(viewer, other)

    # -- night: the assassinations -----------------------------------------------------------
    @staticmethod
    def head(state: GameState, side: str) -> Seat | None:
        """Who orders the faction's assassination: the leader, the confidant once he is dead."""
        for role in (LEADER[side], CONFIDANT[side]):
            seat = next((s.seat for s in state.seats if s.alive and s.role is role), None)
            if seat is not None:
                return seat
        return None

    def night_powers(self, state: GameState, seat: SeatState) -> tuple[Power, ...]:
        """The faction's head assassinates (not on night 1 when it is virtual)."""
        if coming_night(state) == 1 and self.option("first_night") == "virtual":
            return ()
        if seat.seat == self.head(state, FACTION[seat.role]):
            return (Power.KILL,)
        return ()

    def later_powers(self, state: GameState, seat: SeatState) -> tuple[LaterPower, ...]:
        """The confidant assassinates once his leader is out; the leader, on a virtual first
        night, from night 2."""
        side = FACTION[seat.role]
        head = self.head(state, side)
        if seat.role is CONFIDANT[side] and head != seat.seat:
            return (LaterPower(power=Power.KILL, when="leader_out"),)
        if head == seat.seat and not self.night_powers(state, seat):
            return (LaterPower(power=Power.KILL, when="from_night", night=coming_night(state) + 1),)
        return ()

    def team_power(self, power: Power) -> None:
        """Nothing is decided by a team's majority: the head orders."""
        return None

    def target_error(
        self, state: GameState, actor: SeatState, power: Power, target: SeatState
    ) -> str | None:
        """The assassination names a member of the other faction (by public identity)."""
        if power is Power.KILL and PUBLIC[target.role] == FACTION[actor.role]:
            return "target.own_faction"
        return super().target_error(state, actor, power, target)

    # -- day: each faction's vote for the mole --------------------------------------------------
    def vote_groups(self, state: GameState) -> tuple[VoteGroup, ...]:
        """Each faction (by public identity) votes among its own members."""
        groups = []
        for side in (POLICE, GANG):
            members = tuple(s.seat for s in state.seats if s.alive and PUBLIC[s.role] == side)
            groups.append(VoteGroup(name=side, voters=members, candidates=members))
        return tuple(groups)

    def vote_leavers(
        self, state: GameState, chosen: SeatState, voters: tuple[Seat, ...]
    ) -> tuple[Seat, ...]:
        """The faction's leader or confidant picked is not killed ("则不杀")."""
        if chosen.role in SPARED_BY_THE_VOTE:
            return ()
        return super().vote_leavers(state, chosen, voters)

    # -- end -----------------------------------------------------------------------------------
    def camp_of(self, seat: SeatState) -> Camp | None:
        """The faction a player plays for: police (`good`) or gang (`killers`)."""
        return CAMP[FACTION[seat.original_role]]

    def win(self, state: GameState) -> WinClause | None:
        """A faction whose leader and mole are both dead loses; both at once: a draw."""
        lost = [
            side
            for side in (POLICE, GANG)
            if not any(s.alive and s.role in (LEADER[side], MOLE[side]) for s in state.seats)
        ]
        if len(lost) == 2:
            return WinClause(reason="win.both_leaders_and_moles_out_draw", winner=Camp.DRAW)
        if lost == [POLICE]:
            return WinClause(reason="win.police_leader_and_mole_out", winner=Camp.KILLERS)
        if lost == [GANG]:
            return WinClause(reason="win.gang_leader_and_mole_out", winner=Camp.GOOD)
        return None

    def seat_score(self, state: GameState, seat: SeatState, winner: Camp) -> int:
        """The winning faction 30, the losing one −10; a draw 5."""
        if winner is Camp.DRAW:
            return 5
        return 30 if CAMP[FACTION[seat.original_role]] is winner else -10
