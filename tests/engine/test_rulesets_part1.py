"""Table-driven rules tests for v31, v1, v1_inspector and the 2.0 variants (docs/rulesets/)."""

from __future__ import annotations

import pytest
from gamekit import Game

from engine.commands import ChooseTied, Lock, ModKill, SubmitPower
from engine.effects import Announce, TeamNotice, Whisper
from engine.errors import ActorError, SetupError, TargetError
from engine.game import new_game
from engine.model import Camp, CheckResult, Power, Role, Seat, Team
from engine.publish import effects_for, role_message
from engine.record import record_of
from engine.rulesets import RULESETS
from engine.state import DayRecord, NightRecord
from engine.verify import verify_record
from engine.view import view_for

C, K, P, D = "civilian", "killer", "police", "doctor"
SK, SP = "secret_killer", "secret_police"
T = "special_police"

# -- v31 ---------------------------------------------------------------------------------------
# 12: killers 1-2, secret killer 3, police 4, special police 5, doctor 6, civilians 7-12
V31 = [K, K, SK, P, T, D, C, C, C, C, C, C]

V31_NIGHT_ONE = [
    # (actions, who leaves)
    ([(1, "kill", 7)], [7]),
    ([(1, "kill", 5)], []),  # the special police cannot be killed before it fires
    ([(1, "kill", 5), (5, "shoot", 1)], [1]),  # immunity judged at the start of the night
    ([(1, "kill", 3)], []),  # the secret killer is never killed by the killers
    ([(3, "shoot", 5)], [5]),  # the secret killer's bullet kills the special police
    ([(3, "shoot", 5), (6, "save", 5)], []),  # and can be saved
    ([(3, "shoot", 4)], []),  # and has no effect on anyone else
    ([(3, "shoot", 1)], []),
    ([(5, "shoot", 1)], [1]),  # the special police's bullet kills a killer
    ([(5, "shoot", 3)], [3]),  # or the secret killer
    ([(5, "shoot", 3), (6, "save", 3)], []),  # savable
    ([(5, "shoot", 7)], []),  # no effect on a civilian
    ([(5, "shoot", 4)], []),  # nor on the police
    ([(5, "shoot", 3), (3, "shoot", 5)], [3, 5]),  # both fire at each other
    ([(1, "kill", 7), (6, "save", 7)], []),
]


@pytest.mark.parametrize(("actions", "left"), V31_NIGHT_ONE)
def test_v31_night_one(actions: list[tuple[int, str, int]], left: list[int]) -> None:
    game = Game("v31", V31)
    game.night(*actions)
    record = game.state.history[-1]
    assert isinstance(record, NightRecord) and list(record.left) == left


V31_CHECKS = [
    # (other actions tonight, target, answer)
    ([], 1, "killer"),
    ([], 3, "good"),  # an unfired secret killer: the civilian sign
    ([(3, "shoot", 7)], 3, "good"),  # the police act before the secret killer fires
    ([], 5, "good"),  # the special police
    ([], 6, "good"),  # the doctor
    ([], 7, "good"),
]


@pytest.mark.parametrize(("actions", "target", "answer"), V31_CHECKS)
def test_v31_checks(actions: list[tuple[int, str, int]], target: int, answer: str) -> None:
    game = Game("v31", V31)
    game.night(*actions, (4, "check", target))
    record = game.state.history[-1]
    assert isinstance(record, NightRecord)
    assert [c.result.value for c in record.checks] == [answer]


def test_v31_fired_secret_killer_checks_killer_the_next_night_and_joins_the_kill() -> None:
    game = Game("v31", V31)
    game.night((3, "shoot", 7))
    assert game.state.seat(3).role.value == "killer"
    game.lock()
    game.night((4, "check", 3), (1, "kill", 8), (3, "kill", 9), (2, "kill", 9))
    record = game.state.history[-1]
    assert isinstance(record, NightRecord)
    assert [c.result.value for c in record.checks] == ["killer"]
    assert record.left == (9,)
    game.lock()
    with pytest.raises(ActorError):  # its bullet is spent
        game.power(3, "shoot", 10)


def test_v31_fired_special_police_is_a_civilian_and_can_be_killed() -> None:
    game = Game("v31", V31)
    game.night((5, "shoot", 7))  # no effect, spent
    assert game.state.seat(5).role.value == "civilian"
    game.lock()
    game.night((1, "kill", 5))
    assert game.state.history[-1].left == (5,)  # type: ignore[union-attr]


