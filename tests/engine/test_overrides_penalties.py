"""Moderator overrides in the engine: penalties as data, who is pending, the advance as an
override, override times, and every vote post kept for the record."""

from __future__ import annotations

import pytest
from gamekit import Game

from engine import codec
from engine.commands import Lock, Penalize, ReplacePlayer, SubmitPower
from engine.effects import Announce, OverrideLogged, UpdateStandings, Whisper, for_delivery
from engine.errors import ActorError, ModeratorError
from engine.events import DeadlineSet, PowerSuspended
from engine.game import replay_events
from engine.model import Camp, Instant, Power, Seat, Team
from engine.pending import pending, window_key
from engine.publish import effects_for
from engine.record import record_of

V2 = ["killer", "killer", "police", "police", "civilian", "civilian", "civilian", "civilian"]


def test_a_team_penalty_suspends_its_power_for_the_next_night_only() -> None:
    g = Game("v2", V2)
    g.lock()  # night 1
    events = g.do(Penalize(team=Team.KILLERS, reason="诈尸", by="mod", at=Instant(5)))
    assert isinstance(events[0], PowerSuspended) and events[0].suspension.night == 2
    g.day({})
    assert window_key(g.state) == "night-2"
    with pytest.raises(ActorError) as refused:
        g.power(1, "kill", 5)
    assert refused.value.key == "actor.power_suspended"
    g.power(3, "check", 1)  # the police are not affected
    assert pending(g.state).powers == ()  # a suspended power is nothing to do
    g.lock()
    assert g.state.history[-1].left == ()  # type: ignore[attr-defined]
    g.day({})
    g.power(1, "kill", 5)  # night 3: the power is back
    assert replay_events(g.events) == g.state


def test_a_seat_penalty_and_its_public_announcement_reveal_nothing() -> None:
    g = Game("v2", V2)
    before = g.state
    events = g.do(Penalize(seat=Seat(5), reason="late", by="mod"))  # 5 is a civilian
    effects = effects_for(before, events)
    announce = next(e for e in effects if isinstance(e, Announce))
    assert announce.key == "mod.penalty" and dict(announce.params)["power"] is None
    log = next(e for e in effects if isinstance(e, OverrideLogged))
    assert log.command == "penalty" and dict(log.params)["seat"] == "5"
    # the same announcement for a seat that does hold a power
    other = Game("v2", V2)
    other_effects = effects_for(other.state, other.do(Penalize(seat=Seat(1), reason="late")))
    assert [type(e) for e in other_effects] == [type(e) for e in effects]
    with pytest.raises(ModeratorError):
        g.do(Penalize(reason="nobody"))
    with pytest.raises(ModeratorError):
        g.do(Penalize(team=Team.POLICE, seat=Seat(3)))


def test_pending_lists_who_not_what() -> None:
    g = Game("v2", V2)
    assert pending(g.state).powers == (1, 2, 3, 4)
    g.power(1, "kill", 5)  # the killers' team has chosen: both members are done
    g.power(3, "check", 1)
    assert pending(g.state).powers == ()
    g.lock()
    g.vote(3, 1)
    g.vote(4, None)  # an abstention is a vote
    assert pending(g.state).votes == (1, 2, 6, 7, 8)
    assert window_key(g.state) == "day-1"


def test_advance_by_a_moderator_is_a_recorded_override() -> None:
    g = Game("v2", V2)
    before = g.state
    events = g.do(Lock(at=Instant(1_000), forced=True, by="mod"))
    assert isinstance(events[0], DeadlineSet) and events[0].record is not None
    effects = effects_for(before, events)
    assert any(isinstance(e, Announce) and e.key == "mod.advanced" for e in effects)
    overrides = record_of(g.state)["overrides"]
    assert overrides == [
        {"command": "advance", "phase": "night 1", "by": "mod", "at": "1970-01-01T00:00:01.000Z"}
    ]


