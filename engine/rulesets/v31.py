"""`v31` — 3.1 特警 (seed 004 §3.1); the full specification is docs/rulesets/v31.md.

Police, a special police, a doctor, killers and a secret killer. Both specials hold one bullet
(`shoot`): the special police's kills only a killer or the secret killer and makes it a civilian;
the secret killer's kills only the special police and makes it a killer. The doctor saves from
every attack; consecutive needles kill everyone but the doctor. The police act before the two
shooters, so a check sees the state at the start of the night.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import ClassVar

from engine.model import Camp, PhaseId, PhaseKind, Power, Role, Seat
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
POLICE_SIDE = frozenset({Role.POLICE, Role.SPECIAL_POLICE, Role.DOCTOR})
CIVILIANS = frozenset({Role.CIVILIAN})


class V31(Ruleset):
    """3.1 特警版: 1–2 police, a special police, a doctor, 2–3 killers, a secret killer."""

    id = "v31"
    name_zh = "3.1 特警版"
    min_players = 10
    max_players = 16
    needles = "consecutive"
    check_after_actions = False
    scores: ClassVar[Mapping[Role, tuple[int, int, int]]] = {
        **V3_SCORES,
        Role.SPECIAL_POLICE: (30, -10, 5),
    }

    def compositions(self, players: int) -> Sequence[Composition]:
        """10–13: 1 police, 2 killers · 14–16: 2/3; plus a special police, a doctor and a
        secret killer."""
        police, killers = (1, 2) if players <= 13 else (2, 3)
        rest = players - police - killers - 3
        return [
            counts(
                police=police,
                special_police=1,
                doctor=1,
                killer=killers,
                secret_killer=1,
                civilian=rest,
            )
        ]

    def last_words(self, players: int, initial: Counter[Role]) -> LastWordsPolicy:
        """Until night 2 (10–13) or day 2 (14–16); none when two or more leave at once."""
        until = PhaseId(kind=PhaseKind.NIGHT if players <= 13 else PhaseKind.DAY, number=2)
        return LastWordsPolicy(kind="until", until=until, not_if_multiple=True)

    def kill_immune(self, seat: SeatState) -> bool:
        """The killers' kill never harms the secret killer, nor the special police before it
        has fired (judged at the start of the night)."""
        return seat.original_role is Role.SECRET_KILLER or seat.role is Role.SPECIAL_POLICE

    def attack_victims(
        self, state: GameState, power: Power, actors: tuple[Seat, ...], target: SeatState
    ) -> tuple[Seat, ...]:
        """The special police's bullet kills a killer or the secret killer; the secret killer's
        kills only the special police; any other shot has no effect."""
        if power is Power.SHOOT:
            shooter = state.seat(actors[0]).role
            hits = (
                (Role.KILLER, Role.SECRET_KILLER)
                if shooter is Role.SPECIAL_POLICE
                else (Role.SPECIAL_POLICE,)
            )
            return (target.seat,) if target.role in hits else ()
        return super().attack_victims(state, power, actors, target)

    def role_after_spending(self, seat: SeatState, power: Power) -> Role | None:
        """A fired special police is a civilian; a fired secret killer is a killer."""
        if power is Power.SHOOT:
            return Role.CIVILIAN if seat.role is Role.SPECIAL_POLICE else Role.KILLER
        return None

    def needle_kills(self, seat: SeatState, night: int) -> bool:
        """Needles on two consecutive nights kill, except the doctor (医生自己除外)."""
        return seat.role is not Role.DOCTOR and super().needle_kills(seat, night)

    def win(self, state: GameState) -> WinClause | None:
        """Killers and the police side out together → draw; killers (an unfired secret killer
        not counted) out → good; police, special police and doctor out → killers; civilians
        (a fired special police included) out → killers."""
        if clause := sides_out(state, KILLERS, POLICE_SIDE, good_out="win.police_side_out"):
            return clause
        if all_out(state, CIVILIANS):
            return WinClause(reason="win.civilians_out", winner=Camp.KILLERS)
        return None