def test_v31_consecutive_needles_kill_but_never_the_doctor() -> None:
    game = Game("v31", V31)
    game.night((6, "save", 6), (6, "save", 7))  # the later submission counts: needle on 7
    game.lock()
    game.night((6, "save", 7))
    assert game.state.history[-1].left == (7,)  # type: ignore[union-attr]
    game.lock()
    game.night((6, "save", 6))
    game.lock()
    game.night((6, "save", 6))  # the doctor's own consecutive needles do not kill
    assert game.state.seat(6).alive and game.state.seat(6).needles == (3, 4)


V31_WINS = [
    # (nights, days, winner, reason)
    ([[(5, "shoot", 1)]], [{4: 2, 5: 2, 6: 2}], Camp.GOOD, "win.killers_out"),  # 3 unfired
    (
        [[(3, "shoot", 5), (1, "kill", 6)]],
        [{1: 4, 2: 4, 3: 4}],
        Camp.KILLERS,
        "win.police_side_out",
    ),
]


@pytest.mark.parametrize(("nights", "days", "winner", "reason"), V31_WINS)
def test_v31_wins(
    nights: list[list[tuple[int, str, int]]],
    days: list[dict[int, int]],
    winner: Camp,
    reason: str,
) -> None:
    game = Game("v31", V31)
    for night, day in zip(nights, days, strict=True):
        game.night(*night)
        game.day(day)
    result = game.state.result
    assert result is not None and result.winner is winner and result.reason == reason


def test_v31_fired_special_police_does_not_keep_the_police_side_in() -> None:
    game = Game("v31", V31)
    game.night((5, "shoot", 7), (1, "kill", 6))  # 5 is now a civilian; the doctor dies
    game.day({1: 4, 2: 4, 3: 4})  # the last police out: 5 does not count
    result = game.state.result
    assert result is not None and result.winner is Camp.KILLERS


# -- v1 ----------------------------------------------------------------------------------------
V1_7 = [K, C, C, C, C, C, C]


@pytest.mark.parametrize(
    ("players", "killers"), [(7, 1), (10, 1), (11, 2), (14, 2), (15, 3), (16, 3)]
)
def test_v1_killers_by_player_count(players: int, killers: int) -> None:
    created = new_game(ruleset="v1", players=[f"p{i}" for i in range(players)], seed="s")
    assert sorted(r.value for r in created.roles) == sorted(
        ["killer"] * killers + ["civilian"] * (players - killers)
    )


def test_v1_revote_bars_the_tied_in_both_runoffs_and_a_third_tie_means_nobody_leaves() -> None:
    game = Game("v1", V1_7, options={"tie": "revote"})
    game.night((1, "kill", 7))
    game.day({1: 2, 3: 2, 2: 1, 4: 1})
    window = game.state.window
    assert window is not None and window.revote == 1 and window.barred_voters == (1, 2)
    game.day({3: 2, 5: 2, 4: 1, 6: 1})
    window = game.state.window
    assert window is not None and window.revote == 2 and window.barred_voters == (1, 2)
    game.day({3: 2, 4: 1})
    record = game.state.history[-1]
    assert isinstance(record, DayRecord) and record.tie is not None
    assert record.tie.then == "none" and record.left == () and game.state.result is None
    assert game.state.window is not None and game.state.window.kind.value == "night"


def test_v1_victim_who_does_not_pick_leaves_it_to_lots() -> None:
    game = Game("v1", V1_7, options={"tie": "victim_choice"})
    game.night((1, "kill", 7))
    game.day({1: 2, 3: 2, 2: 1, 4: 1})
    game.day({3: 2, 5: 1})
    assert game.state.window is not None and game.state.window.chooser == 7
    game.lock()  # 7 made no pick
    record = game.state.history[-1]
    assert isinstance(record, DayRecord) and record.tie is not None
    assert record.tie.then == "lots" and record.left in ((1,), (2,))


def test_v1_killers_win_when_a_night_kill_leaves_three() -> None:
    game = Game("v1", V1_7, options={"tie": "none"})
    game.night((1, "kill", 2))
    game.day({1: 3})
    game.night((1, "kill", 4))
    game.day({1: 5, 5: 1})  # a tie: nobody leaves, four are left
    assert game.state.result is None and len(game.state.alive()) == 4
    game.night((1, "kill", 5))
    result = game.state.result
    assert result is not None and result.winner is Camp.KILLERS and result.after == "night 3"
    assert result.reason == "win.three_left"


