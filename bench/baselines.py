"""The machine's own limits, measured beside the bot in the same run: no SQLAlchemy, no aiosqlite.

SQLite: Python's `sqlite3` (C) on the bench's own migrated file, with the bot's settings (WAL,
`synchronous=FULL`), appending what a vote post appends at least (one `events` row and one `outbox`
row with the same JSON payloads), one commit per post or `per_commit` posts to a commit.
PostgreSQL: `asyncpg` directly on the same scratch database: one connection, N connections at once,
or grouped. The bot's rows: the same C `sqlite3` writing everything the bot's group commit
writes for a vote post (its `inputs` row, its game row's checked bump, its `events` and `outbox`
rows, the done mark of the reply), grouped as the bot groups. The Python floor: what any asyncio
program pays per post before it parses a post or applies a rule (encode two payloads, wait for a
group commit). Restart: a C read of the rows a rebuild reads (the newest snapshot of each active
game and the events after it) with `json.loads` of each, in a few bulk queries.
"""

from __future__ import annotations

import asyncio
import gc
import itertools
import json
import sqlite3
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from functools import partial
from typing import Any

import asyncpg  # type: ignore[import-untyped]  # no type information shipped
from sqlalchemy.dialects import sqlite
from sqlalchemy.dialects.postgresql import asyncpg as pg_asyncpg
from sqlalchemy.engine import make_url

from bench.stores import Bench, utcnow
from bot.store import statements

_EVENT = (
    "INSERT INTO events (game_id, seq, type, payload, message_id, created_at) "
    "VALUES (?, ?, 'VotePosted', ?, NULL, ?)"
)
_EVENT_FROM = (
    "INSERT INTO events (game_id, seq, type, payload, message_id, created_at) "
    "VALUES (?, ?, 'VotePosted', ?, ?, ?)"
)
_OUTBOX_FROM = (
    "INSERT INTO outbox (game_id, seq, message_id, payload, attempts, last_error, created_at, "
    "done_at) VALUES (?, ?, ?, ?, 0, NULL, ?, NULL)"
)
_OUTBOX = (
    "INSERT INTO outbox (game_id, seq, message_id, payload, attempts, last_error, created_at, "
    "done_at) VALUES (?, ?, NULL, ?, 0, NULL, ?, NULL)"
)


def sqlite_path(bench: Bench) -> str:
    """The file of a SQLite bench."""
    database = make_url(bench.url).database
    assert database is not None
    return database


@contextmanager
def sqlite_c(bench: Bench, **connect: Any) -> Iterator[sqlite3.Connection]:
    """A plain `sqlite3` connection to the bench's file, with the bot's settings."""
    conn = sqlite3.connect(sqlite_path(bench), isolation_level=None, **connect)
    try:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=FULL")
        conn.execute("PRAGMA foreign_keys=ON")
        conn.execute("PRAGMA busy_timeout=10000")
        yield conn
    finally:
        conn.close()


def sqlite_append(
    bench: Bench, game_id: int, payloads: tuple[str, str], rows: int, per_commit: int, first: int
) -> float:
    """Seconds to append `rows` (events + outbox row each), `per_commit` to a durable commit."""
    event, effect = payloads
    with sqlite_c(bench) as conn:
        start = time.perf_counter()
        for base in range(first, first + rows, per_commit):
            now = utcnow().replace(tzinfo=None).isoformat(sep=" ")
            conn.execute("BEGIN IMMEDIATE")
            for seq in range(base, min(base + per_commit, first + rows)):
                conn.execute(_EVENT, (game_id, seq, event, now))
                conn.execute(_OUTBOX, (game_id, seq, effect, now))
            conn.execute("COMMIT")
        return time.perf_counter() - start


