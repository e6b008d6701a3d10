"""A player in two games who asks from a DM is told how to name one: with `game_id` where the
command has it (`/role`), in that game's channel where it has none (`/vote`, which would
otherwise send them looking for an option that is not there)."""

from __future__ import annotations

from pathlib import Path

from envclock import EnvClock
from gamebot import Driver, running_table

from bot.records.i18n import render


async def test_a_player_in_two_games_is_told_the_way_each_command_names_one(
    tmp_path: Path,
) -> None:
    async with running_table(tmp_path / "g.db", 8, EnvClock(), "which-game") as t:
        await Driver(t, "v2").start()
        home = t.channel
        t.channel = t.guild.create_text_channel("game-2")
        await Driver(t, "v2").start()
        t.channel = home
        member = t.players[0]

        vote = await member.user.slash("vote", target="3")
        assert vote.ephemeral
        assert vote.response.content == render("en", "notice.which_game_here")
        assert "game_id" not in vote.response.content

        role = await member.user.slash("role")
        assert role.response.content == render("en", "notice.which_game")