def test_v1_camp_reveal_shows_no_role_in_views() -> None:
    game = Game("v1", V1_7)
    game.night((1, "kill", 2))
    record = game.state.history[-1]
    assert isinstance(record, NightRecord) and record.revealed == ((2, "good"),)
    public = view_for(game.state, None)
    assert all(info.role is None for info in public.seats)


# -- v1_inspector --------------------------------------------------------------------------------
# 16: killers 1-3, inspector 4, civilians 5-16
V1I = [K, K, K, "inspector"] + [C] * 12


def test_v1i_veto_is_withdrawn_by_a_pass_and_the_latest_submission_counts() -> None:
    game = Game("v1_inspector", V1I)
    game.night((1, "kill", 5))
    game.power(4, "veto", 6)
    game.power(4, "veto")  # pass: withdrawn
    game.day({1: 6, 2: 6})
    assert game.state.history[-1].left == (6,)  # type: ignore[union-attr]
    assert Power.VETO not in game.state.seat(4).spent


def test_v1i_veto_does_not_carry_into_a_runoff_but_works_there() -> None:
    game = Game("v1_inspector", V1I, options={"tie": "revote"})
    game.night((1, "kill", 5))
    game.power(4, "veto", 6)
    game.day({1: 6, 2: 7})  # tie: run-off, the veto is gone with the window
    assert game.state.submissions == ()
    game.power(4, "veto", 6)
    game.day({1: 6, 2: 6, 3: 7})
    record = game.state.history[-1]
    assert isinstance(record, DayRecord) and record.revote == 1
    assert record.left == () and record.vetoed == 6 and record.veto_by == 4


def test_v1i_veto_spares_the_player_drawn_by_lots() -> None:
    plain = Game("v1_inspector", V1I, seed="lots")
    plain.night((1, "kill", 5))
    plain.day({1: 6, 2: 7})
    drawn = plain.state.history[-1].left[0]  # type: ignore[union-attr]
    game = Game("v1_inspector", V1I, seed="lots")
    game.night((1, "kill", 5))
    game.power(4, "veto", drawn)
    game.day({1: 6, 2: 7})
    record = game.state.history[-1]
    assert isinstance(record, DayRecord) and record.tie is not None
    assert record.tie.drawn == drawn and record.left == () and record.vetoed == drawn


def test_v1i_veto_in_a_victims_choice_window_and_on_oneself() -> None:
    game = Game("v1_inspector", V1I, options={"tie": "victim_choice"})
    game.night((1, "kill", 5))
    game.day({1: 4, 2: 6})
    game.day({3: 4, 7: 6})
    assert game.state.window is not None and game.state.window.chooser == 5
    game.do(ChooseTied(player="p5", target=Seat(4)))
    game.power(4, "veto", 4)
    game.lock()
    record = game.state.history[-1]
    assert isinstance(record, DayRecord) and record.left == () and record.vetoed == 4
    assert game.state.seat(4).alive and Power.VETO in game.state.seat(4).spent


def test_v1i_veto_is_announced_without_naming_the_inspector_and_seen_only_by_it() -> None:
    game = Game("v1_inspector", V1I)
    game.night((1, "kill", 5))
    game.power(4, "veto", 6)
    assert view_for(game.state, Seat(4)).submissions == ((4, Power.VETO, 6),)
    assert view_for(game.state, Seat(1)).submissions == ()
    for seat, target in ((1, 6), (2, 6)):
        game.vote(seat, target)
    before = game.state
    events = game.do(Lock())
    announced = [e for e in effects_for(before, events) if getattr(e, "key", "") == "day.vetoed"]
    assert announced == [Announce(key="day.vetoed", params=(("seat", 6),))]


def test_v1i_last_words_stay_open_until_someone_leaves() -> None:
    game = Game("v1_inspector", V1I, options={"tie": "none"})
    game.night((1, "kill", 5))
    game.day({1: 6, 2: 7})  # a tie, nobody leaves: 5 may still speak
    assert game.state.last_words_open == (5,)
    game.do(ModKill(seat=Seat(8)))  # a moderator's removal closes nothing
    assert game.state.last_words_open == (5, 8)
    game.night((1, "kill", 9))
    assert game.state.last_words_open == (9,)


def test_v1_last_words_close_at_the_next_resolution_even_if_nobody_leaves() -> None:
    game = Game("v1", V1_7, options={"tie": "none"})
    game.night((1, "kill", 2))
    game.day({1: 3, 4: 5})
    assert game.state.last_words_open == ()


