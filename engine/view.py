"""`view_for(state, seat)`: everything one player may know — and nothing more.

The shell renders only views (and effects). A seat sees: its own role and powers, its teammates
(killers know killers, police know police, as the ruleset says), its own and its team's
submissions tonight, its team's check answers, and everything public: who is in, who voted whom
after each lock, what the ruleset reveals at death, and after the end every role and the seed.
`view_for(state, None)` is the public view.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from engine.model import CheckResult, Instant, PhaseKind, Power, Role, Seat
from engine.rulesets import rules_for
from engine.speech import silenced
from engine.state import DayRecord, GameState, LastActRecord, NightRecord


@dataclass(frozen=True, kw_only=True, slots=True)
class SeatInfo:
    """What a viewer knows of one seat."""

    seat: Seat
    player: str
    alive: bool
    role: Role | None
    """Known to this viewer (own seat, teammate or someone the ruleset lets this seat
    know, revealed, or the game is over), else None."""
    public: Role | None = None
    """The identity everyone knows of this seat, where the ruleset has one (无间道)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class PlayerView:
    """One viewer's knowledge of the game."""

    viewer: Seat | None
    ruleset: str
    commitment: str
    phase: str | None
    phase_kind: PhaseKind | None
    deadline: Instant | None
    paused: bool
    seats: tuple[SeatInfo, ...]
    voted: tuple[Seat, ...]
    """Who has posted a valid vote in the open window (public: vote posts are public)."""
    silenced: tuple[Seat, ...] = ()
    """Who may not speak in the discussion now (森林老人's silence, `engine.speech.silenced`;
    public, announced with the night's results)."""
    role: Role | None = None
    original_role: Role | None = None
    powers: tuple[Power, ...] = ()
    teammates: tuple[Seat, ...] = ()
    submissions: tuple[tuple[Seat, Power, Seat | None], ...] = ()
    """Own and teammates' current submissions tonight: (seat, power, target or None for a pass)."""
    checks: tuple[tuple[int, Seat, CheckResult], ...] = ()
    """(night, target, answer) for every check this viewer's team made."""
    last_words_due: bool = False
    over: bool = False
    winner: str | None = None
    seed: str | None = None


def view_for(state: GameState, seat: Seat | None) -> PlayerView:
    """What `seat` (None: the public) may know now."""
    rules = rules_for(state)
    known: dict[Seat, Role] = {}
    for entry in state.history:
        if isinstance(entry, NightRecord | DayRecord | LastActRecord):
            for s, shown in entry.revealed:
                if shown in Role.__members__.values():
                    known[s] = Role(shown)
    if state.over:
        known.update({s.seat: s.original_role for s in state.seats})
    me = state.seat(seat) if seat is not None else None
    team = rules.team_of(me) if me else None
    mates: tuple[Seat, ...] = ()
    if me is not None:
        known[me.seat] = me.role
        if team is not None:
            mates = tuple(
                s.seat for s in state.seats if s.seat != me.seat and rules.team_of(s) == team
            )
        for other in state.seats:
            seen = rules.seen_role(me, other) if other.seat != me.seat else None
            if seen is not None:
                known[other.seat] = seen
    window = state.window
    voted = tuple(
        sorted({p.seat for p in state.posts if p.void_reason is None and p.seat is not None})
    )
    base = PlayerView(
        viewer=seat,
        ruleset=state.ruleset,
        commitment=state.commitment,
        phase=window.phase.label() if window else None,
        phase_kind=window.kind if window else (PhaseKind.ENDED if state.over else None),
        deadline=state.deadline,
        paused=state.paused,
        seats=tuple(
            SeatInfo(
                seat=s.seat,
                player=s.player,
                alive=s.alive,
                role=known.get(s.seat),
                public=rules.public_role(s),
            )
            for s in state.seats
        ),
        voted=voted,
        silenced=silenced(state),
        over=state.over,
        winner=state.result.winner.value if state.result else None,
        seed=state.seed if state.over else None,
    )
    if me is None:
        return base
    group = {me.seat, *mates}
    subs: dict[tuple[Seat, Power], Seat | None] = {}
    shared = rules.team_powers(team) if team is not None else frozenset()
    for sub in state.submissions:
        if sub.seat == me.seat or (sub.seat in group and sub.power in shared):
            subs[(sub.seat, sub.power)] = sub.target
    checks = tuple(
        (entry.number, c.target, c.result)
        for entry in state.history
        if isinstance(entry, NightRecord)
        for c in entry.checks
        if me.seat in c.by or (team is not None and team == c.team)
    )
    if me.alive:
        powers = rules.night_powers(state, me) + rules.day_powers(state, me)
    else:  # a power on death, until the next lock
        powers = tuple(p for s, p in state.last_acts_open if s == me.seat)
    return replace(
        base,
        role=me.role,
        original_role=me.original_role,
        powers=powers,
        teammates=mates,
        submissions=tuple((s, p, t) for (s, p), t in sorted(subs.items())),
        checks=checks,
        last_words_due=me.seat in state.last_words_open,
    )
