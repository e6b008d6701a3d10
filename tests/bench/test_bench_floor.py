"""The 100-game context baselines of `faguan bench` write what they claim: the Python floor
(`bench.baselines.sqlite_floor`) every post's event and reply rows, committed in groups of the
posts waiting together; the bot's rows by C (`sqlite_bot_rows`) every row the bot writes per post;
the engine floor (`bench.engine_floor`) the rows the engine decides for each post, on copies of
the games' states."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable

import pytest

from bench import baselines
from bench.ingest import (
    FLOOR_GAMES,
    RAW_GAME,
    _bot_rows_row,
    _engine_floor_row,
    _engine_posts,
    _floor_row,
    _raw_objects,
    _raw_payloads,
    _spread_row,
    prepare_games,
)
from bench.report import Row
from bench.stores import Bench, Snowflakes, create_game, open_bench
from bot.runtime.service import fold
from bot.runtime.snapshots import SNAPSHOTS
from engine import codec
from engine.effects import ReplyToPost
from engine.events import VotePosted


async def test_the_floor_commits_every_post_of_every_game() -> None:
    async with open_bench("sqlite") as bench:
        game_id = await create_game(bench.service, RAW_GAME)
        objects = _raw_objects()
        rows = baselines.bare_rows(objects)
        seconds, next_seq = await baselines.sqlite_floor(bench, game_id, rows, 4, 20, 5_000)
        assert seconds > 0 and next_seq == 5_020
        events, replies = _floor_rows(bench, game_id)
    event, reply = (json.dumps(o, ensure_ascii=False, separators=(",", ":")) for o in objects)
    assert events == [(seq, event) for seq in range(5_000, 5_020)]
    assert replies == [reply] * 20


def _floor_rows(bench: Bench, game_id: int) -> tuple[list[tuple[int, str]], list[str]]:
    """The floor's rows from seq 5000 on: (seq, event payload) and reply payloads, in order."""
    with sqlite3.connect(baselines.sqlite_path(bench)) as conn:
        events = conn.execute(
            "SELECT seq, payload FROM events WHERE game_id = ? AND seq >= 5000 ORDER BY seq",
            (game_id,),
        ).fetchall()
        replies = conn.execute(
            "SELECT payload FROM outbox WHERE game_id = ? AND seq >= 5000 ORDER BY id", (game_id,)
        ).fetchall()
    return events, [reply for (reply,) in replies]


@pytest.mark.parametrize(
    ("make", "says"),
    [
        (_floor_row, "0.25 of this floor's rate"),
        (_bot_rows_row, "does 0.25 of this rate"),
        (_spread_row, "does 0.25 of this rate"),
    ],
    ids=["floor", "bot-rows", "spread"],
)
def test_the_context_rows_stand_beside_the_c_rate_with_no_target(
    make: Callable[[int, float, float, float], Row], says: str
) -> None:
    row = make(FLOOR_GAMES, 20_000.0, 80_000.0, 5_000.0)
    assert row.ratio == 0.25 and row.met is None and row.target == ""
    assert "C sqlite3, 100 posts per commit: 80000/s" in row.baseline
    assert says in row.note


async def test_the_spread_baseline_commits_one_post_of_each_game_at_a_time() -> None:
    async with open_bench("sqlite") as bench:
        games = [await create_game(bench.service, RAW_GAME + n) for n in range(3)]
        payloads = _raw_payloads()
        assert baselines.sqlite_append_spread(bench, games, payloads, 7, 5_000) > 0
        per_game = [_floor_rows(bench, game_id) for game_id in games]
    # 7 rows over 3 games: two whole commits of one post each, the odd row left out
    assert per_game == [([(5_000, payloads[0]), (5_001, payloads[0])], [payloads[1]] * 2)] * 3


