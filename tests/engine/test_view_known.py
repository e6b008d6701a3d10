"""What a seat knows by the rules (`PlayerView.known`) it keeps knowing for the whole game: a
teammate or a seat the ruleset lets it see stays known once dead, and what it knew under its
dealt role stays known once that role has turned. It knows nobody it never met: a seat that
joins a team late knows the members alive when it joins, not the ones already out; roles
revealed to everyone at death are `SeatInfo.revealed`, apart from it. Nobody else's role shows
to a seat that knows no one (a civilian), save those public reveals."""

from __future__ import annotations

import random
from dataclasses import replace

from gamekit import Game
from playouts import play

from engine.commands import ModKill
from engine.effects import Whisper
from engine.events import NightResolved
from engine.game import new_game, replay_events, start_events
from engine.model import Role, Seat
from engine.publish import effects_for
from engine.rulesets import rules_for
from engine.state import GameState
from engine.view import roles_through, view_for

C, K, P = "civilian", "killer", "police"


def known(state: GameState, seat: int) -> dict[int, Role]:
    """The roles `seat` knows by the rules, by seat."""
    return {int(s): r for s, r in view_for(state, Seat(seat)).known}


def seen(state: GameState, seat: int) -> dict[int, Role]:
    """Every role the seat's view shows (its own, known, revealed)."""
    return {int(i.seat): i.role for i in view_for(state, Seat(seat)).seats if i.role is not None}


def revealed(state: GameState) -> dict[int, Role]:
    """The roles shown to everyone at death."""
    return {int(i.seat): i.revealed for i in view_for(state, None).seats if i.revealed}


# -- a known player dies ---------------------------------------------------------------------
WUJIANDAO = [
    "police_leader", "police_confidant", "gang_mole", "police",
    "gang_leader", "gang_confidant", "police_mole", "gangster",
]  # fmt: skip


def test_wujiandao_the_confidant_and_the_mole_keep_knowing_their_dead_leader() -> None:
    game = Game("wujiandao", WUJIANDAO)
    game.night((5, "kill", 1), (1, "kill", 8))
    assert not game.state.seat(Seat(1)).alive
    assert known(game.state, 2) == {1: Role.POLICE_LEADER}
    assert known(game.state, 7) == {1: Role.POLICE_LEADER}
    assert known(game.state, 1) == {2: Role.POLICE_CONFIDANT, 7: Role.POLICE_MOLE}
    assert known(game.state, 6) == {5: Role.GANG_LEADER}
    # an ordinary member knows nobody's hidden role, dead or alive
    assert known(game.state, 4) == {}
    assert seen(game.state, 4) == {4: Role.POLICE, **revealed(game.state)}


def test_v2da_the_accomplice_keeps_knowing_a_killer_voted_out() -> None:
    roles = [P, P, K, K, "doctor", "accomplice", C, C]
    game = Game("v2_doctor_accomplice", roles, options={"accomplice": "knows"})
    game.night((3, "kill", 7))
    game.day({1: 3, 2: 3, 5: 3, 8: 3})
    assert not game.state.seat(Seat(3)).alive
    assert known(game.state, 6) == {3: Role.KILLER, 4: Role.KILLER}
    assert known(game.state, 4) == {3: Role.KILLER}
    assert known(game.state, 8) == {}
    assert seen(game.state, 8) == {8: Role.CIVILIAN}


def v5_game() -> GameState:
    """9 players, two cards each: p1 killer+civilian (1, 2), p2 killer+civilian (3, 4),
    p3 police+civilian (5, 6), p4 police+doctor (7, 8), p5 mole+civilian (9, 10), …"""
    hands = [
        (K, C), (K, C), (P, C), (P, "doctor"), ("mole", C),
        ("secret_police", C), ("secret_police", "doctor"), ("butterfly", C), (C, C),
    ]  # fmt: skip
    players = [f"p{i}" for i in range(1, 10)]
    cards = {
        f"{p}#{k + 1}": role
        for p, hand in zip(players, hands, strict=True)
        for k, role in enumerate(hand)
    }
    created = new_game(ruleset="v5", players=players, seed="s", roles=cards)
    return replay_events(start_events(created))


