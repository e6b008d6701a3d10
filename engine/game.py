"""decide(state, command) → events; evolve(state, event) → state.

Theory of operation (after h11 and the eventsourcing examples). `decide` validates a command
against the state and returns the events it causes, or raises an `EngineError` and changes
nothing. Every rule lives in `decide` and the modules it calls (`night`, `votes`, `lastwords`,
the rulesets); `evolve` only applies what the events say. So a game's state is exactly the fold
of its events, which is what storage, restart recovery, replay and verification rely on.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import assert_never

from engine import lots
from engine.commands import (
    ChooseTied,
    Command,
    EndGame,
    ExtendDeadline,
    GiveLastWords,
    Lock,
    ModKill,
    Pause,
    Penalize,
    PostVote,
    ReplacePlayer,
    Resume,
    SetDeadline,
    SubmitPower,
    VoidPost,
)
from engine.deaths import settle
from engine.errors import ActorError, ModeratorError, PhaseError, TargetError
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
from engine.lastwords import entitled, kept_open
from engine.model import Camp, Instant, PhaseKind, Power, Role, Seat, TiePolicy
from engine.night import counted_submissions, resolve_night
from engine.penalties import check_penalty, next_night, suspension_for
from engine.rulesets import Ruleset, rules_for
from engine.rulesets.base import CONFESS, VOTE, Causes, VoteGroup
from engine.setup import new_game
from engine.state import (
    DayRecord,
    GameState,
    LastActRecord,
    LotDraw,
    NightRecord,
    OverrideRecord,
    Result,
    SeatState,
    Submission,
    Suspension,
    TieRecord,
    VotePost,
    Window,
)
from engine.votes import Tally, judge_post, runoff_barred, tally

__all__ = ["apply", "decide", "evolve", "new_game", "replay_events", "start_events"]


def start_events(created: GameCreated, first_deadline: Instant | None = None) -> list[Event]:
    """The events that start a game: its creation and the first night's window (匪刀在前)."""
    return [
        created,
        WindowOpened(window=Window(kind=PhaseKind.NIGHT, number=1), deadline=first_deadline),
    ]


# ---------------------------------------------------------------------------------------------
# decide
# ---------------------------------------------------------------------------------------------


