"""Table-driven rules tests for v4_lone, v4_butterfly, basic's advanced roles, v5, tianxia and
wujiandao (docs/rulesets/)."""

from __future__ import annotations

from collections import Counter

import pytest
from gamekit import CardGame, Game

from engine.commands import EndGame, Lock, ModKill, Penalize, ReplacePlayer, SubmitPower
from engine.effects import (
    Announce,
    LeaveTeamThreads,
    SeatLeft,
    Silence,
    TeamJoin,
    Unsilence,
    Whisper,
)
from engine.errors import ActorError, ModeratorError, PhaseError, SetupError, TargetError
from engine.game import new_game, replay_events
from engine.model import Camp, CheckResult, PhaseKind, Power, Role, Seat, Team
from engine.pending import pending
from engine.publish import effects_for
from engine.rulesets import RULESETS
from engine.state import DayRecord, NightRecord
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


# -- v4_butterfly --------------------------------------------------------------------------------
# 11: butterfly 1, sniper 2, doctor 3, police 4, elder 5, killers 6-8, civilians 9-11
BF, SN, EL = "butterfly", "sniper", "elder"
V4B = [BF, SN, D, P, EL, K, K, K, C, C, C]


@pytest.mark.parametrize(
    ("players", "killers"), [(11, 3), (12, 3), (13, 3), (14, 3), (15, 4), (16, 4), (17, 5)]
)
def test_v4_butterfly_table(players: int, killers: int) -> None:
    created = new_game(ruleset="v4_butterfly", players=[f"p{i}" for i in range(players)], seed="s")
    roles = Counter(r.value for r in created.roles)
    assert roles == Counter({BF: 1, SN: 1, D: 1, P: 1, EL: 1, K: killers, C: players - 5 - killers})


V4B_NIGHT_ONE = [
    # (actions, who leaves)
    ([(1, "hug", 9), (6, "kill", 9)], []),  # the kill on the hugged is void
    ([(1, "hug", 9), (6, "kill", 1)], [1, 9]),  # the hugged shares the butterfly's death
    ([(1, "hug", 9), (6, "kill", 1), (3, "save", 1)], []),  # and its rescue
    ([(1, "hug", 9), (2, "shoot", 1), (3, "save", 9)], [1, 9]),  # a treatment of the hugged: void
    ([(1, "hug", 6), (6, "kill", 10)], [10]),  # a hugged killer still kills
    ([(6, "kill", 10), (2, "shoot", 10), (3, "save", 10)], [10]),  # killed and shot: no rescue
    ([(6, "kill", 10), (3, "save", 10)], []),
    ([(2, "shoot", 2)], [2]),  # the sniper may shoot himself
    ([(6, "kill", 7)], [7]),  # the killers may kill a killer
]


@pytest.mark.parametrize(("actions", "left"), V4B_NIGHT_ONE)
def test_v4_butterfly_night_one(actions: list[tuple[int, str, int]], left: list[int]) -> None:
    game = Game("v4_butterfly", V4B)
    game.night(*actions)
    assert night_left(game) == left


def test_v4_butterfly_shared_needles_and_the_sniper_shoots_every_night() -> None:
    game = Game("v4_butterfly", V4B, options={"tie": "none"})
    game.night((1, "hug", 9), (3, "save", 1), (2, "shoot", 10))
    assert game.state.seat(1).needles == (1,) and game.state.seat(9).needles == (1,)
    game.lock()
    game.night((3, "save", 9), (2, "shoot", 11))  # the second empty needle kills
    assert night_left(game) == [9, 11]
    game.lock()
    with pytest.raises(TargetError):
        game.power(1, "hug", 1)


def test_v4_butterfly_silence_is_public_and_lifted_when_the_next_night_opens() -> None:
    game = Game("v4_butterfly", V4B)
    before = game.state
    start = len(game.events)
    game.night((1, "hug", 9), (5, "silence", 1))
    effects = effects_for(before, game.events[start:])
    assert [e for e in effects if isinstance(e, Silence)] == [
        Silence(seat=Seat(1), day=1),
        Silence(seat=Seat(9), day=1),
    ]
    assert any(isinstance(e, Announce) and e.key == "night.silenced" for e in effects)
    assert view_for(game.state, None).silenced == (1, 9)
    game.vote(1, 6)  # a silenced player still votes
    before, start = game.state, len(game.events)
    game.lock()
    assert game.state.history[-1].left == (6,)  # type: ignore[union-attr]
    effects = effects_for(before, game.events[start:])
    assert [e for e in effects if isinstance(e, Unsilence)] == [
        Unsilence(seat=Seat(1), day=1),
        Unsilence(seat=Seat(9), day=1),
    ]
    assert view_for(game.state, None).silenced == ()


