"""Setting up a game: the options and the roles a moderator gives, and what is refused
(docs/rules.md §1.2 options, §4 the deal; docs/rulesets/v5.md the deal dealt again)."""

from __future__ import annotations

from collections import Counter

import pytest

from engine.errors import SetupError
from engine.game import new_game
from engine.model import Role

PLAYERS8 = [f"p{i}" for i in range(1, 9)]


def _refused(**kwargs: object) -> SetupError:
    with pytest.raises(SetupError) as refused:
        new_game(seed="s", **kwargs)  # type: ignore[arg-type]
    return refused.value


@pytest.mark.parametrize(
    ("options", "option", "value"),
    [
        ({"tie": "coin"}, "tie", "coin"),  # not one of lots, revote, none, victim_choice
        ({"self_vote": "yes"}, "self_vote", "yes"),  # a boolean, not a word
        ({"self_vote": 1}, "self_vote", "1"),
    ],
)
def test_a_bad_option_value_is_refused_naming_what_is_allowed(
    options: dict[str, object], option: str, value: str
) -> None:
    error = _refused(ruleset="v2", players=PLAYERS8, options=options)
    assert error.key == "setup.bad_option"
    assert error.params["option"] == option and error.params["value"] == value
    if option == "tie":
        assert error.params["allowed"] == "lots, revote, none, victim_choice"
    else:
        assert error.params["allowed"] == "true, false"


def test_the_allowed_options_are_taken() -> None:
    created = new_game(
        ruleset="v2",
        players=PLAYERS8,
        seed="s",
        options={"tie": "victim_choice", "self_vote": False},
    )
    assert created.options.tie.value == "victim_choice" and created.options.self_vote is False


def test_a_player_listed_twice_is_refused() -> None:
    error = _refused(ruleset="v2", players=[*PLAYERS8[:7], "p3"])
    assert error.key == "setup.duplicate_player" and error.params["player"] == "p3"


def test_a_role_given_to_someone_not_playing_is_refused() -> None:
    error = _refused(ruleset="v2", players=PLAYERS8, roles={"p9": "police"})
    assert error.key == "setup.unknown_player" and error.params["player"] == "p9"


@pytest.mark.parametrize(
    ("ruleset", "roles"),
    [
        ("v2", {"p1": "police", "p2": "police", "p3": "police"}),  # v2 at 8: two police
        ("v2", {"p1": "doctor"}),  # a role of another ruleset
    ],
)
def test_roles_that_fit_no_composition_are_refused_with_the_table(
    ruleset: str, roles: dict[str, str]
) -> None:
    error = _refused(ruleset=ruleset, players=PLAYERS8, roles=roles)
    assert error.key == "setup.roles_do_not_fit"
    table = str(error.params["table"])
    assert sorted(table.split(", ")) == ["civilian×4", "killer×2", "police×2"]  # v2 at 8


def test_fixed_roles_choose_the_composition_they_fit() -> None:
    """basic at 10: 2/2/6 by default, 3/3/4 the other; three fixed killers take the second."""
    created = new_game(
        ruleset="basic",
        players=[f"p{i}" for i in range(1, 11)],
        seed="s",
        roles={"p1": "killer", "p2": "killer", "p3": "killer"},
    )
    assert Counter(created.roles) == Counter({Role.KILLER: 3, Role.POLICE: 3, Role.CIVILIAN: 4})


def test_a_deal_the_ruleset_always_refuses_cannot_start() -> None:
    """5.0: nobody may hold both a killer and a police card ("该次发牌作废，重新来过"); a player
    given both by the moderator can never be dealt a valid hand."""
    players = [f"p{i}" for i in range(1, 8)]
    error = _refused(ruleset="v5", players=players, roles={"p1#1": "killer", "p1#2": "police"})
    assert error.key == "setup.deal_refused"
    assert error.params == {"ruleset": "v5", "players": 7}
    fine = new_game(ruleset="v5", players=players, seed="s", roles={"p1#1": "killer"})
    assert fine.roles[0] is Role.KILLER and fine.roles[1] is not Role.POLICE
