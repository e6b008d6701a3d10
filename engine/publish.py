"""What to tell whom after events: `effects_for(before, events)` (`effects_and_state` also returns
the state after them).

One place decides what is public. Public effects (Announce, ClockPost, ReplyToPost) carry only
what every player may know: who left, the vote table, ties and lots, overrides, and at the end
everything. Roles, night targets and check answers go only to the seat or team entitled to them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, overload

from engine.effects import (
    Announce,
    ClockPost,
    Effect,
    LeaveTeamThreads,
    OverrideLogged,
    Param,
    ReleaseChannels,
    ReplyToPost,
    ScheduleDeadline,
    SeatHandover,
    SeatLeft,
    SetChannelsOpen,
    Silence,
    TeamJoin,
    TeamNotice,
    Unsilence,
    UpdateStandings,
    VoteChannelPost,
    Whisper,
    params,
    seats_text,
)
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
    VotePosted,
    WindowOpened,
)
from engine.evolve import evolve, initial_state
from engine.model import PhaseKind, Power, Seat, Team
from engine.penalties import usable_night_powers
from engine.rulesets import Ruleset, rules_for
from engine.speech import channels_open, last_silenced, out_of_game
from engine.state import (
    GameState,
    OverrideRecord,
    SeatState,
    TieRecord,
    VotePost,
    Window,
)
from engine.view import PlayerView, view_for

if TYPE_CHECKING:  # mypy checks each call against the class
    _reply_to_post = ReplyToPost
else:  # the same object, built faster (`engine.replacing`): one for every vote post
    from engine.replacing import maker

    _reply_to_post = maker(ReplyToPost)


def effects_for(before: GameState | None, events: Sequence[Event]) -> list[Effect]:
    """The effects of `events` applied to `before` (None when the first event creates the game)."""
    return effects_and_state(before, events)[0]


@overload
def effects_and_state(
    before: GameState, events: Sequence[Event]
) -> tuple[list[Effect], GameState]: ...
@overload
def effects_and_state(
    before: GameState | None, events: Sequence[Event]
) -> tuple[list[Effect], GameState | None]: ...
def effects_and_state(
    before: GameState | None, events: Sequence[Event]
) -> tuple[list[Effect], GameState | None]:
    """`effects_for`, and the state after the events: saying what to tell whom folds the events
    anyway, so a caller that needs the new state (the service, on every input) folds them once."""
    if before is not None and len(events) == 1 and type(events[0]) is VotePosted:
        # the commonest input, in fewer steps: a vote post's reply is all it says (nobody
        # leaves or joins, nothing is overridden); the same as the loop below
        return [_reply(events[0].post)], evolve(before, events[0])
    out: list[Effect] = []
    state = before
    for i, event in enumerate(events):
        after = (
            initial_state(event) if isinstance(event, GameCreated) else evolve(_need(state), event)
        )
        out.extend(_effects(state, event, after, ending=_ends_the_game(events, i)))
        out.extend(_membership(state, after))
        out.extend(_override_log(event))
        state = after
    return out, state


def _reply(post: VotePost) -> ReplyToPost:
    """A vote post's reply: ✅, or why it is void."""
    return _reply_to_post(
        post_id=post.post_id, key=post.void_reason, params=tuple(post.void_params)
    )


def _ends_the_game(events: Sequence[Event], i: int) -> bool:
    """Whether the game ends with the resolution `events[i]`: the same input's events go on to
    the end (past the other vote groups of the day, 无间道), with no window between (a last-act
    window keeps last words open)."""
    for later in events[i + 1 :]:
        if isinstance(later, GameEnded):
            return True
        if not isinstance(later, NightResolved | DayResolved):
            return False
    return False