def test_v4_butterfly_silence_lifted_at_the_end_and_the_dead_are_not_silenced() -> None:
    game = Game("v4_butterfly", V4B)
    game.night((5, "silence", 10), (6, "kill", 10), (2, "shoot", 11), (5, "silence", 11))
    assert game.state.history[-1].silenced == ()  # type: ignore[union-attr]
    game.lock()
    game.night((5, "silence", 9))
    before, start = game.state, len(game.events)
    for seat in (6, 7, 8):
        game.do(ModKill(seat=Seat(seat)))
    effects = effects_for(before, game.events[start:])
    assert Unsilence(seat=Seat(9), day=2) in effects and game.state.over


def test_v4_butterfly_day_reveal_is_the_camp_and_killers_voted_out_have_no_last_words() -> None:
    game = Game("v4_butterfly", V4B)
    game.night((6, "kill", 9))
    assert game.state.history[-1].revealed == ()  # type: ignore[union-attr]
    game.day({1: 6, 2: 6})
    record = game.state.history[-1]
    assert record.revealed == ((6, "killers"),) and record.last_words == ()  # type: ignore[union-attr]
    game.night((7, "kill", 10))
    game.day({1: 2, 3: 2})
    record = game.state.history[-1]
    assert record.revealed == ((2, "good"),) and record.last_words == (2,)  # type: ignore[union-attr]


def test_v4_butterfly_a_third_tie_under_revote_means_nobody_leaves() -> None:
    """docs/rulesets/v4_butterfly.md, "Votes and ties": the seed's "如票数最多的人为2人或2人以上，则
    本轮白天不死人" — under `revote` a third tie means nobody leaves, not a drawn game."""
    game = Game("v4_butterfly", V4B, options={"tie": "revote"})
    game.night((6, "kill", 9))
    game.day({1: 6, 2: 6, 6: 1, 7: 1})
    game.day({2: 6, 3: 6, 7: 1, 8: 1})
    window = game.state.window
    assert window is not None and window.revote == 2 and window.barred_voters == (1, 6)
    game.day({2: 6, 3: 6, 7: 1, 8: 1})
    record = game.state.history[-1]
    assert isinstance(record, DayRecord) and record.tie is not None
    assert record.tie.then == "none" and record.left == () and game.state.result is None
    assert game.state.window is not None and game.state.window.kind is PhaseKind.NIGHT
    assert game.alive == [1, 2, 3, 4, 5, 6, 7, 8, 10, 11]


def test_v4_butterfly_sides_the_killers_and_everyone_else_good_the_sniper_too() -> None:
    """docs/rulesets/v4_butterfly.md, "Sides": the sniper is one of the five specials whose death
    the killers need (unlike `basic`'s sniper, a killer); he scores as the good side."""
    game = Game("v4_butterfly", V4B)
    rules = RULESETS["v4_butterfly"]
    camps = {seat.original_role.value: rules.camp_of(seat) for seat in game.state.seats}
    assert camps == {
        BF: Camp.GOOD, SN: Camp.GOOD, D: Camp.GOOD, P: Camp.GOOD, EL: Camp.GOOD,
        K: Camp.KILLERS, C: Camp.GOOD,
    }  # fmt: skip
    assert rules.score(Role.SNIPER, Camp.GOOD) == 30
    basic = RULESETS["basic"]
    sniper = next(s for s in game.state.seats if s.original_role is Role.SNIPER)
    assert basic.camp_of(sniper) is Camp.KILLERS


# -- basic: the advanced roles (seed 003, part two) ---------------------------------------------
SNP, SHF, CVP = "sniper", "sheriff", "covert_police"
ALL_ON = {"sniper": "yes", "doctor": "yes", "butterfly": "yes", "police_special": "sheriff"}
# 12 (3/3/6): killers 1-2, sniper 3, police 4-5, sheriff 6, doctor 7, butterfly 8, civilians 9-12
B12 = [K, K, SNP, P, P, SHF, D, BF, C, C, C, C]


