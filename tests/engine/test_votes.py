"""Vote posts, the tally and the tie policies (docs/rules.md §1.1–1.2), table-driven where it helps."""

from __future__ import annotations

import pytest
from gamekit import Game

from engine.commands import Lock, PostVote, SubmitPower, VoidPost
from engine.errors import ActorError, ModeratorError, PhaseError
from engine.model import Camp, Instant, Power, Seat
from engine.state import DayRecord

C, K, P = "civilian", "killer", "police"
V2 = [K, K, P, P, C, C, C, C]
V2_11 = [K, K, K, P, P, P, C, C, C, C, C]


def day_game(ruleset: str = "v2", roles: list[str] = V2, **options: object) -> Game:
    """A game at day 1 with nobody out (the killers passed)."""
    game = Game(ruleset, roles, options=options or None)
    game.night()
    return game


def last_day(game: Game) -> DayRecord:
    record = [r for r in game.state.history if isinstance(r, DayRecord)][-1]
    return record


TALLIES = [
    # votes (seat → target, None = abstain), expected tally, abstained, left
    ({3: 1, 4: 1, 5: 2}, {1: 2, 2: 1}, (), (1,)),
    ({3: 1, 4: None, 5: None}, {1: 1}, (4, 5), (1,)),
    ({3: None, 4: None}, {}, (3, 4), ()),  # only abstentions: nobody leaves
    ({}, {}, (), ()),  # nobody voted
    ({1: 1, 2: 1, 3: 2}, {1: 2, 2: 1}, (), (1,)),  # self-votes allowed by default
]


@pytest.mark.parametrize(("votes", "tally", "abstained", "left"), TALLIES)
def test_tally(
    votes: dict[int, int | None],
    tally: dict[int, int],
    abstained: tuple[int, ...],
    left: tuple[int, ...],
) -> None:
    game = day_game()
    game.day(votes)
    record = last_day(game)
    assert dict(record.tally) == tally
    assert record.abstained == abstained
    assert record.left == left


def test_vote_change_by_new_post_and_abstain_replaces() -> None:
    game = day_game()
    game.vote(3, 1, at=10)
    game.vote(4, 1, at=11)
    game.vote(3, 2, at=12)  # 改票
    game.vote(4, None, at=13)  # abstention replaces too
    game.vote(5, 2, at=14)
    game.lock(at=100)
    record = last_day(game)
    assert dict(record.tally) == {2: 2}
    assert record.abstained == (4,)
    assert record.left == (2,)


def test_tally_uses_post_timestamps_not_arrival_order() -> None:
    game = day_game()
    game.vote(3, 2, at=20)  # arrives first, but is the later post
    game.vote(3, 1, at=10)
    game.vote(4, 5, at=10)
    game.lock(at=100)
    assert dict(last_day(game).tally) == {2: 1, 5: 1}


@pytest.mark.parametrize(
    ("setup", "voter", "target", "reason"),
    [
        (None, 9, 1, "vote.not_player"),
        ("kill5", 5, 1, "vote.out_of_game"),
        ("kill5", 3, 5, "vote.target_out"),
        (None, 3, 12, "vote.no_such_seat"),
        ("noself", 3, 3, "vote.self_vote"),
    ],
)
def test_invalid_vote_posts_have_reasons_and_do_not_count(
    setup: str | None, voter: int, target: int, reason: str
) -> None:
    game = Game("v2", V2, options={"self_vote": False} if setup == "noself" else None)
    game.night((1, "kill", 5)) if setup == "kill5" else game.night()
    player = "stranger" if voter == 9 else f"p{voter}"
    game.do(PostVote(player=player, post_id="x", target=Seat(target)))
    post = game.state.posts[-1]
    assert post.void_reason == reason
    game.lock()
    record = last_day(game)
    assert record.tally == ()
    assert [p.void_reason for p in record.void_posts] == [reason]


def test_post_stamped_one_ms_after_the_deadline_is_void() -> None:
    game = day_game()
    deadline = 1_700_000_000_000
    game.vote(3, 1, at=deadline)  # exactly at the deadline: counts
    game.vote(4, 2, at=deadline + 1)  # 1 ms late: void
    game.lock(at=deadline)
    record = last_day(game)
    assert dict(record.tally) == {1: 1}
    assert [p.void_reason for p in record.void_posts] == ["vote.after_deadline"]