def decide(state: GameState, command: Command) -> list[Event]:
    """The events `command` causes in `state`; an EngineError (state unchanged) if refused."""
    rules = rules_for(state)
    match command:
        case SubmitPower():
            return _submit_power(state, rules, command)
        case PostVote():
            return _post_vote(state, command)
        case Lock():
            return _lock(state, rules, command)
        case GiveLastWords():
            return _last_words(state, command)
        case ChooseTied():
            return _choose(state, command)
        case SetDeadline():
            _need_named_window(state, command.window)
            if state.paused:
                raise PhaseError("phase.paused")
            _need_not_past(command.deadline, command.at)
            return [
                DeadlineSet(
                    deadline=command.deadline,
                    record=_override(
                        state,
                        "set_deadline",
                        by=command.by,
                        at=command.at,
                        deadline=str(command.deadline),
                    ),
                )
            ]
        case ExtendDeadline():
            _need_named_window(state, command.window)
            if state.paused:
                raise PhaseError("phase.paused")
            if state.deadline is None:
                raise ModeratorError("mod.no_deadline")
            name = "extend" if command.delta_ms >= 0 else "shorten"
            moved = Instant(state.deadline + command.delta_ms)
            _need_not_past(moved, command.at)
            return [
                DeadlineSet(
                    deadline=moved,
                    record=_override(
                        state,
                        name,
                        by=command.by,
                        at=command.at,
                        minutes=str(abs(command.delta_ms) // 60000),
                    ),
                )
            ]
        case Pause():
            _need_named_window(state, command.window)
            if state.paused:
                raise ModeratorError("mod.already_paused")
            if state.deadline is None:
                raise ModeratorError("mod.no_deadline")
            remaining = max(0, state.deadline - command.at)
            record = _override(state, "pause", by=command.by, at=command.at)
            return [Paused(remaining_ms=remaining, record=record)]
        case Resume():
            _need_named_window(state, command.window)
            if state.paused_remaining is None:
                raise ModeratorError("mod.not_paused")
            return [
                Resumed(
                    deadline=Instant(command.at + state.paused_remaining),
                    record=_override(state, "resume", by=command.by, at=command.at),
                )
            ]
        case ReplacePlayer():
            return _replace(state, command)
        case ModKill():
            return _modkill(state, rules, command)
        case VoidPost():
            return _void(state, command)
        case Penalize():
            return _penalize(state, command)
        case EndGame():
            _need_not_over(state)
            if command.winner not in rules.camps:
                raise ModeratorError(
                    "mod.no_such_winner",
                    winner=command.winner.value,
                    allowed=", ".join(sorted(c.value for c in rules.camps)),
                )
            record = _override(
                state, "end", by=command.by, at=command.at, winner=command.winner.value
            )
            return [
                GameEnded(
                    result=_result(
                        state, rules, command.winner, "win.moderator", _phase_label(state)
                    ),
                    record=record,
                )
            ]
        case _:
            assert_never(command)


def apply(state: GameState, command: Command) -> tuple[GameState, list[Event]]:
    """Decide and evolve in one step: the new state and the events that led to it."""
    events = decide(state, command)
    for event in events:
        state = evolve(state, event)
    return state, events


def _need_not_over(state: GameState) -> None:
    if state.over:
        raise PhaseError("phase.game_over")


def _need_window(state: GameState) -> Window:
    _need_not_over(state)
    if state.window is None:
        raise PhaseError("phase.no_window")
    return state.window


def _need_named_window(state: GameState, named: int | None) -> Window:
    """The open window, which must be the one a lock or deadline override names (if it names
    one): a command issued against a window that has been locked since does nothing."""
    if named is not None and (state.window is None or named != state.window_index):
        if named > state.window_index:
            raise PhaseError("phase.window_not_open", window=named, open=state.window_index)
        raise PhaseError("phase.window_locked", window=named)
    return _need_window(state)


def _need_not_past(deadline: Instant, now: Instant | None) -> None:
    """A moderator's new deadline may not be earlier than the moment they set it (`now`): votes
    already acknowledged would be voided after the fact. /mod advance locks now instead."""
    if now is not None and deadline < now:
        raise ModeratorError("mod.deadline_past", deadline=deadline, now=now)


def _phase_label(state: GameState) -> str:
    return state.window.phase.label() if state.window else ""


def _override(
    state: GameState, command: str, *, by: str = "", at: Instant | None = None, **details: str
) -> OverrideRecord:
    items = dict(details)
    if by:
        items["by"] = by
    return OverrideRecord(
        command=command, phase=state.phase, details=tuple(sorted(items.items())), at=at
    )


def _actor(state: GameState, player: str) -> SeatState:
    """The living seat of the player acting, or an ActorError."""
    seat = state.seat_of(player)
    if seat is None:
        raise ActorError("actor.not_player")
    if not state.seat(seat).alive:
        raise ActorError("actor.out_of_game")
    return state.seat(seat)


def _target(state: GameState, target: Seat | None) -> SeatState:
    if target is None:
        raise TargetError("target.missing")
    if not 1 <= target <= len(state.seats):
        raise TargetError("target.unknown", target=target, max=len(state.seats))
    seat = state.seat(target)
    if not seat.alive:
        raise TargetError("target.out_of_game", target=target)
    return seat


def _acting(state: GameState, rules: Ruleset, cmd: SubmitPower) -> SeatState:
    """The seat a player acts with: the one named, or their first seat in the game holding the
    power (a player may hold several cards)."""
    mine = state.seats_of(cmd.player)
    if not mine:
        raise ActorError("actor.not_player")
    if cmd.seat is not None:
        if cmd.seat not in mine:
            raise ActorError("actor.not_your_seat", seat=cmd.seat)
        if len(mine) > 1 and not state.seat(cmd.seat).alive and _alive_any(state, mine):
            raise ActorError("actor.card_out", seat=cmd.seat)
        mine = (cmd.seat,)
    living = [state.seat(s) for s in mine if state.seat(s).alive]
    if not living:
        raise ActorError("actor.out_of_game")
    holding = [
        s for s in living if cmd.power in rules.night_powers(state, s) + rules.day_powers(state, s)
    ]
    if len(holding) > 1:  # two cards with the same power: the player names the one acting
        raise ActorError(
            "actor.which_card", power=cmd.power.value, seats=",".join(str(s.seat) for s in holding)
        )
    return holding[0] if holding else living[0]


def _alive_any(state: GameState, seats: Sequence[Seat]) -> bool:
    return any(state.seat(s).alive for s in seats)


def _submit_power(state: GameState, rules: Ruleset, cmd: SubmitPower) -> list[Event]:
    window = _need_window(state)
    for seat in state.seats_of(cmd.player) if cmd.seat is None else (cmd.seat,):
        if (seat, cmd.power) in state.last_acts_open and state.seat(seat).player == cmd.player:
            return _last_act(state, rules, window, state.seat(seat), cmd)
    actor = _acting(state, rules, cmd)
    if window.last_act:
        raise PhaseError("phase.last_act")
    if cmd.power in rules.day_power_ids:
        return _day_power(state, rules, window, actor, cmd)
    if window.kind is not PhaseKind.NIGHT:
        raise PhaseError("phase.not_night")
    if cmd.power not in rules.night_powers(state, actor):
        if cmd.power in actor.spent:
            raise ActorError("actor.power_spent", power=cmd.power.value)
        if cmd.seat is not None and len(state.seats_of(cmd.player)) > 1:
            raise ActorError("actor.card_lacks_power", seat=cmd.seat, power=cmd.power.value)
        raise ActorError("actor.no_such_power", power=cmd.power.value)
    if suspension_for(state, rules, actor, cmd.power, window.number) is not None:
        raise ActorError("actor.power_suspended", power=cmd.power.value, night=window.number)
    return [_submission(state, rules, actor, cmd)]


def _submission(state: GameState, rules: Ruleset, actor: SeatState, cmd: SubmitPower) -> Event:
    """A submission (night power, or a day power acting at the lock), its target checked."""
    if state.deadline is not None and cmd.at is not None and cmd.at > state.deadline:
        raise PhaseError("phase.after_deadline")
    target: Seat | None = None
    untargeted = cmd.power in rules.untargeted_powers and not cmd.passed
    if cmd.passed and not rules.passable(state, actor, cmd.power):
        raise ActorError("actor.must_use", power=cmd.power.value)
    if untargeted and cmd.target is not None:  # 天下无贼: guarding or robbing 傻根 names no seat
        raise TargetError("target.not_needed", power=cmd.power.value)
    if not cmd.passed and not untargeted and cmd.target is None:
        raise TargetError("target.required", power=cmd.power.value)
    if not cmd.passed and not untargeted:
        seat = _target(state, cmd.target)
        error = rules.target_error(state, actor, cmd.power, seat)
        if error:
            raise TargetError(error, target=seat.seat)
        target = seat.seat
    return PowerSubmitted(
        submission=Submission(
            seat=actor.seat, power=cmd.power, target=target, at=cmd.at, untargeted=untargeted
        )
    )


def _day_power(
    state: GameState, rules: Ruleset, window: Window, actor: SeatState, cmd: SubmitPower
) -> list[Event]:
    """A power used by day: 认匪 (confess) acts at once; the others (`veto`) are submitted during
    any vote window, a victim's-choice window included, and act at its lock."""
    if cmd.power not in rules.day_powers(state, actor):
        if cmd.power in actor.spent:
            raise ActorError("actor.power_spent", power=cmd.power.value)
        raise ActorError("actor.no_such_power", power=cmd.power.value)
    if window.kind is not PhaseKind.DAY:
        raise PhaseError("phase.not_day")
    if cmd.power is not Power.CONFESS:
        return [_submission(state, rules, actor, cmd)]
    if window.chooser is not None:
        raise PhaseError("phase.not_day")
    return _confess(state, rules, window, actor)


def _confess(state: GameState, rules: Ruleset, window: Window, actor: SeatState) -> list[Event]:
    """认匪: the killer leaves at once with last words (using no slot); the day closes with no
    vote; whoever their leaving takes along leaves too."""
    leaving, turned = settle(state, rules, {actor.seat: frozenset({CONFESS})})
    left = tuple(sorted(leaving))
    others = tuple(s for s in left if s != actor.seat)
    words, counted = entitled(state, rules, others, window.phase, leaving)
    record = DayRecord(
        number=window.number, revote=window.revote, tally=(), votes=(), abstained=(),
        void_posts=(), left=left, tie=None, last_words=tuple(sorted((actor.seat, *words))),
        confess=actor.seat, revealed=_revealed(state, rules, left, leaving), posts=state.posts,
    )  # fmt: skip
    resolved = DayResolved(
        record=record,
        changes=_departures(leaving, turned),
        leavers_counted=counted,
        last_acts=_last_acts(state, rules, leaving),
    )
    return _after_resolution(state, rules, resolved, None)


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


def _last_act(
    state: GameState, rules: Ruleset, window: Window, user: SeatState, cmd: SubmitPower
) -> list[Event]:
    """A power on death (狙击手's shot), used at once in any window before the next lock: its
    user is shown; its victims leave at once, and what they take along. Using it closes the
    user's own last words; a pass closes it."""
    if state.deadline is not None and cmd.at is not None and cmd.at > state.deadline:
        raise PhaseError("phase.after_deadline")
    phase = window.phase
    if cmd.passed:
        record = LastActRecord(phase=phase, by=user.seat, power=cmd.power, target=None)
        taken = LastActTaken(record=record, changes=(), leavers_counted=state.leavers_counted)
    else:
        target = _target(state, cmd.target)
        error = rules.target_error(state, user, cmd.power, target)
        if error:
            raise TargetError(error, target=target.seat)
        leaving, turned = settle(state, rules, {target.seat: frozenset({cmd.power.value})})
        left = tuple(sorted(leaving))
        words, counted = entitled(state, rules, left, phase, leaving)
        record = LastActRecord(
            phase=phase, by=user.seat, power=cmd.power, target=target.seat, left=left,
            last_words=words,
            revealed=((user.seat, user.role.value), *_revealed(state, rules, left, leaving)),
            forfeits_last_words=user.seat in state.last_words_open,
        )  # fmt: skip
        taken = LastActTaken(
            record=record,
            changes=_departures(leaving, turned),
            leavers_counted=counted,
            last_acts=_last_acts(state, rules, leaving),
        )
    after = evolve(state, taken)
    clause = rules.win(after)
    if clause is None:
        return [taken]
    if after.last_acts_open:  # the game would end, but another last act may still change it
        if window.last_act:
            return [taken]
        held = Window(kind=window.kind, number=window.number, last_act=True)
        return [taken, WindowOpened(window=held, deadline=state.deadline)]
    result = _result(after, rules, clause.winner, clause.reason, phase.label())
    return [taken, GameEnded(result=result)]


def _post_vote(state: GameState, cmd: PostVote) -> list[Event]:
    window = _need_window(state)
    if window.kind is not PhaseKind.DAY or window.chooser is not None or window.last_act:
        raise PhaseError("vote.window_closed")
    if any(p.post_id == cmd.post_id for p in state.posts):
        raise PhaseError("vote.duplicate_post", post=cmd.post_id)
    return [VotePosted(post=judge_post(state, cmd))]


def _last_words(state: GameState, cmd: GiveLastWords) -> list[Event]:
    mine = state.seats_of(cmd.player)
    if not mine:
        raise ActorError("actor.not_player")
    seat = next((s for s in mine if s in state.last_words_open), None)
    if seat is None:
        raise ActorError("lastwords.not_entitled")
    acts = any(s == seat for s, _ in state.last_acts_open)
    return [LastWordsGiven(seat=seat, text=cmd.text, closes_last_act=acts)]


def _choose(state: GameState, cmd: ChooseTied) -> list[Event]:
    window = _need_window(state)
    if window.chooser is None or window.chooser not in state.seats_of(cmd.player):
        raise ActorError("choice.not_chooser")
    seat = window.chooser
    if cmd.target not in window.candidates:
        raise TargetError(
            "vote.not_candidate",
            target=cmd.target,
            candidates=",".join(map(str, window.candidates)),
        )
    return [ChoiceMade(seat=seat, target=cmd.target)]


def _replace(state: GameState, cmd: ReplacePlayer) -> list[Event]:
    _need_not_over(state)
    seat = _target_seat_for_mod(state, cmd.seat)
    if state.seat_of(cmd.new_player) is not None:
        raise ModeratorError("mod.already_playing", player=cmd.new_player)
    record = _override(state, "replace", by=cmd.by, at=cmd.at, seat=str(seat.seat))
    return [PlayerReplaced(seat=seat.seat, new_player=cmd.new_player, record=record)]


def _target_seat_for_mod(state: GameState, seat: Seat) -> SeatState:
    if not 1 <= seat <= len(state.seats):
        raise ModeratorError("mod.no_such_seat", seat=seat)
    if not state.seat(seat).alive:
        raise ModeratorError("mod.seat_out_of_game", seat=seat)
    return state.seat(seat)


def _modkill(state: GameState, rules: Ruleset, cmd: ModKill) -> list[Event]:
    """A moderator removes the player in `seat` (with every seat they hold)."""
    _need_window(state)
    seat = _target_seat_for_mod(state, cmd.seat)
    assert state.phase is not None
    also = tuple(s for s in state.seats_of(seat.player) if s != seat.seat and state.seat(s).alive)
    left = tuple(sorted((seat.seat, *also)))
    words, counted = entitled(state, rules, left, state.phase)
    record = replace(
        _override(state, "modkill", by=cmd.by, at=cmd.at, seat=str(seat.seat)),
        left=left,
        last_words=words,
    )
    events: list[Event] = [
        PlayerRemoved(seat=seat.seat, record=record, leavers_counted=counted, also=also)
    ]
    after = evolve(state, events[0])
    clause = rules.win(after)
    if clause:
        events.append(
            GameEnded(
                result=_result(after, rules, clause.winner, clause.reason, _phase_label(state))
            )
        )
    return events


def _penalize(state: GameState, cmd: Penalize) -> list[Event]:
    """A penalty: the team's (or seat's) night power does not act on the next night."""
    night = next_night(state)
    check_penalty(state, cmd.seat, cmd.team is not None)
    suspension = Suspension(
        night=night, team=cmd.team, seat=cmd.seat, power=cmd.power, reason=cmd.reason
    )
    details = {"night": str(night), "reason": cmd.reason}
    if cmd.team is not None:
        details["team"] = cmd.team.value
    if cmd.seat is not None:
        details["seat"] = str(cmd.seat)
    if cmd.power is not None:
        details["power"] = cmd.power.value
    record = _override(state, "penalty", by=cmd.by, at=cmd.at, **details)
    return [PowerSuspended(suspension=suspension, record=record)]


def _void(state: GameState, cmd: VoidPost) -> list[Event]:
    _need_window(state)
    post = next((p for p in state.posts if p.post_id == cmd.post_id), None)
    if post is None:
        raise ModeratorError("mod.unknown_post", post=cmd.post_id)
    if post.void_reason is not None:
        raise ModeratorError("mod.post_already_void", post=cmd.post_id)
    record = _override(state, "void", by=cmd.by, at=cmd.at, post=cmd.post_id, reason=cmd.reason)
    return [PostVoided(post_id=cmd.post_id, reason=cmd.reason, record=record)]


# -- locks and resolutions ------------------------------------------------------------------------


def _lock(state: GameState, rules: Ruleset, cmd: Lock) -> list[Event]:
    _need_named_window(state, cmd.window)
    if state.paused and not cmd.forced:
        raise PhaseError("phase.paused")
    if (
        not cmd.forced
        and state.deadline is not None
        and cmd.at is not None
        and cmd.at < state.deadline
    ):
        raise PhaseError("phase.deadline_not_reached")
    cutoff = cmd.at if cmd.at is not None else state.deadline
    if cmd.forced and cmd.by and cmd.at is not None:
        # A moderator's advance is an override: the window's deadline becomes now, recorded.
        advanced = DeadlineSet(
            deadline=cmd.at, record=_override(state, "advance", by=cmd.by, at=cmd.at)
        )
        return [advanced, *_resolve(evolve(state, advanced), rules, cmd, cutoff)]
    return _resolve(state, rules, cmd, cutoff)


def _resolve(state: GameState, rules: Ruleset, cmd: Lock, cutoff: Instant | None) -> list[Event]:
    window = state.window
    assert window is not None
    if window.last_act:
        return _close_last_acts(state, rules, cmd)
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
    return [lapsed, WindowOpened(window=_following(window), deadline=cmd.next_deadline)]


def _following(window: Window) -> Window:
    """The regular window after a night (its day) or a day (the next night)."""
    if window.kind is PhaseKind.NIGHT:
        return Window(kind=PhaseKind.DAY, number=window.number)
    return Window(kind=PhaseKind.NIGHT, number=window.number + 1)


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
    events.append(WindowOpened(window=_following(state.window), deadline=next_deadline))
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
        veto_by=out.veto_by, spared=out.spared, eliminated=out.eliminated, posts=state.posts,
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
            posts=state.posts if i == 0 else (), group=group.name,
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
    """The end of a victim's-choice window: their pick leaves, or lots if they did not pick."""
    window = state.window
    assert window is not None and window.chooser is not None
    policy = state.options.tie
    if state.choice is not None:
        tie: TieRecord = TieRecord(
            tied=window.candidates,
            policy=policy,
            then="choice",
            drawn=state.choice,
            chooser=window.chooser,
        )
        draws: tuple[LotDraw, ...] = ()
    else:
        tie, draws = _lots(state, window.candidates, window.revote, cmd.post_id, policy)
    assert tie.drawn is not None
    out = _eliminate(state, rules, tie.drawn, _last_voters(state, window.number, tie.drawn), cutoff)
    left = out.left
    words, counted = entitled(state, rules, left, window.phase, out.causes)
    record = DayRecord(
        number=window.number, revote=window.revote, tally=(), votes=(), abstained=(), void_posts=(),
        left=left, tie=tie, last_words=words, chosen_by=window.chooser if state.choice else None,
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


@dataclass(frozen=True, kw_only=True)
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
    """The first (by seat) player who left in the night before this day, if any."""
    for record in reversed(state.history):
        if isinstance(record, NightRecord) and record.number == day:
            return record.left[0] if record.left else None
    return None


def _result(state: GameState, rules: Ruleset, winner: Camp, reason: str, after: str) -> Result:
    scores = tuple((s.seat, rules.seat_score(state, s, winner)) for s in state.seats)
    return Result(winner=winner, after=after, reason=reason, scores=scores)


# ---------------------------------------------------------------------------------------------
# evolve
# ---------------------------------------------------------------------------------------------


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
        case GameCreated():
            raise ValueError("GameCreated starts a game: use replay_events")
        case WindowOpened():
            return replace(
                state,
                window=event.window,
                window_index=state.window_index + 1,
                deadline=event.deadline,
                paused_remaining=None,
                submissions=(),
                posts=(),
                choice=None,
            )
        case PowerSubmitted():
            return replace(state, submissions=(*state.submissions, event.submission))
        case VotePosted():
            return replace(state, posts=(*state.posts, event.post))
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
                submissions=(),
                posts=(),
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
            posts = tuple(
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
            return replace(
                state,
                result=event.result,
                window=None,
                deadline=None,
                paused_remaining=None,
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