@pytest.mark.parametrize(
    ("players", "options", "fits"),
    [
        (6, {"sniper": "yes"}, True),
        (7, {"doctor": "yes"}, True),
        (8, {"butterfly": "yes"}, False),
        (9, {"police_special": "sheriff"}, False),
        (10, {"police_special": "covert_police"}, True),
        (11, {"sniper": "yes"}, False),
        (12, ALL_ON, True),
        (16, ALL_ON, True),
        (8, {}, True),
    ],
)
def test_basic_advanced_roles_need_enough_civilians(
    players: int, options: dict[str, str], fits: bool
) -> None:
    names = [f"p{i}" for i in range(players)]
    if not fits:
        with pytest.raises(SetupError):
            new_game(ruleset="basic", players=names, seed="s", options=options)
        return
    created = new_game(ruleset="basic", players=names, seed="s", options=options)
    roles = Counter(r.value for r in created.roles)
    for option, value in options.items():
        role = value if option == "police_special" else option
        assert roles[role] == 1


def test_basic_advanced_roles_replace_a_card_of_their_side() -> None:
    created = new_game(
        ruleset="basic", players=[f"p{i}" for i in range(12)], seed="s", options=ALL_ON
    )
    assert Counter(r.value for r in created.roles) == Counter(
        {K: 2, SNP: 1, P: 2, SHF: 1, D: 1, BF: 1, C: 4}
    )
    with pytest.raises(SetupError):  # at 7, only the first composition has the civilians
        new_game(
            ruleset="basic",
            players=[f"p{i}" for i in range(7)],
            seed="s",
            options={"sniper": "yes", "composition": 2},
        )


def test_basic_sniper_kills_with_the_team_and_shoots_at_once_after_a_night_death() -> None:
    game = Game("basic", B12, options=ALL_ON)
    assert view_for(game.state, Seat(3)).teammates == (1, 2)
    game.night((1, "kill", 3))  # the killers may kill their own
    assert night_left(game) == [3]
    assert view_for(game.state, Seat(3)).powers == (Power.SHOOT,)
    before, start = game.state, len(game.events)
    game.vote(9, 4)
    game.power(3, "shoot", 9)  # during the day window: at once
    assert not game.state.seat(9).alive
    effects = effects_for(before, game.events[start:])
    assert any(isinstance(e, Announce) and e.key == "lastact.used" for e in effects)
    assert game.state.history[-1].revealed == ((3, "sniper"),)  # type: ignore[union-attr]
    assert 3 not in game.state.last_words_open  # shooting cost his last words
    with pytest.raises(ActorError):
        game.power(3, "shoot", 10)  # once
    game.vote(10, 4)
    game.lock()
    record = game.state.history[-1]
    assert isinstance(record, DayRecord) and record.tally == ((4, 1),)  # 9's vote is void


def test_basic_sniper_has_no_shot_after_a_confession_or_the_needle() -> None:
    game = Game("basic", B12, options=ALL_ON)
    game.lock()
    game.power(3, "confess")
    assert game.state.last_acts_open == ()
    game = Game("basic", B12, options=ALL_ON)
    game.night((7, "save", 3))
    game.lock()
    game.night((7, "save", 3))
    assert night_left(game) == [3] and game.state.last_acts_open == ()
    assert game.state.history[-1].last_words == ()  # type: ignore[union-attr]


def test_basic_sniper_may_pass_and_speaking_gives_the_shot_up() -> None:
    game = Game("basic", B12, options=ALL_ON)
    game.night((1, "kill", 3))
    before, start = game.state, len(game.events)
    game.power(3, "shoot")  # pass
    effects = effects_for(before, game.events[start:])
    assert [type(e) for e in effects] == [Whisper]
    assert game.state.last_acts_open == () and 3 in game.state.last_words_open


