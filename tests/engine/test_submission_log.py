"""`SubmissionLog`, a window's power submissions (an `AppendLog`, as a day's posts are a
`PostLog`): every view reads as the tuple of its submissions would, whatever other views of the
same night append (states decided again from an older one); it equals and hashes as that tuple
and is stored and pickled as the submissions themselves; a resubmission appends without copying
the night; and what is read of it per input (each seat's latest submission per power: a player's
view, who still owes a power) is what reading every submission gave."""

from __future__ import annotations

import dataclasses
import pickle

from gamekit import Game
from hypothesis import given
from hypothesis import strategies as st

from engine import codec
from engine.commands import SubmitPower
from engine.errors import EngineError
from engine.game import apply, decide, evolve
from engine.model import Instant, Power, Seat
from engine.pending import powers_owed
from engine.rulesets import rules_for
from engine.state import NO_SUBMISSIONS, GameState, Submission, SubmissionLog
from engine.view import view_for

K, P, C = "killer", "police", "civilian"
V2 = [K, K, P, P, C, C, C, C]
POWERS = (Power.KILL, Power.CHECK)


def _sub(n: int, seat: int | None = None, power: Power | None = None) -> Submission:
    return Submission(
        seat=Seat(seat if seat is not None else n % 4 + 1),
        power=power if power is not None else POWERS[n % 2],
        target=Seat(n % 8 + 1) if n % 5 else None,
        at=Instant(n),
    )


def _latest(subs: tuple[Submission, ...]) -> dict[tuple[Seat, Power], Submission]:
    return {(s.seat, s.power): s for s in subs}


@given(st.lists(st.tuples(st.integers(0, 30), st.integers(1, 4), st.booleans()), max_size=60))
def test_every_view_reads_as_its_tuple_whatever_the_others_append(
    picks: list[tuple[int, int, bool]],
) -> None:
    """Each step appends a new submission to a view chosen among those made so far (the newest
    or an older one); every view made still reads as the tuple it was made as, and its latest
    submission per seat and power are those of that tuple (keys in the order first made)."""
    views: list[tuple[SubmissionLog, tuple[Submission, ...]]] = [(NO_SUBMISSIONS, ())]
    for n, (pick, seat, kill) in enumerate(picks):
        view, subs = views[pick % len(views)]
        sub = _sub(n, seat, Power.KILL if kill else Power.CHECK)
        views.append((view.plus(sub), (*subs, sub)))
        for made, expected in views:
            assert len(made) == len(expected) and bool(made) == bool(expected)
            assert tuple(made) == expected and made == expected and expected == made
            assert hash(made) == hash(expected)
            assert made[1:3] == expected[1:3] and made[::-1] == expected[::-1]
            assert tuple(reversed(made)) == tuple(reversed(expected))
            assert list(made.latest().items()) == list(_latest(expected).items())
            if expected:
                assert made[-1] is expected[-1] and made[0] is expected[0]


def test_a_resubmission_appends_without_copying_the_night() -> None:
    one = NO_SUBMISSIONS.plus(_sub(1))
    two = one.plus(_sub(2))
    three = two.plus(_sub(3))
    assert three._items is two._items is one._items  # one list for the night
    assert three._latest is one._latest  # and one index of the latest per seat and power
    other = one.plus(_sub(4))  # decided again from `one`: its own copy; the others unchanged
    assert other._items is not one._items and other._latest is not one._latest
    assert other == (_sub(1), _sub(4)) and three == (_sub(1), _sub(2), _sub(3))
    assert one.latest() == _latest((_sub(1),)) and two.latest() == _latest((_sub(1), _sub(2)))
    assert NO_SUBMISSIONS == () and not NO_SUBMISSIONS and NO_SUBMISSIONS.latest() == {}
    assert SubmissionLog([_sub(1), _sub(2)]) == two and two != other
    assert _sub(2) in two and _sub(4) not in two


def test_the_latest_is_a_copy_the_caller_may_change() -> None:
    log = NO_SUBMISSIONS.plus(_sub(1)).plus(_sub(2))
    latest = log.latest()
    latest.clear()
    assert log.latest() == _latest((_sub(1), _sub(2)))
    assert log.plus(_sub(3)).latest() == _latest((_sub(1), _sub(2), _sub(3)))


def _night() -> Game:
    return Game("v2", V2)


def _act(seat: int, power: Power, target: int | None, at: int = 0) -> SubmitPower:
    return SubmitPower(
        player=f"p{seat}", power=power, target=None if target is None else Seat(target),
        passed=target is None, at=Instant(at),
    )  # fmt: skip


