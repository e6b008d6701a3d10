"""5.0 双身份 and the team threads (docs/rulings.md, "Several cards per player"): a substitute
takes every card of the replaced player, so the thread, role DM and power menu of each card go
with them whichever card the moderator named; a player whose last living card of a team is out
leaves that team's thread while another card plays on, as a dead killer leaves the killers'.
What is public never depends on the cards' roles."""

from __future__ import annotations

from gamekit import CardGame, Game

from engine.commands import Lock, ReplacePlayer, SubmitPower
from engine.effects import (
    PRIVATE,
    Announce,
    Effect,
    LeaveTeamThreads,
    OverrideLogged,
    SeatHandover,
    SeatLeft,
    TeamJoin,
    Whisper,
    for_delivery,
)
from engine.model import Power, Seat, Team
from engine.publish import effects_for

C, K, P, D = "civilian", "killer", "police", "doctor"
BF, MOLE, SPO = "butterfly", "mole", "secret_police"
# 7 players, 14 cards; player k holds cards 2k-1 and 2k. p1: a killer (1) and a doctor (2).
V5_7 = [K, D, P, C, BF, C, MOLE, C, SPO, C, SPO, C, C, C]
# The same table but the killer card is p3's (6): p1 holds a civilian and the doctor.
V5_7_NO_KILLER = [C, D, P, C, BF, K, MOLE, C, SPO, C, SPO, C, C, C]
# 9 players, 18 cards: p1 holds both killer cards.
V5_9_PAIR = [K, K, P, C, BF, C, MOLE, C, SPO, C, SPO, C, D, C, P, D, C, C]


def _shape(effects: list[Effect]) -> list[tuple[object, ...]]:
    """Each private effect as (kind, seat or player, key or team) for comparison."""
    out: list[tuple[object, ...]] = []
    for effect in effects:
        match effect:
            case Whisper():
                out.append(("whisper", int(effect.seat), effect.key))
            case LeaveTeamThreads():
                out.append(("leave", effect.player, effect.team))
            case TeamJoin():
                out.append(("join", int(effect.seat), effect.team))
            case _:
                out.append((type(effect).__name__,))
    return out


def _vote_out(game: CardGame, card: int) -> list[Effect]:
    """In the day window open, everyone but the card's holder votes the card out (one post a
    player) and the day locks; the effects of the lock."""
    holder = game.state.seat(Seat(card)).player
    voters = [s for s in game.state.alive() if game.state.seat(s).player != holder]
    firsts = {game.state.seat(s).player: s for s in reversed(voters)}  # one post a player
    for seat in sorted(firsts.values()):
        game.vote(int(seat), card)
    return game.effects(Lock())


# -- the replacement -----------------------------------------------------------------------------


def test_naming_either_card_hands_every_cards_thread_role_and_menu_to_the_substitute() -> None:
    for named in (1, 2):  # the killer card, the doctor card
        game = CardGame(V5_7, seed="v5-threads")
        _public, private = for_delivery(
            game.effects(ReplacePlayer(seat=Seat(named), new_player="sub"))
        )
        other = 3 - named
        assert _shape(private) == [
            ("whisper", named, "role.dealt"),  # the named card's DM first, as before
            ("whisper", other, "role.dealt"),
            ("leave", "p1", Team.KILLERS),
            ("join", 1, Team.KILLERS),
            ("whisper", 1, "window.powers"),
            ("whisper", 2, "window.powers"),
        ], named
        dealt = [e for e in private if isinstance(e, Whisper) and e.key == "role.dealt"]
        assert {dict(e.params)["cards"] for e in dealt} == {"1:killer,2:doctor"}  # both cards
        menus = [
            dict(e.params) for e in private if isinstance(e, Whisper) and e.key != "role.dealt"
        ]
        assert [(m["card"], m["powers"]) for m in menus] == [(1, "kill"), (2, "save")]
        game.do(SubmitPower(player="sub", power=Power.KILL, target=Seat(14), seat=Seat(1)))
        assert [(s.seat, s.target) for s in game.state.submissions] == [(1, 14)]


def test_what_a_replacement_shows_in_public_is_the_same_whatever_the_cards_are() -> None:
    shown = []
    for roles in (V5_7, V5_7_NO_KILLER):
        game = CardGame(roles, seed="v5-threads")
        effects = game.effects(ReplacePlayer(seat=Seat(2), new_player="sub"))
        public, private = for_delivery(effects)
        assert all(isinstance(e, PRIVATE) for e in private)
        assert not any(isinstance(e, LeaveTeamThreads | TeamJoin | Whisper) for e in public)
        shown.append(public)
    assert shown[0] == shown[1]
    assert [type(e) for e in shown[0]] == [Announce, SeatHandover, OverrideLogged]