def test_basic_sheriff_two_lives_and_grief() -> None:
    game = Game("basic", B12, options=ALL_ON)
    game.night((1, "kill", 6), (7, "save", 6))  # saved: no life lost
    assert game.state.seat(6).wounds == 0
    game.lock()
    game.night((1, "kill", 6))
    assert night_left(game) == [] and game.state.seat(6).wounds == 1
    game.lock()
    game.night((1, "kill", 6))  # the second life: no grief
    assert night_left(game) == [6] and game.state.seat(4).role is Role.POLICE
    shot = Game("basic", B12, options=ALL_ON)
    shot.night((1, "kill", 3))
    shot.power(3, "shoot", 6)  # both lives: grief
    assert [shot.state.seat(s).role for s in (4, 5, 7)] == [Role.CIVILIAN] * 3
    assert shot.state.history[-1].revealed == ((3, "sniper"), (6, "sheriff"))  # type: ignore[union-attr]


def test_basic_sheriffs_grief_takes_the_police_out_of_their_thread() -> None:
    """The police turned civilians by the sheriff's grief have no team any more: they leave the
    police's thread (privately), as a player leaves a team's thread whose card is gone; the
    doctor, of no team, leaves none; the sheriff leaves the game (the sniper left at dawn)."""
    game = Game("basic", B12, options=ALL_ON)
    game.night((1, "kill", 3))
    before, start = game.state, len(game.events)
    game.power(3, "shoot", 6)  # both lives: grief
    effects = effects_for(before, game.events[start:])
    leaves = [(e.player, e.team) for e in effects if isinstance(e, LeaveTeamThreads)]
    assert sorted(leaves, key=str) == sorted(
        [("p6", None), ("p4", Team.POLICE), ("p5", Team.POLICE)], key=str
    )


def test_basic_butterfly_protects_through_the_day_and_takes_its_player_along() -> None:
    game = Game("basic", B12, options=ALL_ON)
    game.night((8, "hug", 9), (1, "kill", 9))
    assert night_left(game) == []
    game.day({1: 8, 2: 8, 3: 8})  # the butterfly voted out takes 9 along
    record = game.state.history[-1]
    assert isinstance(record, DayRecord)
    assert record.left == (8, 9) and record.eliminated == 8
    other = Game("basic", B12, options=ALL_ON)
    other.night((8, "hug", 10))
    other.power(1, "confess")  # not the butterfly: nothing more
    assert other.state.history[-1].left == (1,)  # type: ignore[union-attr]


def test_basic_sniper_shooting_the_butterfly_before_the_next_night_resolves() -> None:
    game = Game("basic", B12, options=ALL_ON)
    game.night((8, "hug", 10))
    game.day({4: 3, 5: 3})  # the sniper voted out
    game.power(3, "shoot", 8)  # during night 2's window: 10 (hugged last night) goes too
    assert game.state.history[-1].left == (8, 10)  # type: ignore[union-attr]


def test_basic_covert_police_is_immune_until_he_attacks_then_a_police() -> None:
    roles = [K, K, K, P, P, CVP, C, C, C, C, C, C]
    game = Game("basic", roles, options={"police_special": "covert_police"})
    assert view_for(game.state, Seat(6)).teammates == ()
    game.night((1, "kill", 6), (6, "attack", 7))  # on a civilian: nothing, spent
    assert night_left(game) == [] and game.state.seat(6).role is Role.POLICE
    assert view_for(game.state, Seat(6)).teammates == (4, 5)
    game.day({1: 6, 2: 6})
    assert game.state.history[-1].left == (6,)  # type: ignore[union-attr]
    fresh = Game("basic", roles, options={"police_special": "covert_police"})
    fresh.night((6, "attack", 1))
    record = fresh.state.history[-1]
    assert isinstance(record, NightRecord) and record.left == (1,) and record.last_words == ()


def test_basic_last_act_window_extends_the_night_and_waits_for_the_shot() -> None:
    game = Game("basic", [SNP, P, C, C, C, C], options={"sniper": "yes"})
    game.night((1, "kill", 1))  # the only killer kills himself: the game would end
    window = game.state.window
    assert window is not None and window.last_act and window.kind is PhaseKind.NIGHT
    assert pending(game.state).powers == (1,)
    with pytest.raises(PhaseError):
        game.power(2, "check", 3)
    game.lock()  # no shot: the good side wins at the lock
    result = game.state.result
    assert result is not None and result.winner is Camp.GOOD and result.after == "night 1"


# -- v5: two cards per player ------------------------------------------------------------------
MOLE, SPO = "mole", "secret_police"
# 7 players, 14 cards; player k holds seats 2k-1 and 2k
V5_7 = [K, D, P, C, BF, C, MOLE, C, SPO, C, SPO, C, C, C]


