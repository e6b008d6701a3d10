"""Night resolution, table-driven per ruleset (docs/rules.md §3)."""

from __future__ import annotations

import pytest
from gamekit import Game

from engine.errors import ActorError, PhaseError, TargetError
from engine.model import Role
from engine.state import NightRecord

C, K, P, D = "civilian", "killer", "police", "doctor"
SK, SP = "secret_killer", "secret_police"

# mifei 12: killers 1-2, police 3-5, doctor 6, secret killer 7, civilians 8-12
MIFEI = [K, K, P, P, P, D, SK, C, C, C, C, C]
# v3mt 12: killers 1-2, secret killer 3, police 4-5, secret police 6, doctor 7, civilians 8-12
V3MT = [K, K, SK, P, P, SP, D, C, C, C, C, C]
V3M = [K, K, SK, P, P, P, D, C, C, C, C, C]
V3T = [K, K, K, P, P, SP, D, C, C, C, C, C]
V3 = [K, K, K, P, P, P, D, C, C, C, C, C]
V2 = [K, K, P, P, C, C, C, C]

NIGHT_ONE = [
    # (ruleset, roles, actions, who leaves)
    ("v2", V2, [(1, "kill", 5), (2, "kill", 5)], [5]),
    ("mifei", MIFEI, [(1, "kill", 8)], [8]),
    ("mifei", MIFEI, [(1, "kill", 8), (6, "save", 8)], []),
    ("mifei", MIFEI, [(1, "kill", 7)], []),  # unspent secret killer: immune to the kill
    ("mifei", MIFEI, [(1, "kill", 7), (7, "shoot", 8)], [8]),  # immunity judged at night start
    ("mifei", MIFEI, [(7, "shoot", 1)], [1]),  # the shot kills killers too
    ("mifei", MIFEI, [(7, "shoot", 8), (6, "save", 8)], [8]),  # and cannot be saved
    ("mifei", MIFEI, [(1, "kill", 8), (7, "shoot", 9)], [8, 9]),
    ("mifei", MIFEI, [(1, "kill", 6)], [6]),  # the doctor can be killed
    ("mifei", MIFEI, [(1, "kill", 6), (6, "save", 6)], []),  # unless self-saved
    ("v3m", V3M, [(1, "kill", 3)], []),  # secret killer never killed by the killers
    ("v3m", V3M, [(3, "shoot", 1)], []),  # shot cannot harm killers
    ("v3m", V3M, [(3, "shoot", 8)], [8]),
    ("v3m", V3M, [(3, "shoot", 8), (7, "save", 8)], []),  # savable in v3
    ("v3m", V3M, [(1, "kill", 8), (3, "shoot", 9), (7, "save", 9)], [8]),
    ("v3t", V3T, [(6, "execute", 1)], [1]),
    ("v3t", V3T, [(6, "execute", 1), (7, "save", 1)], []),
    ("v3t", V3T, [(6, "execute", 8)], []),  # no effect on a civilian
    ("v3t", V3T, [(6, "execute", 4)], []),  # nor on a police member
    ("v3mt", V3MT, [(6, "execute", 3)], [3]),  # works on the secret killer
    ("v3mt", V3MT, [(1, "kill", 8), (3, "shoot", 9), (6, "execute", 2)], [2, 8, 9]),
    ("v3", V3, [(1, "kill", 7), (7, "save", 7)], []),
    ("v3", V3, [(1, "kill", 8), (2, "kill", 9), (3, "kill", 9)], [9]),  # team majority
]


@pytest.mark.parametrize(("ruleset", "roles", "actions", "left"), NIGHT_ONE)
def test_night_one(
    ruleset: str, roles: list[str], actions: list[tuple[int, str, int]], left: list[int]
) -> None:
    game = Game(ruleset, roles)
    game.night(*actions)
    record = game.state.history[-1]
    assert isinstance(record, NightRecord)
    assert list(record.left) == left


CHECKS = [
    # (ruleset, roles, other actions, target, expected answer)
    ("v2", V2, [], 1, "killer"),
    ("v2", V2, [], 5, "good"),
    ("mifei", MIFEI, [], 7, "special"),
    ("mifei", MIFEI, [(7, "shoot", 8)], 7, "special"),  # fired: still special in mifei
    ("mifei", MIFEI, [], 6, "special"),
    ("mifei", MIFEI, [], 1, "killer"),
    ("mifei", MIFEI, [], 8, "good"),
    ("v3m", V3M, [], 3, "special"),
    ("v3m", V3M, [(3, "shoot", 8)], 3, "killer"),  # answered after tonight's actions
    ("v3t", V3T, [], 6, "special"),
    ("v3t", V3T, [(6, "execute", 8)], 6, "good"),  # spent secret police is a civilian
    ("v3", V3, [], 7, "special"),
    ("v3", V3, [], 1, "killer"),
    ("v3", V3, [(1, "kill", 1)], 1, "killer"),  # checked even if dead tonight
]


