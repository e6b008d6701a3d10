"""`/game record` names every player by the name recorded for them, one name per player: two
members sharing a display name stay two players, and a substitute is listed under the name of
the player they replaced (docs/replay.md)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from gamebot import Driver, Table

from bot.cli import main
from bot.records.i18n import render

pytestmark = pytest.mark.table(seed="record-names")


@pytest_asyncio.fixture
async def table(table: Table) -> Table:
    """Eight players; the members in seats 1 and 2 are both called "玩家1" (the second joins
    the shared table's server once the bot is up)."""
    table.players[1] = table.guild.add_member(table.env.create_user("玩家1"))
    table.names[1] = "玩家1"
    await table.env.settle()
    return table


async def _attachment(t: Table, attachment: Any) -> bytes:
    try:
        data: bytes = await attachment.read()
    except Exception:
        data = t.env.backend.cdn.get(attachment.url)
    return data


async def test_game_record_names_each_player_once_and_substitutes_by_name(
    table: Table, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Before: 7 `players` for 8 seats ("玩家1#1"/"玩家1#2" as one player's cards), `faguan
    # verify` failed; `"substitutes": {"路人": ["<id>"]}`; `result.reason` a message key.
    t = table
    d = Driver(t, "v2")
    await d.start()
    await t.moderator.slash(t.channel, "mod replace", seat=5, member=t.outside)
    await t.moderator.slash(t.channel, "mod end", winner="draw")
    r = await t.player(3).slash(t.channel, "game record")
    files = {a.filename: a for a in r.response.attachments}
    record = json.loads(await _attachment(t, files[f"faguan-game-{d.game_id}.json"]))
    page = (await _attachment(t, files[f"faguan-game-{d.game_id}.html"])).decode()

    assert record["players"] == ["玩家1", "玩家1 (2)", *(f"玩家{i}" for i in range(3, 9))]
    assert list(record["roles"]) == record["players"]
    assert record["substitutes"] == {"玩家5": ["路人"]}
    replace = next(o for o in record["overrides"] if o["command"] == "replace")
    assert (replace["seat"], replace["target"], replace["player"]) == ("5", "玩家5", "路人")
    result = record["result"]
    assert result["reason"] == render("en", result["reason_key"]) != result["reason_key"]
    rows = re.findall(r"<tr><td>(\d+)</td><td>(.*?)</td>", page)
    assert [int(n) for n, _ in rows] == list(range(1, 9))
    assert rows[4][1] == "玩家5 → 路人"

    path = tmp_path / "record.json"
    path.write_text(json.dumps(record, ensure_ascii=False), "utf-8")
    assert main(["verify", str(path)]) == 0, capsys.readouterr().out