@pytest.mark.parametrize("players", [7, 8, 9, 12, 15, 16])
def test_v5_deals_two_cards_a_player_never_a_killer_with_a_police(players: int) -> None:
    k = (players - 3) // 3
    for seed in map(str, range(30)):
        created = new_game(ruleset="v5", players=[f"p{i}" for i in range(players)], seed=seed)
        assert len(created.roles) == 2 * players
        assert created.players[::2] == created.players[1::2]
        hands = list(zip(created.roles[::2], created.roles[1::2], strict=True))
        assert not any(Role.KILLER in h and Role.POLICE in h for h in hands)
        assert Counter(r.value for r in created.roles) == Counter(
            {BF: 1, MOLE: 1, SPO: 2, P: k, K: k, D: k, C: 2 * players - 4 - 3 * k}
        )


def test_v5_who_sees_whom() -> None:
    game = CardGame(V5_7, seed="v5")
    assert game.state.seats_of("p1") == (1, 2)
    killer = view_for(game.state, Seat(1))
    assert [i.role for i in killer.seats][:8] == [
        Role.KILLER, Role.DOCTOR, None, None, None, None, Role.MOLE, None,
    ]  # fmt: skip
    police = view_for(game.state, Seat(3))
    assert police.seats[6].role is Role.POLICE  # the mole, seen as one of them
    assert police.seats[0].role is None
    mole = view_for(game.state, Seat(7))
    assert mole.seats[0].role is Role.KILLER and mole.seats[2].role is Role.POLICE


def test_v5_each_card_acts_with_its_own_power_and_a_player_names_the_card() -> None:
    game = CardGame(V5_7, seed="v5")
    game.do(SubmitPower(player="p1", power=Power.SAVE, target=Seat(2)))  # the doctor card acts
    game.do(SubmitPower(player="p1", power=Power.KILL, target=Seat(14)))  # the killer card
    assert {(s.seat, s.power) for s in game.state.submissions} == {(2, Power.SAVE), (1, Power.KILL)}
    with pytest.raises(ActorError):
        game.do(SubmitPower(player="p1", power=Power.KILL, target=Seat(13), seat=Seat(3)))
    game.lock()
    assert night_left(game) == [14]


def test_v5_votes_weigh_living_cards_and_players_leave_with_their_last_card() -> None:
    game = CardGame(V5_7, seed="v5")
    game.night((1, "kill", 13))  # p7 keeps card 14
    before, start = game.state, len(game.events)
    game.day({7: 3, 1: 4, 3: 4})  # p4 (2 cards) for card 3 against p1 and p2 (2 each) for card 4
    record = game.state.history[-1]
    assert isinstance(record, DayRecord) and record.tally == ((3, 2), (4, 4))
    assert record.left == (4,) and record.last_words == ()
    assert not any(isinstance(e, SeatLeft) for e in effects_for(before, game.events[start:]))
    tally = next(
        e
        for e in effects_for(before, game.events[start:])
        if isinstance(e, Announce) and e.key == "day.tally"
    )
    assert dict(tally.params)["counts"] == "3:2;4:4"
    game.night((1, "kill", 14))  # p7's last card: p7 leaves, with last words
    before, start = game.state, len(game.events)
    assert night_left(game) == [14]
    assert game.state.history[-1].last_words == (14,)  # type: ignore[union-attr]
    game.vote(2, 3)  # card 3 is p2's
    game.lock()
    assert game.state.history[-1].left == (3,)  # type: ignore[union-attr]


def test_v5_moderators_remove_and_replace_a_whole_player() -> None:
    game = CardGame(V5_7, seed="v5")
    game.do(ReplacePlayer(seat=Seat(4), new_player="sub"))
    assert [game.state.seat(Seat(s)).player for s in (3, 4)] == ["sub", "sub"]
    game.do(ModKill(seat=Seat(5)))
    assert not game.state.seat(5).alive and not game.state.seat(6).alive
    assert game.state.history[-1].last_words == (5,)  # type: ignore[union-attr]


