"""`tianxia` — 天下无贼 (seed 004, "天下无贼规则"); the specification is docs/rulesets/tianxia.md.

Three factions: the police (with the civilians), the good thieves (义贼) and the bad thieves (恶贼),
and a virtual player, 傻根, who is no seat. While 傻根 lives, each team uses one of two powers a
night: the police check or guard 傻根, the good thieves kill or guard 傻根, the bad thieves kill
or rob 傻根. A robbery guarded by the good thieves leaves them a knife mark (every second one
kills a good thief drawn by lots) and exposes a bad thief to checking police (by lots). Once 傻根
is dead, the police and the good thieves have no night power and the bad thieves must kill.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import ClassVar

from engine import lots
from engine.model import Camp, CheckResult, PhaseId, PhaseKind, Power, Role, Seat, Team
from engine.rulesets.base import (
    Causes,
    Composition,
    LastWordsPolicy,
    NightExtras,
    Ruleset,
    WinClause,
    any_alive,
    counts,
)
from engine.state import Action, GameState, LotDraw, NightRecord, SeatState

SHAGEN = "shagen"
"""The virtual player 傻根."""
MARKS = "knife_marks"
"""The good thieves' knife marks (刀痕)."""
KNIFE = "knife"
"""The cause of a good thief's death by the marks."""

THIEVES = frozenset({Role.GOOD_THIEF, Role.BAD_THIEF})
SIDES: Mapping[Role, Camp] = {
    Role.POLICE: Camp.GOOD,
    Role.CIVILIAN: Camp.GOOD,
    Role.GOOD_THIEF: Camp.GOOD_THIEVES,
    Role.BAD_THIEF: Camp.BAD_THIEVES,
}
TEAMS: Mapping[Role, Team] = {
    Role.POLICE: Team.POLICE,
    Role.GOOD_THIEF: Team.GOOD_THIEVES,
    Role.BAD_THIEF: Team.BAD_THIEVES,
}