def _membership(before: GameState | None, after: GameState) -> list[Effect]:
    """Who left the game, and who joined a team (at the deal, or when a role turns)."""
    if before is not None and before.seats is after.seats:
        return []  # the same seats (a vote post, a submission): nobody left or joined
    rules = rules_for(after)
    out: list[Effect] = []
    joins: list[TeamJoin] = []
    gone: set[str] = set()
    for seat in after.seats:
        old = before.seat(seat.seat) if before is not None else None
        if before is not None and old is not None and old.alive and not seat.alive:
            player = seat.player  # a player holding several cards leaves with the last one
            if player not in gone:
                gone.add(player)
                out.extend(_leaving(rules, before, after, player, seat.seat))
        team = rules.team_of(seat)
        if team is not None and seat.alive and (old is None or rules.team_of(old) != team):
            joins.append(TeamJoin(team=team, seat=seat.seat))
        if before is not None and old is not None and old.alive and seat.alive:
            out.extend(_turned(rules, after, seat, rules.team_of(old), team))
    # Teams in a fixed order, not by their lowest seat: the shell creates a team's thread on its
    # first join, and the order threads appear in is public.
    order = list(Team)
    joins.sort(key=lambda join: (order.index(join.team), int(join.seat)))
    out.extend(joins)
    return out


def _leaving(
    rules: Ruleset, before: GameState, after: GameState, player: str, seat: Seat
) -> list[Effect]:
    """A card of `player` (`seat`) is out: with their last card the player leaves the game and
    every team thread; while another card plays on (5.0 双身份), they leave the thread of each
    team none of their living cards is in any more, as a dead killer leaves the killers'
    (docs/rulings.md). Only the first is public."""
    if out_of_game(after, player):
        return [SeatLeft(seat=seat), LeaveTeamThreads(player=player)]
    held = _teams_held(rules, after, player)
    return [
        LeaveTeamThreads(player=player, team=team)
        for team in _teams_held(rules, before, player)
        if team not in held
    ]


def _turned(
    rules: Ruleset, after: GameState, seat: SeatState, was: Team | None, now: Team | None
) -> list[Effect]:
    """A living card's role turned (basic: the sheriff's grief makes the police civilians):
    out of the thread of the team it left, unless another living card of the player is in it."""
    if was is None or was == now or was in _teams_held(rules, after, seat.player):
        return []
    return [LeaveTeamThreads(player=seat.player, team=was)]


def _teams_held(rules: Ruleset, state: GameState, player: str) -> list[Team]:
    """The teams of `player`'s living cards, in `Team` order (the threads they may read)."""
    teams = {rules.team_of(state.seat(s)) for s in state.seats_of(player) if state.seat(s).alive}
    return [team for team in Team if team in teams]


def _override_log(event: Event) -> list[Effect]:
    """Every override (an event carrying an OverrideRecord) goes to the override log too."""
    record = getattr(event, "record", None)
    if not isinstance(record, OverrideRecord):
        return []
    details = dict(record.details)
    if record.left:
        details["left"] = seats_text(record.left)
    return [
        OverrideLogged(
            command=record.command,
            phase=record.phase.label() if record.phase else None,
            at=record.at,
            params=params(**details),
        )
    ]


def _need(state: GameState | None) -> GameState:
    if state is None:
        raise ValueError("only GameCreated can start without a state")
    return state


def role_message(state: GameState, seat: Seat, also: Sequence[Seat] = ()) -> Whisper:
    """The private role message for a seat (at the deal, and to a substitute): what its view
    (`view_for`, as /role shows it) says of its role (`role_params`), and where a player holds
    several cards (5.0 双身份) every card's role. `also`: cards out of the game whose knowledge
    the message carries too (a substitute's first message: what the player's dead card knew, as
    /role shows it)."""
    own = state.seats_of(state.seat(seat).player)
    extra: dict[str, Param] = {}
    if len(own) > 1:  # 5.0 双身份: every card's message shows all of the player's cards
        extra["cards"] = ",".join(f"{s}:{state.seat(s).role.value}" for s in own)
    view = view_for(state, seat)
    if also:
        merged = dict(view.known)
        for card in also:
            for s, role in view_for(state, card).known:
                merged.setdefault(s, role)
        view = replace(view, known=tuple(sorted(merged.items())))
    return Whisper(
        seat=seat,
        key="role.dealt",
        params=params(seat=int(seat), **role_params(view, own), **extra),
    )