def test_v5_secret_police_immune_until_it_fires_and_the_hug() -> None:
    game = CardGame(V5_7, seed="v5")
    game.night((1, "kill", 9), (5, "hug", 1), (9, "execute", 13))  # hugged killer: no kill
    assert night_left(game) == [13] and Power.EXECUTE in game.state.seat(9).spent
    game.lock()
    game.night((1, "kill", 9))
    assert night_left(game) == [9]
    fresh = CardGame(V5_7, seed="v5")
    fresh.night((5, "hug", 11), (1, "kill", 5))  # the butterfly takes the hugged card along
    assert night_left(fresh) == [5, 11]


# -- tianxia: three factions and the virtual 傻根 ---------------------------------------------------
GT, BT = "good_thief", "bad_thief"
# 12: police 1-3, good thieves 4-6, bad thieves 7-9, civilians 10-12
TX = [P, P, P, GT, GT, GT, BT, BT, BT, C, C, C]


def test_tianxia_a_team_uses_one_of_its_powers_by_majority_lots_across_powers() -> None:
    game = Game("tianxia", TX, seed="tx")
    game.power(1, "check", 7)
    game.power(2, "check", 7)
    game.do(SubmitPower(player="p3", power=Power.GUARD))  # untargeted
    assert view_for(game.state, Seat(1)).submissions[-1] == (3, Power.GUARD, None)
    assert pending(game.state).powers == (4, 5, 6, 7, 8, 9)  # the police are done
    game.lock()
    record = game.state.history[-1]
    assert isinstance(record, NightRecord) and [c.result for c in record.checks] == [
        CheckResult.THIEF
    ]
    split = Game("tianxia", TX, seed="tx")
    split.power(1, "check", 7)
    split.do(SubmitPower(player="p2", power=Power.GUARD))
    split.lock()
    (draw,) = split.state.lots
    assert draw.label == "team|night 1|police|check:7,guard" and draw.among == ("check:7", "guard")


def test_tianxia_exposure_falls_back_to_the_check_when_every_bad_thief_is_known() -> None:
    game = Game("tianxia", TX, seed="tx")
    for target in (7, 8, 9):
        game.night((1, "check", target))
        game.lock()
    for seat in (7, 4):
        game.do(SubmitPower(player=f"p{seat}", power=Power.ROB if seat == 7 else Power.GUARD))
    game.night((1, "check", 10))
    record = game.state.history[-1]
    assert isinstance(record, NightRecord)
    assert [(c.target, c.result) for c in record.checks] == [(10, CheckResult.CIVILIAN)]
    assert game.state.counter("knife_marks") == 1 and record.left == ()


def _fight_with_the_check_target_removed(game: Game, target: int) -> NightRecord:
    """The police check `target`, the bad thieves rob, the good thieves guard; a moderator
    removes `target` before the lock."""
    game.power(1, "check", target)
    game.do(SubmitPower(player="p7", power=Power.ROB))
    game.do(SubmitPower(player="p4", power=Power.GUARD))
    game.do(ModKill(seat=Seat(target)))
    game.lock()
    record = game.state.history[-1]
    assert isinstance(record, NightRecord)
    return record


def test_tianxia_exposure_stands_when_the_check_target_is_removed() -> None:
    """The exposure needs only that the police chose to check ("如若当晚警察选择的行为是'验证'"):
    it replaces the check's answer, so removing the target takes nothing from it."""
    game = Game("tianxia", TX, seed="tx")
    record = _fight_with_the_check_target_removed(game, 10)
    (draw,) = game.state.lots
    assert draw.label == "expose|night 1|7,8,9"
    assert [(c.target, c.result) for c in record.checks] == [
        (int(draw.drawn), CheckResult.BAD_THIEF)
    ]
    assert game.state.counter("knife_marks") == 1


def test_tianxia_a_check_that_stands_on_a_removed_target_gets_no_answer() -> None:
    """Every living bad thief known: the check stands, and a check on a removed player is
    answered by nobody (docs/rulings.md)."""
    game = Game("tianxia", TX, seed="tx")
    for target in (7, 8, 9):
        game.night((1, "check", target))
        game.lock()
    record = _fight_with_the_check_target_removed(game, 10)
    assert record.checks == ()


