"""Locks and clock overrides name the window they were issued against (issue 12): a second lock
of one window is refused whoever sends it, and never closes the window opened by the first; a
moderator's new deadline may not lie before the moment it is given."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from gamekit import Game

from bot.records.replay import run
from engine import codec
from engine.commands import ExtendDeadline, Lock, Pause, Resume, SetDeadline
from engine.errors import ModeratorError, PhaseError
from engine.events import DeadlineSet, WindowOpened
from engine.game import replay_events
from engine.model import Instant, PhaseKind
from engine.state import DayRecord

V2 = ["killer", "killer", "police", "police", "civilian", "civilian", "civilian", "civilian"]


def test_every_window_that_opens_takes_the_next_index() -> None:
    g = Game("v2", V2, options={"tie": "revote"})
    assert g.state.window_index == 1  # night 1
    g.lock()
    assert g.state.window is not None and g.state.window.kind is PhaseKind.DAY
    assert g.state.window_index == 2  # day 1
    g.vote(3, 1)
    g.vote(4, 2)
    g.lock()  # a tie: the run-off (PK) is a window of its own, of the same day
    assert g.state.window is not None and g.state.window.revote == 1
    assert g.state.window_index == 3
    assert replay_events(g.events) == g.state  # the index is a fold of the events
    assert codec.load(codec.dump(g.state)) == g.state  # and a snapshot keeps it


def test_a_second_lock_of_the_same_window_is_refused_and_changes_nothing() -> None:
    g = Game("v2", V2)
    first = g.state.window_index
    g.do(Lock(at=Instant(1_000), forced=True, by="mod", window=first))  # night 1 locked
    assert g.state.window is not None and g.state.window.kind is PhaseKind.DAY
    before, events = g.state, len(g.events)
    for late in (
        Lock(at=Instant(1_000), window=first),  # the deadline job, a retried job, recovery
        Lock(at=Instant(1_001), forced=True, by="mod2", window=first),  # a second advance
    ):
        with pytest.raises(PhaseError) as refused:
            g.do(late)
        assert refused.value.key == "phase.window_locked"
        assert g.state is before and len(g.events) == events  # day 1 is still open
    g.do(Lock(window=g.state.window_index))  # naming the open window locks it
    assert isinstance(g.state.history[-1], DayRecord)


def test_a_lock_of_a_run_off_is_not_a_lock_of_the_day_it_came_from() -> None:
    g = Game("v2", V2, options={"tie": "revote"})
    g.lock()
    day = g.state.window_index
    g.vote(3, 1)
    g.vote(4, 2)
    g.do(Lock(window=day))  # the day's lock opens the run-off
    with pytest.raises(PhaseError) as refused:
        g.do(Lock(window=day))  # the day's second lock must not close the run-off
    assert refused.value.key == "phase.window_locked"
    assert g.state.window is not None and g.state.window.revote == 1


def test_a_lock_naming_a_window_not_yet_open_is_refused() -> None:
    g = Game("v2", V2)
    with pytest.raises(PhaseError) as refused:
        g.do(Lock(window=2))
    assert refused.value.key == "phase.window_not_open"
    assert dict(refused.value.params) == {"window": 2, "open": 1}


def test_a_lock_naming_no_window_closes_the_open_one_as_before() -> None:
    g = Game("v2", V2)
    g.do(Lock())
    g.do(Lock())
    assert g.state.window is not None and g.state.window.kind is PhaseKind.NIGHT
    assert g.state.window.number == 2


@pytest.mark.parametrize(
    "command",
    [
        ExtendDeadline(delta_ms=600_000, by="mod", at=Instant(10), window=1),
        ExtendDeadline(delta_ms=-60_000, by="mod", at=Instant(10), window=1),
        SetDeadline(deadline=Instant(9_000_000), by="mod", at=Instant(10), window=1),
        Pause(at=Instant(10), by="mod", window=1),
    ],
)
def test_a_clock_override_issued_against_a_locked_window_is_refused(command: Any) -> None:
    g = Game("v2", V2)
    g.do(Lock(at=Instant(5), next_deadline=Instant(3_600_000), forced=True, window=1))
    before = g.state  # night 1 was locked first
    with pytest.raises(PhaseError) as refused:
        g.do(command)
    assert refused.value.key == "phase.window_locked"
    assert g.state is before
    # the same command for the open window applies
    applied = g.do(dataclasses.replace(command, window=g.state.window_index))
    assert applied


def test_a_resume_issued_against_a_locked_window_is_refused() -> None:
    g = Game("v2", V2)
    g.do(SetDeadline(deadline=Instant(3_600_000), by="mod", at=Instant(0)))
    g.do(Pause(at=Instant(60_000), by="mod", window=1))
    with pytest.raises(PhaseError) as refused:
        g.do(Resume(at=Instant(70_000), by="mod", window=2))
    assert refused.value.key == "phase.window_not_open"
    g.do(Resume(at=Instant(70_000), by="mod", window=1))
    assert g.state.deadline == 70_000 + 3_540_000


def test_a_deadline_set_or_shortened_into_the_past_is_refused() -> None:
    g = Game("v2", V2)
    g.do(SetDeadline(deadline=Instant(3_600_000), by="mod", at=Instant(0)))
    before = g.state
    now = Instant(3_000_000)
    with pytest.raises(ModeratorError) as refused:
        g.do(SetDeadline(deadline=Instant(2_999_999), by="mod", at=now))
    assert refused.value.key == "mod.deadline_past"
    assert dict(refused.value.params) == {"deadline": 2_999_999, "now": 3_000_000}
    with pytest.raises(ModeratorError) as shortened:
        g.do(ExtendDeadline(delta_ms=-20 * 60_000, by="mod", at=now))  # to 2_400_000
    assert dict(shortened.value.params) == {"deadline": 2_400_000, "now": 3_000_000}
    assert g.state is before
    # up to now is allowed; a command without its moment (older replay files) is not checked
    events = g.do(ExtendDeadline(delta_ms=-10 * 60_000, by="mod", at=now))
    assert isinstance(events[0], DeadlineSet) and events[0].deadline == 3_000_000
    g.do(SetDeadline(deadline=Instant(1), by="mod"))
    assert g.state.deadline == 1


# -- replay files with and without the new keys ------------------------------------------------

PLAYERS = ["A", "B", "C", "D", "E", "F", "G", "H"]
ROLES = dict(zip(PLAYERS, V2, strict=True))


def _file(steps: list[dict[str, Any]]) -> dict[str, Any]:
    return {"ruleset": "v2", "seed": "s", "players": PLAYERS, "roles": ROLES, "steps": steps}


NIGHT = [{"do": "power", "by": "A", "power": "kill", "target": "E"}]
DAY = [
    {"do": "vote", "by": "C", "target": "A", "at": "2026-01-01T12:00:00+08:00"},
    {"do": "vote", "by": "D", "target": "A", "at": "2026-01-01T12:00:01+08:00"},
]


def test_a_replay_file_without_window_keys_plays_as_before() -> None:
    plain = run(_file([*NIGHT, {"do": "lock"}, *DAY, {"do": "lock"}])).record
    named = run(
        _file([*NIGHT, {"do": "lock", "window": 1}, *DAY, {"do": "lock", "window": 2}])
    ).record
    assert plain == named
    assert plain["rejected"] == []
    assert [p["phase"] for p in plain["phases"]] == ["night", "day"]


def test_a_replay_lock_of_a_locked_window_is_rejected_and_the_next_window_stays_open() -> None:
    steps = [
        *NIGHT,
        {"do": "mod", "command": "advance", "window": 1, "by": "mod"},
        {"do": "lock", "window": 1},  # the deadline job, second: refused
        *DAY,
    ]
    replay = run(_file(steps))
    assert replay.record["rejected"] == [
        {
            "step": 3,
            "reason": "That window was already locked (看表, the clock post): nothing changed.",
        }
    ]
    assert [p["phase"] for p in replay.record["phases"]] == ["night"]  # day 1 still open
    assert [o["step"] for o in replay.record["overrides"]] == [2]
    assert sum(isinstance(e, WindowOpened) for e in replay.events) == 2
    assert replay.state.window is not None and replay.state.window.kind is PhaseKind.DAY


def test_a_replay_set_deadline_into_the_past_is_rejected_with_the_time() -> None:
    steps = [
        {
            "do": "mod",
            "command": "set_deadline",
            "at": "2026-01-01T11:00:00+08:00",
            "now": "2026-01-01T11:30:00+08:00",
            "by": "mod",
        },
        {"do": "mod", "command": "shorten", "minutes": 5, "at": "2026-01-01T11:30:00+08:00"},
    ]
    replay = run(_file(steps))
    first = replay.record["rejected"][0]
    assert first["step"] == 1
    assert "2026-01-01 11:00:00" in first["reason"] and "2026-01-01 11:30:00" in first["reason"]
    assert "/mod advance" in first["reason"]
    assert replay.record["rejected"][1]["step"] == 2  # no deadline to shorten: also refused
    assert replay.record["overrides"] == []