def test_votes_outside_a_window_are_refused() -> None:
    game = Game("v2", V2)
    with pytest.raises(PhaseError):
        game.vote(3, 1)


def test_duplicate_post_id_is_refused() -> None:
    game = day_game()
    game.do(PostVote(player="p3", post_id="42", target=Seat(1)))
    with pytest.raises(PhaseError):
        game.do(PostVote(player="p4", post_id="42", target=Seat(1)))


def test_moderator_void_restores_previous_vote() -> None:
    game = day_game()
    game.do(PostVote(player="p3", post_id="a", target=Seat(1), at=Instant(1)))
    game.do(PostVote(player="p3", post_id="b", target=Seat(2), at=Instant(2)))
    game.do(VoidPost(post_id="b", reason="proxy vote"))
    with pytest.raises(ModeratorError):
        game.do(VoidPost(post_id="b", reason="again"))
    game.lock()
    assert dict(last_day(game).tally) == {1: 1}


def test_moderator_void_of_an_abstention_restores_the_vote_before_it() -> None:
    game = day_game()
    game.do(PostVote(player="p3", post_id="a", target=Seat(1), at=Instant(1)))
    game.do(PostVote(player="p3", post_id="b", abstain=True, at=Instant(2)))
    game.do(PostVote(player="p4", post_id="c", abstain=True, at=Instant(3)))
    game.do(VoidPost(post_id="b", reason="posted for someone else"))
    game.do(VoidPost(post_id="c", reason="posted for someone else"))
    game.lock()
    record = last_day(game)
    # p3's vote before the void counts; p4, whose only post was voided, did not vote at all
    assert dict(record.tally) == {1: 1}
    assert record.abstained == ()
    assert Seat(4) not in dict(record.votes)


def test_tie_by_lots_draws_one_of_the_tied_and_records_the_label() -> None:
    game = day_game()
    game.day({3: 1, 4: 2})
    record = last_day(game)
    assert record.tie is not None and record.tie.then == "lots"
    assert record.left in ((1,), (2,))
    assert record.tie.label == "lots|day 1|seats 1,2"
    assert game.state.lots[-1].drawn == str(record.left[0])


def test_tie_none_nobody_leaves() -> None:
    game = day_game(tie="none")
    game.day({3: 1, 4: 2})
    record = last_day(game)
    assert record.left == () and record.tie is not None and record.tie.then == "none"
    assert game.state.window is not None and game.state.window.kind.value == "night"


def test_revote_resolves_in_run_off() -> None:
    game = day_game(tie="revote")
    game.day({3: 1, 4: 2})
    window = game.state.window
    assert window is not None and window.revote == 1 and window.candidates == (1, 2)
    game.vote(5, 6)  # not a candidate
    assert game.state.posts[-1].void_reason == "vote.not_candidate"
    game.day({1: 2, 3: 2, 4: 1})
    record = last_day(game)
    assert record.revote == 1 and record.left == (2,)


@pytest.mark.parametrize(
    ("opened_for", "void"),
    [("day", "vote.before_window"), (0, "vote.before_window"), ("runoff", None), (None, None)],
)
def test_a_run_off_vote_made_before_its_channel_opened_for_it_is_void(
    opened_for: str | int | None, void: str | None
) -> None:
    """A post made after the day's deadline but read once the run-off is recorded, before the
    channel was opened again for it (the platform says: it was last opened for the day, or the
    post came before its last opening), does not count; made after the run-off's opening, or
    where the platform does not know (a replay file), it does."""
    game = day_game(tie="revote")
    day = game.state.window_index
    game.day({3: 1, 4: 2})
    runoff = game.state.window_index
    assert runoff == day + 1 and game.state.window is not None and game.state.window.revote
    windows = {"day": day, "runoff": runoff}
    made = windows.get(opened_for, opened_for) if isinstance(opened_for, str) else opened_for
    game.do(PostVote(player="p5", post_id="9001", target=Seat(1), opened_for=made))
    assert game.state.posts[-1].void_reason == void


def test_only_a_run_off_asks_which_opening_a_post_came_after() -> None:
    """Every other vote window opens a channel that was shut: no post can predate it there."""
    game = day_game()
    game.do(PostVote(player="p5", post_id="9001", target=Seat(1), opened_for=0))
    assert game.state.posts[-1].void_reason is None