def test_tianxia_shagen_dies_unguarded_and_powers_change() -> None:
    game = Game("tianxia", TX, seed="tx")
    game.do(SubmitPower(player="p7", power=Power.ROB))
    game.lock()
    assert game.state.virtual_out == {"shagen"}
    assert view_for(game.state, Seat(1)).powers == ()
    game.lock()
    assert view_for(game.state, Seat(7)).powers == (Power.KILL,)
    with pytest.raises(ActorError):
        game.power(7, "kill")  # a pass: refused
    with pytest.raises(ActorError):
        game.do(SubmitPower(player="p8", power=Power.ROB))


def test_tianxia_three_camps_and_a_moderators_end() -> None:
    game = Game("tianxia", TX, seed="tx")
    with pytest.raises(ModeratorError):
        game.do(EndGame(winner=Camp.KILLERS))
    game.do(EndGame(winner=Camp.BAD_THIEVES))
    result = game.state.result
    assert result is not None
    assert [p for _, p in result.scores] == [-10] * 6 + [30] * 3 + [-5] * 3
    with pytest.raises(ModeratorError):
        Game("v2", [K, K, P, P, C, C, C, C]).do(EndGame(winner=Camp.GOOD_THIEVES))


# -- wujiandao: public identities, hidden leaders, per-faction votes ---------------------------
PL, PC, PM, GL, GC, GM, G = (
    "police_leader", "police_confidant", "police_mole",
    "gang_leader", "gang_confidant", "gang_mole", "gangster",
)  # fmt: skip
# 8: publicly police 1-4 (leader, confidant, the gang's mole, police), publicly gang 5-8
WJ = [PL, PC, GM, P, GL, GC, PM, G]


def test_wujiandao_needs_two_equal_factions() -> None:
    with pytest.raises(SetupError):
        new_game(ruleset="wujiandao", players=[f"p{i}" for i in range(9)], seed="s")
    created = new_game(ruleset="wujiandao", players=[f"p{i}" for i in range(14)], seed="s")
    assert Counter(r.value for r in created.roles) == Counter(
        {PL: 1, PC: 1, PM: 1, GL: 1, GC: 1, GM: 1, P: 4, G: 4}
    )


def test_wujiandao_public_identities_and_who_knows_whom() -> None:
    game = Game("wujiandao", WJ)
    public = view_for(game.state, None)
    assert [i.public for i in public.seats] == [Role.POLICE] * 4 + [Role.GANGSTER] * 4
    assert all(i.role is None for i in public.seats)
    known = {
        seat: [i.seat for i in view_for(game.state, Seat(seat)).seats if i.role and i.seat != seat]
        for seat in range(1, 9)
    }
    assert known == {1: [2, 7], 2: [1], 3: [5], 4: [], 5: [3, 6], 6: [5], 7: [1], 8: []}


def test_wujiandao_votes_stay_within_a_faction_and_spare_its_heads() -> None:
    game = Game("wujiandao", WJ)
    game.lock()
    game.vote(1, 5)  # the other faction: void
    assert game.state.posts[-1].void_reason == "vote.not_in_group"
    game.vote(2, 1)
    game.vote(3, 1)
    game.vote(5, 8)
    before = game.state
    events = game.do(Lock())
    police, gang = game.state.history[-2:]
    assert isinstance(police, DayRecord) and isinstance(gang, DayRecord)
    assert (police.group, police.spared, police.left) == ("police", 1, ())
    assert (gang.group, gang.left) == ("gang", (8,))
    said = [
        (e.key, dict(e.params).get("group"))
        for e in effects_for(before, events)
        if isinstance(e, Announce) and e.key in ("day.spared", "day.result")
    ]
    assert said == [("day.spared", "police"), ("day.result", "gang")]  # spared: said once


def test_wujiandao_the_confidant_orders_once_the_leader_is_dead() -> None:
    game = Game("wujiandao", WJ, options={"first_night": "virtual"})
    assert view_for(game.state, Seat(1)).powers == ()
    game.lock()
    game.lock()
    assert view_for(game.state, Seat(1)).powers == (Power.KILL,)
    assert view_for(game.state, Seat(2)).powers == ()
    game.night((5, "kill", 1), (1, "kill", 8))
    assert night_left(game) == [1, 8]
    game.lock()
    assert view_for(game.state, Seat(2)).powers == (Power.KILL,)
    with pytest.raises(TargetError):
        game.power(2, "kill", 3)  # publicly police: not a target of the police


# -- what the shell relies on: the shape of a submission, the card acting, who knows whom -------


