"""`v2` — 2.0 标准/警匪 (seeds 002 and 004 §2.0): police and killers, nothing else."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from engine.model import Camp, Role
from engine.rulesets.base import (
    V3_SCORES,
    Composition,
    LastWordsPolicy,
    Ruleset,
    WinClause,
    all_out,
    counts,
)
from engine.state import GameState

KILLERS = frozenset({Role.KILLER})
POLICE = frozenset({Role.POLICE})
CIVILIANS = frozenset({Role.CIVILIAN})


class V2(Ruleset):
    """Police and killers; last words for the first N to leave, N = the number of police."""

    id = "v2"
    name_zh = "2.0 标准版"
    min_players = 8
    max_players = 16
    scores = V3_SCORES

    def compositions(self, players: int) -> Sequence[Composition]:
        """8–10: 2/2 · 11–14: 3/3 · 15–16: 4/4, the rest civilians."""
        side = 2 if players <= 10 else 3 if players <= 14 else 4
        return [counts(police=side, killer=side, civilian=players - 2 * side)]

    def last_words(self, players: int, initial: Counter[Role]) -> LastWordsPolicy:
        """The first N players to leave, N = the number of police."""
        return LastWordsPolicy(kind="first_n", n=initial[Role.POLICE])

    def win(self, state: GameState) -> WinClause | None:
        """Killers out → good; police out → killers; civilians out → draw."""
        if all_out(state, KILLERS):
            return WinClause(reason="win.killers_out", winner=Camp.GOOD)
        if all_out(state, POLICE):
            return WinClause(reason="win.police_out", winner=Camp.KILLERS)
        if all_out(state, CIVILIANS):
            return WinClause(reason="win.civilians_out_draw", winner=Camp.DRAW)
        return None
