"""The forum's rhythm in the effects (issue 15, points 1 and 6; docs/rulings.md "The forum's
rhythm"): the living talk by night, the vote channel opens only for votes; every 看表帖 is a post of
its own and mutes everyone until the results; a tie's lots are posted in the vote channel; the
warm-up (游戏热身) is an option, off by default, that opens a discussion window before night 1."""

from __future__ import annotations

import pytest
from gamekit import Game

from bot.records.replay import run
from engine.commands import Lock, PostVote, ReplacePlayer, SubmitPower
from engine.effects import (
    PRIVATE,
    Announce,
    Bulletin,
    ClockPost,
    Effect,
    LeaveTeamThreads,
    SeatHandover,
    SeatLeft,
    SetChannelsOpen,
    TeamJoin,
    VoteChannelPost,
    Whisper,
    as_posts,
    for_delivery,
)
from engine.errors import PhaseError, SetupError
from engine.game import apply, new_game, replay_events, start_events
from engine.model import Instant, PhaseKind, Power, Seat, Team
from engine.pending import pending
from engine.publish import effects_for
from engine.record import record_of
from engine.setup import option_names, read_options
from engine.state import Window

V2 = ["killer", "killer", "police", "police", "civilian", "civilian", "civilian", "civilian"]


def _lock(g: Game) -> list[Effect]:
    before = g.state
    return as_posts(effects_for(before, g.do(Lock())))


def _shape(effects: list[Effect]) -> list[str]:
    """The public posts and the channel edits, in order."""
    out: list[str] = []
    for e in effects:
        if isinstance(e, ClockPost):
            out.append("clock")
        elif isinstance(e, Bulletin):
            out.append("post:" + e.parts[0].key if isinstance(e.parts[0], Announce) else "post")
        elif isinstance(e, Announce):
            out.append("post:" + e.key)
        elif isinstance(e, SetChannelsOpen):
            out.append(f"open game={e.open} vote={e.vote_open}")
        elif isinstance(e, VoteChannelPost):
            out.append("vote channel:" + e.key)
    return out


def test_the_first_night_opens_discussion_but_not_the_vote_channel() -> None:
    created = new_game(
        ruleset="v2", players=[f"p{i}" for i in range(1, 9)], seed="s",
        roles={f"p{i}": r for i, r in enumerate(V2, 1)},
    )  # fmt: skip
    effects = effects_for(None, start_events(created))
    opens = [e for e in effects if isinstance(e, SetChannelsOpen)]
    assert opens == [SetChannelsOpen(open=True, vote=False)]


def test_each_lock_posts_the_clock_alone_mutes_then_results_then_reopens_discussion() -> None:
    g = Game("v2", V2)
    g.power(1, "kill", 5)
    night = _shape(_lock(g))
    g.vote(1, 6)
    g.vote(2, 6)
    day = _shape(_lock(g))
    assert night == [
        "clock",
        "open game=False vote=False",
        "post:night.result",
        "open game=True vote=True",
        "post:window.day",
    ]
    assert day == [
        "clock",
        "open game=False vote=False",
        "post:day.tally",
        "open game=True vote=False",  # the night: discussion, no votes
        "post:window.night",
    ]


def test_a_tie_drawn_by_lots_is_posted_in_the_vote_channel_before_the_result() -> None:
    g = Game("v2", V2)
    g.lock()
    g.vote(1, 5)
    g.vote(3, 6)
    effects = _lock(g)
    assert _shape(effects)[:4] == [
        "clock", "open game=False vote=False", "vote channel:lots.drawn", "post:day.tally",
    ]  # fmt: skip
    (lot,) = [e for e in effects if isinstance(e, VoteChannelPost)]
    (draw,) = g.state.lots
    values = dict(lot.params)
    assert values["label"] == draw.label and values["drawn"] == int(draw.drawn)
    assert values["tied"] == "5,6" and values["commitment"] == g.state.commitment
    assert values["day"] == 1


def test_a_tie_that_goes_to_a_run_off_draws_nothing_in_the_vote_channel() -> None:
    g = Game("v2", V2, options={"tie": "revote"})
    g.lock()
    g.vote(1, 5)
    g.vote(3, 6)
    assert not [e for e in _lock(g) if isinstance(e, VoteChannelPost)]


