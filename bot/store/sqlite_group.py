"""A group commit's writes on SQLite in one call, run by the writer process (``sqlite_child``).

Through SQLAlchemy's async layer each statement is several round trips between the event loop and
aiosqlite's thread (and as many hand-offs of the GIL): ~30 per vote post, most of a post's CPU.
Here a group is one function (``commit``): the ``synchronous`` level,
``BEGIN IMMEDIATE``, the group's statements as plain ``sqlite3`` calls (done marks, the duplicate
check, the bumps of the games' rows (one statement for every game with one input in the group),
one INSERT per table, snapshots) and ``COMMIT``.
What they write is what the SQLAlchemy statements of ``bot.store.statements`` write, column for
column (JSON by the store's serializer, datetimes as SQLAlchemy stores them on SQLite).

It imports nothing from ``bot`` (the child runs it with the standard library and, where it is
installed, ``orjson`` alone), so what both processes need lives here, defined once: the JSON
serializer, the SQLite connection settings and the chunking of long id lists.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime
from itertools import repeat
from operator import attrgetter
from typing import Any, Protocol


def _standard_serializer() -> Callable[[Any], str]:
    """The store's JSON: compact, no NaN (PostgreSQL's json refuses it), Chinese kept readable.

    What ``json.JSONEncoder(allow_nan=False, ensure_ascii=False, separators=(",", ":"))``
    encodes, with its C encoder made once rather than on every call (~2.5 µs of a ~6 µs
    vote-post payload), and no check for circular references (data from the codec has none: one
    would end in a RecursionError rather than a ValueError)."""
    encoder = json.JSONEncoder(allow_nan=False, ensure_ascii=False, separators=(",", ":"))
    make = getattr(json.encoder, "c_make_encoder", None)  # (not in typeshed)
    if make is None:  # an interpreter without json's C accelerator
        return encoder.encode
    # (markers, default, encode a str, indent, ":", ",", sort_keys, skipkeys, allow_nan)
    chunks = make(None, encoder.default, json.encoder.encode_basestring, None, ":", ",", False,
                  False, False)  # fmt: skip

    def dumps(value: Any) -> str:
        return "".join(chunks(value, 0))

    return dumps


_standard_dumps = _standard_serializer()

_DECIMALS = re.compile(r"\.[0-9]").finditer
_EXPONENT = re.compile(r"e[+-][0-9]").finditer


def _may_hold_floats(text: str) -> bool:
    """Whether orjson's ``text`` may hold a float (every one it writes has a digit, then ``.``
    or ``e+``/``e-`` and a digit: ``1.5``, ``1e+16``, ``5e-324``): their digits can differ from
    Python's ``float.__repr__`` (``1e-05``: ``0.00001``). Text that only looks like one
    (``"v1.2"``) is written by the standard encoder too, at its cost."""
    if "." in text:
        for found in _DECIMALS(text):
            if text[found.start() - 1] in "0123456789":
                return True
    if "+" in text or "-" in text:
        for found in _EXPONENT(text):
            if text[found.start() - 1] in "0123456789":
                return True
    return False


def _serializers() -> tuple[Callable[[Any], str], Callable[[list[Any]], list[str]]]:
    """``json_dumps`` and ``dump_all``: by orjson where it is installed and its text is the
    standard encoder's, else by the standard encoder.

    orjson refuses keys other than str, ints beyond 64 bits, lone surrogates and (options below)
    subclasses, dataclasses and datetimes: the standard encoder writes those, or refuses them.
    It writes NaN and infinities as null, plain ``Enum`` members and UUIDs by their value (the
    standard encoder refuses them all), and floats by digits of its own (``1e-05``: ``0.00001``):
    its text is kept only if it reads back equal to the value and holds no float. A vote post's
    event and reply: 2.7 µs by the standard encoder, 0.4 by orjson, 2.2 with the check (most of
    it ``loads``), 1.4 in a group's ``dump_all`` (one check for all)."""
    try:
        import orjson
    except ImportError:
        return _standard_dumps, lambda values: [_standard_dumps(_as_dict(v)) for v in values]
    fast, read = orjson.dumps, orjson.loads
    options = (
        orjson.OPT_PASSTHROUGH_SUBCLASS
        | orjson.OPT_PASSTHROUGH_DATACLASS
        | orjson.OPT_PASSTHROUGH_DATETIME
    )

    def kept(text: str, value: Any) -> str:
        if _may_hold_floats(text) or read(text) != value:
            return _standard_dumps(value)
        return text

    def dumps(value: Any) -> str:
        try:
            text = fast(value, None, options).decode()
        except TypeError:  # orjson's JSONEncodeError
            return _standard_dumps(value)
        return kept(text, value)

    def dump_all(values: list[Any]) -> list[str]:
        try:
            texts = [fast(value, None, options).decode() for value in values]
        except TypeError:  # one refused, or a mapping that is no dict: each alone
            return [dumps(_as_dict(value)) for value in values]
        every = f"[{','.join(texts)}]"
        if _may_hold_floats(every) or read(every) != values:  # (all dicts: orjson wrote them)
            return [kept(text, value) for text, value in zip(texts, values, strict=True)]
        return texts

    return dumps, dump_all


