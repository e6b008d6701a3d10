"""Table-driven rules tests for v4_lone, v4_butterfly, basic's advanced roles, v5, tianxia and
wujiandao (docs/rulesets/)."""

from __future__ import annotations

import pytest
from gamekit import Game

from engine.commands import ModKill, Penalize
from engine.effects import TeamJoin
from engine.errors import ActorError, TargetError
from engine.game import replay_events
from engine.model import Camp, Power, Role, Seat, Team
from engine.publish import effects_for
from engine.rulesets import RULESETS
from engine.state import NightRecord
from engine.view import view_for

C, K, P, D = "civilian", "killer", "police", "doctor"
LK, LP = "lone_killer", "lone_police"


def night_left(game: Game) -> list[int]:
    record = game.state.history[-1]
    assert isinstance(record, NightRecord)
    return [int(s) for s in record.left]


# -- v4_lone -------------------------------------------------------------------------------------
# 16: killers 1-3, lone killer 4, police 5-6, lone police 7, doctor 8, civilians 9-16
V4L = [K, K, K, LK, P, P, LP, D] + [C] * 8


def test_v4_lone_is_listed_with_its_chinese_name_and_16_players() -> None:
    rules = RULESETS["v4_lone"]
    assert (rules.name_zh, rules.min_players, rules.max_players) == ("4.0 独杀版", 16, 16)


def test_v4_lone_lone_killer_starts_after_a_killer_is_out_lone_police_on_night_2() -> None:
    game = Game("v4_lone", V4L)
    with pytest.raises(ActorError):
        game.power(4, "kill", 9)
    with pytest.raises(ActorError):
        game.power(7, "check", 1)
    assert view_for(game.state, Seat(4)).powers == ()
    game.night((1, "kill", 9))
    game.day({5: 1, 6: 1, 7: 1})  # a killer out by the vote: the lone killer is active
    assert view_for(game.state, Seat(4)).powers == (Power.KILL,)
    assert view_for(game.state, Seat(7)).powers == (Power.CHECK,)
    game.night((4, "kill", 10), (7, "check", 2), (2, "kill", 11))
    assert night_left(game) == [10, 11]
    record = game.state.history[-1]
    assert isinstance(record, NightRecord)
    assert [(c.team, c.by, c.target, c.result.value) for c in record.checks] == [
        (None, (7,), 2, "killer")
    ]
    game.lock()
    with pytest.raises(TargetError):
        game.power(4, "kill", 4)  # never himself


def test_v4_lone_kills_between_loners_and_teams_merge_the_same_night() -> None:
    game = Game("v4_lone", V4L)
    game.night((1, "kill", 9))
    game.day({5: 1, 6: 1})
    # the lone killer kills a killer and the police check the lone police, the same night
    events = game.events[:]
    game.night((4, "kill", 2), (5, "check", 7), (8, "save", 2))
    assert night_left(game) == []
    assert game.state.seat(4).role is Role.KILLER and game.state.seat(7).role is Role.POLICE
    assert game.state.seat(2).needles == (2,)  # a merging kill is no attack: an empty needle
    effects = effects_for(replay_events(events), game.events[len(events) :])
    joined = [e for e in effects if isinstance(e, TeamJoin)]
    assert {(j.team, j.seat) for j in joined} == {(Team.KILLERS, 4), (Team.POLICE, 7)}
    seen = view_for(game.state, Seat(2))
    assert seen.teammates == (1, 3, 4) and seen.seats[3].role is Role.KILLER
    assert view_for(game.state, Seat(7)).teammates == (5, 6)


def test_v4_lone_killers_killing_the_active_lone_killer_merge_him() -> None:
    game = Game("v4_lone", V4L)
    game.night((1, "kill", 4))  # not active yet: he dies
    assert night_left(game) == [4]
    fresh = Game("v4_lone", V4L)
    fresh.night((1, "kill", 1))  # the killers kill one of their own (allowed)
    assert night_left(fresh) == [1]
    fresh.lock()
    fresh.night((2, "kill", 4), (3, "kill", 4), (4, "kill", 9))
    assert night_left(fresh) == [9]
    assert fresh.state.seat(4).role is Role.KILLER and fresh.state.seat(4).alive


def test_v4_lone_checks_tell_the_card_dealt() -> None:
    answers = {}
    for target in (1, 4, 7, 8, 9, 6):
        g = Game("v4_lone", V4L)
        g.night((5, "check", target))
        record = g.state.history[-1]
        assert isinstance(record, NightRecord)
        answers[target] = record.checks[0].result.value
    assert answers == {
        1: "killer", 4: "lone_killer", 7: "lone_police", 8: "doctor", 9: "civilian", 6: "police",
    }  # fmt: skip


def test_v4_lone_penalty_on_a_team_spares_the_loner_until_he_merges() -> None:
    game = Game("v4_lone", V4L)
    game.night((1, "kill", 9))
    game.do(Penalize(team=Team.KILLERS, reason="诈尸"))
    game.day({5: 1, 6: 1})
    with pytest.raises(ActorError):
        game.power(2, "kill", 10)
    game.power(4, "kill", 10)  # the lone killer kills normally
    game.power(8, "save", 8)  # the doctor is never affected
    game.lock()
    assert night_left(game) == [10]


def test_v4_lone_reveals_the_card_dealt_and_modkill_shows_nothing() -> None:
    game = Game("v4_lone", V4L)
    game.night((1, "kill", 9))
    game.day({5: 1, 6: 1})
    game.night((4, "kill", 2))  # merges
    game.day({5: 4, 6: 4})
    record = game.state.history[-1]
    assert record.revealed == ((4, "lone_killer"),)  # type: ignore[union-attr]
    game.do(ModKill(seat=Seat(16)))
    assert game.state.history[-1].left == (16,)  # type: ignore[union-attr]
    assert view_for(game.state, None).seats[15].role is None


V4L_WINS = [
    # (nights, days, winner, reason)
    ([[(5, "check", 1)]], [{5: 1}], None, None),
    ([[(1, "kill", 5)], [(1, "kill", 6)], [(1, "kill", 7)]], [{1: 8}, {1: 9}], Camp.KILLERS,
     "win.good_specials_out"),
]  # fmt: skip


@pytest.mark.parametrize(("nights", "days", "winner", "reason"), V4L_WINS)
def test_v4_lone_wins(
    nights: list[list[tuple[int, str, int]]],
    days: list[dict[int, int]],
    winner: Camp | None,
    reason: str | None,
) -> None:
    game = Game("v4_lone", V4L)
    for i, night in enumerate(nights):
        game.night(*night)
        if i < len(days):
            game.day(days[i])
    result = game.state.result
    assert (result.winner if result else None) is winner
    assert (result.reason if result else None) == reason


def test_v4_lone_good_wins_when_killers_and_lone_killer_are_out_in_any_order() -> None:
    game = Game("v4_lone", V4L)
    for seat in (1, 2, 3):
        game.do(ModKill(seat=Seat(seat)))
    assert game.state.result is None  # the lone killer is still in
    game.do(ModKill(seat=Seat(4)))
    result = game.state.result
    assert result is not None and result.winner is Camp.GOOD
    assert dict(result.scores)[Seat(4)] == -10 and dict(result.scores)[Seat(7)] == 30
