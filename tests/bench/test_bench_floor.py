"""The Python floor of `faguan bench` (`bench.baselines.sqlite_floor`) writes what it claims: every
post's event and reply rows, committed, in groups of the posts waiting together."""

from __future__ import annotations

import json
import sqlite3

from bench import baselines
from bench.ingest import FLOOR_GAMES, RAW_GAME, _floor_row, _raw_objects
from bench.stores import create_game, open_bench


async def test_the_floor_commits_every_post_of_every_game() -> None:
    async with open_bench("sqlite") as bench:
        game_id = await create_game(bench.service, RAW_GAME)
        objects = _raw_objects()
        seconds = await baselines.sqlite_floor(bench, game_id, objects, 4, 20, 5_000)
        assert seconds > 0
        with sqlite3.connect(baselines.sqlite_path(bench)) as conn:
            events = conn.execute(
                "SELECT seq, payload FROM events WHERE game_id = ? AND seq >= 5000 ORDER BY seq",
                (game_id,),
            ).fetchall()
            replies = conn.execute(
                "SELECT payload FROM outbox WHERE game_id = ? AND seq >= 5000", (game_id,)
            ).fetchall()
    event, reply = (json.dumps(o, ensure_ascii=False, separators=(",", ":")) for o in objects)
    assert events == [(seq, event) for seq in range(5_000, 5_020)]
    assert replies == [(reply,)] * 20


def test_the_floor_row_is_context_beside_the_c_rate() -> None:
    row = _floor_row(FLOOR_GAMES, 20_000.0, 80_000.0, 5_000.0)
    assert row.ratio == 0.25 and row.met is None and row.target == ""
    assert "C sqlite3, 100 posts per commit: 80000/s" in row.baseline
    assert "0.25 of this floor's rate" in row.note