def role_params(view: PlayerView, own: Sequence[Seat] = ()) -> dict[str, Param]:
    """A seat's role as its role message gives it, from the seat's view: role, powers (now, and
    later or on leaving the game), whom it knows by the rules (`PlayerView.known`, the player's
    own cards `own` aside: teammates and whoever else the ruleset shows it, met while both were
    in the game) with the role it knows and those out of the game now; the side its role plays
    for where the role does not say it (a mine); the card dealt where the role has turned since
    (a substitute's message). At the deal, whom the ruleset shows the seat (`seen_role`)."""
    if view.role is None:
        raise ValueError("the public view has no role")
    known = [(s, role) for s, role in view.known if s not in own]
    gone = {info.seat for info in view.seats if not info.alive}
    extra: dict[str, Param] = {}
    out = [s for s, _ in known if s in gone]
    if out:  # known seats out of the game now (a substitute's message, as /role marks them)
        extra["out"] = seats_text(out)
    if view.later:  # a power that starts later, or acts on leaving the game
        extra["later"] = ";".join(p.text() for p in view.later)
    if view.side is not None:  # the side a mine plays for
        extra["side"] = view.side
    if view.original_role is not None and view.original_role is not view.role:
        extra["dealt"] = view.original_role.value  # the card dealt (told a substitute)
    return {
        "role": view.role.value,
        "powers": ",".join(p.value for p in view.powers),
        "teammates": seats_text([s for s, _ in known]),
        "known": ",".join(f"{s}:{role.value}" for s, role in known),
        **extra,
    }


def _card_roster(state: GameState) -> dict[str, Param]:
    """Which cards (牌位) each player holds, where a player holds several (5.0 双身份: "法官为其
    顺时针编号1~14牌位号，公示"): `1,2;3,4;…`, by player in seat order. Public: who holds which
    card is no secret, only its role."""
    players = list(dict.fromkeys(s.player for s in state.seats))
    if all(len(state.seats_of(p)) == 1 for p in players):
        return {}
    return {"cards": ";".join(seats_text(state.seats_of(p)) for p in players)}


def _public_roles(state: GameState) -> list[Effect]:
    """Everyone's public identity (无间道's 公开身份), where the ruleset has one: public."""
    rules = rules_for(state)
    shown = [(s.seat, rules.public_role(s)) for s in state.seats]
    listed = ",".join(f"{seat}:{role.value}" for seat, role in shown if role is not None)
    return [Announce(key="game.public_roles", params=params(public=listed))] if listed else []


