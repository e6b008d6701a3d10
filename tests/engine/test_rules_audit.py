"""What the rules' audit found (docs/replay.md, "Judgement corrections"): a confession locks
nothing, so the last words and last acts open before it stay open; a game that would end while
a last act is open waits for it, after a moderator's removal too, and ends at once when nothing
is left to wait for; a victim's pick is made before the deadline, among the candidates still in
the game. Each test failed before its fix."""

from __future__ import annotations

import pytest
from gamekit import Game

from engine.commands import ChooseTied, GiveLastWords, ModKill, SetDeadline, SubmitPower
from engine.errors import PhaseError, TargetError
from engine.model import Instant, Power, Seat
from engine.state import DayRecord

K, SNP, P, C = "killer", "sniper", "police", "civilian"
BASIC_12 = [K, K, K, P, P, P, C, C, C, C, C, C]
BASIC_12_SNIPER = [K, K, SNP, P, P, P, C, C, C, C, C, C]
V2 = [K, K, P, P, C, C, C, C, C, C]


def confess(game: Game, seat: int) -> None:
    game.do(SubmitPower(player=f"p{seat}", power=Power.CONFESS))


def last_day(game: Game) -> DayRecord:
    return [r for r in game.state.history if isinstance(r, DayRecord)][-1]


# -- a confession locks nothing ------------------------------------------------------------------


def test_a_confession_at_dawn_leaves_the_night_victims_last_words_open() -> None:
    game = Game("basic", BASIC_12)
    game.night((1, "kill", 7))
    assert game.state.last_words_open == (7,)
    confess(game, 1)
    assert game.state.window is not None and game.state.window.kind.value == "night"
    assert set(game.state.last_words_open) == {1, 7}
    game.do(GiveLastWords(player="p7", text="I was a civilian"))


def test_a_confession_leaves_a_snipers_open_shot_open() -> None:
    game = Game("basic", BASIC_12_SNIPER, options={"sniper": "yes"})
    game.night((1, "kill", 3))  # the sniper leaves at night: his shot is open until the next lock
    assert game.state.last_acts_open == ((3, Power.SHOOT),)
    confess(game, 1)
    assert game.state.last_acts_open == ((3, Power.SHOOT),)


def sniper_shot_open_on_day_two() -> Game:
    game = Game("basic", BASIC_12_SNIPER, options={"sniper": "yes"})
    game.night((1, "kill", 4))
    game.day({1: 5, 2: 5, 3: 5, 7: 5})
    game.night((1, "kill", 3))  # the sniper leaves: his shot is open until the next lock
    assert game.state.last_acts_open == ((3, Power.SHOOT),)
    assert game.state.result is None
    return game


def test_a_confession_that_would_end_the_game_waits_for_the_open_shot() -> None:
    game = sniper_shot_open_on_day_two()
    game.do(ModKill(seat=Seat(1)))
    confess(game, 2)  # the killers are all out: good wins, unless the sniper's shot changes it
    assert game.state.result is None
    assert game.state.window is not None and game.state.window.last_act


# -- a moderator's removal that would end the game ---------------------------------------------


def test_a_removal_that_would_end_the_game_waits_for_the_open_shot() -> None:
    game = sniper_shot_open_on_day_two()
    game.do(ModKill(seat=Seat(1)))
    game.do(ModKill(seat=Seat(2)))  # killers all out: good wins, unless the sniper shoots 6
    assert game.state.result is None
    assert game.state.window is not None and game.state.window.last_act
    game.do(SubmitPower(player="p3", power=Power.SHOOT, target=Seat(6)))  # the last police
    assert game.state.result is not None and game.state.result.winner.value == "draw"


# -- a last-act window ends when nothing is left to wait for -----------------------------------


def sniper_voted_out_last() -> Game:
    """The sniper, the last killer-side player, voted out: the game waits for his shot."""
    game = Game("basic", BASIC_12_SNIPER, options={"sniper": "yes"})
    game.night()
    game.day({4: 1, 5: 1})
    game.night()
    game.day({4: 2, 5: 2})
    game.night()
    game.day({4: 3, 5: 3})
    assert game.state.result is None
    assert game.state.window is not None and game.state.window.last_act
    assert 3 in game.state.last_words_open
    return game


