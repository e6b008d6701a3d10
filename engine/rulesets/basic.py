"""`basic` — 杀人游戏基础规则 (seed 003, first part).

Police and killers from 6 players, two compositions at 7, 10 and 14; police may not check a
police member; a killer may confess (认匪) by day; wins need a civilian alive; a third tie under
`revote` means nobody leaves (and the tied players may vote in the third window).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from engine.model import Camp, Power, Role
from engine.rulesets.base import (
    V3_SCORES,
    Composition,
    LastWordsPolicy,
    Ruleset,
    WinClause,
    all_out,
    any_alive,
    counts,
)
from engine.state import GameState, SeatState

KILLERS = frozenset({Role.KILLER})
POLICE = frozenset({Role.POLICE})
CIVILIANS = frozenset({Role.CIVILIAN})

# players → (police = killers) options, from the seed's table (the judge not counted).
SIDES: dict[int, tuple[int, ...]] = {
    6: (1,), 7: (1, 2), 8: (2,), 9: (2,), 10: (2, 3), 11: (3,), 12: (3,), 13: (3,),
    14: (3, 4), 15: (4,), 16: (4,),
}  # fmt: skip


class Basic(Ruleset):
    """The basic game: police, killers, civilians; 认匪 by day."""

    id = "basic"
    name_zh = "基础规则"
    min_players = 6
    max_players = 16
    third_tie = "none"
    tied_vote_in_third_window = True
    scores = V3_SCORES

    def compositions(self, players: int) -> Sequence[Composition]:
        """The seed's table; where it offers two, the first is the default."""
        return [
            counts(police=side, killer=side, civilian=players - 2 * side) for side in SIDES[players]
        ]

    def last_words(self, players: int, initial: Counter[Role]) -> LastWordsPolicy:
        """As many last words as there were killers at the start."""
        return LastWordsPolicy(kind="first_n", n=initial[Role.KILLER])

    def day_powers(self, state: GameState, seat: SeatState) -> tuple[Power, ...]:
        """A killer may confess (认匪) by day."""
        return (Power.CONFESS,) if seat.role is Role.KILLER else ()

    def target_error(
        self, state: GameState, actor: SeatState, power: Power, target: SeatState
    ) -> str | None:
        """Police may not check a police member (themselves included)."""
        if power is Power.CHECK and target.role is Role.POLICE:
            return "target.police_check_police"
        return super().target_error(state, actor, power, target)

    def win(self, state: GameState) -> WinClause | None:
        """Killers out with a civilian alive → good; police out with a civilian alive → killers;
        civilians out → draw."""
        civilians = any_alive(state, CIVILIANS)
        if all_out(state, KILLERS) and civilians:
            return WinClause(reason="win.killers_out", winner=Camp.GOOD)
        if all_out(state, POLICE) and civilians:
            return WinClause(reason="win.police_out", winner=Camp.KILLERS)
        if not civilians:
            return WinClause(reason="win.civilians_out_draw", winner=Camp.DRAW)
        return None