def sqlite_append_spread(
    bench: Bench, game_ids: list[int], payloads: tuple[str, str], rows: int, first: int
) -> float:
    """`sqlite_append` with each commit's rows spread over `game_ids`, one post of each game to
    a commit (seqs from `first` up, one a commit), as the bot's group commit spreads 100 games'
    posts: each commit inserts at as many points of the events' key as there are games, where
    the one-game baseline inserts at one."""
    event, effect = payloads
    per_commit = len(game_ids)
    with sqlite_c(bench) as conn:
        start = time.perf_counter()
        for seq in range(first, first + rows // per_commit):
            now = utcnow().replace(tzinfo=None).isoformat(sep=" ")
            conn.execute("BEGIN IMMEDIATE")
            for game_id in game_ids:
                conn.execute(_EVENT, (game_id, seq, event, now))
                conn.execute(_OUTBOX, (game_id, seq, effect, now))
            conn.execute("COMMIT")
        return time.perf_counter() - start


_INPUT = (
    "INSERT INTO inputs (message_id, game_id, outcome, first_seq, last_seq, received_at) "
    "VALUES (?, ?, NULL, ?, ?, ?)"
)
_BUMP = (
    "UPDATE games SET last_seq = last_seq + 1, updated_at = ? "
    "WHERE id = ? AND status = 'active' AND last_seq = ? RETURNING last_seq"
)
_DONE = "UPDATE outbox SET done_at = ?, attempts = attempts + 1 WHERE id = ? AND done_at IS NULL"
BOT_ROWS_MESSAGE_IDS = 9_000_000_000_000_000_000
"""Where the bot-rows baseline's message ids start (above any the bench's posts use)."""


def sqlite_bot_rows(
    bench: Bench, game_id: int, payloads: tuple[str, str], rows: int, per_commit: int, first: int
) -> float:
    """Seconds for C `sqlite3` to write, for `rows` vote posts, every row the bot's group commit
    writes for one (`bot.store.sqlite_group.write`): the post's `inputs` row (its message id,
    the idempotency key), the bump of its game row checked against the seq its state was read
    at, its `events` row and its `outbox` row, and the done mark of its reply, written with the
    next commit as the bot writes it; `per_commit` posts to a durable commit. What no Python code
    path can undercut while keeping the bot's contract (idempotent, sequence-checked, each
    effect marked done), beside the bare events + outbox rows of `sqlite_append`. The game row
    is left as it was found (its `last_seq`): the game stays whole for a later rebuild."""
    event, effect = payloads
    with sqlite_c(bench) as conn:
        (first_seq,) = conn.execute(
            "SELECT last_seq FROM games WHERE id = ?", (game_id,)
        ).fetchone()
        seq = first_seq
        done: list[int] = []
        start = time.perf_counter()
        for base in range(first, first + rows, per_commit):
            now = utcnow().replace(tzinfo=None).isoformat(sep=" ")
            conn.execute("BEGIN IMMEDIATE")
            conn.executemany(_DONE, [(now, outbox_id) for outbox_id in done])
            done = []
            for n in range(base, min(base + per_commit, first + rows)):
                bumped = conn.execute(_BUMP, (now, game_id, seq)).fetchone()
                if bumped is None:
                    raise RuntimeError(f"game {game_id}: its row is not at seq {seq}")
                seq = bumped[0]
                conn.execute(_INPUT, (BOT_ROWS_MESSAGE_IDS + n, game_id, n, n, now))
                conn.execute(_EVENT_FROM, (game_id, n, event, BOT_ROWS_MESSAGE_IDS + n, now))
                reply = conn.execute(
                    _OUTBOX_FROM, (game_id, n, BOT_ROWS_MESSAGE_IDS + n, effect, now)
                )
                done.append(int(reply.lastrowid or 0))
            conn.execute("COMMIT")
        seconds = time.perf_counter() - start  # the last replies' marks: with a next commit
        # Untimed: the game row back at its own seq (the rows above are not its events; a
        # restart later in the bench rebuilds it and would find them missing).
        conn.execute("UPDATE games SET last_seq = ? WHERE id = ?", (first_seq, game_id))
        return seconds


PostRows = tuple[list[str], list[str]]
"""One post's rows as JSON text: its events' payloads and its effects' payloads."""


async def sqlite_floor(
    bench: Bench,
    game_id: int,
    rows_for: Callable[[int], PostRows],
    games: int,
    posts: int,
    first: int,
) -> tuple[float, int]:
    """Seconds for the least an asyncio program in this interpreter does for `posts` posts from
    `games` games at once, and the next free seq. Each post waits for its durable commit as the
    bot's do: make its rows (``rows_for(game)``, the game's index: at least the JSON of a post's
    two payloads), queue them, and wait while one task commits whatever is queued in one C
    `sqlite3` transaction on a worker thread. No idempotency row, no sequence check, no done
    mark: with bare payloads for rows, the ceiling of any Python bot on this machine, beside which
    the bot's 100-game rate is judged (issue #16's target for it asks for 0.25 of the C rate);
    with the engine's work in ``rows_for`` (`bench.engine_floor`), the ceiling of any bot on this
    engine. A post takes a seq from `first` for each of its events (one if it has none); its
    effect rows carry its first."""
    loop = asyncio.get_running_loop()
    queued: list[tuple[int, PostRows, asyncio.Future[None]]] = []
    wake = asyncio.Event()
    seqs = itertools.count(first)

    def commit(conn: sqlite3.Connection, group: list[tuple[int, PostRows]]) -> None:
        now = utcnow().replace(tzinfo=None).isoformat(sep=" ")
        conn.execute("BEGIN IMMEDIATE")
        conn.executemany(
            _EVENT,
            [
                (game_id, seq + n, event, now)
                for seq, (events, _) in group
                for n, event in enumerate(events)
            ],
        )
        conn.executemany(
            _OUTBOX,
            [(game_id, seq, effect, now) for seq, (_, effects) in group for effect in effects],
        )
        conn.execute("COMMIT")

    async def group_writer(conn: sqlite3.Connection) -> None:
        for_all = posts // games * games
        written = 0
        while written < for_all:
            await wake.wait()
            wake.clear()
            group = queued[:]
            del queued[:]
            await loop.run_in_executor(
                thread, commit, conn, [(seq, rows) for seq, rows, _ in group]
            )
            for *_, waiting in group:
                waiting.set_result(None)
            written += len(group)

    async def one_game(game: int, count: int) -> None:
        for _ in range(count):
            waiting = loop.create_future()
            rows = rows_for(game)
            seq = next(seqs)
            for _ in range(len(rows[0]) - 1):  # a post with several events: a seq for each
                next(seqs)
            queued.append((seq, rows, waiting))
            wake.set()
            await waiting

    # Left in this order: the thread ends (its commit under way done) before the connection
    # closes, also when a post's rows fail and the tasks are cancelled.
    with sqlite_c(bench, check_same_thread=False) as conn, ThreadPoolExecutor(1) as thread:
        start = time.perf_counter()
        async with asyncio.TaskGroup() as tasks:
            tasks.create_task(group_writer(conn))
            for game in range(games):
                tasks.create_task(one_game(game, posts // games))
        return time.perf_counter() - start, next(seqs)


def bare_rows(payloads: tuple[Any, Any]) -> Callable[[int], PostRows]:
    """The Python floor's rows for any game: the JSON of one post's event and reply, encoded
    again for every post (as a bot encodes each post's own)."""
    dumps = partial(json.dumps, ensure_ascii=False, separators=(",", ":"))
    event, reply = payloads

    def rows_for(game: int) -> PostRows:
        return [dumps(event)], [dumps(reply)]

    return rows_for


def pg_dsn(bench: Bench) -> str:
    """The bench's PostgreSQL URL for asyncpg (no SQLAlchemy driver name)."""
    return make_url(bench.url).set(drivername="postgresql").render_as_string(hide_password=False)


async def pg_append(
    bench: Bench,
    game_id: int,
    payloads: tuple[str, str],
    rows: int,
    *,
    connections: int,
    per_commit: int,
    first: int,
) -> float:
    """Seconds for asyncpg to append `rows` over `connections` at once, `per_commit` to a
    commit (PostgreSQL's default, durable `synchronous_commit`)."""
    event, effect = payloads
    conns = [await asyncpg.connect(pg_dsn(bench)) for _ in range(connections)]
    ev = _EVENT.replace("?", "${}").format(1, 2, "3::json", 4)
    ob = _OUTBOX.replace("?", "${}").format(1, 2, "3::json", 4)
    per = rows // connections

    async def writer(conn: Any, base: int) -> None:
        for start in range(base, base + per, per_commit):
            now = utcnow()
            seqs = range(start, min(start + per_commit, base + per))
            async with conn.transaction():
                if per_commit == 1:
                    await conn.execute(ev, game_id, start, event, now)
                    await conn.execute(ob, game_id, start, effect, now)
                else:
                    await conn.executemany(ev, [(game_id, s, event, now) for s in seqs])
                    await conn.executemany(ob, [(game_id, s, effect, now) for s in seqs])

    try:
        began = time.perf_counter()
        await asyncio.gather(*(writer(c, first + i * per) for i, c in enumerate(conns)))
        return time.perf_counter() - began
    finally:
        for conn in conns:
            await conn.close()


def _bulk_sql(backend: str, version: str) -> list[tuple[str, list[Any]]]:
    """The store's own two bulk reads of a restart (``bot.store.statements``) as the driver's SQL
    and parameters, so the C driver reads the same rows the same way (bound, as the bot binds)."""
    dialect = sqlite.dialect() if backend == "sqlite" else pg_asyncpg.dialect()
    out = []
    for stmt in (statements.ACTIVE_HEADS, statements.ACTIVE_TAILS):
        compiled = stmt.compile(dialect=dialect)
        names = compiled.positiontup or []
        out.append((str(compiled), [version if n == "v" else compiled.params[n] for n in names]))
    return out


async def read_decode(bench: Bench, version: str) -> tuple[float, int]:
    """Seconds for a C read + `json.loads` of every active game's newest snapshot and the events
    after it (the store's two bulk queries), and the rows read; with the cyclic GC paused, as
    `GameService.recover` pauses it (its collections over a large heap would be most of it)."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        return await _read_decode(bench, version)
    finally:
        if collecting:
            gc.enable()


async def _read_decode(bench: Bench, version: str) -> tuple[float, int]:
    loads = json.loads
    (head_sql, head_args), (tail_sql, tail_args) = _bulk_sql(bench.backend, version)
    if bench.backend == "sqlite":
        with sqlite_c(bench) as conn:
            start = time.perf_counter()
            heads = conn.execute(head_sql, head_args).fetchall()
            tails = conn.execute(tail_sql, tail_args).fetchall()
            decoded = [loads(r[3]) for r in heads if r[3] is not None] + [
                loads(r[2]) for r in tails
            ]
            return time.perf_counter() - start, len(decoded)
    conn = await asyncpg.connect(pg_dsn(bench))
    try:
        start = time.perf_counter()
        heads = await conn.fetch(head_sql, *head_args)
        tails = await conn.fetch(tail_sql, *tail_args)
        decoded = [loads(r[3]) for r in heads if r[3] is not None] + [loads(r[2]) for r in tails]
        return time.perf_counter() - start, len(decoded)
    finally:
        await conn.close()