@pytest.mark.parametrize(("ruleset", "roles", "actions", "target", "answer"), CHECKS)
def test_check_answers(
    ruleset: str, roles: list[str], actions: list[tuple[int, str, int]], target: int, answer: str
) -> None:
    game = Game(ruleset, roles)
    police = roles.index(P) + 1
    game.night(*actions, (police, "check", target))
    record = game.state.history[-1]
    assert isinstance(record, NightRecord)
    assert [(c.target, c.result.value) for c in record.checks] == [(target, answer)]


def _quiet_day(game: Game) -> None:
    game.lock()  # nobody votes: nobody leaves


def test_mifei_needles_are_cumulative() -> None:
    game = Game("mifei", MIFEI)
    game.night((6, "save", 8))  # empty needle 1
    _quiet_day(game)
    game.night()
    _quiet_day(game)
    assert 8 in game.alive
    game.night((6, "save", 8))  # second needle, two nights later: dies
    assert 8 not in game.alive


def test_mifei_doctor_own_needles_never_kill() -> None:
    game = Game("mifei", MIFEI)
    for _ in range(3):
        game.night((6, "save", 6))
        _quiet_day(game)
    assert 6 in game.alive


def test_mifei_killers_on_unspent_secret_killer_leave_a_needle() -> None:
    game = Game("mifei", MIFEI)
    game.night((1, "kill", 7), (6, "save", 7))
    assert 7 in game.alive
    assert game.state.seat(7).needles == (1,)  # the attack had no effect: empty needle


def test_v3_needles_are_consecutive_and_heal() -> None:
    game = Game("v3", V3)
    game.night((7, "save", 8))
    _quiet_day(game)
    game.night()
    _quiet_day(game)
    game.night((7, "save", 8))  # nights 1 and 3: healed in between
    assert 8 in game.alive
    _quiet_day(game)
    game.night((7, "save", 8))  # nights 3 and 4: dies
    assert 8 not in game.alive


def test_v3_doctor_dies_of_own_consecutive_needles() -> None:
    game = Game("v3", V3)
    game.night((7, "save", 7))
    _quiet_day(game)
    game.night((7, "save", 7))
    assert 7 not in game.alive


def test_v3t_execution_of_civilian_with_treatment_is_a_needle() -> None:
    game = Game("v3t", V3T)
    game.night((6, "execute", 8), (7, "save", 8))
    assert 8 in game.alive
    assert game.state.seat(8).needles == (1,)
    assert game.state.seat(6).role is Role.CIVILIAN


def test_fired_secret_killer_joins_the_kill_next_night() -> None:
    game = Game("v3m", V3M)
    game.night((3, "shoot", 8))
    assert game.state.seat(3).role is Role.KILLER
    _quiet_day(game)
    game.night((1, "kill", 9), (2, "kill", 10), (3, "kill", 10))
    assert 10 not in game.alive and 9 in game.alive


def test_fired_secret_killer_cannot_act_with_the_team_the_same_night() -> None:
    game = Game("mifei", MIFEI)
    with pytest.raises(ActorError):
        game.power(7, "kill", 8)


def test_one_shot_powers_are_spent() -> None:
    game = Game("v3m", V3M)
    game.night((3, "shoot", 1))  # no effect on a killer, but spent
    _quiet_day(game)
    with pytest.raises(ActorError) as err:
        game.power(3, "shoot", 8)
    assert err.value.key in ("actor.power_spent", "actor.no_such_power")


def test_team_split_is_settled_by_lots_and_recorded() -> None:
    game = Game("v2", V2, seed="split")
    game.night((1, "kill", 5), (2, "kill", 6))
    left = game.state.history[-1].left  # type: ignore[union-attr]
    assert len(left) == 1 and left[0] in (5, 6)
    assert len(game.state.lots) == 1
    assert game.state.lots[0].label == "team|night 1|kill|5,6"


def test_later_submission_replaces_earlier() -> None:
    game = Game("v2", V2)
    game.power(1, "kill", 5)
    game.power(1, "kill", 6)
    game.lock()
    assert game.state.history[-1].left == (6,)  # type: ignore[union-attr]