def _as_dict(value: Mapping[str, Any]) -> dict[str, Any]:
    return value if type(value) is dict else dict(value)


_SERIALIZERS = _serializers()
json_dumps = _SERIALIZERS[0]
"""The store's JSON serializer (SQLAlchemy's, and that of the writes that bypass it): the
standard encoder's text (``_standard_dumps``), by orjson where it can."""
dump_all = _SERIALIZERS[1]
"""``[json_dumps(dict(value)) for value in values]`` for a list of mappings, faster."""

CHUNK = 10_000
"""Most ids bound in one statement: drivers refuse more than 32,767 parameters (asyncpg, SQLite's
default limit), and done marks can pile up by tens of thousands while a large group is written."""


def chunks(ids: list[int]) -> list[list[int]]:
    """``ids`` in lists of at most ``CHUNK``."""
    return [ids[i : i + CHUNK] for i in range(0, len(ids), CHUNK)]


def configure(dbapi_connection: Any, busy_timeout_ms: int) -> None:
    """The store's settings on a new SQLite connection (the pool's, and the writer process's):
    WAL, ``synchronous=FULL``, foreign keys, the busy timeout, and no legacy transactions."""
    # Disable the driver's own (legacy) BEGIN handling: BEGIN is emitted by the store itself.
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    try:
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=FULL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute(f"PRAGMA busy_timeout={int(busy_timeout_ms)}")
    finally:
        cursor.close()


def pragma(
    conn: sqlite3.Connection, info: dict[str, Any], name: str, value: str | int | None
) -> Any:
    """Set ``PRAGMA name`` to ``value`` (a word or a number) on ``conn``, or only read it: its
    value after. ``info``: the connection's pragmas known in force (``commit`` keeps
    ``synchronous`` there), forgotten once set by hand."""
    if not name.isidentifier() or not (value is None or str(value).isalnum()):
        raise ValueError(f"not a pragma: {name!r} = {value!r}")
    if value is not None:
        conn.execute(f"PRAGMA {name}={value}")
        info.pop(name, None)  # set by hand: no longer known in force
    row = conn.execute(f"PRAGMA {name}").fetchone()
    return None if row is None else row[0]


class Stage(Protocol):
    """Where ``commit`` tells that it sent ``COMMIT`` (``bot.store.writer.Stage`` is one)."""

    committing: bool


SEEN = "seen"
"""An input whose message id is recorded already (a duplicate)."""
REFUSED = "refused"
"""An input whose game row did not match (not active, or a stale seq)."""


@dataclass(frozen=True, slots=True)
class PlannedAppend:
    """One input of the group, as rows to write."""

    game_id: int
    expected_seq: int | None
    finish: bool
    message_id: int | None
    outcome: Mapping[str, Any] | None
    events: Sequence[Mapping[str, Any]]
    types: Sequence[str]
    """Each event's type (checked by the repository before the call)."""
    effects: Sequence[Mapping[str, Any]]


