"""Refusals a player or a moderator can meet: no window open yet, a confession while the day
waits for a victim's choice, a penalty after the end; and a penalty that names one power."""

from __future__ import annotations

import pytest
from gamekit import Game

from engine.commands import (
    ChooseTied,
    Command,
    EndGame,
    Lock,
    ModKill,
    Penalize,
    PostVote,
    SubmitPower,
)
from engine.errors import ActorError, ModeratorError, PhaseError
from engine.events import PowerSuspended
from engine.game import decide, new_game, replay_events
from engine.model import Camp, Power, Seat, Team
from engine.pending import pending
from engine.state import DayRecord

K, P, C = "killer", "police", "civilian"
V2 = [K, K, P, P, C, C, C, C]


def test_before_the_first_window_opens_every_command_is_refused() -> None:
    """A game created whose first window has not opened (the state of `GameCreated` alone):
    nobody may act, vote, be removed or be penalized yet."""
    created = new_game(
        ruleset="v2",
        players=[f"p{i}" for i in range(1, 9)],
        seed="s",
        roles=dict(zip([f"p{i}" for i in range(1, 9)], V2, strict=True)),
    )
    state = replay_events([created])
    assert state.window is None and not state.over
    commands: list[Command] = [
        SubmitPower(player="p1", power=Power.KILL, target=Seat(5)),
        PostVote(player="p3", post_id="1", target=Seat(1)),
        Lock(),
        ModKill(seat=Seat(5)),
        Penalize(team=Team.KILLERS, reason="诈尸"),
    ]
    for command in commands:
        with pytest.raises(PhaseError) as refused:
            decide(state, command)
        assert refused.value.key == "phase.no_window", command


def test_a_penalty_after_the_end_is_refused() -> None:
    game = Game("v2", V2)
    game.do(EndGame(winner=Camp.GOOD))
    before = game.state
    with pytest.raises(PhaseError) as refused:
        game.do(Penalize(team=Team.KILLERS, reason="诈尸"))
    assert refused.value.key == "phase.game_over"
    assert game.state == before


def test_no_confession_while_the_day_waits_for_the_victims_choice() -> None:
    """victim_choice (docs/rules.md §1.2): a tied run-off gives last night's victim the pick; the
    vote is over, so a killer's 认匪 — which closes the day's vote — is refused, and the pick
    stands."""
    game = Game("basic", V2, options={"tie": "victim_choice"})
    game.night((1, "kill", 5))
    game.day({1: 6, 2: 7})  # a tie: one run-off between 6 and 7
    game.day({1: 6, 2: 7})  # tied again: 5, killed last night, picks
    window = game.state.window
    assert window is not None and window.chooser == 5 and window.candidates == (6, 7)
    assert pending(game.state).choice == 5 and pending(game.state).seats() == (5,)
    before = game.state
    with pytest.raises(PhaseError) as refused:
        game.power(1, "confess")
    assert refused.value.key == "choice.no_confession"
    assert game.state == before
    game.do(ChooseTied(player="p5", target=Seat(6)))
    assert pending(game.state).choice is None and pending(game.state).seats() == ()
    game.lock()
    record = game.state.history[-1]
    assert isinstance(record, DayRecord) and record.left == (6,) and record.chosen_by == 5
    game.power(1, "kill", 7)  # night 2: the killer's confession was refused, he plays on
    assert game.state.seat(Seat(1)).alive


# tianxia 12: police 1-3, good thieves 4-6, bad thieves 7-9, civilians 10-12
TIANXIA = [P, P, P, "good_thief", "good_thief", "good_thief"] + ["bad_thief"] * 3 + [C] * 3


def test_a_penalty_naming_one_power_leaves_the_teams_other_power() -> None:
    """docs/moderators.md `penalty reason [team] [seat] [power]`: with `power`, only that power
    does not act next night; 天下无贼's police may still guard 傻根 instead of checking."""
    game = Game("tianxia", TIANXIA)
    events = game.do(Penalize(team=Team.POLICE, power=Power.CHECK, reason="诈尸", by="mod"))
    suspended = events[0]
    assert isinstance(suspended, PowerSuspended)
    assert suspended.suspension.night == 2 and suspended.suspension.power is Power.CHECK
    assert ("power", "check") in suspended.record.details
    assert ("team", "police") in suspended.record.details
    game.lock()  # night 1
    game.lock()  # day 1: nobody voted, nobody leaves
    assert game.state.window is not None and game.state.window.number == 2
    assert {1, 2, 3} <= set(pending(game.state).powers)  # the guard is still theirs to use
    before = game.state
    with pytest.raises(ActorError) as refused:
        game.power(1, "check", 7)
    assert refused.value.key == "actor.power_suspended"
    assert game.state == before
    game.do(SubmitPower(player="p1", power=Power.GUARD))
    assert not {1, 2, 3} & set(pending(game.state).powers)
    game.power(7, "kill", 10)  # another team's power: untouched
    game.lock()
    assert game.state.window is not None and game.state.window.number == 2
    assert not game.state.seat(Seat(10)).alive


