"""`view_for(state, seat)`: everything one player may know — and nothing more.

The shell renders only views (and effects). A seat sees: its own role and powers, its teammates
(killers know killers, police know police, as the ruleset says), its own and its team's
submissions tonight, the check answers it was told (its team's on the nights it was in the team
and in the game), and everything public: who is in, who voted whom after each lock, what
the ruleset reveals at death, and after the end every role and the seed. `view_for(state, None)`
is the public view.

What a seat knows by the rules (`PlayerView.known`) it keeps knowing for the whole game: it
learns a seat's role when the ruleset's `seen_role` shows it while both are in the game — at the
deal, or when a role turns (a secret killer who fires joins the killers, the sheriff's grief
makes the police civilians, a lone police merges) — and does not forget it when that player
leaves or its own role turns again. A seat that joins a team late meets the members in the game
then, not those already out; a seat out of the game meets nobody new. Roles shown to everyone
at death are apart from it (`SeatInfo.revealed`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from engine.model import CheckResult, Instant, PhaseKind, Power, Role, Seat
from engine.rulesets import Ruleset, rules_for
from engine.rulesets.base import CONFESS, NEEDLE, VOTE, WITH, Causes, LaterPower
from engine.speech import silenced
from engine.state import (
    DayRecord,
    GameState,
    LastActRecord,
    NightRecord,
    OverrideRecord,
)


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
    revealed: Role | None = None
    """The role shown to everyone when this seat left the game (the ruleset's reveal at death,
    a last act used), else None."""


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
    later: tuple[LaterPower, ...] = ()
    """The powers this seat's role holds later or on leaving the game (`Ruleset.later_powers`),
    while it is in the game; the rules are public, so this says only what its own role holds."""
    side: str | None = None
    """The side its role plays for where the role alone does not say it (a mine's:
    `Ruleset.side_note`), a message key under `role_side.`."""
    teammates: tuple[Seat, ...] = ()
    """The seats in this seat's team now that it knows (in the game or out of it)."""
    known: tuple[tuple[Seat, Role], ...] = ()
    """Every other seat whose role this viewer knows by the rules, with the role it knows (the
    latest it learned), in seat order: teammates and whoever else the ruleset lets it see, in the
    game or out of it, under its current role or an earlier one (see the module docstring). Not
    the roles revealed at death (`SeatInfo.revealed`) nor the end's, unless known by rule too."""
    submissions: tuple[tuple[Seat, Power, Seat | None], ...] = ()
    """Own and teammates' current submissions tonight: (seat, power, target or None for a pass)."""
    checks: tuple[tuple[int, Seat, CheckResult], ...] = ()
    """(night, target, answer) for every check answer this viewer was told: its own, and its
    team's on the nights it was a member in the game (not before it joined, nor after it left)."""
    last_words_due: bool = False
    over: bool = False
    winner: str | None = None
    seed: str | None = None


def view_for(state: GameState, seat: Seat | None) -> PlayerView:
    """What `seat` (None: the public) may know now."""
    rules = rules_for(state)
    revealed: dict[Seat, Role] = {}
    for entry in state.history:
        if isinstance(entry, NightRecord | DayRecord | LastActRecord):
            for s, shown in entry.revealed:
                if shown in Role.__members__.values():
                    revealed[s] = Role(shown)
    known = dict(revealed)
    if state.over:
        known.update({s.seat: s.original_role for s in state.seats})
    me = state.seat(seat) if seat is not None else None
    team = rules.team_of(me) if me else None
    mates: tuple[Seat, ...] = ()
    by_rule: dict[Seat, Role] = {}
    if me is not None:
        known[me.seat] = me.role
        by_rule = known_by_rule(state, rules, me.seat)
        known.update(by_rule)
        if team is not None:  # not one out of the game before this seat joined the team
            mates = tuple(
                s.seat
                for s in state.seats
                if s.seat != me.seat and rules.team_of(s) == team and s.seat in by_rule
            )
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
                revealed=revealed.get(s.seat),
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
    for (who, power), sub in state.submissions.latest().items():  # not every one made
        if who == me.seat or (who in group and power in shared):
            subs[(who, power)] = sub.target
    checks = tuple(  # as told: a team's answers go to its members in the game that night
        (entry.number, c.target, c.result)
        for entry in state.history
        if isinstance(entry, NightRecord)
        for c in entry.checks
        if me.seat in c.by
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
        later=rules.later_powers(state, me) if me.alive and not state.over else (),
        side=rules.side_note(me),
        teammates=mates,
        known=tuple(by_rule.items()),
        submissions=tuple((s, p, t) for (s, p), t in sorted(subs.items())),
        checks=checks,
        last_words_due=me.seat in state.last_words_open,
    )


Roles = Mapping[Seat, tuple[tuple[int, Role | None], ...]]
"""Each seat's roles through the game: (moment, role from then on), the first at the deal.
A moment is a place in the history: -1 the deal, i just after history entry i; None: not
known when (a turn `roles_through` could not place)."""