def test_a_one_card_replacement_is_unchanged() -> None:
    v2 = [K, K, P, P, C, C, C, C]
    killer = Game("v2", v2)
    before = killer.state
    effects = effects_for(before, killer.do(ReplacePlayer(seat=Seat(1), new_player="sub")))
    assert [type(e) for e in effects if not isinstance(e, PRIVATE)][:2] == [Announce, SeatHandover]
    assert _shape([e for e in effects if isinstance(e, PRIVATE)]) == [
        ("whisper", 1, "role.dealt"),
        ("leave", "p1", Team.KILLERS),
        ("join", 1, Team.KILLERS),
        ("whisper", 1, "window.powers"),
    ]
    civilian = Game("v2", v2)
    before = civilian.state
    effects = effects_for(before, civilian.do(ReplacePlayer(seat=Seat(5), new_player="sub")))
    assert _shape([e for e in effects if isinstance(e, PRIVATE)]) == [("whisper", 5, "role.dealt")]


def test_a_substitute_for_a_player_whose_killer_card_is_out_joins_no_thread() -> None:
    game = CardGame(V5_7, seed="v5-threads")
    game.lock()  # a quiet night
    _vote_out(game, 1)  # night 2 opens
    _public, private = for_delivery(game.effects(ReplacePlayer(seat=Seat(2), new_player="sub")))
    assert _shape(private) == [
        ("whisper", 2, "role.dealt"),  # the living card only
        ("leave", "p1", Team.KILLERS),  # left already: harmless, and private
        ("whisper", 2, "window.powers"),
    ]


# -- a card out while its player plays on --------------------------------------------------------


def test_a_killer_card_voted_out_takes_its_player_out_of_the_killers_thread() -> None:
    game = CardGame(V5_7, seed="v5-threads")
    game.lock()
    effects = _vote_out(game, 1)
    assert not game.state.seat(Seat(1)).alive and game.state.seat(Seat(2)).alive
    assert game.state.result is None
    public, private = for_delivery(effects)
    assert LeaveTeamThreads(player="p1", team=Team.KILLERS) in private
    assert not any(isinstance(e, SeatLeft | LeaveTeamThreads) for e in public)
    assert not any(isinstance(e, SeatLeft) for e in effects)  # p1 plays on with card 2

    # The same day where the card voted out is a civilian: the same public posts.
    other = CardGame(V5_7_NO_KILLER, seed="v5-threads")
    other.lock()
    other_public, other_private = for_delivery(_vote_out(other, 1))
    assert other_public == public
    assert not any(isinstance(e, LeaveTeamThreads) for e in other_private)


def test_a_killer_card_killed_at_night_takes_its_player_out_of_the_killers_thread() -> None:
    game = CardGame(V5_7, seed="v5-threads")
    game.power(9, "execute", 1)  # a secret police fires at the killer card
    effects = game.effects(Lock())
    assert not game.state.seat(Seat(1)).alive and game.state.result is None
    assert LeaveTeamThreads(player="p1", team=Team.KILLERS) in effects
    assert not any(isinstance(e, SeatLeft) for e in effects)  # p1 plays on with card 2
    public, _private = for_delivery(effects)
    assert not any(isinstance(e, LeaveTeamThreads) for e in public)


def test_a_player_keeps_the_thread_while_another_killer_card_lives() -> None:
    game = CardGame(V5_9_PAIR, seed="v5-threads")
    game.lock()
    effects = _vote_out(game, 1)
    assert not any(isinstance(e, LeaveTeamThreads) for e in effects)  # card 2 is a killer too
    game.lock()  # a quiet night
    effects = _vote_out(game, 2)
    assert [e for e in effects if isinstance(e, SeatLeft | LeaveTeamThreads)] == [
        SeatLeft(seat=Seat(2)),
        LeaveTeamThreads(player="p1"),  # out of the game: every thread
    ]


def test_a_non_team_card_out_changes_no_thread() -> None:
    game = CardGame(V5_7, seed="v5-threads")
    game.lock()
    effects = _vote_out(game, 2)  # p1's doctor card; the killer card plays on
    assert not any(isinstance(e, LeaveTeamThreads | SeatLeft) for e in effects)
