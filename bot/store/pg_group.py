"""A group commit's writes on PostgreSQL in one statement, on the asyncpg connection itself.

Through SQLAlchemy's async layer a group was a statement (and a greenlet switch, a compile-cache
look-up and a result object) per table and per input's bump, plus ``BEGIN`` and ``COMMIT``:
~0.3 ms of CPU per post with 10 games, more than the engine. Here the whole group is one
prepared statement of data-modifying CTEs fed with arrays (``unnest``): the duplicate check,
every input's bump of its game's row, the release of a finished game's channels, one INSERT per
table, the done marks and the snapshots. Sent alone it is its own transaction, committed with
PostgreSQL's default (durable) ``synchronous_commit`` before the answer comes back: one round
trip per group. A group with no input is committed lazily (``SET LOCAL synchronous_commit =
off``, as ``Repository._writing(lazy=True)``), in a transaction of its own.

The rows are those the SQLAlchemy statements of ``bot.store.statements`` write, column for
column (JSON text by the store's serializer, cast to ``json``; the same timestamps). One UPDATE
bumps every game at once, so the game ids of a group must be distinct (``fits``); the
repository writes other groups statement by statement.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from bot.store.sqlite_group import (
    REFUSED,
    SEEN,
    PlannedAppend,
    Written,
    dump_all,
    in_utc,
    json_dumps,
)

GROUP = """
WITH d AS (
    SELECT * FROM unnest($1::int4[], $2::int8[], $3::int4[], $4::int4[], $5::bool[], $6::int8[])
        AS d(i, game_id, n, expected, finish, message_id)
), seen AS (
    SELECT message_id FROM inputs WHERE message_id = ANY($6::int8[])
), bumped AS (
    UPDATE games g SET last_seq = g.last_seq + d.n, updated_at = $8,
        status = CASE WHEN d.finish THEN 'finished' ELSE g.status END,
        finished_at = CASE WHEN d.finish THEN $8 ELSE g.finished_at END
    FROM d
    WHERE g.id = d.game_id AND g.status = 'active'
        AND (d.expected IS NULL OR g.last_seq = d.expected)
        AND (d.message_id IS NULL OR d.message_id NOT IN (SELECT message_id FROM seen))
    RETURNING d.i, d.game_id, d.n, d.finish, d.message_id, g.last_seq
), released AS (
    DELETE FROM channel_bindings c USING bumped b WHERE b.finish AND c.game_id = b.game_id
), recorded AS (
    INSERT INTO inputs (message_id, game_id, outcome, first_seq, last_seq, received_at)
    SELECT b.message_id, b.game_id, o.outcome::json,
        CASE WHEN b.n > 0 THEN b.last_seq - b.n + 1 END, CASE WHEN b.n > 0 THEN b.last_seq END, $8
    FROM bumped b JOIN unnest($1::int4[], $7::text[]) AS o(i, outcome) ON o.i = b.i
    WHERE b.message_id IS NOT NULL
), appended AS (
    INSERT INTO events (game_id, seq, type, payload, message_id, created_at)
    SELECT b.game_id, b.last_seq - b.n + e.k, e.type, e.payload::json, b.message_id, $8
    FROM bumped b JOIN unnest($9::int4[], $10::int4[], $11::text[], $12::text[])
        AS e(i, k, type, payload) ON e.i = b.i
), queued AS (
    INSERT INTO outbox (game_id, seq, message_id, payload, attempts, created_at)
    SELECT b.game_id, b.last_seq, b.message_id, x.payload::json, 0, $8
    FROM bumped b JOIN unnest($13::int4[], $14::text[]) WITH ORDINALITY AS x(i, payload, ord)
        ON x.i = b.i
    ORDER BY x.ord
    RETURNING game_id, id
), marked AS (
    UPDATE outbox SET done_at = $8, attempts = attempts + 1
    WHERE id = ANY($15::int8[]) AND (done_at + interval '0 s') IS NULL
    RETURNING id
), snapped AS (
    INSERT INTO snapshots (game_id, seq, version, state, created_at)
    SELECT s.game_id, s.seq, s.version, s.state::json, $8
    FROM unnest($16::int8[], $17::int4[], $18::text[], $19::text[])
        AS s(game_id, seq, version, state)
    ON CONFLICT (game_id, seq) DO NOTHING
), pruned AS (
    DELETE FROM snapshots o USING unnest($16::int8[], $17::int4[]) AS s(game_id, seq)
    WHERE o.game_id = s.game_id AND o.seq < s.seq
)
SELECT 0, i::int8, last_seq::int8 FROM bumped
UNION ALL SELECT 1, game_id, id FROM queued
UNION ALL SELECT 2, id, NULL FROM marked
UNION ALL SELECT 3, message_id, NULL FROM seen
"""
"""The whole group (``$8`` is the time it is written at). Data-modifying CTEs all run, once,
on one snapshot; the inserts read the game rows' new ``last_seq`` from ``bumped``'s RETURNING,
so an input refused there (a duplicate, a stale seq, a game not active) writes nothing. The done
marks' ``done_at + interval '0 s'``, a term no index serves: their rows are looked up by id, as
on SQLite (``sqlite_group.MARK_DONE_SQL``); with ``done_at IS NULL`` and statistics taken when
little was left to send, PostgreSQL read the whole backlog through the index of undone effects
for every group. Outbox
ids come from the sequence in the order the rows are inserted (``ORDER BY``, as SQLAlchemy's
``sort_by_parameter_order`` relies on): sorted, they are each input's effects in order."""


