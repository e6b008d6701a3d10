"""The season standings of a 5.0 双身份 game on simcord, as the bot keeps them (the end's
`UpdateStandings` effect): a player holding two cards counts once, with the points of their side
(on their first card, docs/rulesets/v5.md "Scores") and a win when their side wins — a player
holding a killer or the mole plays for the killers whatever their other card."""

from __future__ import annotations

from pathlib import Path

import pytest
from envclock import EnvClock
from gamebot import GUILD_ID, Driver, running_table

SIDE_POINTS = {"killers": (-10, 30), "special": (30, -10), "civilian": (20, -5)}
"""A side's points: good wins, killers win."""


@pytest.mark.parametrize("winner", ["good", "killers"])
async def test_v5_standings_count_a_player_once_by_side(tmp_path: Path, winner: str) -> None:
    async with running_table(tmp_path / "g.db", 7, EnvClock()) as t:
        d = Driver(t, "v5")
        roles = await d.start()
        await t.moderator.slash(t.channel, "mod end", winner=winner)
        expected = {}
        for k, member in enumerate(t.players, 1):
            hand = {roles[2 * k - 1], roles[2 * k]}
            side = (
                "killers"
                if hand & {"killer", "mole"}
                else "civilian"
                if hand == {"civilian"}
                else "special"
            )
            good, killers = SIDE_POINTS[side]
            wins = (side == "killers") == (winner == "killers")
            expected[member.user.id] = (1, int(wins), good if winner == "good" else killers)
        stored = await t.bot.runtime.service.repo.standings(GUILD_ID, "1")
        assert {r.user_id: (r.games, r.wins, r.points) for r in stored} == expected
        # the deal (seed e2e-seed) has a killers' player whose other card is good: 玩家4 holds a
        # secret police and the killer
        assert any(
            len({roles[2 * k - 1], roles[2 * k]} & {"killer", "mole"}) == 1
            and not {roles[2 * k - 1], roles[2 * k]} <= {"killer", "mole"}
            for k in range(1, 8)
        )