async def test_the_bot_rows_baseline_writes_what_the_bot_writes_per_post() -> None:
    async with open_bench("sqlite") as bench:
        game_id = await create_game(bench.service, RAW_GAME)
        path = baselines.sqlite_path(bench)
        with sqlite3.connect(path) as conn:
            (seq,) = conn.execute("SELECT last_seq FROM games WHERE id = ?", (game_id,)).fetchone()
        payloads = _raw_payloads()
        seconds = baselines.sqlite_bot_rows(bench, game_id, payloads, 10, 4, 5_000)
        assert seconds > 0
        rebuilt = await bench.repo.load_game(game_id, fold, snapshot=SNAPSHOTS)
        assert rebuilt.seq == seq
        with sqlite3.connect(path) as conn:
            bumped = conn.execute("SELECT last_seq FROM games WHERE id = ?", (game_id,)).fetchone()
            inputs = conn.execute(
                "SELECT message_id, first_seq FROM inputs WHERE game_id = ? ORDER BY first_seq",
                (game_id,),
            ).fetchall()
            events = conn.execute(
                "SELECT seq, payload, message_id FROM events WHERE game_id = ? AND seq >= 5000 "
                "ORDER BY seq",
                (game_id,),
            ).fetchall()
            replies = conn.execute(
                "SELECT payload, message_id, done_at IS NOT NULL FROM outbox "
                "WHERE game_id = ? AND seq >= 5000 ORDER BY id",
                (game_id,),
            ).fetchall()
    ids = [baselines.BOT_ROWS_MESSAGE_IDS + n for n in range(5_000, 5_010)]
    assert bumped == (seq,)  # put back: the game is still whole (a restart rebuilds it)
    assert inputs == [(m, n) for m, n in zip(ids, range(5_000, 5_010), strict=True)]
    assert events == [(n, payloads[0], m) for n, m in zip(range(5_000, 5_010), ids, strict=True)]
    # groups of 4, 4, 2: each group's replies marked done by the next commit, the last group's not
    marked = [True] * 8 + [False] * 2
    assert replies == [(payloads[1], m, d) for m, d in zip(ids, marked, strict=True)]


async def test_the_bot_rows_baseline_checks_each_bump_as_the_bot_does() -> None:
    async with open_bench("sqlite") as bench:
        game_id = await create_game(bench.service, RAW_GAME)
        await bench.repo.finish_game(game_id)  # its row no longer takes inputs
        with pytest.raises(RuntimeError, match="not at seq"):
            baselines.sqlite_bot_rows(bench, game_id, _raw_payloads(), 4, 2, 5_000)


async def test_the_engine_floor_commits_what_the_engine_decides_for_each_post() -> None:
    async with open_bench("sqlite") as bench:
        games = await prepare_games(bench, 2)
        raw = await create_game(bench.service, RAW_GAME)
        before = {g: await bench.service.state(g) for g in games}
        ids = Snowflakes()
        posts = await _engine_posts(bench, games, 7, seed=3, ids=ids)  # 4 and 3
        again = posts.posts[1][0]
        posts.posts[1].append(again)  # the second game's 4th: its first again, refused
        seconds, next_seq = await baselines.sqlite_floor(bench, raw, posts.rows_for, 2, 8, 5_000)
        assert seconds > 0 and next_seq == 5_008  # a seq a post (one event each, or none)
        events, replies = _floor_rows(bench, raw)
        # every planned post decided on its game's copy, the repeat refused; the games' own
        # states untouched (the floor writes under its own game)
        assert posts.decided == 8 and posts.refused == 1
        assert [await bench.service.state(g) for g in games] == list(before.values())
        voted = [codec.load(json.loads(e)) for _, e in events]
        assert all(isinstance(e, VotePosted) for e in voted) and len(voted) == 7
        seen = {p.post_id for s in before.values() for p in s.posts}
        new = {p.post_id for s in posts.states for p in s.posts} - seen
        assert {e.post.post_id for e in voted} == new
        answered = [codec.load(json.loads(r)) for r in replies]
        assert all(isinstance(r, ReplyToPost) for r in answered) and len(answered) == 8
        assert [r.key for r in answered].count(None) == 7
        assert [r.post_id for r in answered if r.key is not None] == [str(again.id)]


async def test_the_engine_alone_decides_every_post_it_was_given() -> None:
    async with open_bench("sqlite") as bench:
        games = await prepare_games(bench, 3)
        posts = await _engine_posts(bench, games, 9, seed=4, ids=Snowflakes())
        assert posts.time_alone() > 0
        assert posts.decided == 9 and posts.refused == 0
        assert not any(posts.posts)


def test_the_engine_floor_row_says_how_far_the_engine_alone_could_go() -> None:
    row = _engine_floor_row(FLOOR_GAMES, 10_000.0, 16_000.0, 80_000.0, 5_000.0, 0)
    assert row.ratio == 0.125 and row.met is None and row.target == ""
    assert "16000 posts/s = 0.20 of the C rate" in row.note
    assert "does 0.50 of the engine floor" in row.note