class Tianxia(Ruleset):
    """天下无贼: police, good thieves, bad thieves (3 each), 3–5 civilians, and 傻根."""

    id = "tianxia"
    name_zh = "天下无贼"
    min_players = 12
    max_players = 14
    third_tie = "none"
    camps = frozenset({Camp.GOOD, Camp.GOOD_THIEVES, Camp.BAD_THIEVES, Camp.DRAW})
    virtual_players = (SHAGEN,)
    untargeted_powers = frozenset({Power.GUARD, Power.ROB})
    one_shot = frozenset()
    self_target_forbidden = frozenset({Power.CHECK, Power.KILL})
    role_powers: ClassVar[Mapping[Role, tuple[Power, ...]]] = {
        Role.POLICE: (Power.CHECK, Power.GUARD),
        Role.GOOD_THIEF: (Power.KILL, Power.GUARD),
        Role.BAD_THIEF: (Power.KILL, Power.ROB),
    }
    scores: ClassVar[Mapping[Role, tuple[int, int, int]]] = {}
    win_points: ClassVar[Mapping[Role, tuple[int, int]]] = {
        Role.POLICE: (30, -10),
        Role.CIVILIAN: (20, -5),
        Role.GOOD_THIEF: (30, -10),
        Role.BAD_THIEF: (30, -10),
    }
    """Points for a win and a loss of the side; a draw is 5 for everyone."""

    def compositions(self, players: int) -> Sequence[Composition]:
        """3 police, 3 good thieves, 3 bad thieves, the rest (3–5) civilians."""
        return [counts(police=3, good_thief=3, bad_thief=3, civilian=players - 9)]

    def last_words(self, players: int, initial: Counter[Role]) -> LastWordsPolicy:
        """The police and the civilians who leave; never a thief (`has_last_words`)."""
        return LastWordsPolicy(kind="all")

    def has_last_words(
        self, state: GameState, seat: SeatState, phase: PhaseId, causes: Causes
    ) -> bool:
        """ "被投死的贼没有遗言，警察和平民有遗言" (a thief has none at night either); a player
        removed by a moderator (no cause) has them whatever the role, or the invitation would
        tell whether they were a thief."""
        return not causes or seat.role not in THIEVES

    def shown_at_death(
        self, state: GameState, seat: SeatState, phase: PhaseId, causes: Causes
    ) -> str | None:
        """By day: police, civilian, or a thief without saying which; at night nothing."""
        if phase.kind is not PhaseKind.DAY:
            return None
        return "thief" if seat.role in THIEVES else seat.role.value

    # -- teams and powers ----------------------------------------------------------------------
    def team_of(self, seat: SeatState) -> Team | None:
        """Each faction acts together and knows its own."""
        return TEAMS.get(seat.role)

    def team_power(self, power: Power) -> Team | None:
        """Teams are given by `team_powers` (the killing power is two teams')."""
        return None

    def team_powers(self, team: Team) -> frozenset[Power]:
        """Each faction uses one of its two powers a night."""
        role = next((r for r, t in TEAMS.items() if t is team), None)
        return frozenset(self.role_powers.get(role, ())) if role is not None else frozenset()

    @staticmethod
    def shagen_alive(state: GameState) -> bool:
        """Whether 傻根 is still in the game."""
        return SHAGEN not in state.virtual_out

    def night_powers(self, state: GameState, seat: SeatState) -> tuple[Power, ...]:
        """Once 傻根 is dead only the bad thieves act, and they can only kill."""
        if not self.shagen_alive(state):
            return (Power.KILL,) if seat.role is Role.BAD_THIEF else ()
        return super().night_powers(state, seat)

    def passable(self, state: GameState, seat: SeatState, power: Power) -> bool:
        """ "傻根死亡后，恶贼每晚必须杀死一名存活游戏者"."""
        return self.shagen_alive(state) or power is not Power.KILL

    def check_answer(self, seat: SeatState) -> CheckResult:
        """A civilian: `civilian`; a good or bad thief alike: `thief`; a police: `police`."""
        if seat.role in THIEVES:
            return CheckResult.THIEF
        return CheckResult.POLICE if seat.role is Role.POLICE else CheckResult.CIVILIAN

    # -- the fight over 傻根 --------------------------------------------------------------------
    def night_extras(self, state: GameState, actions: Sequence[Action]) -> NightExtras:
        """A robbery: 傻根 dies unless guarded; guarded by the good thieves, they take a knife
        mark (every second one kills one of them by lots) and a checking police is told a bad
        thief instead (by lots, among those it does not know yet)."""
        by_team = {a.team: a for a in actions if a.team is not None and not a.void}
        police, good, bad = (by_team.get(t) for t in TEAMS.values())
        if bad is None or bad.power is not Power.ROB:
            return NightExtras(actions=tuple(actions))
        guarded = [a for a in (police, good) if a is not None and a.power is Power.GUARD]
        if not guarded:
            return NightExtras(actions=tuple(actions), virtual_out=(SHAGEN,))
        if good is None or good.power is not Power.GUARD:
            return NightExtras(actions=tuple(actions))
        night = state.window.number if state.window else 0
        marks = state.counter(MARKS) + 1
        draws: list[LotDraw] = []
        leave: tuple[tuple[Seat, str], ...] = ()
        if marks % 2 == 0:
            living = [s.seat for s in state.seats if s.alive and s.role is Role.GOOD_THIEF]
            if living:
                label = f"knife|night {night}|marks {marks}|{','.join(map(str, living))}"
                drawn = lots.draw(state.seed, label, living)
                draws.append(LotDraw(label=label, among=tuple(map(str, living)), drawn=str(drawn)))
                leave = ((drawn, KNIFE),)
        rewritten = list(actions)
        if police is not None and police.power is Power.CHECK:
            known = _known_to_police(state)
            hidden = [
                s.seat
                for s in state.seats
                if s.alive and s.role is Role.BAD_THIEF and s.seat not in known
            ]
            if hidden:
                label = f"expose|night {night}|{','.join(map(str, hidden))}"
                shown = lots.draw(state.seed, label, hidden)
                draws.append(LotDraw(label=label, among=tuple(map(str, hidden)), drawn=str(shown)))
                told = replace(police, target=shown, told=CheckResult.BAD_THIEF)
                rewritten = [told if a is police else a for a in actions]
        return NightExtras(
            actions=tuple(rewritten),
            leave=leave,
            counters=((MARKS, marks),),
            lots=tuple(draws),
            notices=((Team.GOOD_THIEVES, "notice.knife_mark"),),
        )

    # -- end -----------------------------------------------------------------------------------
    def camp_of(self, seat: SeatState) -> Camp | None:
        """The police side (the police and the civilians), the good thieves, the bad thieves."""
        return SIDES[seat.original_role]

    def win(self, state: GameState) -> WinClause | None:
        """The first side to meet its condition wins (at most one can at a time)."""
        police = any_alive(state, frozenset({Role.POLICE}))
        civilians = any_alive(state, frozenset({Role.CIVILIAN}))
        good = any_alive(state, frozenset({Role.GOOD_THIEF}))
        bad = any_alive(state, frozenset({Role.BAD_THIEF}))
        if not good and not bad:
            if police or civilians:
                return WinClause(reason="win.thieves_out", winner=Camp.GOOD)
            return WinClause(reason="win.nobody_left_draw", winner=Camp.DRAW)
        if self.shagen_alive(state):
            if good and not bad:
                return WinClause(reason="win.bad_thieves_out", winner=Camp.GOOD_THIEVES)
            if bad and not good and not police:
                return WinClause(reason="win.good_thieves_and_police_out", winner=Camp.BAD_THIEVES)
            return None
        if good and not bad and not police:
            return WinClause(reason="win.bad_thieves_and_police_out", winner=Camp.GOOD_THIEVES)
        others = [s for s in state.seats if s.original_role is not Role.BAD_THIEF]
        dead = sum(1 for s in others if not s.alive)
        if bad and dead * 2 >= len(others):
            return WinClause(reason="win.half_dead", winner=Camp.BAD_THIEVES)
        return None

    def seat_score(self, state: GameState, seat: SeatState, winner: Camp) -> int:
        """The winning side's members win, the others lose; a draw is 5 for all."""
        if winner is Camp.DRAW:
            return 5
        won, lost = self.win_points[seat.original_role]
        return won if SIDES[seat.original_role] is winner else lost


def _known_to_police(state: GameState) -> set[Seat]:
    """Players the police team has checked or been told of."""
    return {
        c.target
        for entry in state.history
        if isinstance(entry, NightRecord)
        for c in entry.checks
        if c.team is Team.POLICE
    }