def test_resubmissions_share_the_night_and_an_older_state_decided_again_sees_none_later() -> None:
    game = _night()
    game.do(_act(1, Power.KILL, 5))
    older = game.state
    for n in range(50):  # the killer in seat 1, again and again
        game.do(_act(1, Power.KILL, 5 + n % 4, at=n))
    newest = game.state
    assert len(newest.submissions) == 51
    assert newest.submissions._items is older.submissions._items  # the night was not copied
    again, _ = apply(older, _act(1, Power.KILL, 8))  # the older state decided again
    assert [s.target for s in again.submissions] == [5, 8]
    assert [s.target for s in older.submissions] == [5]
    assert len(newest.submissions) == 51 and newest.submissions[-1].target == 5 + 49 % 4
    assert view_for(older, Seat(1)).submissions == ((1, Power.KILL, 5),)
    assert view_for(again, Seat(1)).submissions == ((1, Power.KILL, 8),)
    assert view_for(newest, Seat(2)).submissions == ((1, Power.KILL, 5 + 49 % 4),)  # a teammate


def _old_view_submissions(
    state: GameState, seat: Seat
) -> tuple[tuple[Seat, Power, Seat | None], ...]:
    """`view_for(state, seat).submissions` as it was worked out: every submission read."""
    rules = rules_for(state)
    me = state.seat(seat)
    team = rules.team_of(me)
    mates = view_for(state, seat).teammates
    group = {me.seat, *mates}
    shared = rules.team_powers(team) if team is not None else frozenset()
    subs: dict[tuple[Seat, Power], Seat | None] = {}
    for sub in state.submissions:
        if sub.seat == me.seat or (sub.seat in group and sub.power in shared):
            subs[(sub.seat, sub.power)] = sub.target
    return tuple((s, p, t) for (s, p), t in sorted(subs.items()))


ACTS = st.lists(
    st.tuples(
        st.sampled_from([(1, Power.KILL), (2, Power.KILL), (3, Power.CHECK), (4, Power.CHECK)]),
        st.one_of(st.none(), st.integers(1, 8)),
        st.integers(0, 10),
    ),
    max_size=25,
)


@given(ACTS)
def test_views_and_powers_owed_read_as_every_submission_read(
    acts: list[tuple[tuple[int, Power], int | None, int]],
) -> None:
    """Whatever the killers and the police submit (passes, changes of mind, from older states
    decided again), each player's view of tonight's submissions and who still owes a power are
    what reading every submission said."""
    game = _night()
    states = [game.state]
    for (seat, power), target, back in acts:
        base = states[max(0, len(states) - 1 - back)]
        try:
            events = decide(base, _act(seat, power, target))
        except EngineError:  # a target the rules refuse: nothing submitted
            continue
        after = base
        for event in events:
            after = evolve(after, event)
        states.append(after)
    for state in states:
        for held in state.seats:
            assert view_for(state, held.seat).submissions == _old_view_submissions(state, held.seat)
        owed = powers_owed(state)
        killers_done = any(s.power is Power.KILL for s in state.submissions)
        police_done = any(s.power is Power.CHECK for s in state.submissions)
        assert (Seat(1) in owed) is not killers_done and (Seat(2) in owed) is not killers_done
        assert (Seat(3) in owed) is not police_done and (Seat(4) in owed) is not police_done


def test_a_state_with_submissions_is_stored_pickled_and_compared_as_with_a_tuple() -> None:
    game = _night()
    for n in range(5):
        game.do(_act(1 + n % 2, Power.KILL, 5 + n % 3, at=n))
    state = game.state
    dumped = codec.dump(state)
    assert [s["target"] for s in dumped["submissions"]] == [5, 6, 7, 5, 6]
    loaded = codec.load(dumped)
    assert isinstance(loaded.submissions, SubmissionLog)
    assert loaded == state and loaded.submissions == state.submissions
    assert hash(loaded.submissions) == hash(tuple(state.submissions))
    assert loaded.submissions.latest() == state.submissions.latest()
    # a state read back appends as any other (its own list, index rebuilt from its items)
    grown, _ = apply(loaded, _act(2, Power.KILL, 8, at=9))
    assert grown.submissions.latest()[(Seat(2), Power.KILL)].target == 8
    assert view_for(grown, Seat(1)).submissions == ((1, Power.KILL, 6), (2, Power.KILL, 8))
    again = pickle.loads(pickle.dumps(state))
    assert again == state and isinstance(again.submissions, SubmissionLog)
    plain = dataclasses.replace(state, submissions=SubmissionLog(tuple(state.submissions)))
    assert plain == state and hash(plain.submissions) == hash(state.submissions)


def test_a_lock_starts_the_next_window_with_no_submissions() -> None:
    game = _night()
    game.do(_act(1, Power.KILL, 5))
    game.lock()
    assert game.state.submissions is NO_SUBMISSIONS
    assert codec.dump(game.state)["submissions"] == []
