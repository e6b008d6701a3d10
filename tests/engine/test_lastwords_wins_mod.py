"""Last words, win conditions in order, scores, and moderator commands."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from gamekit import Game

from engine.commands import (
    Command,
    EndGame,
    ExtendDeadline,
    GiveLastWords,
    Lock,
    ModKill,
    Pause,
    ReplacePlayer,
    Resume,
    SetDeadline,
)
from engine.errors import ActorError, ModeratorError, PhaseError
from engine.model import Camp, Instant, Power, Seat
from engine.record import record_of
from engine.state import DayRecord, NightRecord
from engine.view import view_for

C, K, P, D = "civilian", "killer", "police", "doctor"
SK, SP = "secret_killer", "secret_police"
V2 = [K, K, P, P, C, C, C, C]
V3_12 = [K, K, K, P, P, P, D, C, C, C, C, C]
V3T_15 = [K, K, K, K, P, P, P, SP, D, C, C, C, C, C, C]
MIFEI = [K, K, P, P, P, D, SK, C, C, C, C, C]


def test_first_n_last_words_v2() -> None:
    game = Game("v2", V2)
    game.night((1, "kill", 5))
    assert game.last.last_words == (5,)  # type: ignore[attr-defined]
    game.day({3: 6, 4: 6})
    assert game.last.last_words == (6,)  # type: ignore[attr-defined]
    game.night((1, "kill", 7))
    assert game.last.last_words == ()  # type: ignore[attr-defined]  # N = 2 police


def test_until_night_2_with_not_if_multiple_v3() -> None:
    game = Game("v3", V3_12)
    game.night((1, "kill", 8), (7, "save", 9))
    game.lock()
    game.night((1, "kill", 10), (7, "save", 9))  # kill + needle death: two leave
    record = game.last
    assert isinstance(record, NightRecord) and record.left == (9, 10) and record.last_words == ()
    game.day({4: 11, 5: 11})  # day 2: past `until night 2`
    assert game.last.left == (11,) and game.last.last_words == ()  # type: ignore[attr-defined]


def test_until_day_2_for_15_players() -> None:
    game = Game("v3t", V3T_15)
    game.night((1, "kill", 10))
    game.lock()
    game.night((1, "kill", 11))
    game.day({5: 12, 6: 12})
    assert game.last.left == (12,) and game.last.last_words == (12,)  # type: ignore[attr-defined]
    game.night((1, "kill", 13))
    assert game.last.last_words == ()  # type: ignore[attr-defined]


def test_mifei_all_leavers_get_last_words_until_night_2() -> None:
    game = Game("mifei", MIFEI)
    game.night((1, "kill", 8), (7, "shoot", 9))
    assert game.last.last_words == (8, 9)  # type: ignore[attr-defined]


def test_last_words_given_once_by_the_entitled_only() -> None:
    game = Game("v2", V2)
    game.night((1, "kill", 5))
    with pytest.raises(ActorError):
        game.do(GiveLastWords(player="p6", text="hi"))
    game.do(GiveLastWords(player="p5", text="3号是警察"))
    assert game.state.last_words_given == ((5, "3号是警察"),)
    with pytest.raises(ActorError):
        game.do(GiveLastWords(player="p5", text="again"))


WINS = [
    # (ruleset, roles, nights [(actions)], days [(votes)], winner, reason)
    ("v2", V2, [[(1, "kill", 3)], [(1, "kill", 4)]], [{5: 6}], Camp.KILLERS, "win.police_out"),
    ("v2", V2, [[]], [{3: 1, 4: 1}], None, None),
    ("mifei", MIFEI, [[(7, "shoot", 1)]], [{3: 2, 4: 2}], None, None),  # secret killer still in
    (
        "v3",
        V3_12,
        [[(1, "kill", 4)], [(1, "kill", 5)], [(1, "kill", 6)]],
        [{7: 8}, {7: 9}],
        Camp.KILLERS,
        "win.police_out",
    ),
]


@pytest.mark.parametrize(("ruleset", "roles", "nights", "days", "winner", "reason"), WINS)
def test_wins(
    ruleset: str,
    roles: list[str],
    nights: list[list[tuple[int, str, int]]],
    days: list[dict[int, int]],
    winner: Camp | None,
    reason: str | None,
) -> None:
    game = Game(ruleset, roles)
    for i, night in enumerate(nights):
        if game.state.over:
            break
        game.night(*night)
        if i < len(days) and not game.state.over:
            game.day(days[i])
    result = game.state.result
    if winner is None:
        assert result is None
    else:
        assert result is not None and result.winner is winner and result.reason == reason


def test_v3_killers_and_police_out_in_one_night_is_a_draw() -> None:
    game = Game("v3", V3_12)
    game.night((1, "kill", 5))
    game.day({4: 2, 6: 2, 8: 2})
    game.night((1, "kill", 6), (7, "save", 1))  # needle on 1 (night 2)
    game.day({4: 3, 8: 3, 9: 3})
    game.night((1, "kill", 4), (7, "save", 1))  # consecutive needle kills 1; 4 killed
    result = game.state.result
    assert (
        result is not None and result.winner is Camp.DRAW and result.reason == "win.both_out_draw"
    )
    assert result.after == "night 3"


def test_mifei_killers_side_and_police_out_together_is_a_draw() -> None:
    game = Game("mifei", MIFEI)
    game.night((1, "kill", 4))
    game.day({3: 7, 5: 7, 8: 7})  # the secret killer is voted out
    game.night((1, "kill", 5), (6, "save", 1))  # needle 1 on seat 1
    game.day({3: 2, 8: 2, 9: 2})
    game.night((1, "kill", 3), (6, "save", 1))  # second needle kills 1; 3 killed
    result = game.state.result
    assert (
        result is not None and result.winner is Camp.DRAW and result.reason == "win.both_out_draw"
    )


def test_v3t_civilians_out_killers_win_and_spent_secret_police_counts_as_civilian() -> None:
    game = Game("v3t", [K, K, K, P, P, SP, D, C, C, C, C])
    game.night((6, "execute", 8), (1, "kill", 8))  # no effect on a civilian: 6 is now a civilian
    for victim in (9, 10, 11):
        game.lock()
        game.night((1, "kill", victim))
    assert game.state.result is None  # seat 6 (spent secret police) is still a civilian
    game.lock()
    game.night((1, "kill", 6))
    result = game.state.result
    assert (
        result is not None
        and result.winner is Camp.KILLERS
        and result.reason == "win.civilians_out"
    )


def test_v2_civilians_out_is_a_draw() -> None:
    game = Game("v2", V2)
    for victim in (5, 6, 7):
        game.night((1, "kill", victim))
        game.lock()
    game.night((1, "kill", 8))
    result = game.state.result
    assert (
        result is not None
        and result.winner is Camp.DRAW
        and result.reason == "win.civilians_out_draw"
    )


def test_scores_by_original_role() -> None:
    game = Game("v3m", [K, K, SK, P, P, P, D, C, C, C, C, C])
    game.night((3, "shoot", 8))  # the secret killer turns killer; scored as secret_killer
    game.do(EndGame(winner=Camp.GOOD))
    scores = dict(game.state.result.scores)  # type: ignore[union-attr]
    assert scores[3] == -10 and scores[4] == 30 and scores[8] == 20 and scores[7] == 30


def test_mod_deadlines_pause_resume() -> None:
    game = Game("v2", V2)
    with pytest.raises(ModeratorError):
        game.do(ExtendDeadline(delta_ms=60_000))
    game.do(SetDeadline(deadline=Instant(1_000_000)))
    game.do(ExtendDeadline(delta_ms=60_000))
    assert game.state.deadline == 1_060_000
    game.do(ExtendDeadline(delta_ms=-30_000))
    assert game.state.deadline == 1_030_000
    with pytest.raises(PhaseError):
        game.do(Lock(at=Instant(1_000_000)))  # before the deadline
    game.do(Pause(at=Instant(1_000_000)))
    assert game.state.paused and game.state.deadline is None
    with pytest.raises(PhaseError):
        game.do(Lock(at=Instant(2_000_000)))  # paused: the deadline does not pass
    game.do(Resume(at=Instant(5_000_000)))
    assert game.state.deadline == 5_030_000
    game.do(Lock(at=Instant(5_030_000)))
    assert game.state.phase is not None and game.state.phase.kind.value == "day"


def test_mod_advance_locks_before_the_deadline() -> None:
    game = Game("v2", V2)
    game.do(SetDeadline(deadline=Instant(1_000_000)))
    game.do(Lock(at=Instant(10), forced=True))
    assert game.state.phase is not None and game.state.phase.label() == "day 1"


@pytest.mark.parametrize("late_ms", [0, 60_000])
@pytest.mark.parametrize(
    ("move", "key"),
    [
        (lambda at: Pause(at=at), "mod.pause_after_deadline"),
        (lambda at: ExtendDeadline(delta_ms=30 * 60_000, by="mod", at=at), "mod.deadline_passed"),
        (lambda at: ExtendDeadline(delta_ms=-60_000, by="mod", at=at), "mod.deadline_passed"),
        (
            lambda at: SetDeadline(deadline=Instant(at + 30 * 60_000), by="mod", at=at),
            "mod.deadline_passed",
        ),
    ],
    ids=["pause", "extend", "shorten", "set-deadline"],
)
def test_a_deadline_paused_or_moved_once_it_has_passed_is_refused(
    late_ms: int, move: Callable[[Instant], Command], key: str
) -> None:
    """The lock is due (its catch-up, or a retry, under way): a pause with nothing left would
    refuse that lock and the window resumed would take votes posted after its deadline; a
    deadline moved now would judge the late posts by arrival order (a post made after the old
    deadline, read before the move, void as late; read after it, counted)."""
    game = Game("v2", V2)
    game.lock()
    game.do(SetDeadline(deadline=Instant(1_000_000)))
    game.vote(3, 5, at=1_000_000 + late_ms + 1)  # late: void
    before = game.state
    with pytest.raises(ModeratorError) as refused:
        game.do(move(Instant(1_000_000 + late_ms)))
    assert refused.value.key == key and game.state == before
    if key == "mod.deadline_passed":  # the answer names the deadline that passed
        assert dict(refused.value.params) == {"deadline": 1_000_000}
    game.do(Lock(at=Instant(1_000_000)))  # the lock goes ahead, cut at the old deadline
    day = next(r for r in reversed(game.state.history) if isinstance(r, DayRecord))
    assert dict(day.votes) == {} and len(day.void_posts) == 1 and day.left == ()
    assert game.state.phase is not None and game.state.phase.label() == "night 2"


def test_a_deadline_moved_just_before_it_passes_applies() -> None:
    game = Game("v2", V2)
    game.do(SetDeadline(deadline=Instant(1_000_000)))
    game.do(ExtendDeadline(delta_ms=60_000, by="mod", at=Instant(999_999)))
    assert game.state.deadline == 1_060_000
    game.do(SetDeadline(deadline=Instant(2_000_000), by="mod", at=Instant(1_059_999)))
    assert game.state.deadline == 2_000_000


def test_mod_replace_keeps_seat_role_and_state() -> None:
    game = Game("v2", V2)
    game.power(1, "kill", 5)
    game.do(ReplacePlayer(seat=Seat(1), new_player="sub"))
    assert game.state.seat_of("p1") is None and game.state.seat_of("sub") == 1
    game.lock()
    assert game.last.left == (5,)  # type: ignore[attr-defined]  # the seat's submission stands
    with pytest.raises(ModeratorError):
        game.do(ReplacePlayer(seat=Seat(2), new_player="sub"))


def test_a_moderator_action_naming_the_holder_is_refused_once_the_seat_changed_hands() -> None:
    """A form opened on p1 and submitted after p1's seat went to a substitute acts on nobody;
    naming the holder the seat has now, it acts."""
    game = Game("v2", V2)
    game.do(ReplacePlayer(seat=Seat(1), new_player="sub", player="p1"))
    before = game.state
    for late in (
        ModKill(seat=Seat(1), player="p1"),
        ReplacePlayer(seat=Seat(1), new_player="sub2", player="p1"),
    ):
        with pytest.raises(ModeratorError) as refused:
            game.do(late)
        assert refused.value.key == "mod.seat_changed"
        assert game.state == before
    game.do(ModKill(seat=Seat(1), player="sub"))
    assert 1 not in game.alive


def test_modkill_gives_last_words_per_ruleset_and_checks_wins() -> None:
    game = Game("v2", V2)
    game.do(ModKill(seat=Seat(1)))
    assert 1 not in game.alive and game.state.last_words_open == (1,)
    with pytest.raises(ModeratorError):
        game.do(ModKill(seat=Seat(1)))
    game.do(ModKill(seat=Seat(2)))
    assert game.state.result is not None and game.state.result.winner is Camp.GOOD


def test_end_game_by_moderator() -> None:
    game = Game("v2", V2)
    game.do(EndGame(winner=Camp.DRAW))
    assert game.state.result is not None and game.state.result.reason == "win.moderator"
    with pytest.raises(PhaseError):
        game.power(1, "kill", 5)


def test_day_record_type() -> None:
    game = Game("v2", V2)
    game.night()
    game.day({})
    assert isinstance(game.last, DayRecord)


# -- nothing is offered once the game is over (docs/rulings.md, "Last words") ----------------------


def test_last_words_open_at_the_end_are_closed_and_no_view_offers_them() -> None:
    """The resolution that ends the game closes the last words it gave: the engine refuses them
    after the end, so neither the state nor a player's view may say they are due; the record
    still lists who was entitled."""
    game = Game("basic", [P, K, C, C, C, C])
    game.night((2, "kill", 1))  # the only police: the killers win at dawn
    assert game.state.over
    assert game.state.last_words_open == ()
    assert not view_for(game.state, Seat(1)).last_words_due
    assert record_of(game.state)["phases"][0]["last_words"] == ["p1"]


def test_last_words_kept_from_earlier_are_closed_when_a_modkill_ends_the_game() -> None:
    game = Game("v2", V2)
    game.do(ModKill(seat=Seat(1)))
    assert game.state.last_words_open == (1,)
    game.do(ModKill(seat=Seat(2)))  # the last killer: the good side wins
    assert game.state.over and game.state.last_words_open == ()
    assert not any(view_for(game.state, Seat(s)).last_words_due for s in (1, 2))


def test_a_last_act_open_when_the_moderator_ends_the_game_is_closed() -> None:
    """The sniper killed at night may shoot until the next lock; a moderator's end closes it
    (and his last words), so his view offers no power after the end."""
    game = Game("basic", [K, K, "sniper", P, P, P, C, C, C, C, C, C], options={"sniper": "yes"})
    game.night((1, "kill", 3))
    assert game.state.last_acts_open == ((3, Power.SHOOT),)
    game.do(EndGame(winner=Camp.DRAW))
    assert game.state.last_acts_open == () and game.state.last_words_open == ()
    mine = view_for(game.state, Seat(3))
    assert mine.powers == () and not mine.last_words_due
