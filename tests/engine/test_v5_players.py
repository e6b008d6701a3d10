"""5.0 双身份: a player is their cards (docs/rulings.md "Several cards per player").

The second run-off bars a player tied on either of their cards (docs/rules.md §1.2), `self_vote =
false` forbids a vote for either of the voter's own cards, the record names the deal by the label
it was drawn with (players, not cards, and `|again k` after a refused deal: docs/fairness.md step
3, docs/rulesets/v5.md), and a moderator removes or replaces the whole player whichever of their
cards is named.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from gamekit import CardGame, Game

from bot.cli import main
from engine import lots
from engine.commands import ChooseTied, ModKill, ReplacePlayer
from engine.errors import ActorError, ModeratorError
from engine.game import new_game, replay_events, start_events
from engine.model import Seat
from engine.pending import pending
from engine.record import record_of
from engine.state import DayRecord, OverrideRecord
from engine.verify import verify_record

K, D, P, C, BF, MOLE, SPO = (
    "killer", "doctor", "police", "civilian", "butterfly", "mole", "secret_police",
)  # fmt: skip
# 7 players, 14 cards; player k holds cards 2k-1 and 2k
V5_7 = [K, D, P, C, BF, C, MOLE, C, SPO, C, SPO, C, C, C]


def _night_kill(game: CardGame, card: int) -> None:
    """Night 1: the killer card (1, p1's first) kills `card`; the night locks into day 1."""
    game.power(1, "kill", card)
    game.lock()
    assert not game.state.seat(Seat(card)).alive


def _third_window() -> CardGame:
    """Day 1 ties card 4 (p2's second card; p2 plays from card 3) with card 13 (p7's first card)
    twice: the third window opens, among 4 and 13, the tied players barred."""
    game = CardGame(V5_7, options={"tie": "revote"}, seed="s")
    game.lock()  # night 1: nothing
    for _ in range(2):
        game.vote(1, 4)  # p1 (two cards) for card 4
        game.vote(3, 13)  # p2 (two cards) for card 13
        game.lock()
    window = game.state.window
    assert window is not None and window.revote == 2
    assert window.candidates == (4, 13) and window.barred_voters == (4, 13)
    return game


def test_a_player_tied_on_their_second_card_owes_no_vote_in_the_second_runoff() -> None:
    game = _third_window()
    assert pending(game.state).votes == (1, 5, 7, 9, 11)  # neither p2 (card 4) nor p7 (13)
    game.vote(1, 13)
    assert pending(game.state).votes == (5, 7, 9, 11)


def test_a_player_tied_on_their_second_card_may_not_vote_in_the_second_runoff() -> None:
    game = _third_window()
    game.vote(3, 13)  # p2, by card 3 (card 4 is tied)
    assert game.state.posts[-1].void_reason == "vote.barred_in_runoff"
    game.vote(13, 4)  # p7, tied on card 13
    assert game.state.posts[-1].void_reason == "vote.barred_in_runoff"
    game.vote(1, 13)  # p1 is not tied: counts, with both cards
    assert game.state.posts[-1].void_reason is None
    game.lock()
    record = game.state.history[-1]
    assert isinstance(record, DayRecord)
    assert record.votes == ((1, 13),) and record.tally == ((13, 2),)
    assert len(record.void_posts) == 2 and record.left == (13,)


def test_the_first_runoff_still_lets_the_tied_players_vote() -> None:
    game = CardGame(V5_7, options={"tie": "revote"}, seed="s")
    game.lock()
    game.vote(1, 4)
    game.vote(3, 13)
    game.lock()
    window = game.state.window
    assert window is not None and window.revote == 1 and window.barred_voters == ()
    assert 3 in pending(game.state).votes
    game.vote(3, 13)
    assert game.state.posts[-1].void_reason is None


# -- 2. self_vote = false: neither of one's own cards ------------------------------------------


@pytest.mark.parametrize("target", [1, 2])
def test_self_vote_false_refuses_a_vote_for_either_of_ones_cards(target: int) -> None:
    game = CardGame(V5_7, options={"self_vote": False}, seed="s")
    game.lock()
    game.vote(1, target)  # p1 holds cards 1 and 2
    assert game.state.posts[-1].void_reason == "vote.self_vote"
    game.vote(2, 3)  # another player's card: counts
    assert game.state.posts[-1].void_reason is None


def test_self_vote_false_refuses_ones_other_card_when_the_first_is_out() -> None:
    game = CardGame(V5_7, options={"self_vote": False}, seed="s")
    _night_kill(game, 13)  # p7 plays on with card 14
    game.vote(14, 14)
    assert game.state.posts[-1].void_reason == "vote.self_vote"


def test_self_vote_true_allows_a_vote_for_ones_own_card() -> None:
    game = CardGame(V5_7, seed="s")
    game.lock()
    game.vote(1, 2)
    assert game.state.posts[-1].void_reason is None


# -- 3. the deal's label ----------------------------------------------------------------------

AGAIN_SEED = "x4"  # for 7 players: the first deal gives one player a killer and a police


def _dealt(seed: str) -> dict[str, Any]:
    state = replay_events(start_events(new_game(ruleset="v5", players=list("ABCDEFG"), seed=seed)))
    return record_of(state)


def test_the_deal_label_counts_players_and_names_a_deal_dealt_again() -> None:
    first = lots.deal_label("v5", 7)
    assert first == "deal|v5|7 players"
    refused = lots.shuffle(AGAIN_SEED, first, sorted(_roles(AGAIN_SEED)))
    hands = [refused[i : i + 2] for i in range(0, 14, 2)]
    assert any(K in h and P in h for h in hands)  # the first deal of this seed is refused
    assert _dealt(AGAIN_SEED)["deal"] == {
        "label": "deal|v5|7 players|again 1",
        "dealt": [f"{p}#{k}" for p in "ABCDEFG" for k in (1, 2)],
    }
    assert _dealt("s")["deal"]["label"] == "deal|v5|7 players"
    record = _dealt(AGAIN_SEED)
    (deal,) = [f for f in verify_record(record) if f.what.startswith("deal")]
    assert deal.ok and deal.what == "deal (deal|v5|7 players|again 1)"


def _roles(seed: str) -> list[str]:
    created = new_game(ruleset="v5", players=list("ABCDEFG"), seed=seed)
    return [r.value for r in created.roles]


def test_a_one_card_ruleset_keeps_its_deal_label() -> None:
    state = replay_events(
        start_events(new_game(ruleset="v2", players=[f"p{i}" for i in range(8)], seed="x4"))
    )
    assert record_of(state)["deal"]["label"] == "deal|v2|8 players"


DEALT_AGAIN = f"""
ruleset = "v5"
seed = "{AGAIN_SEED}"
players = ["A", "B", "C", "D", "E", "F", "G"]
[[steps]]
do = "lock"
"""


def test_replay_and_verify_print_the_label_the_deal_was_drawn_with(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    game = tmp_path / "again.toml"
    game.write_text(DEALT_AGAIN, "utf-8")
    assert main(["replay", str(game), "--json"]) == 0
    out = capsys.readouterr().out
    assert json.loads(out)["deal"]["label"] == "deal|v5|7 players|again 1"
    record = tmp_path / "again.json"
    record.write_text(out, "utf-8")
    assert main(["verify", str(record)]) == 0
    assert "OK       deal (deal|v5|7 players|again 1)" in capsys.readouterr().out


# -- 4. a moderator acts on the whole player whichever card is named ----------------------------


def _card_out() -> CardGame:
    game = CardGame(V5_7, seed="s")
    _night_kill(game, 3)  # p2's card 3 is out, card 4 plays on
    assert [game.state.seat(Seat(s)).alive for s in (3, 4)] == [False, True]
    return game


def test_replacing_a_player_by_a_card_that_is_out_replaces_the_player() -> None:
    game = _card_out()
    game.do(ReplacePlayer(seat=Seat(3), new_player="sub", player="p2"))
    assert [game.state.seat(Seat(s)).player for s in (3, 4)] == ["sub", "sub"]
    named_living = _card_out()
    named_living.do(ReplacePlayer(seat=Seat(4), new_player="sub"))
    assert game.state.history[-1] == named_living.state.history[-1]  # as naming card 4


def test_removing_a_player_by_a_card_that_is_out_removes_the_player() -> None:
    game = _card_out()
    game.do(ModKill(seat=Seat(3)))
    assert not game.state.seat(Seat(4)).alive and "p2" not in {
        game.state.seat(s).player for s in game.state.alive()
    }
    override = game.state.history[-1]
    assert isinstance(override, OverrideRecord) and override.left == (4,)
    named_living = _card_out()
    named_living.do(ModKill(seat=Seat(4)))
    assert override == named_living.state.history[-1]
    with pytest.raises(ModeratorError) as out:  # the whole player is out now
        game.do(ModKill(seat=Seat(3)))
    assert (out.value.key, dict(out.value.params)) == ("mod.seat_out_of_game", {"seat": 3})
    with pytest.raises(ModeratorError) as gone:
        game.do(ReplacePlayer(seat=Seat(4), new_player="sub"))
    assert gone.value.key == "mod.seat_out_of_game"


def test_a_card_out_still_names_its_holder_for_a_form() -> None:
    game = _card_out()
    with pytest.raises(ModeratorError) as changed:
        game.do(ReplacePlayer(seat=Seat(3), new_player="sub", player="p9"))
    assert changed.value.key == "mod.seat_changed"


def test_a_one_card_ruleset_still_refuses_a_seat_out_of_the_game() -> None:
    game = Game("v2", [K, K, P, P, C, C, C, C])
    game.night((1, "kill", 5))
    for command in (ReplacePlayer(seat=Seat(5), new_player="sub"), ModKill(seat=Seat(5))):
        with pytest.raises(ModeratorError) as out:
            game.do(command)
        assert out.value.key == "mod.seat_out_of_game"


# -- victim_choice: the pick is the victim's, a player who left the game --------------------------
def _choice_day(*night: tuple[int, str, int]) -> CardGame:
    """Night 1 as given; day 1 ties card 5 (p3) with card 7 (p4) twice, by p1 and p5 (two
    cards each)."""
    game = CardGame(V5_7, options={"tie": "victim_choice"}, seed="s")
    game.night(*night)
    for _ in range(2):
        game.vote(1, 5)
        game.vote(9, 7)
        game.lock()
    return game


def test_victim_choice_a_card_killed_while_its_player_plays_on_picks_nothing() -> None:
    game = _choice_day((1, "kill", 4))  # p2's card 4 dies; p2 plays on with card 3
    record = game.state.history[-1]
    assert isinstance(record, DayRecord) and record.tie is not None
    assert record.tie.then == "lots" and record.tie.chooser is None
    assert record.left in ((5,), (7,))


def test_victim_choice_goes_to_the_player_who_left_the_game_that_night() -> None:
    # card 4 dies (p2 plays on); p7 loses both cards 13 and 14 and is out of the game
    game = _choice_day((1, "kill", 4), (9, "execute", 13), (11, "execute", 14))
    window = game.state.window
    assert window is not None and window.chooser == 13
    with pytest.raises(ActorError):
        game.do(ChooseTied(player="p2", target=Seat(5)))
    game.do(ChooseTied(player="p7", target=Seat(5)))
    game.lock()
    record = game.state.history[-1]
    assert isinstance(record, DayRecord) and record.left == (5,) and record.chosen_by == 13


def test_victim_choice_a_player_removed_by_day_was_not_that_nights_victim() -> None:
    game = CardGame(V5_7, options={"tie": "victim_choice"}, seed="s")
    game.night((1, "kill", 4))
    game.do(ModKill(seat=Seat(3)))  # p2, whose card 4 died last night, is removed by day
    for _ in range(2):
        game.vote(1, 5)
        game.vote(9, 7)
        game.lock()
    record = game.state.history[-1]
    assert isinstance(record, DayRecord) and record.tie is not None
    assert record.tie.then == "lots" and record.tie.chooser is None