def test_explicit_pass_means_no_action() -> None:
    game = Game("v2", V2)
    game.power(1, "kill", 5)
    game.power(1, "kill", None)  # 不行使
    game.lock()
    assert game.state.history[-1].left == ()  # type: ignore[union-attr]


def test_submission_stamped_after_the_lock_is_void() -> None:
    game = Game("v2", V2)
    game.power(1, "kill", 5, at=2_000)
    game.lock(at=1_000)
    assert game.state.history[-1].left == ()  # type: ignore[union-attr]


@pytest.mark.parametrize("late_first", [False, True])
def test_a_team_members_late_submission_leaves_their_valid_one_standing(late_first: bool) -> None:
    """docs/rules.md §1 (the lock post): a submission stamped after the deadline is void, for a
    team power as for one used alone — it does not replace the member's earlier valid choice.
    `late_first`: the late posts are recorded before the valid ones (a delivery out of order)."""
    game = Game("v2", V2)  # killers 1-2, police 3-4
    valid = [(1, "kill", 5, 1_000), (2, "kill", 5, 1_000), (3, "check", 1, 1_000)]
    late = [(1, "kill", 6, 9_000), (2, "kill", 6, 9_000), (3, "check", 5, 9_000)]
    late += [(4, "check", 5, 9_000)]
    for seat, power, target, at in late + valid if late_first else valid + late:
        game.power(seat, power, target, at=at)
    game.lock(at=5_000)
    record = game.state.history[-1]
    assert isinstance(record, NightRecord)
    assert record.left == (5,)
    assert [(c.target, c.result.value) for c in record.checks] == [(1, "killer")]


def test_a_late_choice_of_a_teams_other_power_does_not_revive_an_earlier_one() -> None:
    """天下无贼's police (check or guard, docs/rulings.md "A team with several powers"): each
    member's latest *valid* choice counts; a check stamped after the deadline neither counts nor
    undoes the guard chosen since the member's valid check."""
    from engine.commands import SubmitPower
    from engine.model import Instant, Power

    tx = [P, P, P, "good_thief", "good_thief", "good_thief"] + ["bad_thief"] * 3 + [C, C, C]
    game = Game("tianxia", tx, seed="tx")
    for seat in (1, 2, 3):
        game.power(seat, "check", 8, at=500)
        game.do(SubmitPower(player=f"p{seat}", power=Power.GUARD, at=Instant(1_000)))
        game.power(seat, "check", 7, at=9_000)
    game.lock(at=5_000)
    record = game.state.history[-1]
    assert isinstance(record, NightRecord)
    assert record.checks == ()


@pytest.mark.parametrize(
    ("ruleset", "roles", "seat", "power", "target", "error", "key"),
    [
        ("v2", V2, 5, "kill", 6, ActorError, "actor.no_such_power"),
        ("v2", V2, 9, "kill", 6, ActorError, "actor.not_player"),
        ("v2", V2, 1, "kill", 9, TargetError, "target.unknown"),
        ("v2", V2, 3, "check", 3, TargetError, "target.self_forbidden"),
        (
            "basic",
            [P, P, K, K, C, C, C, C],
            1,
            "check",
            2,
            TargetError,
            "target.police_check_police",
        ),
        ("v2", V2, 1, "confess", None, ActorError, "actor.no_such_power"),
    ],
)
def test_invalid_submissions_are_refused(
    ruleset: str, roles: list[str], seat: int, power: str, target: int | None, error: type, key: str
) -> None:
    game = Game(ruleset, roles)
    before = game.state
    with pytest.raises(error) as err:
        if seat == 9:
            from engine.commands import SubmitPower
            from engine.model import Power, Seat

            game.do(SubmitPower(player="stranger", power=Power(power), target=Seat(target or 1)))
        else:
            game.power(seat, power, target)
    assert err.value.key == key
    assert game.state == before


def test_dead_player_cannot_submit_and_dead_target_refused() -> None:
    game = Game("v2", V2)
    game.night((1, "kill", 3))
    game.lock()
    with pytest.raises(ActorError):
        game.power(3, "check", 1)
    with pytest.raises(TargetError):
        game.power(1, "kill", 3)


def test_powers_only_at_night() -> None:
    game = Game("v2", V2)
    game.night()
    with pytest.raises(PhaseError):
        game.power(1, "kill", 5)


def test_killers_may_target_a_killer_in_basic() -> None:
    game = Game("basic", [P, P, K, K, C, C, C, C])
    game.night((3, "kill", 4))
    assert 4 not in game.alive