def _effects(
    before: GameState | None, event: Event, after: GameState, *, ending: bool = False
) -> list[Effect]:
    """What `event` tells whom; `ending`: the game ends with it (a resolution that ends the game
    invites nobody to last words: they could be given only after the end)."""
    match event:
        case GameCreated():
            return [
                Announce(
                    key="game.started",
                    params=params(
                        ruleset=event.ruleset,
                        players=len(set(event.players)),  # a player holding two cards once
                        commitment=event.commitment,
                        **_card_roster(after),
                    ),
                ),
                *_public_roles(after),
                *(role_message(after, s.seat) for s in after.seats),
            ]
        case WindowOpened():
            return _window_opened(after, event)
        case PowerSubmitted():
            sub = event.submission
            rules = rules_for(after)
            used: dict[str, Param] = {"power": sub.power.value, "target": sub.target}
            if sub.untargeted:  # used on no seat (天下无贼: 傻根), which is no pass
                used["untargeted"] = True
            out: list[Effect] = [
                Whisper(seat=sub.seat, key="power.accepted", params=params(**used))
            ]
            team = rules.team_of(after.seat(sub.seat))
            if team is not None and sub.power in rules.team_powers(team):
                out.append(
                    TeamNotice(
                        team=team,
                        key="team.submission",
                        params=params(seat=int(sub.seat), **used),
                    )
                )
            return out
        case VotePosted():
            return [_reply(event.post)]
        case NightResolved():
            return _night_resolved(_need(before), event, after, ending)
        case DayResolved():
            return _day_resolved(_need(before), event, after, ending)
        case LastWordsGiven():
            return [
                Announce(key="lastwords.text", params=params(seat=int(event.seat), text=event.text))
            ]
        case LastActTaken():
            return _last_act_taken(after, event, ending)
        case LastActsLapsed():
            return []
        case ChoiceMade():
            return [
                Whisper(
                    seat=event.seat, key="choice.accepted", params=params(target=int(event.target))
                )
            ]
        case DeadlineSet() if event.record is not None and event.record.command == "advance":
            # a post of its own before the 看表帖: it names the window, so two advances differ
            window = _need(before).window
            which: dict[str, Param] = {}
            if window is not None:
                which = {"phase": window.phase.label(), "revote": window.revote}
                if window.chooser is not None:  # a victim's choice, not a run-off
                    which["choice"] = True
            return [Announce(key="mod.advanced", params=params(**which))]
        case DeadlineSet():
            return [
                Announce(key="mod.deadline", params=params(deadline=event.deadline)),
                ScheduleDeadline(deadline=event.deadline),
            ]
        case Paused():
            return [
                Announce(key="mod.paused", params=params(remaining_ms=event.remaining_ms)),
                ScheduleDeadline(deadline=None),
            ]
        case Resumed():
            return [
                Announce(key="mod.resumed", params=params(deadline=event.deadline)),
                ScheduleDeadline(deadline=event.deadline),
            ]
        case PlayerReplaced():
            return _replaced(_need(before), event, after)
        case PlayerRemoved():
            # a player holding several cards (5.0) leaves with all of them: each is named
            left = event.record.left
            every = {"left": seats_text(left)} if len(left) > 1 else {}
            return [
                Announce(
                    key="mod.modkill",
                    params=params(seat=int(event.seat), **every, **_reason_of(event.record)),
                ),
                *_reveal_and_last_words(after, (), () if ending else event.record.last_words),
            ]
        case PowerSuspended():
            sus = event.suspension
            return [
                Announce(
                    key="mod.penalty",
                    params=params(
                        team=sus.team.value if sus.team else None,
                        seat=int(sus.seat) if sus.seat is not None else None,
                        power=sus.power.value if sus.power else None,
                        night=sus.night,
                        reason=sus.reason,
                    ),
                )
            ]
        case PostVoided():
            return [
                Announce(
                    key="mod.voided",
                    params=params(
                        post=event.post_id, reason=event.reason, **_voided_vote(before, event)
                    ),
                ),
                ReplyToPost(
                    post_id=event.post_id,
                    key="vote.voided_by_moderator",
                    params=params(reason=event.reason),
                ),
            ]
        case GameEnded():
            r = event.result
            return [
                ScheduleDeadline(deadline=None),
                Announce(
                    key="game.over",
                    params=params(
                        winner=r.winner.value,
                        after=r.after,
                        reason=r.reason,
                        roles=",".join(f"{s.seat}:{s.original_role.value}" for s in after.seats),
                        scores=",".join(f"{seat}:{points}" for seat, points in r.scores),
                        seed=after.seed,
                        commitment=after.commitment,
                    ),
                ),
                _channels(after),  # open again
                *_lift_silence(after),
                ReleaseChannels(),
                UpdateStandings(),
            ]
    return []


def _replaced(before: GameState, event: PlayerReplaced, after: GameState) -> list[Effect]:
    """A substitute takes every card of the replaced player (`engine.evolve`), whichever card
    the moderator named: the old player leaves the thread of each team their cards were in, the
    substitute joins those of the living cards, and gets a role DM and the night's power menu
    for each living card (the DM names the card dealt where the role has turned since), and the
    check answers the seat knew (`_check_history`). With one card a player, that is the named
    seat's alone. Public: the named seat and the handover, as the moderator gave them; the rest
    is private."""
    rules = rules_for(after)
    old_player = before.seat(event.seat).player
    cards = [after.seat(s) for s in after.seats_of(event.new_player)]
    living = [card for card in cards if card.alive]  # the named card is one: it is in the game
    # the role DMs first, as at the deal (the named card's first, then by seat): a failure is
    # told publicly ("cannot DM seat N"), and a team's thread calls before it would delay that
    # notice by the player's roles
    dealt = sorted(living, key=lambda card: (card.seat != event.seat, card.seat))
    gone = [card.seat for card in cards if not card.alive]
    threads: list[Effect] = []
    teams = {rules.team_of(card) for card in cards}  # a dead card's thread too: left
    for team in (t for t in Team if t in teams):
        threads.append(LeaveTeamThreads(player=old_player, team=team))
        threads.extend(
            TeamJoin(team=team, seat=card.seat) for card in living if rules.team_of(card) is team
        )
    return [
        Announce(
            key="mod.replaced",
            params=params(seat=int(event.seat), **_reason_of(event.record)),
        ),
        SeatHandover(seat=event.seat, old_player=old_player, new_player=event.new_player),
        # the first also says what the player's cards out of the game knew, as /role does
        *(role_message(after, card.seat, also=gone if card is dealt[0] else ()) for card in dealt),
        *_check_history(after, event.seat),
        *threads,
        *(whisper for card in living for whisper in _powers_whisper(after, card)),
    ]


