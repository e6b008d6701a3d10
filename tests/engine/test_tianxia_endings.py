"""天下无贼's win conditions (docs/rulesets/tianxia.md "Win conditions"): everyone out is a draw;
once 傻根 is dead, the bad thieves and the police all out with a good thief alive → the good
thieves."""

from __future__ import annotations

from gamekit import Game

from engine.commands import ModKill, SubmitPower
from engine.model import Camp, Power, Seat
from engine.state import NightRecord

P, G, B, C = "police", "good_thief", "bad_thief", "civilian"
# tianxia 12: police 1-3, good thieves 4-6, bad thieves 7-9, civilians 10-12
TIANXIA = [P, P, P, G, G, G, B, B, B, C, C, C]


def test_the_last_good_thief_and_the_last_bad_thief_killing_each_other_is_a_draw() -> None:
    game = Game("tianxia", TIANXIA)
    for seat in (1, 2, 3, 5, 6, 8, 9, 10, 11, 12):  # moderators remove the inactive
        game.do(ModKill(seat=Seat(seat)))
        assert game.state.result is None  # a good and a bad thief alive, 傻根 alive: no side
    assert game.alive == [4, 7]
    game.night((4, "kill", 7), (7, "kill", 4))  # kills resolve at once: both die
    record = game.state.history[-1]
    assert isinstance(record, NightRecord) and record.left == (4, 7)
    result = game.state.result
    assert result is not None
    assert result.winner is Camp.DRAW and result.reason == "win.nobody_left_draw"
    assert result.after == "night 1"
    assert all(score == 5 for _, score in result.scores)  # a draw: 5 each (Ruling)


def test_after_shagen_dies_the_good_thieves_win_when_the_bad_thieves_and_police_are_out() -> None:
    game = Game("tianxia", TIANXIA)
    game.do(SubmitPower(player="p7", power=Power.ROB))  # unguarded: 傻根 dies
    game.power(4, "kill", 8)
    game.power(1, "check", 9)
    game.lock()
    assert game.state.virtual_out == {"shagen"} and game.alive == [
        1,
        2,
        3,
        4,
        5,
        6,
        7,
        9,
        10,
        11,
        12,
    ]
    for seat in (1, 2, 3):  # the police removed by a moderator: no side wins yet
        game.do(ModKill(seat=Seat(seat)))
    assert game.state.result is None
    game.day({4: 9, 5: 9, 6: 9, 10: 9})
    assert game.state.result is None  # bad thief 7 alive, 3 of the 9 others out: no win
    game.night((7, "kill", 10))  # 傻根 dead: the bad thieves must kill
    assert game.state.result is None  # 4 of 9 others dead: under half
    game.day({4: 7, 5: 7, 6: 7})
    result = game.state.result
    assert result is not None
    assert result.winner is Camp.GOOD_THIEVES
    assert result.reason == "win.bad_thieves_and_police_out" and result.after == "day 2"
    scores = dict(result.scores)
    assert scores[4] == 30 and scores[7] == -10 and scores[1] == -10 and scores[11] == -5