def test_v5_the_card_acting_is_checked_and_two_cards_with_one_power_must_be_named() -> None:
    game = CardGame(V5_7, seed="v5")
    with pytest.raises(ActorError) as lacks:
        game.do(SubmitPower(player="p1", power=Power.KILL, target=Seat(13), seat=Seat(2)))
    assert (lacks.value.key, dict(lacks.value.params)) == (
        "actor.card_lacks_power",
        {"seat": 2, "power": "kill"},
    )
    game.night((1, "kill", 13))
    game.lock()
    with pytest.raises(ActorError) as out:  # p7's card 13 is out, card 14 plays on
        game.do(SubmitPower(player="p7", power=Power.KILL, target=Seat(3), seat=Seat(13)))
    assert out.value.key == "actor.card_out"
    # 9 players, 2 killers: p1 holds both
    pair = CardGame([K, K, P, C, BF, C, MOLE, C, SPO, C, SPO, C, D, C, P, D, C, C])
    with pytest.raises(ActorError) as which:
        pair.do(SubmitPower(player="p1", power=Power.KILL, target=Seat(18)))
    assert (which.value.key, dict(which.value.params)) == (
        "actor.which_card",
        {"power": "kill", "seats": "1,2"},
    )
    pair.do(SubmitPower(player="p1", power=Power.KILL, target=Seat(18), seat=Seat(2)))
    assert [(s.seat, s.target) for s in pair.state.submissions] == [(2, 18)]


def test_a_power_without_its_target_or_with_one_it_takes_not_is_refused() -> None:
    game = Game("tianxia", TX, seed="tx")
    with pytest.raises(TargetError) as extra:
        game.do(SubmitPower(player="p3", power=Power.GUARD, target=Seat(5)))
    assert (extra.value.key, dict(extra.value.params)) == ("target.not_needed", {"power": "guard"})
    with pytest.raises(TargetError) as missing:
        game.do(SubmitPower(player="p3", power=Power.CHECK))
    assert (missing.value.key, dict(missing.value.params)) == (
        "target.required",
        {"power": "check"},
    )
    assert game.state.submissions == ()
    before = game.state
    game.do(SubmitPower(player="p3", power=Power.GUARD))
    accepted = [e for e in effects_for(before, game.events[-1:]) if isinstance(e, Whisper)]
    assert dict(accepted[0].params)["untargeted"] is True


def test_v5_role_messages_show_both_cards_and_votes_are_pending_once_a_player() -> None:
    game = CardGame(V5_7, seed="v5")
    dealt = {
        int(e.seat): dict(e.params)
        for e in effects_for(None, game.events)
        if isinstance(e, Whisper) and e.key == "role.dealt"
    }
    assert dealt[1]["cards"] == dealt[2]["cards"] == "1:killer,2:doctor"
    assert dealt[1]["teammates"] == "7" and dealt[1]["known"] == "7:mole"  # not its own card
    assert dealt[3]["known"] == "7:police"  # the police see the mole as one of them
    powers = [
        dict(e.params)
        for e in effects_for(None, game.events)
        if isinstance(e, Whisper) and e.key == "window.powers"
    ]
    assert [p["card"] for p in powers] == [1, 2, 3, 5, 7, 9, 11]
    game.lock()
    assert pending(game.state).votes == (1, 3, 5, 7, 9, 11, 13)  # one seat a player
    game.vote(2, 3)  # p1 votes by his second card
    assert pending(game.state).votes == (3, 5, 7, 9, 11, 13)


def test_wujiandao_ordinary_members_know_nobody_and_share_no_thread() -> None:
    roles = [PL, PC, GM, P, P, GL, GC, PM, G, G]  # 10: two ordinary members a side
    game = Game("wujiandao", roles)
    for seat in (4, 5, 9, 10):
        assert [i.seat for i in view_for(game.state, Seat(seat)).seats if i.role] == [seat]
    created = effects_for(None, game.events)
    assert not any(isinstance(e, TeamJoin) for e in created)
    (roster,) = [e for e in created if isinstance(e, Announce) and e.key == "game.public_roles"]
    assert dict(roster.params)["public"] == (
        "1:police,2:police,3:police,4:police,5:police,"
        "6:gangster,7:gangster,8:gangster,9:gangster,10:gangster"
    )
