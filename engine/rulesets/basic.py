"""`basic` — 杀人游戏基础规则 (seed 003, first part), with the advanced roles of its second part
(进阶规则) as options; the specification is docs/rulesets/basic.md.

Police and killers from 6 players, two compositions at 7, 10 and 14; police may not check a
police member; a killer may confess (认匪) by day; wins need a civilian alive; a third tie under
`revote` means nobody leaves (and the tied players may vote in the third window).

The advanced roles, each a game option, replace a card of their side where the table has
enough civilians (at least 6, or at least three times the killers):
- `sniper` (狙击手, one of the killers): leaving the game (not by confessing, not by the doctor's
  needle), he may shoot one player at once (a power on death); shooting shows him and costs his
  last words; the victim has none. Win conditions then need civilians and police (or killers).
- `doctor` (医生, a civilian): treats one player a night; a player treated on two nights in a
  row without being attacked dies, without last words.
- `butterfly` (花蝴蝶, a civilian): hugs one player a night, who cannot be killed by the killers
  that night nor voted out the next day; if the butterfly leaves, that player leaves with it.
- `police_special` = `sheriff` (警长, one of the police: two lives against the killers; his death
  by the vote, the needle or the sniper with both lives makes every police and the doctor a
  civilian, and changes the win conditions) or `covert_police` (密警: the killers cannot kill
  him nor the vote remove him before he uses his one attack, which kills only a killer; then he
  is an ordinary police).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import ClassVar

from engine.errors import SetupError
from engine.model import Camp, CheckResult, PhaseId, Power, Role, Seat, Team
from engine.rulesets.base import (
    NEEDLE,
    V3_SCORES,
    VOTE,
    Aftermath,
    Causes,
    Composition,
    LastWordsPolicy,
    LaterPower,
    Ruleset,
    WinClause,
    all_out,
    any_alive,
    counts,
)
from engine.state import Action, GameState, NightRecord, SeatState

KILLERS = frozenset({Role.KILLER, Role.SNIPER})
POLICE = frozenset({Role.POLICE, Role.SHERIFF, Role.COVERT_POLICE})
CIVILIANS = frozenset({Role.CIVILIAN, Role.DOCTOR, Role.BUTTERFLY})

# players → (police = killers) options, from the seed's table (the judge not counted).
SIDES: dict[int, tuple[int, ...]] = {
    6: (1,), 7: (1, 2), 8: (2,), 9: (2,), 10: (2, 3), 11: (3,), 12: (3,), 13: (3,),
    14: (3, 4), 15: (4,), 16: (4,),
}  # fmt: skip

SHOT = Power.SHOOT.value
KILLED = Power.KILL.value
ATTACKED = Power.ATTACK.value


class Basic(Ruleset):
    """The basic game: police, killers, civilians; 认匪 by day; the advanced roles by option."""

    id = "basic"
    name_zh = "基础规则"
    min_players = 6
    max_players = 16
    third_tie = "none"
    tied_vote_in_third_window = True
    needles = "consecutive"
    scores: ClassVar[Mapping[Role, tuple[int, int, int]]] = {
        **V3_SCORES,
        Role.SNIPER: V3_SCORES[Role.KILLER],
        Role.SHERIFF: V3_SCORES[Role.POLICE],
        Role.COVERT_POLICE: V3_SCORES[Role.POLICE],
        Role.BUTTERFLY: V3_SCORES[Role.DOCTOR],
    }
    option_choices: ClassVar[Mapping[str, tuple[str, ...]]] = {
        "sniper": ("no", "yes"),
        "doctor": ("no", "yes"),
        "butterfly": ("no", "yes"),
        "police_special": ("none", "sheriff", "covert_police"),
    }
    role_powers: ClassVar[Mapping[Role, tuple[Power, ...]]] = {
        Role.KILLER: (Power.KILL,),
        Role.SNIPER: (Power.KILL,),
        Role.POLICE: (Power.CHECK,),
        Role.SHERIFF: (Power.CHECK,),
        Role.DOCTOR: (Power.SAVE,),
        Role.BUTTERFLY: (Power.HUG,),
        Role.COVERT_POLICE: (Power.ATTACK,),
    }
    one_shot = frozenset({Power.ATTACK})
    attack_powers = frozenset({Power.KILL, Power.ATTACK})
    self_target_forbidden = frozenset({Power.CHECK, Power.HUG, Power.ATTACK})

    # -- setup ---------------------------------------------------------------------------------
    def specials(self) -> Counter[Role]:
        """The advanced roles chosen for this game."""
        chosen: Counter[Role] = Counter()
        if self.option("sniper") == "yes":
            chosen[Role.SNIPER] = 1
        if self.option("doctor") == "yes":
            chosen[Role.DOCTOR] = 1
        if self.option("butterfly") == "yes":
            chosen[Role.BUTTERFLY] = 1
        special = self.option("police_special")
        if special != "none":
            chosen[Role(special)] = 1
        return chosen

    def compositions(self, players: int) -> Sequence[Composition]:
        """The seed's table; where it offers two, the first is the default. Each advanced role
        takes the place of a card of its side, where the table has at least 6 civilians or at
        least three times as many civilians as killers."""
        extra = self.specials()
        tables = []
        for side in SIDES[players]:
            civilians = players - 2 * side
            if extra and not (civilians >= 6 or civilians >= 3 * side):
                continue
            police = extra[Role.SHERIFF] + extra[Role.COVERT_POLICE]
            tables.append(
                counts(
                    police=side - police,
                    sheriff=extra[Role.SHERIFF],
                    covert_police=extra[Role.COVERT_POLICE],
                    killer=side - extra[Role.SNIPER],
                    sniper=extra[Role.SNIPER],
                    civilian=civilians - extra[Role.DOCTOR] - extra[Role.BUTTERFLY],
                    doctor=extra[Role.DOCTOR],
                    butterfly=extra[Role.BUTTERFLY],
                )
            )
        if not tables:
            raise SetupError("setup.advanced_roles", ruleset=self.id, players=players)
        return tables

    def last_words(self, players: int, initial: Counter[Role]) -> LastWordsPolicy:
        """As many last words as there were killers at the start (the sniper is one)."""
        return LastWordsPolicy(kind="first_n", n=initial[Role.KILLER] + initial[Role.SNIPER])

    # -- powers --------------------------------------------------------------------------------
    def team_of(self, seat: SeatState) -> Team | None:
        """The sniper kills with the killers; the sheriff checks with the police; the covert
        police is alone until he attacks (then a police)."""
        if seat.role in (Role.KILLER, Role.SNIPER):
            return Team.KILLERS
        if seat.role in (Role.POLICE, Role.SHERIFF):
            return Team.POLICE
        return None

    def day_powers(self, state: GameState, seat: SeatState) -> tuple[Power, ...]:
        """A killer (the sniper too) may confess (认匪) by day."""
        return (Power.CONFESS,) if seat.role in KILLERS else ()

    def death_powers(self, state: GameState, seat: SeatState, causes: Causes) -> tuple[Power, ...]:
        """The sniper shoots once on leaving, except by confessing or by the doctor's needle."""
        if seat.role is Role.SNIPER and not causes & {"confess", NEEDLE}:
            return (Power.SHOOT,)
        return ()

    def later_powers(self, state: GameState, seat: SeatState) -> tuple[LaterPower, ...]:
        """The sniper's shot on leaving; and what the covert police holds after his attack."""
        later = super().later_powers(state, seat)
        if seat.role is Role.SNIPER:
            shot = LaterPower(power=Power.SHOOT, when="on_death_unless_confess_or_needle")
            return (*later, shot)
        return later

    def target_error(
        self, state: GameState, actor: SeatState, power: Power, target: SeatState
    ) -> str | None:
        """Police may not check a police member (themselves included)."""
        if power is Power.CHECK and target.role in (Role.POLICE, Role.SHERIFF):
            return "target.police_check_police"
        return super().target_error(state, actor, power, target)

    # -- night ---------------------------------------------------------------------------------
    def actions_in_effect(self, state: GameState, actions: Sequence[Action]) -> list[Action]:
        """The killers' kill on the player the butterfly hugs tonight is void."""
        hugged = _hugged(actions)
        return [
            replace(a, void=True) if a.power is Power.KILL and a.target == hugged else a
            for a in actions
        ]

    def attack_victims(
        self, state: GameState, power: Power, actors: tuple[Seat, ...], target: SeatState
    ) -> tuple[Seat, ...]:
        """The killers cannot kill the covert police before he attacks; his attack kills only a
        killer."""
        if power is Power.KILL and target.role is Role.COVERT_POLICE:
            return ()
        if power is Power.ATTACK:
            return (target.seat,) if target.role in KILLERS else ()
        return super().attack_victims(state, power, actors, target)

    def absorbs(self, state: GameState, seat: SeatState, causes: Causes) -> bool:
        """The sheriff's first hit by the killers costs a life, not his place (two lives)."""
        return seat.role is Role.SHERIFF and seat.wounds == 0 and causes == {KILLED}

    def role_after_spending(self, seat: SeatState, power: Power) -> Role | None:
        """The covert police, once he has attacked, is an ordinary police."""
        return Role.POLICE if power is Power.ATTACK else None

    def check_answer(self, seat: SeatState) -> CheckResult:
        """Killer (the sniper too) → killer; else good."""
        return CheckResult.KILLER if seat.role in KILLERS else CheckResult.GOOD

    # -- leaving -------------------------------------------------------------------------------
    def _grief(self, seat: SeatState, causes: Causes) -> bool:
        """The sheriff's death that makes every police and the doctor a civilian."""
        if seat.role is not Role.SHERIFF:
            return False
        return bool(causes & {VOTE, NEEDLE}) or (SHOT in causes and seat.wounds == 0)

    def on_leaving(
        self, state: GameState, leaving: Mapping[Seat, Causes], tonight: Sequence[Action]
    ) -> Aftermath:
        """The butterfly takes the player it protects along; the sheriff's grief turns every
        police and the doctor into civilians."""
        along: list[Seat] = []
        roles: list[tuple[Seat, Role]] = []
        for seat, causes in leaving.items():
            who = state.seat(seat)
            if who.role is Role.BUTTERFLY:
                protected = _hugged(tonight) if tonight else _protected(state)
                if protected is not None:
                    along.append(protected)
            if self._grief(who, causes):
                roles.append((seat, Role.CIVILIAN))
                roles.extend(
                    (s.seat, Role.CIVILIAN)
                    for s in state.seats
                    if s.alive and s.seat != seat and s.role in (Role.POLICE, Role.DOCTOR)
                )
        return Aftermath(leave=tuple(along), roles=tuple(roles))

    def has_last_words(
        self, state: GameState, seat: SeatState, phase: PhaseId, causes: Causes
    ) -> bool:
        """None after the doctor's needle, the sniper's shot, or the covert police's attack."""
        return not causes & {NEEDLE, SHOT, ATTACKED}

    def shown_at_death(
        self, state: GameState, seat: SeatState, phase: PhaseId, causes: Causes
    ) -> str | None:
        """Nothing, except the sheriff whose death makes the police civilians (他必须亮牌)."""
        return Role.SHERIFF.value if self._grief(seat, causes) else None

    # -- day -----------------------------------------------------------------------------------
    def vote_leavers(
        self, state: GameState, chosen: SeatState, voters: tuple[Seat, ...]
    ) -> tuple[Seat, ...]:
        """The covert police before he attacks, and the player the butterfly hugged last night,
        cannot be voted out."""
        if chosen.role is Role.COVERT_POLICE or chosen.seat == _protected(state):
            return ()
        return super().vote_leavers(state, chosen, voters)

    # -- end -----------------------------------------------------------------------------------
    def camp_of(self, seat: SeatState) -> Camp | None:
        """The sniper plays for the killers; everyone else for the good side."""
        return Camp.KILLERS if seat.original_role in KILLERS else Camp.GOOD

    def win(self, state: GameState) -> WinClause | None:
        """The basic conditions; the sniper's version when he is in the game; the sheriff's
        after his grief made the police civilians."""
        if any(s.original_role is Role.SHERIFF and s.role is Role.CIVILIAN for s in state.seats):
            return self._win_after_grief(state)
        civilians = any_alive(state, CIVILIANS)
        killers = any_alive(state, KILLERS)
        police = any_alive(state, POLICE)
        if self.option("sniper") == "yes":
            if not killers and civilians and police:
                return WinClause(reason="win.killers_out", winner=Camp.GOOD)
            if not police and civilians and killers:
                return WinClause(reason="win.police_out", winner=Camp.KILLERS)
            if not civilians:
                return WinClause(reason="win.civilians_out_draw", winner=Camp.DRAW)
            if not killers and not police:
                return WinClause(reason="win.only_civilians_draw", winner=Camp.DRAW)
            return None
        if not killers and civilians:
            return WinClause(reason="win.killers_out", winner=Camp.GOOD)
        if not police and civilians:
            return WinClause(reason="win.police_out", winner=Camp.KILLERS)
        if not civilians:
            return WinClause(reason="win.civilians_out_draw", winner=Camp.DRAW)
        return None

    def _win_after_grief(self, state: GameState) -> WinClause | None:
        """Killers out with fewer than half the others left → draw; killers out, a civilian
        left → good; at least half the others out, a killer left → killers."""
        dealt = sum(1 for s in state.seats if s.original_role not in KILLERS)
        left = sum(1 for s in state.seats if s.alive and s.role not in KILLERS)
        killers_out = all_out(state, KILLERS)
        if killers_out and left * 2 < dealt:
            return WinClause(reason="win.killers_out_half_gone_draw", winner=Camp.DRAW)
        if killers_out and any_alive(state, CIVILIANS):
            return WinClause(reason="win.killers_out", winner=Camp.GOOD)
        if not killers_out and (dealt - left) * 2 >= dealt:
            return WinClause(reason="win.half_out", winner=Camp.KILLERS)
        return None


def _hugged(actions: Sequence[Action]) -> Seat | None:
    """The player the butterfly hugs in these actions, if any."""
    return next((a.target for a in actions if a.power is Power.HUG and not a.void), None)


def _protected(state: GameState) -> Seat | None:
    """The player the butterfly hugged in the last night resolved, while the butterfly is in
    (from that night's resolution to the next one's)."""
    last = next((e for e in reversed(state.history) if isinstance(e, NightRecord)), None)
    if last is None:
        return None
    hug = next((a for a in last.actions if a.power is Power.HUG and not a.void), None)
    if hug is None or not state.seat(hug.actors[0]).alive:
        return None
    return hug.target
