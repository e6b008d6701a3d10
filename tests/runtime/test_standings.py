"""Season standings from a finished game (`bot.runtime.standings.apply_game`, what the bot's
`UpdateStandings` effect calls), into a real repository on a fresh SQLite file: each player's
points and a win once a player, for the players of the winning side — with one card a seat as
always, and with two cards a player (5.0 双身份, docs/rulesets/v5.md "Scores": "a player scores
once (on their first card; 0 on the other), by side: a player holding a killer or the mole plays
for the killers")."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from pathlib import Path

import pytest
import pytest_asyncio

from bot.runtime import standings
from bot.store import Repository, open_database, upgrade
from bot.store.values import SeatSpec
from engine.commands import EndGame, ReplacePlayer
from engine.game import apply, new_game, replay_events, start_events
from engine.model import Camp, Seat
from engine.rulesets import RULESETS, rules_for
from engine.setup import card_names
from engine.state import GameState

SERVER = 1_180_000_000_000_000_001
USER = 1_180_000_000_000_000_100
"""Player k is the Discord user USER + k (ids are digit strings in the engine)."""


@pytest_asyncio.fixture
async def repo(tmp_path: Path) -> AsyncIterator[Repository]:
    url = f"sqlite+aiosqlite:///{tmp_path / 'standings.db'}"
    await upgrade(url)
    database = open_database(url)
    try:
        yield Repository(database.sessions)
    finally:
        await database.dispose()


def finished(
    ruleset: str,
    roles: Sequence[str],
    winner: Camp,
    *,
    substitute: tuple[int, int] | None = None,
) -> GameState:
    """A game of `ruleset` with the `roles` given card by card (in seat order), players 1…n, ended
    by a moderator with `winner`; `substitute` (seat, k): player k took the seat first."""
    cards = RULESETS[ruleset].cards_per_player
    players = [str(USER + k) for k in range(1, len(roles) // cards + 1)]
    names = card_names(players, cards)
    created = new_game(
        ruleset=ruleset,
        players=players,
        seed="standings",
        roles=dict(zip(names, roles, strict=True)),
    )
    state = replay_events(start_events(created))
    if substitute is not None:
        seat, k = substitute
        state, _ = apply(state, ReplacePlayer(seat=Seat(seat), new_player=str(USER + k)))
    state, _ = apply(state, EndGame(winner=winner, by="mod"))
    return state


async def table(repo: Repository, state: GameState) -> Mapping[int, tuple[int, int, int]]:
    """Apply the game to the season as the bot does; player k → (games, wins, points)."""
    players = sorted({int(seat.player) for seat in state.seats})
    created = await repo.create_game(
        server_id=SERVER,
        ruleset=state.ruleset,
        seed="standings",
        commitment="c0ffee" * 10,
        seats=[SeatSpec(i, str(user), user) for i, user in enumerate(players, 1)],
        events=[{"type": "Started"}],
    )
    assert await standings.apply_game(repo, created.game_id, SERVER, state)
    assert not await standings.apply_game(repo, created.game_id, SERVER, state)  # once a game
    rows = await repo.standings(SERVER, "1")
    return {row.user_id - USER: (row.games, row.wins, row.points) for row in rows}


# v5, 7 players, cards 2k-1 and 2k: 1 a doctor and a killer (the killer second), 2 a police,
# 3 the butterfly, 4 a civilian and the mole, 5 and 6 a secret police, 7 two civilians.
V5 = [
    "doctor", "killer", "police", "civilian", "butterfly", "civilian", "civilian", "mole",
    "secret_police", "civilian", "civilian", "secret_police", "civilian", "civilian",
]  # fmt: skip

V5_TABLES = {
    # player k → (games, wins, points): a player counts once, with the points of their side.
    Camp.GOOD: {
        1: (1, 0, -10), 2: (1, 1, 30), 3: (1, 1, 30), 4: (1, 0, -10), 5: (1, 1, 30),
        6: (1, 1, 30), 7: (1, 1, 20),
    },
    Camp.KILLERS: {
        1: (1, 1, 30), 2: (1, 0, -10), 3: (1, 0, -10), 4: (1, 1, 30), 5: (1, 0, -10),
        6: (1, 0, -10), 7: (1, 0, -5),
    },
    Camp.DRAW: {k: (1, 0, 5) for k in range(1, 8)},
}  # fmt: skip


@pytest.mark.parametrize("winner", [Camp.GOOD, Camp.KILLERS, Camp.DRAW])
async def test_v5_a_player_scores_and_wins_once_by_side(repo: Repository, winner: Camp) -> None:
    state = finished("v5", V5, winner)
    assert await table(repo, state) == V5_TABLES[winner]


def test_v5_the_side_of_a_player_is_the_rulesets() -> None:
    """The standings' side of a player agrees with the v5 ruleset's own (`V5.side`, which its
    scores use), card by card, whichever card is the killer's."""
    state = finished("v5", V5, Camp.GOOD)
    rules = rules_for(state)
    for seat in state.seats:
        side = rules.side(state, seat)  # type: ignore[attr-defined]
        camp = rules.player_camp(state, seat.player)
        assert camp is (Camp.KILLERS if side == "killers" else Camp.GOOD), (seat.seat, side)


# v4_butterfly, 11: butterfly 1, sniper 2, doctor 3, police 4, elder 5, killers 6-8, civilians 9-11
V4B = ["butterfly", "sniper", "doctor", "police", "elder"] + ["killer"] * 3 + ["civilian"] * 3


@pytest.mark.parametrize("winner", [Camp.GOOD, Camp.KILLERS])
async def test_v4_butterfly_the_sniper_wins_with_the_good_side(
    repo: Repository, winner: Camp
) -> None:
    """docs/rulesets/v4_butterfly.md "Sides": the sniper is one of the good side's specials."""
    rows = await table(repo, finished("v4_butterfly", V4B, winner))
    good = winner is Camp.GOOD
    assert rows[2] == (1, int(good), 30 if good else -10)
    assert {k for k, (_, wins, _) in rows.items() if wins} == (
        {1, 2, 3, 4, 5, 9, 10, 11} if good else {6, 7, 8}
    )


# v2, 8: killers 1-2, police 3-4, civilians 5-8
V2 = ["killer", "killer", "police", "police"] + ["civilian"] * 4


async def test_one_card_a_seat_each_seat_to_the_player_holding_it_at_the_end(
    repo: Repository,
) -> None:
    """One card a seat, as always: the seat's points and win go to whoever holds it at the end
    (player 9, who took killer seat 2 over from player 2; player 2 gets nothing)."""
    rows = await table(repo, finished("v2", V2, Camp.KILLERS, substitute=(2, 9)))
    assert rows == {
        1: (1, 1, 30), 9: (1, 1, 30), 3: (1, 0, -10), 4: (1, 0, -10),
        5: (1, 0, -5), 6: (1, 0, -5), 7: (1, 0, -5), 8: (1, 0, -5),
    }  # fmt: skip
