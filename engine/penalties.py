"""Moderators' penalties as data: a team's or a seat's night power does not act on a given night.

A ruleset penalty such as 4.0 独杀's 诈尸 (a dead player speaks: the team loses its power for one
night) is a `Suspension` in the state, made by the `Penalize` command. Nothing here names a
ruleset: a suspended power is refused when submitted, left out of the night's menu and of the
reminders, exactly as if the seat did not hold it that night.
"""

from __future__ import annotations

from engine.errors import ModeratorError, PhaseError
from engine.model import Power, Seat, Team
from engine.rulesets import Ruleset
from engine.state import GameState, SeatState, Suspension


def next_night(state: GameState) -> int:
    """The night a penalty given now applies to: the next night window to open."""
    if state.over:
        raise PhaseError("phase.game_over")
    if state.window is None:
        raise PhaseError("phase.no_window")
    return state.window.number + 1  # night n → night n+1; day d → night d+1


def suspension_for(
    state: GameState, rules: Ruleset, seat: SeatState, power: Power, night: int
) -> Suspension | None:
    """The penalty that stops `seat` using `power` on `night`, if any."""
    team = rules.team_of(seat)
    for s in state.suspensions:
        if s.night != night or (s.power is not None and s.power is not power):
            continue
        if s.seat == seat.seat or (s.team is not None and s.team == team):
            return s
    return None


def usable_night_powers(state: GameState, rules: Ruleset, seat: SeatState) -> tuple[Power, ...]:
    """The night powers a seat may use in the open night window (penalties taken out)."""
    if not seat.alive:
        return ()
    night = state.window.number if state.window else 0
    return tuple(
        p
        for p in rules.night_powers(state, seat)
        if suspension_for(state, rules, seat, p, night) is None
    )


def check_penalty(
    state: GameState, rules: Ruleset, seat: Seat | None, team: Team | None, power: Power | None
) -> None:
    """Refuse a penalty that names no one, both a team and a seat, a seat not in play, or a
    team without the power it names (or without any night power) in this ruleset."""
    if (seat is None) == (team is None):
        raise ModeratorError("mod.penalty_target")
    if team is not None:
        # Which powers a team has is in the rules, which everyone knows: a penalty that could
        # stop nothing is refused, naming the team's powers, instead of doing nothing unseen.
        held = rules.team_night_powers(team)
        if not held:
            raise ModeratorError("mod.penalty_team_no_powers", team=team.value)
        if power is not None and power not in held:
            raise ModeratorError(
                "mod.penalty_team_lacks_power",
                team=team.value,
                power=power.value,
                powers=",".join(p.value for p in Power if p in held),
            )
    if seat is not None:
        # No check of the seat's powers, on purpose: which powers a seat holds is its hidden
        # role, and a refusal ("seat 5 has no kill") would tell it to whoever gives the penalty.
        # A seat penalty is taken and announced the same whether or not the seat holds the
        # power (docs/moderators.md); on a seat without it, it stops nothing.
        if not 1 <= seat <= len(state.seats):
            raise ModeratorError("mod.no_such_seat", seat=seat)
        if not state.seat(seat).alive:
            raise ModeratorError("mod.seat_out_of_game", seat=seat)
