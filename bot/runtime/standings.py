"""Season standings: a finished game's scores go to its server's current season, once per game.

Each seat scores by its original role and the result (the ruleset's table, already in the
result); the points go to the player holding the seat at the end (a substitute who finished the
game for a replaced player). A player holding several cards (5.0) gets the sum over their cards
(the ruleset scores them once, on one card). A win is counted once a player, for the players of
the winning camp (the ruleset's `player_camp`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from engine.rulesets import rules_for
from engine.state import GameState

if TYPE_CHECKING:
    from bot.store import Repository

SEASON = "season"
"""Server settings key: the current season's name."""
DEFAULT_SEASON = "1"
SEASON_LIMIT = 32
"""The longest season name: a longer new one is refused, and no longer one is looked up."""


async def current_season(repo: Repository, server_id: int) -> str:
    """The server's current season (the first is "1")."""
    return season_of(await repo.get_settings(server_id))


def season_of(settings: Mapping[str, Any]) -> str:
    """The current season named in a server's settings (the first is "1")."""
    return str(settings.get(SEASON) or DEFAULT_SEASON)


def next_season_name(current: str) -> str:
    """The season after `current`: the next number, or `current` with " 2" after it."""
    numbered = current.isascii() and current.isdecimal()  # "②".isdigit(), yet int() refuses it
    return str(int(current) + 1) if numbered else f"{current} 2"


async def apply_game(repo: Repository, game_id: int, server_id: int, state: GameState) -> bool:
    """Add a finished game's scores to the season; False if already added (or not finished)."""
    result = state.result
    if result is None:
        return False
    rules = rules_for(state)
    points = dict(result.scores)
    scores: dict[int, int] = {}
    winners: list[int] = []
    for seat in state.seats:
        if not seat.player.isdigit():
            continue
        user = int(seat.player)
        first = user not in scores
        scores[user] = scores.get(user, 0) + points.get(seat.seat, 0)
        if first and rules.player_camp(state, seat.player) == result.winner:
            winners.append(user)
    season = await current_season(repo, server_id)
    return await repo.apply_scores(game_id, season=season, scores=scores, winners=winners)