# -- v2_mine, v2_mine_accomplice ------------------------------------------------------------------
# 9: killers 1-2, police 3-4, mine 5, civilians 6-9
V2M = [K, K, P, P, "mine", C, C, C, C]


def test_v2_mine_drawn_by_lots_takes_its_voters() -> None:
    for seed in map(str, range(40)):
        game = Game("v2_mine", V2M, seed=seed)
        game.night((1, "kill", 6))
        game.day({1: 5, 3: 5, 2: 7, 4: 7})
        record = game.state.history[-1]
        assert isinstance(record, DayRecord) and record.tie is not None
        if record.tie.drawn == 5:
            assert record.left == (1, 3, 5) and record.eliminated == 5
            return
        assert record.left == (7,) and record.eliminated is None
    pytest.fail("no seed drew the mine")


def test_v2_mine_picked_by_the_victim_takes_the_runoff_voters() -> None:
    game = Game("v2_mine", V2M, options={"tie": "victim_choice"})
    game.night((1, "kill", 6))
    game.day({1: 5, 3: 5, 2: 7, 4: 7})
    game.day({2: 5, 8: 5, 3: 7, 4: 7})  # the run-off ties too: 6 picks
    game.do(ChooseTied(player="p6", target=Seat(5)))
    game.lock()
    record = game.state.history[-1]
    assert isinstance(record, DayRecord) and record.left == (2, 5, 8) and record.eliminated == 5


def test_v2_mine_option_is_checked_recorded_and_verifiable() -> None:
    with pytest.raises(SetupError):
        new_game(
            ruleset="v2_mine",
            players=[f"p{i}" for i in range(8)],
            seed="s",
            options={"mine": "police"},
        )
    with pytest.raises(SetupError):  # the accomplice version has no option: its mine is 警雷
        new_game(
            ruleset="v2_mine_accomplice",
            players=[f"p{i}" for i in range(8)],
            seed="s",
            options={"mine": "good"},
        )
    game = Game("v2_mine", V2M, options={"mine": "killers"})
    game.night((1, "kill", 5))
    record = record_of(game.state)
    assert record["options"]["mine"] == "killers"
    assert all(f.ok for f in verify_record(record))


@pytest.mark.parametrize(
    ("side", "scores"),
    [("neutral", (5, 5, 5)), ("good", (20, -5, 5)), ("killers", (-10, 30, 5))],
)
def test_v2_mine_scores_by_its_side(side: str, scores: tuple[int, int, int]) -> None:
    rules = RULESETS["v2_mine"].configured((("mine", side),))
    assert tuple(rules.score(Role.MINE, w) for w in (Camp.GOOD, Camp.KILLERS, Camp.DRAW)) == scores


def test_v2_mine_nobody_knows_the_mine_nor_the_accomplice() -> None:
    game = Game("v2_mine_accomplice", [K, K, P, P, "mine", "accomplice", C, C])
    for seat in (1, 5, 6):
        known = [i.seat for i in view_for(game.state, Seat(seat)).seats if i.role is not None]
        assert known == ([1, 2] if seat == 1 else [seat])


# -- v2_doctor_accomplice ---------------------------------------------------------------------
# 10: killers 1-2, police 3-4, doctor 5, accomplice 6, civilians 7-10
V2DA = [K, K, P, P, D, "accomplice", C, C, C, C]


def _known(game: Game, seat: int) -> list[int]:
    return [i.seat for i in view_for(game.state, Seat(seat)).seats if i.role is not None]


@pytest.mark.parametrize(
    ("variant", "accomplice_knows", "accomplice_powers"),
    [("plain", [6], ()), ("knows", [1, 2, 6], ()), ("checks", [6], (Power.CHECK,))],
)
def test_v2da_accomplice_variants(
    variant: str, accomplice_knows: list[int], accomplice_powers: tuple[Power, ...]
) -> None:
    game = Game("v2_doctor_accomplice", V2DA, options={"accomplice": variant})
    assert _known(game, 6) == accomplice_knows
    assert _known(game, 1) == [1, 2]  # the killers never know the accomplice
    assert view_for(game.state, Seat(6)).powers == accomplice_powers
    message = role_message(game.state, Seat(6))
    assert dict(message.params)["teammates"] == ",".join(str(s) for s in accomplice_knows if s != 6)