def _check_history(state: GameState, seat: Seat) -> list[Effect]:
    """The check answers the seat (its player's every card) learned before: its own and its
    team's (`engine.view`, as /role shows them), told again to a substitute, who must play on
    from what the seat knows. Private; nothing when it knows none."""
    cards = state.seats_of(state.seat(seat).player)
    known = dict.fromkeys(c for card in cards for c in view_for(state, card).checks)
    if not known:
        return []
    checks = ";".join(f"{night}:{target}:{answer.value}" for night, target, answer in known)
    return [Whisper(seat=seat, key="check.history", params=params(checks=checks))]


def _reason_of(record: OverrideRecord) -> dict[str, Param]:
    """The moderator's reason recorded with an override, if one was given."""
    reason = dict(record.details).get("reason")
    return {"reason": reason} if reason else {}


def _voided_vote(before: GameState | None, event: PostVoided) -> dict[str, Param]:
    """Whose vote a moderator voided and what it said (the post was public already)."""
    post = next((p for p in before.posts if p.post_id == event.post_id), None) if before else None
    if post is None or post.seat is None:
        return {}
    return {
        "voter": int(post.seat),
        "target": int(post.target) if post.target is not None else None,
        "abstain": post.abstain,
    }


def _last_act_taken(after: GameState, event: LastActTaken, ending: bool) -> list[Effect]:
    """A power used on death is public and shows its user; a pass is told only to its user."""
    record = event.record
    if record.target is None:
        return [Whisper(seat=record.by, key="lastact.passed", params=params(power=record.power))]
    out: list[Effect] = [
        Announce(
            key="lastact.used",
            params=params(
                by=int(record.by),
                power=record.power.value,
                target=int(record.target),
                left=seats_text(record.left),
            ),
        )
    ]
    out.extend(_reveal_and_last_words(after, record.revealed, () if ending else record.last_words))
    out.extend(_last_act_prompts(event.last_acts))
    return out


def _last_act_prompts(acts: Sequence[tuple[Seat, Power]]) -> list[Effect]:
    """Tell each leaver who may use a power on death (until the next lock; shoot or speak)."""
    return [
        Whisper(seat=seat, key="lastact.prompt", params=params(power=power.value))
        for seat, power in acts
    ]


def _window_opened(state: GameState, event: WindowOpened) -> list[Effect]:
    window = event.window
    # The forum's rhythm (docs/rulings.md): the living talk by night and by day; each 看表帖 mutes
    # everyone until the results, and a window opening after them reopens discussion (the vote
    # channel only in a vote window). A window that keeps them shut (a victim's choice, a last
    # act) opens after the 看表帖 that shut them: it says nothing of them. (A last-act window
    # opened by a last act inside a window would leave them open: it needs two last acts open at
    # once, which no ruleset deals — `engine.speech.channels_open` says shut.)
    out: list[Effect] = [ScheduleDeadline(deadline=event.deadline)]
    channels = _channels(state)
    if channels.open:
        out.append(channels)
    if window.last_act:  # the game would end: it waits for a last act
        out.append(Announce(key="window.last_act", params=params(deadline=event.deadline)))
        return out
    if window.kind is PhaseKind.WARMUP:  # 游戏热身: talk before night 1, no vote, no power
        out.append(Announce(key="window.warmup", params=params(deadline=event.deadline)))
        return out
    if window.kind is PhaseKind.NIGHT:
        out.extend(_lift_silence(state))
        out.append(
            Announce(
                key="window.night", params=params(number=window.number, deadline=event.deadline)
            )
        )
        for seat in state.seats:
            out.extend(_powers_whisper(state, seat))
    elif window.chooser is not None:
        out.append(
            Announce(
                key="window.choice",
                params=params(
                    number=window.number,
                    chooser=int(window.chooser),
                    candidates=seats_text(window.candidates),
                    deadline=event.deadline,
                ),
            )
        )
    elif window.revote:
        out.append(
            Announce(
                key="window.revote",
                params=params(
                    number=window.number,
                    revote=window.revote,
                    candidates=seats_text(window.candidates),
                    barred=seats_text(window.barred_voters),
                    deadline=event.deadline,
                ),
            )
        )
    else:
        out.append(
            Announce(key="window.day", params=params(number=window.number, deadline=event.deadline))
        )
    return out