def test_day_records_keep_every_post_and_the_game_end_updates_standings() -> None:
    g = Game("v2", V2)
    g.lock()
    g.vote(3, 1, at=10)
    g.vote(3, 2, at=20)  # 改票: both posts are kept for their links
    g.lock()
    day = record_of(g.state)["phases"][1]
    assert [p["post_id"] for p in day["posts"]] == ["1", "2"]
    assert day["posts"][0] == {
        "post_id": "1",
        "by": "p3",
        "author": "p3",
        "target": "p1",
        "at": "1970-01-01T00:00:00.010Z",
        "void": None,
    }
    from engine.commands import EndGame

    before = g.state
    effects = effects_for(before, g.do(EndGame(winner=Camp.DRAW, by="mod")))
    assert any(isinstance(e, UpdateStandings) for e in effects)
    assert codec.load(codec.dump(g.events[-1])) == g.events[-1]


def test_the_posts_of_a_day_the_game_ended_in_are_in_the_record() -> None:
    """/mod end (or a removal that decides the game) in a vote window: no lock closed it, so it
    has no day record; its posts, one voided by a moderator, were missing from the record."""
    from engine.commands import EndGame, VoidPost

    g = Game("v2", V2)
    g.lock()
    g.vote(3, 1, at=10)
    g.vote(4, 2, at=20)
    g.do(VoidPost(post_id="2", reason="诈尸", by="mod"))
    g.do(EndGame(winner=Camp.DRAW, by="mod"))
    record = record_of(g.state)
    assert [p["phase"] for p in record["phases"]] == ["night"]
    posts = record["unlocked_posts"]
    assert [(p["post_id"], p["by"], p["target"]) for p in posts] == [
        ("1", "p3", "p1"),
        ("2", "p4", "p2"),
    ]
    assert posts[0]["void"] is None and posts[1]["void"] == "vote.voided_by_moderator"


def test_a_record_without_an_open_day_has_no_unlocked_posts() -> None:
    g = Game("v2", V2)
    g.lock()
    g.vote(3, 1, at=10)
    g.lock()
    assert "unlocked_posts" not in record_of(g.state)


def test_a_substitute_at_night_gets_the_role_and_the_power_menu() -> None:
    g = Game("v2", V2)
    before = g.state
    effects = effects_for(before, g.do(ReplacePlayer(seat=Seat(1), new_player="sub")))
    keys = [e.key for e in effects if isinstance(e, Whisper)]
    assert keys == ["role.dealt", "window.powers"]
    g.do(SubmitPower(player="sub", power=Power.KILL, target=Seat(5)))
    with pytest.raises(ActorError):
        g.do(SubmitPower(player="p1", power=Power.KILL, target=Seat(6)))


@pytest.mark.parametrize("seat", range(1, len(V2) + 1))
def test_a_substitutes_private_effects_begin_alike_whatever_the_seat_holds(seat: int) -> None:
    """The role DM comes first for every seat: its failure is told in public ("cannot DM seat
    N"), so a team seat's thread calls before it would delay that notice by the seat's role."""
    g = Game("v2", V2)
    before = g.state
    effects = effects_for(before, g.do(ReplacePlayer(seat=Seat(seat), new_player="sub")))
    _public, private = for_delivery(effects)
    assert isinstance(private[0], Whisper) and private[0].key == "role.dealt"


def test_replay_files_take_a_penalty_step() -> None:
    from bot.records.replay import run

    data = {
        "ruleset": "v2",
        "seed": "s",
        "players": list("ABCDEFGH"),
        "roles": {"A": "killer", "B": "killer", "C": "police", "D": "police"},
        "steps": [
            {"do": "lock"},
            {"do": "mod", "command": "penalty", "team": "killers", "reason": "诈尸"},
            {"do": "lock"},
            {"do": "power", "by": "A", "power": "kill", "target": "E"},
            {"do": "power", "by": "C", "power": "check", "target": "A"},
            {"do": "lock"},
        ],
    }
    record = run(data).record
    assert [r["step"] for r in record["rejected"]] == [4]
    assert record["phases"][2]["left"] == [] and record["phases"][2]["checks"]
    assert record["overrides"][0]["command"] == "penalty"