def test_v5_cards_keep_knowing_a_dead_fellow_card_and_the_mole() -> None:
    from engine.commands import Lock, SubmitPower
    from engine.game import apply
    from engine.model import Power

    state = v5_game()
    for player, seat, target in (("p1", 1, 9), ("p2", 3, 5)):  # the killers kill the mole, a police
        state, _ = apply(
            state,
            SubmitPower(player=player, power=Power.KILL, target=Seat(target), seat=Seat(seat)),
        )
    state, _ = apply(state, Lock())
    assert not state.seat(Seat(9)).alive and not state.seat(Seat(5)).alive
    assert known(state, 1) == {2: Role.CIVILIAN, 3: Role.KILLER, 9: Role.MOLE}
    assert known(state, 7) == {5: Role.POLICE, 8: Role.DOCTOR, 9: Role.POLICE}  # the mole as police
    assert known(state, 9) == {1: Role.KILLER, 3: Role.KILLER, 5: Role.POLICE, 7: Role.POLICE,
                               10: Role.CIVILIAN}  # fmt: skip
    assert known(state, 17) == {18: Role.CIVILIAN}  # a civilian player: its own other card
    assert set(seen(state, 17)) == {17, 18, *revealed(state)}


# -- the viewer's role turns ---------------------------------------------------------------
BASIC_SHERIFF = [P, "sheriff", P, K, K, K] + [C] * 8


def test_basic_police_turned_civilians_by_the_grief_keep_knowing_the_police() -> None:
    game = Game("basic", BASIC_SHERIFF, options={"police_special": "sheriff"})
    game.night()
    game.day({s: 2 for s in range(3, 15)})
    me = view_for(game.state, Seat(1))
    assert (me.role, me.original_role) == (Role.CIVILIAN, Role.POLICE)
    assert known(game.state, 1) == {2: Role.SHERIFF, 3: Role.POLICE}
    assert known(game.state, 3) == {1: Role.POLICE, 2: Role.SHERIFF}
    assert known(game.state, 4) == {5: Role.KILLER, 6: Role.KILLER}
    assert known(game.state, 7) == {}
    assert revealed(game.state) == {2: Role.SHERIFF}
    assert seen(game.state, 7) == {7: Role.CIVILIAN, 2: Role.SHERIFF}


BASIC_COVERT = [P, "covert_police", P, K, K, K] + [C] * 8


def test_basic_the_covert_police_knows_the_police_alive_when_he_joins_them() -> None:
    game = Game("basic", BASIC_COVERT, options={"police_special": "covert_police"})
    assert known(game.state, 2) == {} and known(game.state, 1) == {3: Role.POLICE}
    game.night((4, "kill", 1))  # police 1 is out before the covert police attacks
    game.day({})
    game.night((2, "attack", 5))
    assert game.state.seat(Seat(2)).role is Role.POLICE
    assert known(game.state, 2) == {3: Role.POLICE}  # not police 1, out before he joined
    assert known(game.state, 3) == {1: Role.POLICE, 2: Role.POLICE}
    assert known(game.state, 1) == {3: Role.POLICE}  # dead before the attack: never met him
    assert 2 not in seen(game.state, 1)


MIFEI = [P, P, P, K, K, "doctor", "secret_killer"] + [C] * 5


def mifei_game(roles: list[str]) -> Game:
    """Night 1 the killers kill 8; day 1 killer 4 is voted out; night 2 the secret killer fires."""
    game = Game("mifei", roles)
    game.night((4, "kill", 8))
    game.day({s: 4 for s in (1, 2, 3, 6, 9, 10, 11, 12)})
    game.night((7, "shoot", 9))
    return game


def test_mifei_a_fired_secret_killer_knows_only_the_killers_alive_when_he_turns() -> None:
    game = mifei_game(MIFEI)
    me = view_for(game.state, Seat(7))
    assert (me.role, me.original_role) == (Role.KILLER, Role.SECRET_KILLER)
    assert known(game.state, 7) == {5: Role.KILLER}
    assert known(game.state, 5) == {4: Role.KILLER, 7: Role.KILLER}
    assert known(game.state, 4) == {5: Role.KILLER}  # out before the shot: never met him
    assert 7 not in seen(game.state, 4)
    assert known(game.state, 1) == {2: Role.POLICE, 3: Role.POLICE}
    assert known(game.state, 10) == {} and seen(game.state, 10) == {10: Role.CIVILIAN}