def _lift_silence(state: GameState) -> list[Effect]:
    """The day of the last night's silence is over: the silenced players still in the game may
    speak again (emitted when the next night opens, and at the end; performing it twice is
    harmless)."""
    last = last_silenced(state)
    if last is None:
        return []
    night, seats = last
    return [Unsilence(seat=s, day=night) for s in seats]


def _channels(state: GameState) -> SetChannelsOpen:
    """The channels as they are in `state` (`engine.speech.channels_open`), the vote channel
    named only where it differs from the game channel."""
    now = channels_open(state)
    assert now is not None  # a window has opened
    return SetChannelsOpen(
        open=now.game,
        vote=None if now.vote == now.game else now.vote,
        window=state.window_index if now.vote else None,
    )


def _powers_whisper(state: GameState, seat: SeatState) -> list[Effect]:
    """The night's power menu for a seat (in an open night window, penalties taken out)."""
    window = state.window
    if window is None or window.kind is not PhaseKind.NIGHT:
        return []
    powers = usable_night_powers(state, rules_for(state), seat)
    if not powers:
        return []
    card: dict[str, Param] = {}
    if len(state.seats_of(seat.player)) > 1:  # 5.0 双身份: which of the player's cards this is
        card["card"] = int(seat.seat)
    return [
        Whisper(
            seat=seat.seat,
            key="window.powers",
            params=params(
                number=window.number,
                powers=",".join(p.value for p in powers),
                deadline=state.deadline,
                **card,
            ),
        )
    ]


def _reveal_and_last_words(
    state: GameState, revealed: Sequence[tuple[Seat, str]], last_words: Sequence[Seat]
) -> list[Effect]:
    """What is shown of the leavers, and the invitation to last words, which says until when
    they may be given (the ruleset's window, docs/rules.md §1.8)."""
    out: list[Effect] = []
    if revealed:
        out.append(
            Announce(
                key="reveal", params=params(revealed=",".join(f"{s}:{v}" for s, v in revealed))
            )
        )
    if last_words:
        rules = rules_for(state)
        policy = rules.last_words(len(state.seats), Counter(s.original_role for s in state.seats))
        out.append(
            Announce(
                key="lastwords.invite",
                params=params(seats=seats_text(last_words), until=policy.window),
            )
        )
        out.extend(Whisper(seat=s, key="lastwords.prompt") for s in last_words)
    return out


def _night_resolved(
    before: GameState, event: NightResolved, after: GameState, ending: bool
) -> list[Effect]:
    record = event.record
    out: list[Effect] = [
        ClockPost(phase=f"night {record.number}", deadline=before.deadline),
        _channels(after),  # shut from the 看表帖 until the results
        Announce(
            key="night.result", params=params(number=record.number, left=seats_text(record.left))
        ),
    ]
    out.extend(
        Announce(key="night.virtual_out", params=params(number=record.number, who=who))
        for who in record.virtual_out
    )
    out.extend(TeamNotice(team=team, key=key) for team, key in record.notices)
    for check in record.checks:
        for seat in check.by:
            out.append(
                Whisper(
                    seat=seat,
                    key="check.result",
                    params=params(target=int(check.target), result=check.result.value),
                )
            )
    if record.silenced:
        out.append(
            Announce(
                key="night.silenced",
                params=params(number=record.number, seats=seats_text(record.silenced)),
            )
        )
        out.extend(Silence(seat=s, day=record.number) for s in record.silenced)
    out.extend(_reveal_and_last_words(after, record.revealed, () if ending else record.last_words))
    out.extend(_last_act_prompts(event.last_acts))
    return out


def _clock_phase(window: Window) -> str:
    """The window a day's 看表帖 closes: `day 2`, a run-off `day 2 revote 1`, a victim's choice
    `day 2 choice`."""
    label = f"day {window.number}"
    if window.chooser is not None:
        return f"{label} choice"
    return f"{label} revote {window.revote}" if window.revote else label