def test_v2da_accomplice_check_is_its_own_and_the_police_never_hear_of_it() -> None:
    game = Game("v2_doctor_accomplice", V2DA, options={"accomplice": "checks"})
    before = game.state
    events = game.do(SubmitPower(player="p6", power=Power.CHECK, target=Seat(1)))
    effects = effects_for(before, events)
    assert not any(isinstance(e, TeamNotice) for e in effects)
    assert view_for(game.state, Seat(3)).submissions == ()
    game.power(3, "check", 7)
    before = game.state
    events = game.do(Lock())
    record = game.state.history[-1]
    assert isinstance(record, NightRecord)
    assert [(c.team, c.by, c.target, c.result.value) for c in record.checks] == [
        (Team.POLICE, (3, 4), 7, "good"),
        (None, (6,), 1, "killer"),
    ]
    told = [(e.seat, dict(e.params)["target"]) for e in effects_for(before, events)
            if isinstance(e, Whisper) and e.key == "check.result"]  # fmt: skip
    assert told == [(3, 7), (4, 7), (6, 1)]
    assert view_for(game.state, Seat(3)).checks == ((1, 7, CheckResult.GOOD),)
    assert view_for(game.state, Seat(6)).checks == ((1, 1, CheckResult.KILLER),)


def test_v2da_the_doctors_own_consecutive_needles_kill_him() -> None:
    game = Game("v2_doctor_accomplice", V2DA)
    game.night((5, "save", 5))
    game.lock()
    game.night((5, "save", 5))
    assert game.state.history[-1].left == (5,)  # type: ignore[union-attr]


# -- v2_sapper -----------------------------------------------------------------------------------
# 13: killers 1-3, killers' mine 4, police 5-7, sapper 8, civilians 9-13
V2S = [K, K, K, "killer_mine", P, P, P, "sapper", C, C, C, C, C]

V2S_NIGHT_ONE = [
    ([(8, "demine", 4)], [4]),  # the mine is dug up
    ([(8, "demine", 1)], [8]),  # a killer: the sapper is blown up
    ([(8, "demine", 5)], []),  # anyone else: nothing
    ([(8, "demine", 9)], []),
    ([(1, "kill", 4)], []),  # the kill has no effect on the killers' mine
    ([(1, "kill", 8), (8, "demine", 1)], [8]),  # killed and blown up: leaves once
    ([(1, "kill", 9), (8, "demine", 4)], [4, 9]),
]


@pytest.mark.parametrize(("actions", "left"), V2S_NIGHT_ONE)
def test_v2s_night_one(actions: list[tuple[int, str, int]], left: list[int]) -> None:
    game = Game("v2_sapper", V2S)
    game.night(*actions)
    record = game.state.history[-1]
    assert isinstance(record, NightRecord) and list(record.left) == left
    assert list(record.last_words) == left  # everyone who leaves at night


@pytest.mark.parametrize(
    ("target", "answer"),
    [(1, "killer"), (4, "killer_mine"), (6, "police"), (8, "civilian"), (9, "civilian")],
)
def test_v2s_checks_tell_the_true_role_but_the_sapper_passes_for_a_civilian(
    target: int, answer: str
) -> None:
    game = Game("v2_sapper", V2S)
    game.night((5, "check", target))
    record = game.state.history[-1]
    assert isinstance(record, NightRecord) and [c.result.value for c in record.checks] == [answer]


def test_v2s_the_sapper_cannot_dig_at_himself() -> None:
    game = Game("v2_sapper", V2S)
    with pytest.raises(TargetError):
        game.power(8, "demine", 8)


def test_v2s_killers_mine_drawn_by_lots_stays_and_takes_its_voters() -> None:
    for seed in map(str, range(40)):
        game = Game("v2_sapper", V2S, seed=seed)
        game.night((1, "kill", 9))
        game.day({5: 4, 4: 4, 6: 10, 7: 10})  # the mine votes for itself
        record = game.state.history[-1]
        assert isinstance(record, DayRecord) and record.tie is not None
        assert record.last_words == ()  # nobody speaks after a day
        if record.tie.drawn == 4:
            assert record.left == (4, 5) and record.eliminated == 4
            assert game.state.result is None
            return
        assert record.left == (10,)
    pytest.fail("no seed drew the mine")


def test_v2s_a_modkill_at_night_gets_last_words_by_day_not() -> None:
    game = Game("v2_sapper", V2S)
    game.do(ModKill(seat=Seat(9)))
    assert game.state.last_words_open == (9,)
    game.lock()
    game.do(ModKill(seat=Seat(10)))
    assert game.state.last_words_open == ()