@dataclass(slots=True)
class Written:
    """What the call wrote: done marks that changed, and per input its last seq and outbox ids
    (or ``SEEN`` / ``REFUSED``)."""

    changed: set[int] = field(default_factory=set)
    appends: list[tuple[int, list[int]] | str] = field(default_factory=list)


_game_id = attrgetter("game_id")

_PLANNED_FIELDS = tuple(f.name for f in fields(PlannedAppend))


def as_fields(append: PlannedAppend) -> tuple[Any, ...]:
    """``append`` as a plain tuple (it crosses to the writer process): ``PlannedAppend(*fields)``
    makes it again. Read in the dataclass's own field order, so a field added there crosses too."""
    return tuple([getattr(append, name) for name in _PLANNED_FIELDS])


def in_utc(value: datetime) -> datetime:
    """``value`` in UTC; a naive one is refused, as ``UTCDateTime`` refuses it (for writes that
    bypass SQLAlchemy)."""
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError(f"naive datetime {value!r}: store only timezone-aware datetimes")
    return value.astimezone(UTC)


def stored_time(value: datetime) -> str:
    """A datetime as SQLAlchemy stores it in SQLite: naive UTC, microseconds always."""
    naive = in_utc(value).replace(tzinfo=None)
    return naive.isoformat(sep=" ", timespec="microseconds")


def _bump(conn: sqlite3.Connection, at: str, append: PlannedAppend) -> int | None:
    """Bump one input's game row; its new last seq, or None if the row did not match."""
    params: list[Any] = [len(append.events), at]
    if append.finish:
        params.append(at)
    params.append(append.game_id)
    if append.expected_seq is not None:
        params.append(append.expected_seq)
    sql = _bump_sql(append.expected_seq is not None, append.finish)
    row = conn.execute(sql, params).fetchone()
    return None if row is None else int(row[0])


def _bump_sql(expected: bool, finish: bool) -> str:
    sets = "last_seq = last_seq + ?, updated_at = ?"
    if finish:
        sets += ", status = 'finished', finished_at = ?"
    where = "id = ? AND status = 'active'" + (" AND last_seq = ?" if expected else "")
    return f"UPDATE games SET {sets} WHERE {where} RETURNING last_seq"


def _bump_together(
    conn: sqlite3.Connection, at: str, appends: Sequence[PlannedAppend]
) -> dict[int, int]:
    """Bump the rows of games that have one input each in the group, in one statement (what
    ``_bump_sql`` does for each, without a statement per input): game id → its new last seq,
    for each row that matched (active, and at its expected seq when one is given)."""
    bumped: dict[int, int] = {}
    for start in range(0, len(appends), CHUNK):
        part = appends[start : start + CHUNK]
        rows = ", ".join(["(?, ?, ?)"] * len(part))
        params: list[Any] = [at]
        for append in part:
            params += (append.game_id, len(append.events), append.expected_seq)
        found = conn.execute(
            f"UPDATE games SET last_seq = last_seq + v.column2, updated_at = ? "
            f"FROM (VALUES {rows}) AS v WHERE games.id = v.column1 AND games.status = 'active' "
            f"AND (v.column3 IS NULL OR games.last_seq = v.column3) RETURNING id, last_seq",
            params,
        ).fetchall()
        bumped |= {int(game): int(seq) for game, seq in found}
    return bumped


def _bumped_together(appends: Sequence[PlannedAppend], seen: set[int]) -> list[PlannedAppend]:
    """The inputs whose bumps can share one statement: not seen before, not finishing their
    game, and each the only one of its game in the group (so the order of the bumps does not
    matter). Fewer than two: none (a statement alone is what ``_bump_sql`` writes)."""
    if len(appends) < 2:
        return []
    fresh = [a for a in appends if a.message_id not in seen] if seen else appends
    games = Counter(map(_game_id, fresh))
    if len(games) == len(fresh):  # one input a game (a burst of many games' posts)
        together = [a for a in fresh if not a.finish]
    else:
        together = [a for a in fresh if not a.finish and games[a.game_id] == 1]
    return together if len(together) > 1 else []