def known_by_rule(state: GameState, rules: Ruleset, seat: Seat) -> dict[Seat, Role]:
    """The roles `seat` has learned by the rules so far, by seat (the latest it learned of each):
    at every moment a role turns (and at the deal), whom the ruleset lets it see among the seats
    in the game then, as it then was (`Ruleset.seen_role`). Not `seat` itself."""
    roles, left = roles_through(state, rules)
    never = len(state.history) + 1  # still in the game
    me = state.seat(seat)
    out: dict[Seat, Role] = {}
    for moment in sorted({m for turns in roles.values() for m, _ in turns}):
        mine = _role_at(roles[seat], moment)
        if mine is None or left.get(seat, never) <= moment:
            continue  # out of the game: meets nobody new
        viewer = replace(me, role=mine)
        for other in state.seats:
            if other.seat == seat or left.get(other.seat, never) <= moment:
                continue
            theirs = _role_at(roles[other.seat], moment)
            if theirs is None:
                continue
            shown = rules.seen_role(viewer, replace(other, role=theirs))
            if shown is not None:
                out[other.seat] = shown
    return dict(sorted(out.items()))


def _role_at(turns: tuple[tuple[int, Role | None], ...], moment: int) -> Role | None:
    return [role for m, role in turns if m <= moment][-1]


def roles_through(state: GameState, rules: Ruleset) -> tuple[Roles, dict[Seat, int]]:
    """Each seat's roles through the game (`Roles`), and the moment each seat left (after
    history entry i: i), worked out from the history: the one-shot powers spent
    (`Ruleset.role_after_spending`) and the merges (`Ruleset.conversions`) of each night, and
    the roles a departure turns (`Ruleset.on_leaving`, basic's grief). The records keep no
    causes of departure, so a departure's turns are taken only where the roles now agree with
    them. A seat whose role now the history does not account for is known as dealt at the
    deal, as it is now from now on, and as nothing in between: nobody learns what is not sure."""
    now = len(state.history)
    roles: dict[Seat, list[tuple[int, Role | None]]] = {
        s.seat: [(-1, s.original_role)] for s in state.seats
    }
    if all(s.role is s.original_role for s in state.seats):
        return {s: tuple(t) for s, t in roles.items()}, {}  # no role has turned: the deal's
    sim = {
        s.seat: replace(s, role=s.original_role, alive=True, spent=frozenset(), wounds=0)
        for s in state.seats
    }
    left: dict[Seat, int] = {}
    for i, entry in enumerate(state.history):
        if not entry.left and not isinstance(entry, NightRecord):
            continue
        before = replace(
            state, seats=tuple(sim[s.seat] for s in state.seats), history=state.history[:i]
        )
        turned: dict[Seat, Role] = {}
        if isinstance(entry, NightRecord):
            turned.update(_night_turns(before, rules, entry))
        if entry.left and not isinstance(entry, OverrideRecord):  # a removal brings nothing about
            tonight = entry.actions if isinstance(entry, NightRecord) else ()
            after = dict(rules.on_leaving(before, _causes(entry), tonight).roles)
            if all(state.seat(s).role is role for s, role in after.items()):
                turned.update(after)
        for s, role in turned.items():
            if role is not sim[s].role:
                sim[s] = replace(sim[s], role=role)
                roles[s].append((i, role))
        for s in entry.left:
            sim[s] = replace(sim[s], alive=False)
            left.setdefault(s, i)
    for seat in state.seats:
        if sim[seat.seat].role is not seat.role:
            roles[seat.seat] = [(-1, seat.original_role), (0, None), (now, seat.role)]
        if not seat.alive:
            left.setdefault(seat.seat, 0)
    return {s: tuple(t) for s, t in roles.items()}, left


def _night_turns(before: GameState, rules: Ruleset, night: NightRecord) -> dict[Seat, Role]:
    """The roles a night's actions turned (as `engine.night.resolve_night` does): a one-shot
    power spent, then the merges of the actions that acted."""
    turned: dict[Seat, Role] = {}
    for action in night.actions:
        if action.power in rules.one_shot and action.actors:
            actor = action.actors[0]
            role = rules.role_after_spending(before.seat(actor), action.power)
            if role is not None:
                turned[actor] = role
    for action in night.actions:
        if not action.void and action.target is not None:
            target = before.seat(action.target)
            turned.update(rules.conversions(before, action.power, action.actors, target))
    return turned


def _causes(entry: NightRecord | DayRecord | LastActRecord) -> dict[Seat, Causes]:
    """Every cause each leaver may have left for (the records keep none)."""
    if isinstance(entry, DayRecord):
        return {s: frozenset({CONFESS if s == entry.confess else VOTE, WITH}) for s in entry.left}
    if isinstance(entry, LastActRecord):
        return {s: frozenset({entry.power.value, WITH}) for s in entry.left}
    return {
        s: frozenset(
            {NEEDLE, WITH} | {a.power.value for a in entry.actions if not a.void and a.target == s}
        )
        for s in entry.left
    }
