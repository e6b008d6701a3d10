"""decide(state, command) → events: each command's checks, and the events it causes.

Who may act, in which window, on which target, and which moderator overrides apply: a refused
command raises an `EngineError` and changes nothing. Separate from `engine.resolve` (what a lock
settles at a window's end) and `engine.evolve` (folding events into a state): a `Lock` is checked
here and resolved there. This module imports both; neither imports it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, assert_never

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
    LastActTaken,
    LastWordsGiven,
    Paused,
    PlayerRemoved,
    PlayerReplaced,
    PostVoided,
    PowerSubmitted,
    PowerSuspended,
    Resumed,
    VotePosted,
    WindowOpened,
)
from engine.evolve import evolve
from engine.lastwords import entitled
from engine.model import UNPASSABLE, Instant, PhaseKind, Power, Seat
from engine.penalties import check_penalty, next_night, suspension_for
from engine.resolve import (
    _after_resolution,
    _departures,
    _last_acts,
    _phase_label,
    _resolve,
    _result,
    _revealed,
)
from engine.rulesets import Ruleset, rules_for
from engine.rulesets.base import CONFESS
from engine.state import (
    POSTS,
    DayRecord,
    GameState,
    LastActRecord,
    OverrideRecord,
    SeatState,
    Submission,
    Suspension,
    Window,
)
from engine.votes import judge_post
from engine.windows import is_vote_window

if TYPE_CHECKING:  # mypy checks each call against the class
    _vote_posted = VotePosted
else:  # the same object, built faster (`engine.replacing`): one for every vote post
    from engine.replacing import maker

    _vote_posted = maker(VotePosted)


def start_events(created: GameCreated, first_deadline: Instant | None = None) -> list[Event]:
    """The events that start a game: its creation and the first night's window (匪刀在前), or
    the warm-up (游戏热身) before it when the game has one (`first_deadline` is then the
    warm-up's end)."""
    first = (
        Window(kind=PhaseKind.WARMUP, number=0)
        if created.options.warmup
        else Window(kind=PhaseKind.NIGHT, number=1)
    )
    return [created, WindowOpened(window=first, deadline=first_deadline)]


def decide(state: GameState, command: Command) -> list[Event]:
    """The events `command` causes in `state`; an EngineError (state unchanged) if refused."""
    rules = rules_for(state)
    match command:
        case SubmitPower():
            return _submit_power(state, rules, command)
        case PostVote():
            return _post_vote(state, rules, command)
        case Lock():
            events = _lock(state, rules, command)
            POSTS.forget(state.posts)  # the window's posts are closed: its index is not needed
            return events
        case GiveLastWords():
            return _last_words(state, rules, command)
        case ChooseTied():
            return _choose(state, command)
        case SetDeadline():
            _need_named_window(state, command.window)
            if state.paused:
                raise PhaseError("phase.paused")
            _need_deadline_ahead(state, command.at)
            _need_unmoved(state, command.seen, command.saw_none)
            _need_not_past(command.deadline, command.at)
            if command.deadline == state.deadline:  # a repeat: announced and logged once
                raise ModeratorError("mod.deadline_unchanged", deadline=state.deadline)
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
            _need_deadline_ahead(state, command.at)
            _need_unmoved(state, command.seen, command.saw_none)
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
            if command.at is not None and command.at >= state.deadline:
                # the lock is due (its catch-up or a retry under way): paused with nothing left,
                # the window would take posts made after its deadline once resumed
                raise ModeratorError("mod.pause_after_deadline")
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
            return _penalize(state, rules, command)
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


def _need_in_time(state: GameState, at: Instant | None) -> None:
    """A player's input stamped after the window's deadline is void: its lock is due (a power, a
    last act, a pick, a confession). One without its moment (older replay files) is taken."""
    if state.deadline is not None and at is not None and at > state.deadline:
        raise PhaseError("phase.after_deadline")


def _need_deadline_ahead(state: GameState, now: Instant | None) -> None:
    """A deadline may be moved only before it passes. Once it has (`now` at or after it), the
    lock is due — its catch-up or a retry is under way — and moving the deadline then would
    judge the late posts by arrival order: one made after the old deadline would be void as
    late if read before the move, and count if read after. A pause is refused alike
    (`mod.pause_after_deadline`). A command without its moment (older replay files) is not
    checked."""
    if now is not None and state.deadline is not None and now >= state.deadline:
        raise ModeratorError("mod.deadline_passed", deadline=state.deadline)


def _need_unmoved(state: GameState, seen: Instant | None, saw_none: bool = False) -> None:
    """A moderator's deadline override acts on the deadline they saw (`seen`; `saw_none`: none,
    the game paused): one moved since — another moderator's `extend` at the same moment, a
    resume — is not moved again on top of it, whichever of the two came first."""
    moved = seen is not None and state.deadline != seen
    if (moved or saw_none) and state.deadline is not None:
        raise ModeratorError("mod.deadline_moved", deadline=state.deadline)


def _need_not_past(deadline: Instant, now: Instant | None) -> None:
    """A moderator's new deadline may not be earlier than the moment they set it (`now`): votes
    already acknowledged would be voided after the fact. /mod advance locks now instead."""
    if now is not None and deadline < now:
        raise ModeratorError("mod.deadline_past", deadline=deadline, now=now)


def _override(
    state: GameState, command: str, *, by: str = "", at: Instant | None = None, **details: str
) -> OverrideRecord:
    items = dict(details)
    if by:
        items["by"] = by
    return OverrideRecord(
        command=command, phase=state.phase, details=tuple(sorted(items.items())), at=at
    )


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
    power (a player may hold several cards). A seat named that is not theirs (a menu sent for a
    seat they held before moderators re-seated them) acts for no other."""
    mine = state.seats_of(cmd.player)
    if not mine:
        raise ActorError("actor.not_player")
    if cmd.seat is not None:
        if cmd.seat not in mine:
            if rules.cards_per_player > 1:
                raise ActorError("actor.not_your_seat", seat=cmd.seat)  # "card {seat}"
            if cmd.night is not None:  # only a power menu names its night
                raise ActorError("actor.menu_not_your_seat", seat=cmd.seat)
            raise ActorError("actor.seat_not_yours", seat=cmd.seat)
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
    if cmd.night is not None and (window.kind is not PhaseKind.NIGHT or window.number != cmd.night):
        raise PhaseError("phase.menu_over", night=cmd.night)  # an earlier night's menu
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
    _need_in_time(state, cmd.at)
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
    if cmd.passed and cmd.power in UNPASSABLE:  # not confessing is doing nothing: a pass
        raise ActorError("actor.no_pass", power=cmd.power.value)  # must not confess
    if cmd.power is not Power.CONFESS:
        return [_submission(state, rules, actor, cmd)]
    _need_in_time(state, cmd.at)  # the day's votes stand: its lock is due
    if window.chooser is not None:  # the vote is settled: only the pick is left to make
        raise PhaseError("choice.no_confession")
    return _confess(state, rules, window, actor, cmd.next_deadline)


def _confess(
    state: GameState, rules: Ruleset, window: Window, actor: SeatState, deadline: Instant | None
) -> list[Event]:
    """认匪: the killer leaves at once with last words (using no slot); the day closes with no
    vote; whoever their leaving takes along leaves too. The next window closes at `deadline`."""
    leaving, turned = settle(state, rules, {actor.seat: frozenset({CONFESS})})
    left = tuple(sorted(leaving))
    others = tuple(s for s in left if s != actor.seat)
    words, counted = entitled(state, rules, others, window.phase, leaving)
    record = DayRecord(
        number=window.number, revote=window.revote, tally=(), votes=(), abstained=(),
        void_posts=(), left=left, tie=None, last_words=tuple(sorted((actor.seat, *words))),
        confess=actor.seat, revealed=_revealed(state, rules, left, leaving),
        posts=tuple(state.posts),
    )  # fmt: skip
    # No lock closes anything: the last words and last acts open before it stay open (the
    # night's victim's words, a sniper's shot) until the next lock, with the confession's own.
    last_acts = _last_acts(state, rules, leaving)
    resolved = DayResolved(
        record=record,
        changes=_departures(leaving, turned),
        leavers_counted=counted,
        last_words_kept=tuple(s for s in state.last_words_open if s not in record.last_words),
        last_acts=(*(a for a in state.last_acts_open if a not in last_acts), *last_acts),
    )
    return _after_resolution(state, rules, resolved, deadline)


def _last_act(
    state: GameState, rules: Ruleset, window: Window, user: SeatState, cmd: SubmitPower
) -> list[Event]:
    """A power on death (狙击手's shot), used at once in any window before the next lock: its
    user is shown; its victims leave at once, and what they take along. Using it closes the
    user's own last words; a pass closes it."""
    _need_in_time(state, cmd.at)
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


def _post_vote(state: GameState, rules: Ruleset, cmd: PostVote) -> list[Event]:
    window = _need_window(state)
    if not is_vote_window(window):
        raise PhaseError("vote.window_closed")
    if POSTS.holds(state.posts, cmd.post_id):  # an index, not a scan of the day's posts
        raise PhaseError("vote.duplicate_post", post=cmd.post_id)
    return [_vote_posted(post=judge_post(state, cmd, rules))]


def _last_words(state: GameState, rules: Ruleset, cmd: GiveLastWords) -> list[Event]:
    """Last words given by an entitled player, until their window closes or the game ends: the
    judge posts nothing after the end (docs/rulings.md, "Last words"). Words given instead of a
    last act close it: a last-act window that waited only for it ends the game, as a pass
    does."""
    _need_not_over(state)
    mine = state.seats_of(cmd.player)
    if not mine:
        raise ActorError("actor.not_player")
    seat = next((s for s in mine if s in state.last_words_open), None)
    if seat is None:
        raise ActorError("lastwords.not_entitled")
    acts = any(s == seat for s, _ in state.last_acts_open)
    given = LastWordsGiven(seat=seat, text=cmd.text, closes_last_act=acts)
    window = state.window
    if acts and window is not None and window.last_act:
        after = evolve(state, given)
        clause = rules.win(after)
        if clause is not None and not after.last_acts_open:
            result = _result(after, rules, clause.winner, clause.reason, window.phase.label())
            return [given, GameEnded(result=result)]
    return [given]


def _choose(state: GameState, cmd: ChooseTied) -> list[Event]:
    window = _need_window(state)
    if window.chooser is None or window.chooser not in state.seats_of(cmd.player):
        raise ActorError("choice.not_chooser")
    seat = window.chooser
    _need_in_time(state, cmd.at)  # too late: the lots decide (docs/rulings.md)
    if cmd.target not in window.candidates:
        raise TargetError(  # the choice's own words, not the run-off's (`vote.not_candidate`)
            "choice.not_candidate",
            target=cmd.target,
            candidates=",".join(map(str, window.candidates)),
        )
    if not state.seat(cmd.target).alive:  # removed by a moderator since the tie
        raise TargetError("target.out_of_game", target=cmd.target)
    return [ChoiceMade(seat=seat, target=cmd.target)]


def _replace(state: GameState, cmd: ReplacePlayer) -> list[Event]:
    _need_not_over(state)
    seat = _target_seat_for_mod(state, cmd.seat, cmd.player)
    if state.seat_of(cmd.new_player) is not None:
        raise ModeratorError("mod.already_playing", player=cmd.new_player)
    held = [s.seat for s in state.seats if cmd.new_player in s.former_players]
    if held and seat.seat not in held:
        # replaced out of this game earlier: they know what their seat knew (its role, its
        # team, its checks) and would carry it into another seat; back to their own, they
        # know nothing more than they did
        raise ModeratorError("mod.played_before", player=cmd.new_player)
    record = _override(
        state, "replace", by=cmd.by, at=cmd.at, seat=str(seat.seat), **_reason(cmd.reason)
    )
    return [PlayerReplaced(seat=seat.seat, new_player=cmd.new_player, record=record)]


def _reason(reason: str) -> dict[str, str]:
    """A moderator's optional reason as override details (none: no key, as before)."""
    return {"reason": reason} if reason else {}


def _target_seat_for_mod(state: GameState, seat: Seat, holder: str | None = None) -> SeatState:
    """The living seat a moderator's action names; if it names its holder too (`holder`), the
    seat must still be theirs: a form opened on one player and submitted after a replacement
    would otherwise act on the substitute. Where a player holds several cards (5.0), a card that
    is out names its player while another of their cards plays on: the action is on the whole
    player, as if it named that player's first living card (docs/rulings.md); a player entirely
    out is refused."""
    if not 1 <= seat <= len(state.seats):
        raise ModeratorError("mod.no_such_seat", seat=seat)
    named = state.seat(seat)
    if holder is not None and named.player != holder:
        raise ModeratorError("mod.seat_changed", seat=seat)
    if named.alive:
        return named
    if rules_for(state).cards_per_player > 1:
        hand = (*named.former_players, named.player)[0]  # the cards dealt with this one
        for other in state.seats_of(named.player):
            card = state.seat(other)
            if card.alive and (*card.former_players, card.player)[0] == hand:
                return card
    raise ModeratorError("mod.seat_out_of_game", seat=seat)


def _modkill(state: GameState, rules: Ruleset, cmd: ModKill) -> list[Event]:
    """A moderator removes the player in `seat` (with every seat they hold)."""
    _need_window(state)
    seat = _target_seat_for_mod(state, cmd.seat, cmd.player)
    assert state.phase is not None
    also = tuple(s for s in state.seats_of(seat.player) if s != seat.seat and state.seat(s).alive)
    left = tuple(sorted((seat.seat, *also)))
    words, counted = entitled(state, rules, left, state.phase)
    record = replace(
        _override(
            state, "modkill", by=cmd.by, at=cmd.at, seat=str(seat.seat), **_reason(cmd.reason)
        ),
        left=left,
        last_words=words,
    )
    events: list[Event] = [
        PlayerRemoved(seat=seat.seat, record=record, leavers_counted=counted, also=also)
    ]
    after = evolve(state, events[0])
    clause = rules.win(after)
    window = state.window
    if clause and after.last_acts_open and window is not None:
        # the game would end, but a last act still open may change how (a sniper's shot): a
        # last-act window waits for it until the open window's deadline, as after a lock (as
        # `_last_act`'s: none while paused, until a moderator sets one or advances)
        if not window.last_act:
            held = Window(kind=window.kind, number=window.number, last_act=True)
            events.append(WindowOpened(window=held, deadline=state.deadline))
    elif clause:
        events.append(
            GameEnded(
                result=_result(after, rules, clause.winner, clause.reason, _phase_label(state))
            )
        )
    return events


def _penalize(state: GameState, rules: Ruleset, cmd: Penalize) -> list[Event]:
    """A penalty: the team's (or seat's) night power does not act on the next night."""
    night = next_night(state)
    check_penalty(state, rules, cmd.seat, cmd.team, cmd.power)
    if any(
        s.night == night
        and s.team == cmd.team
        and s.seat == cmd.seat
        and (s.power is None or s.power is cmd.power)
        for s in state.suspensions
    ):  # a repeat (or one an earlier penalty of the same team or seat covers): once
        raise ModeratorError("mod.penalty_already", night=night)
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


# -- locks (what a lock settles is in engine/resolve.py) ------------------------------------------


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
