"""What a lock settles: a night, a day's vote (ties, lots, run-offs, vote groups), a victim's
choice, eliminations and vetoes, the end of a last-act window; then the win check and the next
window.

Separate from `engine.decide` because it is the rules' reckoning at a window's end, not a
command's checks; it folds its own events with `engine.evolve` to check for a win, and never
imports `engine.decide` (which calls it, and shares its helpers for results and departures).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from engine import lots
from engine.commands import Lock
from engine.deaths import settle
from engine.events import (
    DayResolved,
    Event,
    GameEnded,
    LastActsLapsed,
    NightResolved,
    SeatChange,
    WindowOpened,
)
from engine.evolve import evolve
from engine.lastwords import entitled, kept_open
from engine.model import Camp, Instant, PhaseKind, Power, Role, Seat, TiePolicy
from engine.night import counted_submissions, resolve_night
from engine.rulesets import Ruleset
from engine.rulesets.base import VOTE, Causes, VoteGroup
from engine.state import (
    DayRecord,
    GameState,
    LotDraw,
    NightRecord,
    Result,
    TieRecord,
    VotePost,
    Window,
)
from engine.votes import Tally, runoff_barred, tally
from engine.windows import following


def _resolve(state: GameState, rules: Ruleset, cmd: Lock, cutoff: Instant | None) -> list[Event]:
    window = state.window
    assert window is not None
    if window.last_act:
        return _close_last_acts(state, rules, cmd)
    if window.kind is PhaseKind.WARMUP:  # nothing to settle: the first night opens
        return [WindowOpened(window=following(window), deadline=cmd.next_deadline)]
    if window.kind is PhaseKind.NIGHT:
        return _resolve_night(state, rules, cmd, cutoff)
    if window.chooser is not None:
        return _resolve_choice(state, rules, cmd, cutoff)
    return _resolve_day(state, rules, cmd, cutoff)


def _close_last_acts(state: GameState, rules: Ruleset, cmd: Lock) -> list[Event]:
    """The end of a last-act window: unused last acts lapse; the game ends, or goes on with the
    window that was to follow."""
    window = state.window
    assert window is not None
    lapsed = LastActsLapsed()
    after = evolve(state, lapsed)
    clause = rules.win(after)
    if clause is not None:
        label = window.phase.label()
        result = _result(after, rules, clause.winner, clause.reason, label)
        return [lapsed, GameEnded(result=result)]
    return [lapsed, WindowOpened(window=following(window), deadline=cmd.next_deadline)]


def _revealed(
    state: GameState,
    rules: Ruleset,
    seats: Sequence[Seat],
    causes: Mapping[Seat, Causes] | None = None,
) -> tuple[tuple[Seat, str], ...]:
    """What the ruleset shows of players leaving now (a role or a camp), if anything."""
    assert state.window is not None
    phase = state.window.phase
    why = causes or {}
    shown = (
        (s, rules.shown_at_death(state, state.seat(s), phase, why.get(s, frozenset())))
        for s in seats
    )
    return tuple((s, value) for s, value in shown if value is not None)


def _resolve_night(
    state: GameState, rules: Ruleset, cmd: Lock, cutoff: Instant | None
) -> list[Event]:
    assert state.window is not None
    outcome = resolve_night(state, rules, cutoff)
    words, counted = entitled(state, rules, outcome.deaths, state.window.phase, outcome.causes)
    record = NightRecord(
        number=state.window.number, left=outcome.deaths, checks=outcome.checks,
        last_words=words, revealed=_revealed(state, rules, outcome.deaths, outcome.causes),
        silenced=outcome.silenced, actions=outcome.actions, virtual_out=outcome.virtual_out,
        notices=outcome.notices,
    )  # fmt: skip
    resolved = NightResolved(
        record=record, changes=outcome.changes, lots=outcome.lots, leavers_counted=counted,
        last_words_kept=kept_open(state, rules, outcome.deaths),
        last_acts=_last_acts(state, rules, outcome.causes), counters=outcome.counters,
    )  # fmt: skip
    return _after_resolution(state, rules, resolved, cmd.next_deadline, cmd.runoff_deadline)


def _after_resolution(
    state: GameState,
    rules: Ruleset,
    resolved: NightResolved | DayResolved | Sequence[NightResolved | DayResolved],
    next_deadline: Instant | None,
    last_act_deadline: Instant | None = None,
) -> list[Event]:
    """Apply a resolution (or several at once: a day's vote groups), then end the game or open
    the next window. When the game would end but a leaver may still use a power on death, a
    last-act window waits for it first."""
    assert state.window is not None
    events: list[Event] = (
        [resolved] if isinstance(resolved, NightResolved | DayResolved) else list(resolved)
    )
    after = state
    for event in events:
        after = evolve(after, event)
    clause = rules.win(after)
    if clause and after.last_acts_open:
        held = Window(kind=state.window.kind, number=state.window.number, last_act=True)
        deadline = last_act_deadline if last_act_deadline is not None else next_deadline
        events.append(WindowOpened(window=held, deadline=deadline))
        return events
    if clause:
        label = state.window.phase.label()
        events.append(GameEnded(result=_result(after, rules, clause.winner, clause.reason, label)))
        return events
    events.append(WindowOpened(window=following(state.window), deadline=next_deadline))
    return events


def _resolve_day(
    state: GameState, rules: Ruleset, cmd: Lock, cutoff: Instant | None
) -> list[Event]:
    window = state.window
    assert window is not None
    count = tally(state, state.posts, cutoff)
    groups = rules.vote_groups(state)
    if groups:
        return _resolve_day_groups(state, rules, cmd, cutoff, count, groups)
    leaders = count.leaders()
    policy = state.options.tie
    picked: Seat | None = None
    tie: TieRecord | None = None
    draws: tuple[LotDraw, ...] = ()
    then_window: Window | None = None
    ends_in_draw = False
    if len(leaders) == 1:
        picked = leaders[0]
    elif leaders:
        if policy is TiePolicy.LOTS:
            tie, draws = _lots(state, leaders, window.revote, cmd.post_id, policy)
        elif policy is TiePolicy.NONE:
            tie = TieRecord(tied=leaders, policy=policy, then="none")
        elif policy is TiePolicy.REVOTE and window.revote >= 2:
            tie = TieRecord(tied=leaders, policy=policy, then=rules.third_tie)
            ends_in_draw = rules.third_tie == "draw"
        elif policy is TiePolicy.VICTIM_CHOICE and window.revote >= 1:
            chooser = _previous_victim(state, window.number)
            if chooser is None:
                tie, draws = _lots(state, leaders, window.revote, cmd.post_id, policy)
            else:
                tie = TieRecord(tied=leaders, policy=policy, then="choice", chooser=chooser)
                then_window = Window(
                    kind=PhaseKind.DAY,
                    number=window.number,
                    revote=2,
                    candidates=leaders,
                    chooser=chooser,
                )
        else:
            tie = TieRecord(tied=leaders, policy=policy, then="revote")
            then_window = Window(
                kind=PhaseKind.DAY,
                number=window.number,
                revote=window.revote + 1,
                candidates=leaders,
                barred_voters=runoff_barred(rules, leaders, window.revote + 1),
            )
        if tie and tie.drawn is not None:
            picked = tie.drawn
    voters = tuple(sorted(v for v, t in count.votes.items() if t is not None and t == picked))
    out = _eliminate(state, rules, picked, voters, cutoff)
    left = out.left
    words, counted = entitled(state, rules, left, window.phase, out.causes)
    record = DayRecord(
        number=window.number, revote=window.revote,
        tally=tuple(sorted(count.counts.items())),
        votes=tuple(sorted(count.votes.items())),
        abstained=count.abstained, void_posts=count.void, left=left, tie=tie, last_words=words,
        revealed=_revealed(state, rules, left, out.causes), vetoed=out.vetoed,
        veto_by=out.veto_by, spared=out.spared, eliminated=out.eliminated, posts=tuple(state.posts),
    )  # fmt: skip
    resolved = DayResolved(
        record=record,
        changes=out.changes,
        lots=draws,
        leavers_counted=counted,
        last_words_kept=kept_open(state, rules, left),
        last_acts=_last_acts(state, rules, out.causes),
    )
    if ends_in_draw:
        after = evolve(state, resolved)
        return [
            resolved,
            GameEnded(
                result=_result(after, rules, Camp.DRAW, "win.three_ties", _phase_label(state))
            ),
        ]
    if then_window is not None:
        runoff = cmd.runoff_deadline if cmd.runoff_deadline is not None else cmd.next_deadline
        return [resolved, WindowOpened(window=then_window, deadline=runoff)]
    return _after_resolution(state, rules, resolved, cmd.next_deadline, cmd.runoff_deadline)


def _resolve_day_groups(
    state: GameState,
    rules: Ruleset,
    cmd: Lock,
    cutoff: Instant | None,
    count: Tally,
    groups: tuple[VoteGroup, ...],
) -> list[Event]:
    """A day holding several votes at once (无间道: each faction's own): each group's tally and
    pick, lots on a tie (nobody under `none`), all departures at once, then the win check."""
    window = state.window
    assert window is not None
    Outcome = tuple[VoteGroup, Tally, TieRecord | None, tuple[LotDraw, ...], _Elimination]
    outcomes: list[Outcome] = []
    for group in groups:
        votes = {v: t for v, t in count.votes.items() if v in group.voters}
        mine = replace(count, votes=votes)
        leaders = mine.leaders()
        picked: Seat | None = leaders[0] if len(leaders) == 1 else None
        tie: TieRecord | None = None
        draws: tuple[LotDraw, ...] = ()
        if len(leaders) > 1 and state.options.tie is TiePolicy.NONE:
            tie = TieRecord(tied=leaders, policy=state.options.tie, then="none")
        elif len(leaders) > 1:
            tie, draws = _lots(state, leaders, 0, cmd.post_id, state.options.tie, group.name)
            picked = tie.drawn
        voters = tuple(sorted(v for v, t in votes.items() if t is not None and t == picked))
        outcomes.append((group, mine, tie, draws, _eliminate(state, rules, picked, voters, cutoff)))
    causes = {s: c for *_, out in outcomes for s, c in out.causes.items()}
    left = tuple(sorted(causes))
    words, counted = entitled(state, rules, left, window.phase, causes)
    kept = kept_open(state, rules, left)
    acts: tuple[tuple[Seat, Power], ...] = ()
    events: list[NightResolved | DayResolved] = []
    for i, (group, mine, tie, draws, out) in enumerate(outcomes):
        mine_words = tuple(s for s in words if s in out.left)
        voids = tuple(
            p for p in count.void if p.seat in group.voters or (i == 0 and not _grouped(p, groups))
        )
        record = DayRecord(
            number=window.number, revote=0, tally=tuple(sorted(mine.counts.items())),
            votes=tuple(sorted(mine.votes.items())), abstained=mine.abstained, void_posts=voids,
            left=out.left, tie=tie, last_words=mine_words,
            revealed=_revealed(state, rules, out.left, out.causes), vetoed=out.vetoed,
            veto_by=out.veto_by, spared=out.spared, eliminated=out.eliminated,
            posts=tuple(state.posts) if i == 0 else (), group=group.name,
        )  # fmt: skip
        acts += _last_acts(state, rules, out.causes)
        resolved = DayResolved(
            record=record, changes=out.changes, lots=draws, leavers_counted=counted,
            last_words_kept=kept, last_acts=acts,
        )  # fmt: skip
        events.append(resolved)
        kept += mine_words
    return _after_resolution(state, rules, events, cmd.next_deadline, cmd.runoff_deadline)


def _grouped(post: VotePost, groups: tuple[VoteGroup, ...]) -> bool:
    return any(post.seat in g.voters for g in groups)


def _resolve_choice(
    state: GameState, rules: Ruleset, cmd: Lock, cutoff: Instant | None
) -> list[Event]:
    """The end of a victim's-choice window: their pick leaves, or lots if they did not pick.
    Only the candidates still in the game count (a moderator may have removed one since the
    tie): a pick of one removed is no pick; with one left, it leaves; with none, nobody does."""
    window = state.window
    assert window is not None and window.chooser is not None
    policy = state.options.tie
    living = tuple(s for s in window.candidates if state.seat(s).alive)
    picked = state.choice if state.choice in living else None
    if picked is not None:
        tie: TieRecord = TieRecord(
            tied=window.candidates,
            policy=policy,
            then="choice",
            drawn=picked,
            chooser=window.chooser,
        )
        draws: tuple[LotDraw, ...] = ()
    elif living:
        tie, draws = _lots(state, living, window.revote, cmd.post_id, policy)
    else:  # every candidate was removed: nobody is left to leave
        tie, draws = TieRecord(tied=window.candidates, policy=policy, then="none"), ()
    drawn = tie.drawn
    voters = _last_voters(state, window.number, drawn) if drawn is not None else ()
    out = _eliminate(state, rules, drawn, voters, cutoff)
    left = out.left
    words, counted = entitled(state, rules, left, window.phase, out.causes)
    record = DayRecord(
        number=window.number, revote=window.revote, tally=(), votes=(), abstained=(), void_posts=(),
        left=left, tie=tie, last_words=words, chosen_by=window.chooser if picked else None,
        revealed=_revealed(state, rules, left, out.causes), vetoed=out.vetoed,
        veto_by=out.veto_by, spared=out.spared, eliminated=out.eliminated,
    )  # fmt: skip
    resolved = DayResolved(
        record=record,
        changes=out.changes,
        lots=draws,
        leavers_counted=counted,
        last_words_kept=kept_open(state, rules, left),
        last_acts=_last_acts(state, rules, out.causes),
    )
    return _after_resolution(state, rules, resolved, cmd.next_deadline, cmd.runoff_deadline)


@dataclass(frozen=True, kw_only=True, slots=True)
class _Elimination:
    """What the day's pick does: who leaves, and whether a veto spared the pick."""

    left: tuple[Seat, ...] = ()
    changes: tuple[SeatChange, ...] = ()
    vetoed: Seat | None = None
    veto_by: Seat | None = None
    spared: Seat | None = None
    eliminated: Seat | None = None
    causes: Mapping[Seat, Causes] = field(default_factory=dict)


def _eliminate(
    state: GameState,
    rules: Ruleset,
    picked: Seat | None,
    voters: tuple[Seat, ...],
    cutoff: Instant | None,
) -> _Elimination:
    """Who leaves when the day's vote (or its lots, or a victim's choice) picks `picked`: nobody
    when a `veto` submitted in this window names them; else whom the ruleset says (nobody: the
    pick is spared), and whom their leaving takes along."""
    if picked is None:
        return _Elimination()
    vetoer = _vetoer(state, rules, picked, cutoff)
    if vetoer is not None:
        spent = Power.VETO if Power.VETO in rules.one_shot else None
        return _Elimination(
            changes=(SeatChange(seat=vetoer, spent=spent),), vetoed=picked, veto_by=vetoer
        )
    by_vote = set(rules.vote_leavers(state, state.seat(picked), voters))
    if not by_vote:
        return _Elimination(spared=picked)
    leaving, turned = settle(state, rules, {s: frozenset({VOTE}) for s in by_vote})
    left = tuple(sorted(leaving))
    return _Elimination(
        left=left,
        changes=_departures(leaving, turned),
        eliminated=None if left == (picked,) else picked,
        causes=leaving,
    )


def _vetoer(state: GameState, rules: Ruleset, picked: Seat, cutoff: Instant | None) -> Seat | None:
    """The first seat whose latest `veto` in this window (stamped by the cut-off) names `picked`."""
    for (seat, power), sub in sorted(counted_submissions(state, cutoff).items()):
        if (
            power is Power.VETO
            and sub.target == picked
            and Power.VETO in rules.day_powers(state, state.seat(seat))
        ):
            return seat
    return None


def _last_voters(state: GameState, day: int, picked: Seat) -> tuple[Seat, ...]:
    """Who voted for `picked` in the day's last counted window (before a victim's choice)."""
    for record in reversed(state.history):
        if isinstance(record, NightRecord):
            break
        if isinstance(record, DayRecord) and record.number == day and record.votes:
            return tuple(sorted(v for v, t in record.votes if t == picked))
    return ()


def _lots(
    state: GameState,
    tied: tuple[Seat, ...],
    revote: int,
    post_id: str | None,
    policy: TiePolicy,
    group: str = "",
) -> tuple[TieRecord, tuple[LotDraw, ...]]:
    assert state.window is not None
    label = lots.day_lots_label(state.window.number, tied, revote, post_id)
    if group:
        label += f"|group {group}"
    drawn = lots.draw(state.seed, label, tied)
    draw = LotDraw(label=label, among=tuple(str(s) for s in tied), drawn=str(drawn))
    return TieRecord(tied=tied, policy=policy, then="lots", drawn=drawn, label=label), (draw,)


def _previous_victim(state: GameState, day: int) -> Seat | None:
    """The first (by seat) player who left the game in the night before this day, if any: with
    several cards (5.0), a player whose card died but who plays on with another was not killed,
    and picks nothing (the pick is the victim's, out of the game and of the vote)."""
    for i, record in enumerate(state.history):
        if isinstance(record, NightRecord) and record.number == day:
            since = {s for later in state.history[i + 1 :] for s in later.left}
            out = {s.seat for s in state.seats if not s.alive and s.seat not in since}
            return next(
                (s for s in record.left if set(state.seats_of(state.seat(s).player)) <= out), None
            )
    return None


def _result(state: GameState, rules: Ruleset, winner: Camp, reason: str, after: str) -> Result:
    scores = tuple((s.seat, rules.seat_score(state, s, winner)) for s in state.seats)
    return Result(winner=winner, after=after, reason=reason, scores=scores)


def _phase_label(state: GameState) -> str:
    return state.window.phase.label() if state.window else ""


def _departures(
    leaving: Mapping[Seat, Causes], turned: Mapping[Seat, Role]
) -> tuple[SeatChange, ...]:
    """The seat changes of a settled departure: who dies, whose role turns."""
    return tuple(
        SeatChange(seat=s, dies=s in leaving, role=turned.get(s))
        for s in sorted(set(leaving) | set(turned))
    )


def _last_acts(
    state: GameState, rules: Ruleset, leaving: Mapping[Seat, Causes]
) -> tuple[tuple[Seat, Power], ...]:
    """The powers on death that the leavers may use until the next lock."""
    return tuple(
        (s, p)
        for s in sorted(leaving)
        for p in rules.death_powers(state, state.seat(s), leaving[s])
    )