@pytest.mark.parametrize(
    ("ruleset", "roles", "team", "power", "powers"),
    [
        ("v2", V2, Team.POLICE, Power.KILL, "check"),
        ("v2", V2, Team.KILLERS, Power.CHECK, "kill"),
        ("tianxia", TIANXIA, Team.POLICE, Power.KILL, "check,guard"),
        ("tianxia", TIANXIA, Team.GOOD_THIEVES, Power.ROB, "kill,guard"),
        ("tianxia", TIANXIA, Team.BAD_THIEVES, Power.GUARD, "kill,rob"),
    ],
)
def test_a_team_penalty_on_a_power_the_team_lacks_is_refused(
    ruleset: str, roles: list[str], team: Team, power: Power, powers: str
) -> None:
    """Which powers a team has is in the rules, which everyone knows: a penalty naming a power
    none of the team's roles holds would stop nothing, so it is refused, naming the team's."""
    game = Game(ruleset, roles)
    before = game.state
    with pytest.raises(ModeratorError) as refused:
        game.do(Penalize(team=team, power=power, reason="诈尸", by="mod"))
    assert refused.value.key == "mod.penalty_team_lacks_power"
    assert dict(refused.value.params) == {
        "team": team.value,
        "power": power.value,
        "powers": powers,
    }
    assert game.state == before
    for held in powers.split(","):  # each of the team's own powers is taken
        game.do(Penalize(team=team, power=Power(held), reason="诈尸", by="mod"))


@pytest.mark.parametrize(
    ("ruleset", "roles", "team"),
    [("v2", V2, Team.GOOD_THIEVES), ("tianxia", TIANXIA, Team.KILLERS)],
)
def test_a_team_penalty_on_a_team_without_night_powers_is_refused(
    ruleset: str, roles: list[str], team: Team
) -> None:
    game = Game(ruleset, roles)
    before = game.state
    for power in (None, Power.KILL):
        with pytest.raises(ModeratorError) as refused:
            game.do(Penalize(team=team, power=power, reason="诈尸", by="mod"))
        assert refused.value.key == "mod.penalty_team_no_powers"
        assert dict(refused.value.params) == {"team": team.value}
        assert game.state == before


def test_a_seat_penalty_is_never_checked_against_the_seats_powers() -> None:
    """A seat's powers are its hidden role: a penalty on a civilian's `kill` is taken exactly as
    on a killer's, so the one giving it learns nothing."""
    game = Game("v2", V2)
    for seat in (1, 5):  # a killer, a civilian
        for power in (Power.KILL, Power.CHECK):
            events = game.do(Penalize(seat=Seat(seat), power=power, reason="x", by="mod"))
            assert isinstance(events[0], PowerSuspended)


def test_a_power_menu_acts_only_in_its_own_night() -> None:
    """A menu stays in the DM after its night: its choice names the night (`night`) and is
    refused in any other window (by day, the next night), under the game's lock; in its own
    night it acts."""
    game = Game("v2", V2)
    kill = SubmitPower(player="p1", power=Power.KILL, target=Seat(5), night=1)
    game.do(kill)  # night 1, its own menu: taken
    assert [s.target for s in game.state.submissions] == [5]
    game.lock()  # day 1
    for stale in (kill, SubmitPower(player="p1", power=Power.KILL, target=Seat(6), night=2)):
        before = game.state
        with pytest.raises(PhaseError) as refused:
            game.do(stale)
        assert refused.value.key == "phase.menu_over" and game.state == before
    game.lock()  # night 2
    with pytest.raises(PhaseError) as refused:
        game.do(kill)  # night 1's menu, clicked in night 2
    assert refused.value.key == "phase.menu_over" and dict(refused.value.params) == {"night": 1}
    assert game.state.submissions == ()
