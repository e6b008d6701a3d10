"""The sniper's shot (basic 进阶, a last act): what is refused, state unchanged.

docs/rulesets/basic.md: the shot is submitted privately until the next lock, in whatever window is
open; docs/rules.md §1 step 3: anything stamped after the deadline is void. The game never holds
two last acts at once: the table has one sniper, and a second is refused at setup.
"""

from __future__ import annotations

import pytest
from gamekit import Game

from engine.commands import SetDeadline, SubmitPower
from engine.errors import PhaseError, SetupError, TargetError
from engine.game import new_game
from engine.model import Instant, Power, Role, Seat
from engine.rulesets import get_ruleset

K, SNP, P, C = "killer", "sniper", "police", "civilian"
# basic 12 with the sniper (3/3/6): killers 1-2, sniper 3, police 4-6, civilians 7-12
B12 = [K, K, SNP, P, P, P, C, C, C, C, C, C]
SNIPER = {"sniper": "yes"}


def _sniper_killed_at_night() -> Game:
    game = Game("basic", B12, options=SNIPER)
    game.night((1, "kill", 3))  # the killers may kill their own: the sniper leaves, may shoot
    assert game.state.last_acts_open == ((3, Power.SHOOT),)
    assert game.state.result is None
    return game


def test_a_shot_stamped_after_the_deadline_is_refused_and_one_at_the_deadline_counts() -> None:
    game = _sniper_killed_at_night()
    game.do(SetDeadline(deadline=Instant(10_000)))
    before = game.state
    with pytest.raises(PhaseError) as refused:
        game.power(3, "shoot", 7, at=10_001)
    assert refused.value.key == "phase.after_deadline"
    assert game.state == before  # 7 alive, the shot still open
    game.power(3, "shoot", 7, at=10_000)  # at the deadline: it counts (docs/rules.md §1.1)
    assert not game.state.seat(Seat(7)).alive
    assert game.state.last_acts_open == ()


def test_a_shot_naming_nobody_is_refused_a_pass_is_explicit() -> None:
    game = _sniper_killed_at_night()
    before = game.state
    with pytest.raises(TargetError) as refused:
        game.do(SubmitPower(player="p3", power=Power.SHOOT))  # neither a target nor a pass
    assert refused.value.key == "target.missing"
    assert game.state == before
    game.do(SubmitPower(player="p3", power=Power.SHOOT, passed=True))
    assert game.state.last_acts_open == () and game.state.alive() == before.alive()


def test_the_table_never_deals_a_second_sniper() -> None:
    """Why no game can hold a second last act open when a shot would end it: one sniper."""
    with pytest.raises(SetupError) as refused:
        new_game(
            ruleset="basic",
            players=[f"p{i}" for i in range(1, 13)],
            seed="s",
            options=SNIPER,
            roles={"p1": SNP, "p2": SNP},
        )
    assert refused.value.key == "setup.roles_do_not_fit"
    rules = get_ruleset("basic").configured((("sniper", "yes"),))
    for players in (6, 7, 10, 12, 13, 14, 15, 16):
        for table in rules.compositions(players):
            assert table.get(Role.SNIPER, 0) == 1, (players, table)
    created = new_game(
        ruleset="basic", players=[f"p{i}" for i in range(12)], seed="s", options=SNIPER
    )
    assert created.roles.count(Role.SNIPER) == 1