def test_revote_third_tie_is_a_draw_game_and_tied_cannot_vote_in_third_window() -> None:
    game = day_game(tie="revote")
    game.day({3: 1, 4: 2})
    game.day({3: 1, 4: 2})
    window = game.state.window
    assert window is not None and window.revote == 2 and window.barred_voters == (1, 2)
    game.vote(1, 2)
    assert game.state.posts[-1].void_reason == "vote.barred_in_runoff"
    game.day({3: 1, 4: 2})
    assert game.state.result is not None
    assert game.state.result.winner is Camp.DRAW
    assert game.state.result.reason == "win.three_ties"
    assert [r.revote for r in game.state.history if isinstance(r, DayRecord)] == [0, 1, 2]


def test_basic_third_tie_nobody_leaves_and_tied_may_vote() -> None:
    game = Game("basic", [P, P, K, K, C, C, C, C], options={"tie": "revote"})
    game.night()
    game.day({5: 1, 6: 2})
    game.day({5: 1, 6: 2})
    assert game.state.window is not None and game.state.window.barred_voters == ()
    game.day({1: 2, 2: 1})
    assert game.state.result is None
    assert last_day(game).left == () and last_day(game).tie.then == "none"  # type: ignore[union-attr]


def test_victim_choice_after_second_tie() -> None:
    game = Game("v2", V2, options={"tie": "victim_choice"})
    game.night((1, "kill", 8))
    game.day({3: 1, 4: 2})
    game.day({3: 1, 4: 2})
    window = game.state.window
    assert window is not None and window.chooser == 8
    from engine.commands import ChooseTied

    game.do(ChooseTied(player="p8", target=Seat(2)))
    game.lock()
    record = last_day(game)
    assert record.left == (2,) and record.chosen_by == 8


def test_victim_choice_falls_back_to_lots_without_a_pick() -> None:
    game = Game("v2", V2, options={"tie": "victim_choice"})
    game.night((1, "kill", 8))
    game.day({3: 1, 4: 2})
    game.day({3: 1, 4: 2})
    game.do(Lock())
    record = last_day(game)
    assert record.tie is not None and record.tie.then == "lots" and record.left[0] in (1, 2)


def test_confess_in_basic_closes_the_day() -> None:
    game = Game("basic", [P, P, K, K, C, C, C, C])
    game.night()
    game.vote(5, 1)
    game.power(3, "confess")
    record = last_day(game)
    assert record.confess == 3 and record.left == (3,) and record.last_words == (3,)
    assert record.tally == ()
    assert game.state.leavers_counted == 0  # does not count against the limit
    assert game.state.window is not None and game.state.window.kind.value == "night"


def test_a_confession_opens_the_night_with_the_deadline_it_was_given() -> None:
    """The bot gives a confession the next window's deadline from the schedule; without it the
    night opened with no timer and waited for a moderator."""
    game = Game("basic", [P, P, K, K, C, C, C, C])
    game.night()
    game.do(SubmitPower(player="p3", power=Power.CONFESS, next_deadline=Instant(9_000_000)))
    assert last_day(game).confess == 3
    assert game.state.window is not None and game.state.window.kind.value == "night"
    assert game.state.deadline == 9_000_000


def test_a_pass_on_confess_is_refused_and_confesses_nothing() -> None:
    """/pass is "不行使": on 认匪 it once confessed, the killer out and shown to all."""
    game = Game("basic", [P, P, K, K, C, C, C, C])
    game.night()
    before = game.state
    with pytest.raises(ActorError) as refused:
        game.do(SubmitPower(player="p3", power=Power.CONFESS, passed=True))
    assert refused.value.key == "actor.no_pass"
    assert game.state is before and game.state.seat(Seat(3)).alive


def test_an_abstention_naming_a_seat_is_an_abstention() -> None:
    """Found by hypothesis: an abstention carrying a target (here one that does not exist) once
    crashed the tally; the target of an abstention is ignored."""
    game = day_game()
    game.do(PostVote(player="p3", post_id="x", target=Seat(14), abstain=True))
    game.lock()
    record = last_day(game)
    assert record.abstained == (3,) and record.tally == ()
