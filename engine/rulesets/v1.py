"""`v1` — 1.0 简化 and `v1_inspector` — 1.0 检查官 (seed 004 §1.x); specifications in
docs/rulesets/v1.md and docs/rulesets/v1_inspector.md.

Killers and civilians (水民) only; the killers win when few players are left and a killer is
among them. Every player who leaves is shown by camp and gets last words. 1.0 简化's tie rule
(face-to-face): one run-off in which the tied may not vote, then last night's victim picks.
1.0 检查官 adds an inspector with one veto (`veto`, by day) of the vote's elimination.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import ClassVar

from engine.model import Camp, Power, Reveal, Role
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
from engine.state import GameState

KILLERS = frozenset({Role.KILLER})


class V1(Ruleset):
    """1.0 简化版: killers and civilians; the killers win at three players left."""

    id = "v1"
    name_zh = "1.0 简化版"
    min_players = 7
    max_players = 16
    reveal = Reveal.CAMP
    third_tie = "none"
    tied_vote_in_second_window = False
    scores = V3_SCORES
    killers_win_at: ClassVar[int] = 3
    """The killers win when this many players or fewer are left, a killer among them."""
    killers_win_reason: ClassVar[str] = "win.three_left"

    def compositions(self, players: int) -> Sequence[Composition]:
        """7–10 players: 1 killer · 11–14: 2 · 15–16: 3 (the seed's 7/11/15); the rest civilians."""
        killers = 1 if players <= 10 else 2 if players <= 14 else 3
        return [counts(killer=killers, civilian=players - killers)]

    def last_words(self, players: int, initial: Counter[Role]) -> LastWordsPolicy:
        """Every player who leaves."""
        return LastWordsPolicy(kind="all")

    def win(self, state: GameState) -> WinClause | None:
        """Killers out → good; few players left with a killer among them → killers."""
        if all_out(state, KILLERS):
            return WinClause(reason="win.killers_out", winner=Camp.GOOD)
        if len(state.alive()) <= self.killers_win_at and any_alive(state, KILLERS):
            return WinClause(reason=self.killers_win_reason, winner=Camp.KILLERS)
        return None


class V1Inspector(V1):
    """1.0 检查官版 (the forum ruleset): 16 players, 3 killers and an inspector with one veto."""

    id = "v1_inspector"
    name_zh = "1.0 检查官版"
    min_players = 16
    max_players = 16
    tied_vote_in_second_window = True
    killers_win_at = 4
    killers_win_reason = "win.four_left"
    scores: ClassVar[Mapping[Role, tuple[int, int, int]]] = {
        **V3_SCORES,
        Role.INSPECTOR: V3_SCORES[Role.CIVILIAN],
    }
    one_shot = frozenset({Power.VETO})

    def compositions(self, players: int) -> Sequence[Composition]:
        """3 killers, 1 inspector, 12 civilians."""
        return [counts(killer=3, inspector=1, civilian=players - 4)]

    def last_words(self, players: int, initial: Counter[Role]) -> LastWordsPolicy:
        """Every player who leaves, until the next death list is published."""
        return LastWordsPolicy(kind="all", window="next_death")
