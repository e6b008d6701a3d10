"""Who still has something to do in the open window: for `/mod pending` and the reminders.

Only *who*, never *what*: a seat is pending for a power it has not used (a team power is done
once any member of the team has submitted), for a vote it has not posted, or for a pick it has
not made. Penalties (`engine.penalties`) are taken out: a suspended power is nothing to do.
`powers_owed` says which powers, for a reminder to the card's own holder only (5.0 双身份: a
player with two cards is told which card still owes what).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from engine.model import PhaseKind, Power, Seat
from engine.penalties import usable_night_powers
from engine.rulesets import rules_for
from engine.state import GameState


@dataclass(frozen=True, kw_only=True, slots=True)
class Pending:
    """Seats that have not acted yet in the open window."""

    window: str | None
    """A stable name of the open window (`night-2`, `day-1`, `day-1-r1`), None if none is open."""
    powers: tuple[Seat, ...] = ()
    votes: tuple[Seat, ...] = ()
    choice: Seat | None = None
    waits_for: Literal["powers", "votes", "choice"] | None = None
    """What the window waits for (None: nothing, as in the warm-up or once the game is over); a
    last act held open, by day too, waits for a power, not votes."""

    def seats(self) -> tuple[Seat, ...]:
        """Every pending seat, in seat order."""
        found = {*self.powers, *self.votes}
        if self.choice is not None:
            found.add(self.choice)
        return tuple(sorted(found))


def window_key(state: GameState) -> str | None:
    """The open window's stable name (a reminder is sent once per window)."""
    window = state.window
    if window is None or state.over:
        return None
    key = f"{window.kind.value}-{window.number}"
    if window.last_act:
        return f"{key}-last"
    return f"{key}-r{window.revote}" if window.revote else key


def pending(state: GameState) -> Pending:
    """Who has not yet submitted a power, voted, or picked in the open window."""
    key = window_key(state)
    window = state.window
    if key is None or window is None:
        return Pending(window=None)
    if window.last_act or window.kind is PhaseKind.NIGHT:
        return Pending(window=key, powers=tuple(sorted(powers_owed(state))), waits_for="powers")
    if window.kind is PhaseKind.WARMUP:  # nobody owes anything in the warm-up
        return Pending(window=key)
    if window.chooser is not None:
        chooser = None if state.choice is not None else window.chooser
        return Pending(window=key, choice=chooser, waits_for="choice")
    voted = {
        state.seat(p.seat).player
        for p in state.posts
        if p.void_reason is None and p.seat is not None
    }
    barred = {state.seat(s).player for s in window.barred_voters}  # tied on any of their cards
    voters = tuple(  # one vote a player (5.0: however many cards), under their seat in play
        s
        for s in state.alive()
        if state.seat(s).player not in barred
        and state.seat(s).player not in voted
        and state.seat_of(state.seat(s).player) == s
    )
    return Pending(window=key, votes=voters, waits_for="votes")


def powers_owed(state: GameState) -> dict[Seat, tuple[Power, ...]]:
    """Each seat pending for a power in the open window (night, or a last act), with the powers
    it still owes, in the order it holds them: for that seat's own holder only (never told of
    another's)."""
    window = state.window
    if window_key(state) is None or window is None:
        return {}
    owed: dict[Seat, list[Power]] = {}
    if window.last_act:
        for card, power in state.last_acts_open:
            owed.setdefault(card, []).append(power)
        return {s: tuple(p) for s, p in owed.items()}
    if window.kind is not PhaseKind.NIGHT:
        return {}
    rules = rules_for(state)
    submitted = state.submissions.latest().keys()  # each (seat, power) once, however often
    for seat in state.seats:
        for power in usable_night_powers(state, rules, seat):
            team = rules.team_of(seat)
            if team is not None and power in rules.team_powers(team):
                shared = rules.team_powers(team)
                members = rules.team_members(state, team)
                done = any((m, p) in submitted for m in members for p in shared)
            else:
                done = (seat.seat, power) in submitted
            if not done:
                owed.setdefault(seat.seat, []).append(power)
    return {s: tuple(p) for s, p in owed.items()}