def _day_resolved(
    before: GameState, event: DayResolved, after: GameState, ending: bool
) -> list[Effect]:
    record = event.record
    out: list[Effect] = []
    window = before.window  # None for a day's later vote groups: they follow its first at once
    first = window is not None
    # one of several votes of the day (无间道: a faction's): its announcements say which
    group: dict[str, Param] = {"group": record.group} if record.group is not None else {}
    if record.confess is None and window is not None:
        out.append(ClockPost(phase=_clock_phase(window), deadline=before.deadline))
    if first:
        out.append(_channels(after))  # shut from the 看表帖 (or the confession) on
    if record.tie is not None and record.tie.then == "lots":
        # drawn where the votes are (seed 004: 抽签过程必须在投票帖中进行), before the results
        out.append(_lot_post(record.number, record.tie, after.commitment, group))
    if record.confess is not None:
        out.append(Announce(key="day.confess", params=params(seat=int(record.confess))))
    # a victim's choice is no vote: it has no 票型 (lots draw when the pick lapses)
    chosen = window is not None and window.chooser is not None
    if record.confess is None and not chosen:
        votes = ";".join(f"{v}>{t if t is not None else 'abstain'}" for v, t in record.votes)
        void = ";".join(_void_item(p) for p in record.void_posts)
        tally: dict[str, Param] = {
            "number": record.number, "revote": record.revote, "votes": votes, "void": void,
        }  # fmt: skip
        plain = Counter(t for _, t in record.votes if t is not None)
        if dict(record.tally) != dict(plain):  # votes of different weights (5.0: per card)
            tally["counts"] = ";".join(f"{t}:{n}" for t, n in record.tally)
            rules = rules_for(before)
            weights = ((v, rules.vote_weight(before, before.seat(v))) for v, _ in record.votes)
            tally["weights"] = ";".join(f"{v}:{w}" for v, w in weights if w != 1)
        if before.deadline is not None:  # a late post's time is shown against it
            tally["deadline"] = before.deadline
        tally.update(group)
        out.append(Announce(key="day.tally", params=params(**tally)))
    tie = record.tie
    if tie is not None:
        # the victim's pick made: whom they chose (`tie.chosen`), not the tie again
        picked = tie.then == "choice" and tie.drawn is not None
        out.append(
            Announce(
                key="tie.chosen" if picked else f"tie.{tie.then}",
                params=params(
                    tied=seats_text(tie.tied),
                    drawn=tie.drawn,
                    label=tie.label,
                    chooser=tie.chooser,
                    commitment=after.commitment,
                    **group,
                ),
            )
        )
    if record.vetoed is not None:
        out.append(Announce(key="day.vetoed", params=params(seat=int(record.vetoed))))
    if record.spared is not None:
        out.append(Announce(key="day.spared", params=params(seat=int(record.spared), **group)))
    # said already: day.spared and tie.none say nobody leaves, tie.draw that the game ends in a
    # draw (no "nobody leaves today" after it: no day goes on); a run-off or a victim's choice
    # to come says who may still leave
    said = record.spared is not None and not record.left
    if tie is not None and not record.left:
        said = said or tie.then in ("none", "draw")
    pending = tie is not None and (
        tie.then == "revote" or (tie.then == "choice" and tie.drawn is None)
    )
    if not said and not pending:
        left = seats_text(record.left)
        out.append(
            Announce(key="day.result", params=params(number=record.number, left=left, **group))
        )
    out.extend(_reveal_and_last_words(after, record.revealed, () if ending else record.last_words))
    out.extend(_last_act_prompts(event.last_acts))
    return out


def _lot_post(day: int, tie: TieRecord, commitment: str, group: dict[str, Param]) -> Effect:
    """The draw of a tie, posted in the day's vote channel: who was tied, who was drawn, and what
    anyone needs to check it (`faguan verify`, docs/fairness.md): the label and the commitment."""
    return VoteChannelPost(
        key="lots.drawn",
        params=params(
            day=day,
            tied=seats_text(tie.tied),
            drawn=tie.drawn,
            label=tie.label,
            commitment=commitment,
            **group,
        ),
    )


def _void_item(post: VotePost) -> str:
    """`seat:reason:at` for the 票型's list of void posts (seat 0: not a player)."""
    reason = (post.void_reason or "").removeprefix("vote.")
    return f"{post.seat or 0}:{reason}:{post.at if post.at is not None else ''}"