def test_mifei_views_do_not_depend_on_roles_the_seat_does_not_know() -> None:
    """The same game with the second killer dealt to seat 10 instead of 5: the police, the
    civilians and the dead killer see exactly the same."""
    other = [P, P, P, K, C, "doctor", "secret_killer", C, C, K, C, C]
    a, b = mifei_game(MIFEI), mifei_game(other)
    assert [s.alive for s in a.state.seats] == [s.alive for s in b.state.seats]
    for seat in (1, 2, 3, 6, 8, 9, 11, 12):
        assert view_for(a.state, Seat(seat)) == view_for(b.state, Seat(seat)), seat
    assert known(b.state, 7) == {10: Role.KILLER}


def test_mifei_a_fired_secret_killer_learns_nothing_of_the_killers_out_before() -> None:
    """Killer 4 voted out and seat 11 removed before the secret killer fires, in one game 4 a
    killer and 11 a civilian, in the other the other way round: the fired secret killer's view
    (teammates too) is the same in both."""
    views = []
    for roles in (MIFEI, [P, P, P, C, K, "doctor", "secret_killer", C, C, C, K, C]):
        game = Game("mifei", roles)
        game.night((5, "kill", 8))
        game.do(ModKill(seat=Seat(11)))
        game.day({s: 4 for s in (1, 2, 3, 6, 9, 10, 12)})
        game.night((7, "shoot", 9))
        assert game.state.seat(Seat(7)).role is Role.KILLER and not game.state.over
        views.append(view_for(game.state, Seat(7)))
    assert views[0] == views[1]
    assert views[0].teammates == (Seat(5),) and views[0].known == ((Seat(5), Role.KILLER),)


LONE = [K] * 3 + ["lone_killer", P, P, "lone_police", "doctor"] + [C] * 8


def test_v4_the_merged_lone_police_knows_the_police_alive_when_he_merges() -> None:
    game = Game("v4_lone", LONE)
    game.night((1, "kill", 5))
    game.day({})
    game.night((7, "check", 6))
    me = view_for(game.state, Seat(7))
    assert (me.role, me.original_role) == (Role.POLICE, Role.LONE_POLICE)
    assert known(game.state, 7) == {6: Role.POLICE}
    assert known(game.state, 6) == {5: Role.POLICE, 7: Role.POLICE}
    assert known(game.state, 5) == {6: Role.POLICE}
    assert revealed(game.state) == {5: Role.POLICE}  # v4 shows the card dealt at death
    assert known(game.state, 9) == {}
    assert seen(game.state, 9) == {9: Role.CIVILIAN, 5: Role.POLICE}


# -- against the game as played --------------------------------------------------------------
def test_known_by_rule_is_what_the_seat_was_shown_along_the_game() -> None:
    """In plausible games of every ruleset, a seat knows by rule exactly what `seen_role`
    showed it in some state of the game where both it and the other seat were in: each role
    as it then was, the latest shown. `roles_through` places every turn (no role unknown)."""
    rnd = random.Random(20240613)
    turned: set[tuple[str, Role, Role]] = set()
    for _ in range(600):
        played = play(rnd, steps=160)
        if played is None or not played[1]:
            continue
        states = [played[1][0].before, *(step.after for step in played[1])]
        final = states[-1]
        rules = rules_for(final)
        roles, _ = roles_through(final, rules)
        assert all(role is not None for turns in roles.values() for _, role in turns)
        turned |= {(final.ruleset, s.original_role, s.role) for s in final.seats}
        for me in final.seats:
            expected: dict[Seat, Role] = {}
            for state in states:
                viewer = state.seat(me.seat)
                if not viewer.alive:
                    continue
                for other in state.seats:
                    if other.seat != me.seat and other.alive:
                        shown = rules.seen_role(viewer, other)
                        if shown is not None:
                            expected[other.seat] = shown
            assert dict(view_for(final, me.seat).known) == expected, (final.ruleset, me.seat)
    kinds = {(ruleset, was) for ruleset, was, now in turned if was is not now}
    assert {  # roles that turned in these games: spent, merged, by the sheriff's grief
        ("mifei", Role.SECRET_KILLER), ("v3t", Role.SECRET_POLICE), ("v4_lone", Role.LONE_POLICE),
        ("v4_lone", Role.LONE_KILLER), ("basic", Role.COVERT_POLICE), ("basic", Role.DOCTOR),
    } <= kinds  # fmt: skip