def test_a_pass_of_the_shot_ends_the_waiting_game_at_once() -> None:
    game = sniper_voted_out_last()
    game.do(SubmitPower(player="p3", power=Power.SHOOT, passed=True))
    assert game.state.result is not None


def test_last_words_instead_of_the_shot_end_the_waiting_game_at_once() -> None:
    game = sniper_voted_out_last()
    game.do(GiveLastWords(player="p3", text="bye"))  # closes his shot: speak or shoot
    assert game.state.last_acts_open == ()
    assert game.state.result is not None and game.state.result.winner.value == "good"


# -- a victim's pick ---------------------------------------------------------------------------


def victims_choice(seed: str = "test-seed") -> Game:
    """Two ties between 5 and 6: 8, the night's victim, picks."""
    game = Game("v2", V2, options={"tie": "victim_choice"}, seed=seed)
    game.night((1, "kill", 8))
    game.day({1: 5, 2: 5, 3: 6, 4: 6})
    game.day({1: 5, 2: 6, 3: 5, 4: 6})
    assert game.state.window is not None and game.state.window.chooser == 8
    return game


def test_a_pick_stamped_after_the_deadline_is_refused() -> None:
    game = victims_choice()
    game.do(SetDeadline(deadline=Instant(10_000)))
    before = game.state
    with pytest.raises(PhaseError) as refused:  # the lock runs late; the pick came 1 ms late
        game.do(ChooseTied(player="p8", target=Seat(5), at=Instant(10_001)))
    assert refused.value.key == "phase.after_deadline" and game.state is before


def test_a_pick_of_a_candidate_removed_since_the_tie_is_refused() -> None:
    game = victims_choice()
    game.do(ModKill(seat=Seat(5)))
    with pytest.raises(TargetError) as refused:
        game.do(ChooseTied(player="p8", target=Seat(5)))
    assert refused.value.key == "target.out_of_game"
    game.lock()
    assert last_day(game).left == (6,)  # the one candidate left


def test_a_pick_made_before_its_candidate_was_removed_is_no_pick() -> None:
    game = victims_choice()
    game.do(ChooseTied(player="p8", target=Seat(5)))
    game.do(ModKill(seat=Seat(5)))
    game.lock()
    record = last_day(game)
    assert record.left == (6,) and record.chosen_by is None


@pytest.mark.parametrize("seed", [f"s{i}" for i in range(12)])
def test_the_lots_draw_only_among_the_candidates_still_in_the_game(seed: str) -> None:
    game = victims_choice(seed)
    game.do(ModKill(seat=Seat(5)))
    game.lock()  # no pick: lots
    assert last_day(game).left == (6,)


def test_with_every_candidate_removed_nobody_leaves() -> None:
    game = victims_choice()
    game.do(ModKill(seat=Seat(5)))
    game.do(ModKill(seat=Seat(6)))
    game.lock()
    record = last_day(game)
    assert record.left == () and record.tie is not None and record.tie.then == "none"


def test_a_removal_that_waits_for_a_shot_keeps_the_days_posts_in_the_record() -> None:
    """The last-act window a removal opens inside a day extends that day: its vote posts were
    wiped, and were in no part of the record once the game ended in it."""
    from engine.record import record_of

    game = sniper_shot_open_on_day_two()
    game.vote(7, 1)
    game.vote(8, 2)
    game.do(ModKill(seat=Seat(1)))
    game.do(ModKill(seat=Seat(2)))  # would end: a last-act window waits for the shot
    assert game.state.window is not None and game.state.window.last_act
    game.do(SubmitPower(player="p3", power=Power.SHOOT, target=Seat(6)))
    assert game.state.result is not None
    posts = record_of(game.state)["unlocked_posts"]
    assert [(p["by"], p["target"]) for p in posts] == [("p7", "p1"), ("p8", "p2")]


def test_a_confession_stamped_after_the_deadline_is_refused() -> None:
    """The lock is due (its catch-up reading the vote posts): a confession made after the
    deadline must not close the day and throw away the votes made before it."""
    game = Game("basic", BASIC_12)
    game.night()
    game.do(SetDeadline(deadline=Instant(10_000)))
    before = game.state
    with pytest.raises(PhaseError) as refused:
        game.do(SubmitPower(player="p1", power=Power.CONFESS, at=Instant(10_001)))
    assert refused.value.key == "phase.after_deadline" and game.state is before
