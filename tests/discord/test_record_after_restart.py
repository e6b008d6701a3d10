"""`/game record` with no `game_id`, in the channel of a game that ended, names that game
(docs/commands.md, "Which game"), after a restart as before it: recovery routes only the games in
play, and the game channel still names its game by the sign-up that became it."""

from __future__ import annotations

import json
from pathlib import Path

from envclock import EnvClock
from gamebot import Driver, restarted, running_table


async def test_game_record_in_the_game_channel_after_a_restart(tmp_path: Path) -> None:
    async with running_table(tmp_path / "g.db", 8, EnvClock(), "record-restart") as t:
        d = Driver(t, "v2")
        await d.start()
        await t.moderator.slash(t.channel, "mod end", winner="draw")
        wanted = [f"faguan-game-{d.game_id}.json", f"faguan-game-{d.game_id}.html"]
        before = await t.player(3).slash(t.channel, "game record")
        assert [a.filename for a in before.response.attachments] == wanted

        await restarted(t)
        # Before: "There is no game in play here." (the ended game's channel was not routed)
        for member in (t.player(3), t.moderator):
            after = await member.slash(t.channel, "game record")
            files = {a.filename: a for a in after.response.attachments}
            assert list(files) == wanted, after.response.content
            blob = await files[wanted[0]].read()
            assert json.loads(blob)["seed"] == "record-restart"
        status = await t.moderator.slash(t.channel, "game status")
        assert status.ephemeral
        assert f"{d.game_id}" in status.response.content
        assert "no game" not in status.response.content
        # a new sign-up in the channel: the ended game is still the channel's until one starts
        await t.moderator.slash(t.channel, "game new", ruleset="v2")
        again = await t.player(3).slash(t.channel, "game record")
        assert [a.filename for a in again.response.attachments] == wanted
