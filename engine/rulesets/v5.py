"""`v5` — 5.0 双身份 (上海版, seed 004 §5.0); the specification is docs/rulesets/v5.md.

Every player holds two cards (牌位): each card is a seat of its own that acts, is targeted and
dies alone; a player is in the game while one of their cards is, and votes with as many votes as
living cards. Cards: a butterfly (its hugged card cannot be killed and cannot act; killed, it
takes that card along), killers who each kill a card, doctors who each save a card, police who
each check a card (and see the mole among them as police), the mole (a killers' card posing as
police, who asks whether a card is a secret police), two secret police with one kill each
(the killers cannot kill them before), civilians. Nobody holds both a killer and a police.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import ClassVar

from engine.model import Camp, CheckResult, Power, Role, Seat, Team
from engine.rulesets.base import (
    Aftermath,
    Causes,
    Composition,
    LastWordsPolicy,
    Ruleset,
    WinClause,
    counts,
    sides_out,
)
from engine.state import Action, GameState, SeatState

KILLERS_SIDE = frozenset({Role.KILLER, Role.MOLE})
POLICE_SIDE = frozenset({Role.POLICE, Role.SECRET_POLICE})


class V5(Ruleset):
    """5.0 双身份 (上海版): two cards per player."""

    id = "v5"
    name_zh = "5.0 双身份版"
    min_players = 7
    max_players = 16
    cards_per_player = 2
    third_tie = "none"
    one_shot = frozenset({Power.EXECUTE})
    attack_powers = frozenset({Power.KILL, Power.EXECUTE})
    self_target_forbidden = frozenset({Power.CHECK, Power.HUG, Power.KILL, Power.EXECUTE})
    role_powers: ClassVar[Mapping[Role, tuple[Power, ...]]] = {
        Role.BUTTERFLY: (Power.HUG,),
        Role.KILLER: (Power.KILL,),
        Role.DOCTOR: (Power.SAVE,),
        Role.POLICE: (Power.CHECK,),
        Role.MOLE: (Power.CHECK,),
        Role.SECRET_POLICE: (Power.EXECUTE,),
    }
    scores: ClassVar[Mapping[Role, tuple[int, int, int]]] = {}
    side_scores: ClassVar[Mapping[str, tuple[int, int, int]]] = {
        "killers": (-10, 30, 5),
        "special": (30, -10, 5),
        "civilian": (20, -5, 5),
    }
    """A player's points by side (good wins / killers win / draw), on their first card."""

    def compositions(self, players: int) -> Sequence[Composition]:
        """Two cards a player: a butterfly, the mole, two secret police; police, killers and
        doctors k each, k = (players − 3) // 3; the rest civilians."""
        k = (players - 3) // 3
        return [
            counts(
                butterfly=1, mole=1, secret_police=2, police=k, killer=k, doctor=k,
                civilian=2 * players - 4 - 3 * k,
            )
        ]  # fmt: skip

    def deal_allowed(self, hands: Sequence[tuple[Role, ...]]) -> bool:
        """Nobody holds both a killer and a police ("该次发牌作废，重新来过")."""
        return not any(Role.KILLER in hand and Role.POLICE in hand for hand in hands)

    def last_words(self, players: int, initial: Counter[Role]) -> LastWordsPolicy:
        """Every player who leaves the game (their last card)."""
        return LastWordsPolicy(kind="all")

    # -- who knows whom ------------------------------------------------------------------------
    def team_of(self, seat: SeatState) -> Team | None:
        """The killers' cards share a thread; the police open their eyes but may not talk."""
        return Team.KILLERS if seat.role is Role.KILLER else None

    def team_power(self, power: Power) -> Team | None:
        """Every card acts alone: each killer card kills, each police card checks."""
        return None

    def knows_role(self, viewer: SeatState, other: SeatState) -> bool:
        """Killers see killers and the mole; the police see the police and the mole (as one
        of them); the mole sees the killers and the police."""
        seen = {
            Role.KILLER: (Role.KILLER, Role.MOLE),
            Role.POLICE: (Role.POLICE, Role.MOLE),
            Role.MOLE: (Role.KILLER, Role.POLICE),
        }.get(viewer.role, ())
        return other.role in seen or super().knows_role(viewer, other)

    def seen_role(self, viewer: SeatState, other: SeatState) -> Role | None:
        """The police see the mole as a police."""
        if viewer.role is Role.POLICE and other.role is Role.MOLE and viewer.player != other.player:
            return Role.POLICE
        return super().seen_role(viewer, other)

    # -- night ---------------------------------------------------------------------------------
    def actions_in_effect(self, state: GameState, actions: Sequence[Action]) -> list[Action]:
        """The hugged card cannot act, and nothing kills it."""
        hug = next((a for a in actions if a.power is Power.HUG), None)
        if hug is None:
            return list(actions)
        hugged = hug.target
        return [
            replace(a, void=True)
            if a is not hug
            and (hugged in a.actors or (a.target == hugged and a.power in self.attack_powers))
            else a
            for a in actions
        ]

    def attack_victims(
        self, state: GameState, power: Power, actors: tuple[Seat, ...], target: SeatState
    ) -> tuple[Seat, ...]:
        """The killers cannot kill a secret police before it has used its kill."""
        if power is Power.KILL and target.role is Role.SECRET_POLICE and not target.spent:
            return ()
        return super().attack_victims(state, power, actors, target)

    def on_leaving(
        self, state: GameState, leaving: Mapping[Seat, Causes], tonight: Sequence[Action]
    ) -> Aftermath:
        """The butterfly killed takes the card it hugs tonight along."""
        hug = next((a for a in tonight if a.power is Power.HUG and not a.void), None)
        if hug is not None and hug.target is not None and hug.actors[0] in leaving:
            return Aftermath(leave=(hug.target,))
        return Aftermath()

    def answer(self, state: GameState, checker: SeatState, target: SeatState) -> CheckResult:
        """A police: killer (the mole too) or not; the mole: secret police or not."""
        if checker.role is Role.MOLE:
            if target.role is Role.SECRET_POLICE:
                return CheckResult.SECRET_POLICE
            return CheckResult.OTHER
        return CheckResult.KILLER if target.role in KILLERS_SIDE else CheckResult.GOOD

    # -- day -----------------------------------------------------------------------------------
    def vote_weight(self, state: GameState, voter: SeatState) -> int:
        """One vote per living card of the player."""
        return sum(1 for s in state.seats_of(voter.player) if state.seat(s).alive)

    # -- end -----------------------------------------------------------------------------------
    def win(self, state: GameState) -> WinClause | None:
        """Killers and mole out with the police and secret police → draw; killers and mole
        out → good; police and secret police out → killers."""
        return sides_out(
            state, KILLERS_SIDE, POLICE_SIDE,
            killers_out="win.killers_and_mole_out", good_out="win.police_and_secret_police_out",
        )  # fmt: skip

    def side(self, state: GameState, seat: SeatState) -> str:
        """A player's side: the killers' if one of their cards is a killer or the mole; else
        `special` for a special card, `civilian` for two civilians."""
        cards = [state.seat(s).original_role for s in state.seats_of(seat.player)]
        if any(role in KILLERS_SIDE for role in cards):
            return "killers"
        return "civilian" if all(role is Role.CIVILIAN for role in cards) else "special"

    def player_camp(self, state: GameState, player: str) -> Camp | None:
        """A player holding a killer or the mole plays for the killers, anyone else for the
        good (docs/rulesets/v5.md, Scores)."""
        seats = state.seats_of(player)
        if not seats:
            return None
        return Camp.KILLERS if self.side(state, state.seat(seats[0])) == "killers" else Camp.GOOD

    def seat_score(self, state: GameState, seat: SeatState, winner: Camp) -> int:
        """A player scores once, by side, on their first card."""
        if state.seats_of(seat.player)[0] != seat.seat:
            return 0
        good, killers, draw = self.side_scores[self.side(state, seat)]
        return {Camp.GOOD: good, Camp.KILLERS: killers, Camp.DRAW: draw}[winner]