def test_a_turn_the_history_does_not_place_is_known_only_from_now() -> None:
    """A role now that the history does not account for: known as dealt at the deal, as it is
    now from now on (by those in the game now), and as nothing in between."""
    game = Game("v2", [P, P, K, K, C, C, C, C])
    game.night((3, "kill", 6))
    game.day({1: 3, 2: 3, 5: 3, 7: 3})
    seats = list(game.state.seats)
    seats[4] = replace(seats[4], role=Role.KILLER)  # seat 5, with no record of the turn
    state = replace(game.state, seats=tuple(seats))
    roles, left = roles_through(state, rules_for(state))
    now = len(state.history)
    assert roles[Seat(5)] == ((-1, Role.CIVILIAN), (0, None), (now, Role.KILLER))
    assert left == {Seat(6): 0, Seat(3): 1}
    assert known(state, 5) == {4: Role.KILLER}
    assert known(state, 4) == {3: Role.KILLER, 5: Role.KILLER}
    assert known(state, 3) == {4: Role.KILLER}


# -- check answers: as the judge told them -------------------------------------------------------
def answers(state: GameState, seat: int) -> list[tuple[int, int, str]]:
    """The check answers the seat's view lists: (night, target, answer)."""
    return [(n, int(t), r.value) for n, t, r in view_for(state, Seat(seat)).checks]


def test_a_merged_lone_police_gets_the_police_answers_from_his_first_night_with_them() -> None:
    """The team's answers of the nights before he joined were told to its members then, never to
    him (the thread shows him whom they checked, not what they were told)."""
    game = Game("v4_lone", LONE)
    game.night((5, "check", 9))
    game.day({})
    game.night((5, "check", 7), (7, "check", 10))  # the police check him: he merges
    assert game.state.seat(Seat(7)).role is Role.POLICE
    game.day({})
    game.night((5, "check", 1))
    assert answers(game.state, 7) == [(2, 10, "civilian"), (3, 1, "killer")]
    assert answers(game.state, 6) == [(1, 9, "civilian"), (2, 7, "lone_police"), (3, 1, "killer")]


def test_the_covert_police_gets_no_police_answers_from_before_his_attack() -> None:
    game = Game("basic", BASIC_COVERT, options={"police_special": "covert_police"})
    game.night((1, "check", 4), (2, "attack", 7))  # spent: a police from now on
    game.day({})
    game.night((1, "check", 5))
    assert answers(game.state, 2) == [(2, 5, "killer")]
    assert answers(game.state, 3) == [(1, 4, "killer"), (2, 5, "killer")]


def test_a_police_out_of_the_game_gets_no_later_answers() -> None:
    game = Game("v2", [P, P, K, K, C, C, C, C])
    game.night((1, "check", 3), (3, "kill", 1))  # killed the night of his check: answered
    game.day({})
    game.night((2, "check", 4))
    assert answers(game.state, 1) == [(1, 3, "killer")]
    assert answers(game.state, 2) == [(1, 3, "killer"), (2, 4, "killer")]


def test_a_seats_check_answers_are_the_ones_the_judge_told_it() -> None:
    """In plausible games of every ruleset, a seat's view lists exactly the check answers
    whispered to it (`check.result`), night by night."""
    rnd = random.Random(20250301)
    told_any = 0
    for _ in range(150):
        played = play(rnd, steps=160)
        if played is None or not played[1]:
            continue
        told: dict[Seat, list[tuple[int, int, str]]] = {}
        for step in played[1]:
            nights = [e.record.number for e in step.events if isinstance(e, NightResolved)]
            for effect in effects_for(step.before, step.events):
                if isinstance(effect, Whisper) and effect.key == "check.result":
                    p = dict(effect.params)
                    told.setdefault(effect.seat, []).append(
                        (nights[0], int(str(p["target"])), str(p["result"]))
                    )
        final = played[1][-1].after
        for seat in final.seats:
            assert answers(final, seat.seat) == told.get(seat.seat, []), (final.ruleset, seat)
        told_any += bool(told)
    assert told_any > 20