MARK_DONE_SQL = (
    "UPDATE outbox SET done_at = ?, attempts = attempts + 1 "
    "WHERE id IN ({holes}) AND +done_at IS NULL RETURNING id"
)
"""The done marks of a group (``holes``: a ``?`` per id). ``+done_at``, a term no index serves:
with ``done_at IS NULL`` SQLite's planner searched the index of undone effects (migration 0003)
rather than the ids, reading every undone row for every group (linear in the outbox's backlog:
after a Discord outage, just when the backlog is being worked off)."""

_INSERT_OUTBOX = (
    "INSERT INTO outbox (game_id, seq, message_id, payload, attempts, created_at) "
    "VALUES (?, ?, ?, ?, 0, ?)"
)


def _insert_outbox(conn: sqlite3.Connection, rows: list[tuple[Any, ...]]) -> int:
    """Insert the outbox rows in order; the id of the first. AUTOINCREMENT gives each row the
    next id above any ever used (``sqlite_sequence``), one after another in the transaction that
    holds the write lock, so the ids are consecutive and an idempotency key is never reused. One
    row (a post's reply): its id from the insert itself; more: from ``last_insert_rowid()`` (a
    statement's ``lastrowid`` is not kept by ``executemany``)."""
    if len(rows) == 1:
        last = conn.execute(_INSERT_OUTBOX, rows[0]).lastrowid
    else:
        conn.executemany(_INSERT_OUTBOX, rows)
        last = conn.execute("SELECT last_insert_rowid()").fetchone()[0]
    assert last is not None
    return int(last) - len(rows) + 1


def commit(
    conn: sqlite3.Connection,
    info: dict[str, Any],
    durable: bool,
    stage: Stage,
    at: str,
    marks: Sequence[int],
    appends: Sequence[PlannedAppend],
    snapshots: Mapping[int, tuple[int, str, Mapping[str, Any]]],
) -> Written:
    """Write the group in a transaction of its own and commit it: ``synchronous=FULL`` if
    ``durable``, ``NORMAL`` (lazy) otherwise, as ``bot.store.db`` sets it for SQLAlchemy's
    transactions (``info``: the pooled connection's, where the level in force is kept).
    ``stage.committing`` is set once ``COMMIT`` is sent: a failure from then on has an unknown
    outcome. ``at``: every row's time, as ``stored_time`` writes it (it crosses to the writer
    process as text: a datetime's pickle cost the event loop ~5 µs a commit)."""
    begin(conn, info, durable)
    try:
        written = write(conn, at, marks, appends, snapshots)
        stage.committing = True
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return written


def begin(conn: sqlite3.Connection, info: dict[str, Any], durable: bool) -> None:
    """Set the ``synchronous`` level for the transaction (``commit``) and take the write lock
    (``BEGIN IMMEDIATE``: a database held by another connection fails here, or after the busy
    timeout, before anything is written)."""
    level = "FULL" if durable else "NORMAL"
    if info.get("synchronous", "FULL") != level:
        conn.execute(f"PRAGMA synchronous={level}")
        info["synchronous"] = level
    conn.execute("BEGIN IMMEDIATE")


