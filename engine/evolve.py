"""evolve(state, event) → state, and the fold of a game's events from `GameCreated`.

Bookkeeping only: every decision is already in the event. Separate from `engine.decide` and
`engine.resolve` so that folding events (storage, restart recovery, replay, verification,
`engine.publish`) depends on no rule: this module imports no ruleset and no other game module.
It hands each day's appended posts on to the duplicate-post index (`engine.state.POSTS`, a memo
that changes no answer), so a vote post's check compares no days.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, assert_never

from engine.events import (
    ChoiceMade,
    DayResolved,
    DeadlineSet,
    Event,
    GameCreated,
    GameEnded,
    LastActsLapsed,
    LastActTaken,
    LastWordsGiven,
    NightResolved,
    Paused,
    PlayerRemoved,
    PlayerReplaced,
    PostVoided,
    PowerSubmitted,
    PowerSuspended,
    Resumed,
    SeatChange,
    VotePosted,
    WindowOpened,
)
from engine.model import Seat
from engine.replacing import replacer
from engine.state import NO_POSTS, NO_SUBMISSIONS, POSTS, GameState, PostLog, SeatState

if TYPE_CHECKING:  # mypy checks each call's field names and types against the class
    from dataclasses import replace
else:  # the same copies, made faster (`engine.replacing`)
    from engine.replacing import replace

_with_posts = replacer(GameState, "posts")
"""`replace(state, posts=...)` without looking the copy up: one for every vote post."""
_with_submissions = replacer(GameState, "submissions")
"""`replace(state, submissions=...)`, likewise: one for every power submission."""


def _apply_changes(state: GameState, changes: Iterable[SeatChange]) -> tuple[SeatState, ...]:
    seats = list(state.seats)
    for change in changes:
        seat = seats[change.seat - 1]
        seats[change.seat - 1] = replace(
            seat,
            alive=seat.alive and not change.dies,
            needles=seat.needles + ((change.needle,) if change.needle is not None else ()),
            role=change.role or seat.role,
            spent=seat.spent | ({change.spent} if change.spent else set()),
            wounds=seat.wounds + (1 if change.wound else 0),
        )
    return tuple(seats)


def evolve(state: GameState, event: Event) -> GameState:
    """The state after `event` (bookkeeping only: every decision is in the event)."""
    match event:
        case VotePosted():  # the commonest event first (the cases are disjoint classes)
            posts = state.posts.plus(event.post)  # the day is not copied (`PostLog`)
            POSTS.appended(state.posts, posts)  # the duplicate check's index follows the day
            return _with_posts(state, posts=posts)
        case GameCreated():
            raise ValueError("GameCreated starts a game: use replay_events")
        case WindowOpened():
            return replace(
                state,
                window=event.window,
                window_index=state.window_index + 1,
                deadline=event.deadline,
                paused_remaining=None,
                submissions=NO_SUBMISSIONS,
                # a last-act window opened inside a day (a removal, a shot that would end the
                # game) extends it: its vote posts stay, for the record (`unlocked_posts`)
                posts=state.posts if event.window.last_act else NO_POSTS,
                choice=None,
            )
        case PowerSubmitted():
            # the night is not copied (`SubmissionLog`): a resubmission costs as the first did
            return _with_submissions(state, submissions=state.submissions.plus(event.submission))
        case NightResolved() | DayResolved():
            if isinstance(event, NightResolved):
                counters = {**dict(state.counters), **dict(event.counters)}
                state = replace(
                    state,
                    virtual_out=state.virtual_out | set(event.record.virtual_out),
                    counters=tuple(sorted(counters.items())),
                )
            return replace(
                state,
                seats=_apply_changes(state, event.changes),
                history=(*state.history, event.record),
                lots=state.lots + event.lots,
                leavers_counted=event.leavers_counted,
                last_words_open=event.last_words_kept + event.record.last_words,
                last_acts_open=event.last_acts,
                window=None,
                deadline=None,
                submissions=NO_SUBMISSIONS,
                posts=NO_POSTS,
                choice=None,
            )
        case LastWordsGiven():
            acts = state.last_acts_open
            if event.closes_last_act:
                acts = tuple(a for a in acts if a[0] != event.seat)
            return replace(
                state,
                last_words_open=tuple(s for s in state.last_words_open if s != event.seat),
                last_words_given=(*state.last_words_given, (event.seat, event.text)),
                last_acts_open=acts,
            )
        case LastActTaken():
            record = event.record
            words = state.last_words_open
            if record.forfeits_last_words:
                words = tuple(s for s in words if s != record.by)
            return replace(
                state,
                seats=_apply_changes(state, event.changes),
                history=(*state.history, record),
                leavers_counted=event.leavers_counted,
                last_words_open=words + record.last_words,
                last_acts_open=tuple(a for a in state.last_acts_open if a[0] != record.by)
                + event.last_acts,
            )
        case LastActsLapsed():
            return replace(state, last_acts_open=())
        case ChoiceMade():
            return replace(state, choice=event.target)
        case DeadlineSet():
            history = state.history if event.record is None else (*state.history, event.record)
            return replace(state, deadline=event.deadline, history=history)
        case Paused():
            return replace(
                state,
                deadline=None,
                paused_remaining=event.remaining_ms,
                history=(*state.history, event.record),
            )
        case Resumed():
            return replace(
                state,
                deadline=event.deadline,
                paused_remaining=None,
                history=(*state.history, event.record),
            )
        case PlayerReplaced():
            seats = list(state.seats)
            leaving = seats[event.seat - 1].player
            for i, old in enumerate(seats):  # the substitute takes every seat of the player
                if old.player == leaving:
                    seats[i] = replace(
                        old,
                        player=event.new_player,
                        former_players=(*old.former_players, old.player),
                    )
            return replace(state, seats=tuple(seats), history=(*state.history, event.record))
        case PlayerRemoved():
            gone = (event.seat, *event.also)
            return replace(
                state,
                seats=_apply_changes(state, (SeatChange(seat=s, dies=True) for s in gone)),
                history=(*state.history, event.record),
                leavers_counted=event.leavers_counted,
                last_words_open=(*state.last_words_open, *event.record.last_words),
            )
        case PostVoided():
            posts = PostLog(
                replace(
                    p,
                    void_reason="vote.voided_by_moderator",
                    void_params=(("reason", event.reason),),
                )
                if p.post_id == event.post_id
                else p
                for p in state.posts
            )
            return replace(state, posts=posts, history=(*state.history, event.record))
        case PowerSuspended():
            return replace(
                state,
                suspensions=(*state.suspensions, event.suspension),
                history=(*state.history, event.record),
            )
        case GameEnded():
            history = state.history if event.record is None else (*state.history, event.record)
            return replace(  # nothing stays open: no last words nor last act after the end
                state,
                result=event.result,
                window=None,
                deadline=None,
                paused_remaining=None,
                last_words_open=(),
                last_acts_open=(),
                history=history,
            )
        case _:
            assert_never(event)


def initial_state(created: GameCreated) -> GameState:
    """The state right after `GameCreated`."""
    seats = tuple(
        SeatState(seat=Seat(i + 1), player=p, original_role=r, role=r)
        for i, (p, r) in enumerate(zip(created.players, created.roles, strict=True))
    )
    return GameState(
        ruleset=created.ruleset, seed=created.seed, commitment=created.commitment,
        options=created.options, seats=seats, dealt=created.dealt,
    )  # fmt: skip


def replay_events(events: Iterable[Event]) -> GameState:
    """Rebuild a game's state from its events (the first must be GameCreated)."""
    iterator = iter(events)
    first = next(iterator, None)
    if not isinstance(first, GameCreated):
        raise ValueError("a game's events start with GameCreated")
    state = initial_state(first)
    for event in iterator:
        state = evolve(state, event)
    return state