def fits(appends: Sequence[PlannedAppend]) -> bool:
    """Whether one statement can write these inputs: one per game (one UPDATE bumps them all)."""
    games = {a.game_id for a in appends}
    return len(games) == len(appends)


def arguments(
    now: datetime,
    marks: Sequence[int],
    appends: Sequence[PlannedAppend],
    snapshots: Mapping[int, tuple[int, str, Mapping[str, Any]]],
) -> tuple[Any, ...]:
    """``GROUP``'s arguments (the group as arrays, JSON already text: a value that is not JSON
    fails here, before anything is sent), then the inputs themselves."""
    n = len(appends)
    ev_i: list[int] = []
    ev_k: list[int] = []
    ev_types: list[str] = []
    events: list[Mapping[str, Any]] = []
    ob_i: list[int] = []
    effects: list[Mapping[str, Any]] = []
    for i, a in enumerate(appends):
        for k, (payload, kind) in enumerate(zip(a.events, a.types, strict=True), 1):
            ev_i.append(i)
            ev_k.append(k)
            ev_types.append(kind)
            events.append(payload)
        for effect in a.effects:
            ob_i.append(i)
            effects.append(effect)
    texts = dump_all([*events, *effects])  # the group's JSON at once (`sqlite_group.dump_all`)
    ev_payloads, ob_payloads = texts[: len(events)], texts[len(events) :]
    return (
        list(range(n)),
        [a.game_id for a in appends],
        [len(a.events) for a in appends],
        [a.expected_seq for a in appends],
        [a.finish for a in appends],
        [a.message_id for a in appends],
        [json_dumps(dict(a.outcome)) if a.outcome is not None else None for a in appends],
        in_utc(now),
        ev_i, ev_k, ev_types, ev_payloads,
        ob_i, ob_payloads,
        list(marks),
        list(snapshots),
        [seq for seq, _, _ in snapshots.values()],
        [version for _, version, _ in snapshots.values()],
        [json_dumps(dict(state)) for _, _, state in snapshots.values()],
        appends,
    )  # fmt: skip


_PLANS = 19
"""Where ``arguments`` puts the inputs, after ``GROUP``'s 19 parameters."""


def answers(appends: Sequence[PlannedAppend], rows: Sequence[Sequence[Any]]) -> Written:
    """What ``GROUP`` wrote, from its rows: per input its last seq and outbox ids (or ``SEEN``
    / ``REFUSED``), and the done marks that changed."""
    out = Written()
    last: dict[int, int] = {}
    seen: set[int] = set()
    queued: dict[int, list[int]] = {}
    for part, a, b in rows:
        if part == 0:
            last[a] = b
        elif part == 1:
            queued.setdefault(a, []).append(b)
        elif part == 2:
            out.changed.add(a)
        else:
            seen.add(a)
    for i, append in enumerate(appends):
        if append.message_id is not None and append.message_id in seen:
            out.appends.append(SEEN)
        elif i in last:
            out.appends.append((last[i], sorted(queued.get(append.game_id, []))))
        else:
            out.appends.append(REFUSED)
    return out


async def write(conn: Any, args: tuple[Any, ...], *, durable: bool) -> Written:
    """Write and commit a group (``arguments``) on ``conn``, an asyncpg connection outside any
    transaction: durably, one statement alone, if it holds an input; lazily otherwise."""
    appends = args[_PLANS]
    if durable:
        return answers(appends, await conn.fetch(GROUP, *args[:_PLANS]))
    async with conn.transaction():
        await conn.execute("SET LOCAL synchronous_commit = off")
        return answers(appends, await conn.fetch(GROUP, *args[:_PLANS]))


_UNKNOWN_OUTCOME = ("08", "57", "58", "XX")
"""SQLSTATE classes after which a commit's outcome is unknown: the connection was lost, the
server shut down or failed."""


def rejected(exc: BaseException) -> bool:
    """Whether the server refused the statement with an error (a constraint, a type): a
    statement run alone is then rolled back, nothing of it written."""
    state = getattr(exc, "sqlstate", None)
    return isinstance(state, str) and not state.startswith(_UNKNOWN_OUTCOME)