def write(
    conn: sqlite3.Connection,
    at: str,
    marks: Sequence[int],
    appends: Sequence[PlannedAppend],
    snapshots: Mapping[int, tuple[int, str, Mapping[str, Any]]],
) -> Written:
    """Run the group's statements on ``conn`` (in its open transaction), every row's time
    ``at`` (``stored_time``); commits nothing."""
    out = Written()
    for part in chunks(list(marks)) if marks else ():
        holes = ",".join("?" * len(part))
        rows = conn.execute(MARK_DONE_SQL.format(holes=holes), (at, *part)).fetchall()
        out.changed |= {row[0] for row in rows}
    ids = [a.message_id for a in appends if a.message_id is not None]
    seen: set[int] = set()
    if ids:
        holes = ",".join("?" * len(ids))
        query = f"SELECT message_id FROM inputs WHERE message_id IN ({holes})"
        seen = {row[0] for row in conn.execute(query, ids)}
    inputs: list[tuple[Any, ...]] = []
    # the events' and the outbox's rows, column by column (zipped into rows once their JSON is
    # made, for all of them at once: ``dump_all``)
    ev_game: list[int] = []
    ev_seq: list[int] = []
    ev_type: list[str] = []
    ev_message: list[int | None] = []
    payloads: list[Mapping[str, Any]] = []  # the events', then (``effects``) the outbox's
    effects: list[Mapping[str, Any]] = []
    ob_game: list[int] = []
    ob_seq: list[int] = []
    ob_message: list[int | None] = []
    placed: list[tuple[list[int], int]] = []  # each input's outbox ids, and how many
    answers = out.appends
    batched = _bumped_together(appends, seen)
    together = set(map(_game_id, batched))
    bumped = _bump_together(conn, at, batched)
    for append in appends:
        game_id, message_id = append.game_id, append.message_id
        if message_id is not None and message_id in seen:
            answers.append(SEEN)
            continue
        found = bumped.get(game_id) if game_id in together else _bump(conn, at, append)
        if found is None:
            answers.append(REFUSED)
            continue
        last_seq = found
        if append.finish:
            conn.execute("DELETE FROM channel_bindings WHERE game_id = ?", (game_id,))
        events, types = append.events, append.types
        n = len(events)
        if len(types) != n:
            raise ValueError(f"{n} events but {len(types)} types")
        if message_id is not None:
            outcome = append.outcome
            text = json_dumps(dict(outcome)) if outcome is not None else None
            if n:
                inputs.append((message_id, game_id, text, last_seq - n + 1, last_seq, at))
            else:
                inputs.append((message_id, game_id, text, None, None, at))
        if n == 1:
            ev_game.append(game_id)
            ev_seq.append(last_seq)
            ev_type += types
            ev_message.append(message_id)
            payloads += events
        elif n:
            ev_game += [game_id] * n
            ev_seq += range(last_seq - n + 1, last_seq + 1)
            ev_type += types
            ev_message += [message_id] * n
            payloads += events
        k = len(append.effects)
        if k == 1:
            ob_game.append(game_id)
            ob_seq.append(last_seq)
            ob_message.append(message_id)
            effects += append.effects
        elif k:
            ob_game += [game_id] * k
            ob_seq += [last_seq] * k
            ob_message += [message_id] * k
            effects += append.effects
        outbox_ids: list[int] = []
        if k:
            placed.append((outbox_ids, k))
        answers.append((last_seq, outbox_ids))
    n_events = len(payloads)
    payloads += effects
    texts = dump_all(payloads) if payloads else []
    if inputs:
        conn.executemany(
            "INSERT INTO inputs (message_id, game_id, outcome, first_seq, last_seq, received_at) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            inputs,
        )
    if n_events:
        conn.executemany(
            "INSERT INTO events (game_id, seq, type, payload, message_id, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            zip(ev_game, ev_seq, ev_type, texts[:n_events], ev_message, repeat(at)),
        )
    if effects:
        rows = list(zip(ob_game, ob_seq, ob_message, texts[n_events:], repeat(at)))
        next_id = _insert_outbox(conn, rows)
        for outbox_ids, k in placed:
            outbox_ids += range(next_id, next_id + k)
            next_id += k
    if snapshots:
        conn.executemany(
            "INSERT INTO snapshots (game_id, seq, version, state, created_at) "
            "VALUES (?, ?, ?, ?, ?) ON CONFLICT (game_id, seq) DO NOTHING",
            [(g, seq, v, json_dumps(dict(state)), at) for g, (seq, v, state) in snapshots.items()],
        )
        conn.executemany(
            "DELETE FROM snapshots WHERE game_id = ? AND seq < ?",
            [(g, seq) for g, (seq, _, _) in snapshots.items()],
        )
    return out