def test_a_run_offs_reopening_names_the_run_off() -> None:
    """The vote channel shut at the 看表帖 opens again for the run-off, naming its window: the
    shell tells posts made before that opening from those after it."""
    g = Game("v2", V2, options={"tie": "revote"})
    g.lock()
    day = g.state.window_index
    g.vote(1, 5)
    g.vote(3, 6)
    before = g.state
    effects = effects_for(before, g.do(Lock()))
    assert g.state.window is not None and g.state.window.revote == 1
    opened = [e for e in effects if isinstance(e, SetChannelsOpen) and e.vote_open]
    assert [e.window for e in opened] == [g.state.window_index] and g.state.window_index > day


def test_warmup_is_an_option_off_by_default() -> None:
    assert "warmup" in option_names()
    assert read_options({}).warmup == 0
    assert read_options({"warmup": 90}).warmup == 90
    for bad in (-1, "30", True, 10_081):
        with pytest.raises(SetupError):
            read_options({"warmup": bad})
    g = Game("v2", V2)
    assert g.state.window is not None and g.state.window.kind is PhaseKind.NIGHT
    assert "warmup" not in record_of(g.state)["options"]


def test_the_warmup_is_discussion_only_then_night_one_opens() -> None:
    g = Game("v2", V2, options={"warmup": 60})
    window = g.state.window
    assert window is not None and window.kind is PhaseKind.WARMUP and window.number == 0
    opening = effects_for(None, g.events)
    assert SetChannelsOpen(open=True, vote=False) in opening
    assert any(isinstance(e, Announce) and e.key == "window.warmup" for e in opening)
    assert not any(isinstance(e, Announce) and e.key == "window.night" for e in opening)
    with pytest.raises(PhaseError):  # no vote in the warm-up
        apply(g.state, PostVote(player="p3", post_id="1", target=Seat(1)))
    with pytest.raises(PhaseError):  # no power either
        apply(g.state, SubmitPower(player="p1", power=Power.KILL, target=Seat(5)))
    assert pending(g.state).powers == () and pending(g.state).votes == ()
    effects = _lock(g)
    assert not [e for e in effects if isinstance(e, ClockPost)]  # nobody is muted
    assert _shape(effects) == ["open game=True vote=False", "post:window.night"]
    assert g.state.window == Window(kind=PhaseKind.NIGHT, number=1)
    g.night((1, "kill", 5))
    assert replay_events(g.events) == g.state
    record = record_of(g.state)
    assert record["options"]["warmup"] == 60
    assert [p["phase"] for p in record["phases"]] == ["night"]  # the warm-up settles nothing


def test_a_replay_with_a_warmup_locks_it_then_plays_as_usual() -> None:
    replay = run(
        {
            "ruleset": "v2",
            "seed": "warm",
            "players": [f"p{i}" for i in range(1, 9)],
            "roles": {f"p{i}": r for i, r in enumerate(V2, 1)},
            "options": {"warmup": 30},
            "steps": [
                {"do": "lock"},
                {"do": "power", "by": "p1", "power": "kill", "target": "p5"},
                {"do": "lock"},
            ],
        }
    )
    assert replay.record["options"]["warmup"] == 30
    assert replay.record["phases"][0]["left"] == ["p5"]
    assert replay.record["rejected"] == []


def test_private_effects_come_after_every_public_one() -> None:
    """A killer voted out leaves the channels in public and the team thread in private, after
    the next window's post: the time a private step takes must not fall between public posts."""
    g = Game("v2", V2)
    g.power(1, "kill", 5)
    g.lock()
    for seat in (3, 4, 6, 7):
        g.vote(seat, 1)
    before = g.state
    public, private = for_delivery(effects_for(before, g.do(Lock())))
    assert SeatLeft(seat=Seat(1)) in public
    assert LeaveTeamThreads(player="p1") in private
    assert all(isinstance(e, PRIVATE) for e in private)
    assert not any(isinstance(e, PRIVATE) for e in public)
    assert isinstance(public[-1], Announce) and public[-1].key == "window.night"
    shape = _shape(public)
    assert shape.index("post:day.tally") < shape.index("post:window.night")


def test_a_substitute_takes_the_team_thread_in_private() -> None:
    g = Game("v2", V2)
    before = g.state
    events = g.do(ReplacePlayer(seat=Seat(2), new_player="q2", by="mod", at=Instant(0)))
    public, private = for_delivery(effects_for(before, events))
    assert SeatHandover(seat=Seat(2), old_player="p2", new_player="q2") in public
    assert isinstance(private[0], Whisper) and private[0].key == "role.dealt"  # first, as dealt
    assert private[1:3] == [
        LeaveTeamThreads(player="p2", team=Team.KILLERS),
        TeamJoin(team=Team.KILLERS, seat=Seat(2)),
    ]
    assert {type(e) for e in private[3:]} == {Whisper}  # the night's menu
