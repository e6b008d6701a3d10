"""Active games for the restart and shard benches: a few played through the bot, the rest copies.

Playing a game through `GameService` (every night power, vote post and lock: the bot's own events
and snapshots) takes ~80 ms, so 1,000 games took over a minute. A few *templates* are played that
way; every other game is a template's rows copied in bulk under a new game id, one `INSERT …
SELECT` per table, the same statements on SQLite and PostgreSQL: the game row (new id, the server
asked for, channels of its own), its secret, its seats, events and snapshots. A copy's players
have ids of their own too (a template's players' ids share all digits but the last two, and
those leading digits are replaced in the events, the snapshots and the seats), so a rebuilt copy
holds its own strings as a game of other players does (the codec interns player ids: copies
sharing them would look smaller). Inputs and the outbox are not copied (all done; the copies'
events carry no input). A copy is a real active game: a restart rebuilds it, from its newest
snapshot and the events after it, into its template's state with its own players, and schedules
its deadline (the template's, in the rows).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from sqlalchemy import (
    BigInteger,
    Column,
    MetaData,
    String,
    Table,
    TextClause,
    func,
    insert,
    select,
    text,
)
from sqlalchemy.ext.asyncio import AsyncConnection

from bench.games import day_commands, night_commands
from bench.stores import Bench, Snowflakes, create_game, player_specs, utcnow
from bot.runtime.schedule import to_ms
from bot.runtime.service import GameService
from bot.store.models import Event, Game, GameSecret, Json, Seat, Server, Snapshot
from engine import codec
from engine.commands import PostVote
from engine.model import PhaseKind
from engine.state import GameState

GAME_BASE = 50_000
"""The bench's game numbers for played templates (apart from the ingest games)."""
TEMPLATES = 8
"""Games played through the service; every other game is a copy of one of them."""
COPY_BASE = 1_000_000
"""A copy's number (its players' ids, `player_specs`) is this plus its game id."""
_PREFIX = 17
"""Digits a game's player ids share (`player_specs`: a 19-digit base + 1…16)."""


@dataclass(frozen=True)
class Copy:
    """A copied game: its id, its template's, its server, its players' leading id digits and
    its template's."""

    game: int
    template: int
    server: int
    players: str
    template_players: str


async def play_game(bench: Bench, n: int, *, windows: int, posts: int, ids: Snowflakes) -> None:
    """One game through the service: `windows` windows, the last left open (not locked)."""
    service = bench.service
    game_id = await create_game(service, GAME_BASE + n)
    rng = random.Random(f"restart-{n}")
    for window in range(windows):
        state = await service.state(game_id)
        if state.over or state.window is None:
            return
        at = to_ms(utcnow())
        if state.window.kind is PhaseKind.NIGHT:
            for command in night_commands(state, rng, at):
                await service.submit(game_id, command)  # refused powers change nothing
        else:
            for command in day_commands(state, rng, at, posts, 0):
                assert isinstance(command, PostVote)
                message_id = ids.next()
                post = dataclasses.replace(command, post_id=str(message_id))
                await service.submit(game_id, post, message_id=message_id)
        if window == windows - 1:
            return
        info = await service.info(game_id)
        state = await service.state(game_id)
        lock = service.lock_command(state, info, forced=True)
        outcome = await service.submit(game_id, lock)
        if outcome.error is not None:
            raise RuntimeError(f"game {game_id}: lock refused: {outcome.error.key}")
        await asyncio.sleep(0)


async def play_templates(
    bench: Bench, count: int, *, windows: int = 4, posts: int = 24
) -> list[int]:
    """`count` games played at once through the service (on `SERVER_ID`), each left in an open
    window with its commands submitted, as at a restart; the ids of those still active."""
    ids = Snowflakes()
    await asyncio.gather(
        *(play_game(bench, n, windows=windows, posts=posts, ids=ids) for n in range(count))
    )
    await bench.repo.flush()  # the last done marks and snapshots
    return await bench.repo.active_game_ids()


_plan = Table(
    "seed_plan",
    MetaData(),
    Column("game", BigInteger, primary_key=True),
    Column("template", BigInteger),
    Column("server", BigInteger),
    Column("channels", Json),
    Column("players", String(_PREFIX)),
    Column("template_players", String(_PREFIX)),
    Column("player_shift", BigInteger),
    prefixes=["TEMPORARY"],
)
"""One row per copy, in a temporary table the copying statements join (`p`)."""


async def copy_games(bench: Bench, plan: Sequence[tuple[int, int]]) -> list[Copy]:
    """A copy of each `(template, server)` of `plan`, in order, under new game ids (after the
    largest); servers not there yet are created. One transaction, one statement per table."""
    if not plan:
        return []
    async with bench.db.engine.begin() as conn:
        base = (await conn.execute(select(func.max(Game.id)))).scalar_one() or 0
        templates = {template for template, _ in plan}
        players = await _template_players(conn, templates)
        channels = await _template_channels(conn, templates)
        copies = [
            Copy(game, template, server, _copy_players(game), players[template])
            for game, (template, server) in enumerate(plan, start=base + 1)
        ]
        await _add_servers(conn, {c.server for c in copies})
        await conn.run_sync(_plan.create)
        await conn.execute(insert(_plan), [_planned(c, channels[c.template]) for c in copies])
        json_of = _players_replaced(conn.dialect.name)
        on_copy = {"id": "p.game", "server_id": "p.server", "channels": "p.channels"}
        await conn.execute(_copy(Game, on_copy, key="id"))
        await conn.execute(_copy(GameSecret, {}))
        await conn.execute(_copy(Seat, {"user_id": "r.user_id + p.player_shift"}))
        await conn.execute(_copy(Event, {"message_id": "NULL", "payload": json_of("payload")}))
        await conn.execute(_copy(Snapshot, {"state": json_of("state")}))
        await conn.run_sync(_plan.drop)
        if conn.dialect.name == "postgresql":  # SQLite's AUTOINCREMENT follows explicit ids
            await conn.execute(
                text(
                    "SELECT setval(pg_get_serial_sequence('games', 'id'), "
                    "(SELECT max(id) FROM games))"
                )
            )
    return copies


class Played:
    """The state each seeded game must be rebuilt into: a template's as the service that played
    it holds it; a copy's, its template's with the copy's players (the template's state through
    the codec, its players' leading id digits replaced, loaded back: once, then compared with
    `==` as the templates are)."""

    def __init__(self, service: GameService, copies: Sequence[Copy]) -> None:
        self.service = service
        self.copies = list(copies)
        self._expected: dict[int, GameState] | None = None

    def unlike(self, rebuilt: Mapping[int, GameState | None]) -> list[int]:
        """The games rebuilt into another state than played, and the copies not rebuilt."""
        expected = self._copies_expected()
        wrong = sorted(set(expected) - set(rebuilt))
        for game_id, state in rebuilt.items():
            want = expected.get(game_id) or self.service.cached_state(game_id)
            if state is None or want is None or state != want:
                wrong.append(game_id)
        return wrong

    def _copies_expected(self) -> dict[int, GameState]:
        if self._expected is None:
            dumped: dict[int, str] = {}
            for copy in self.copies:
                if copy.template not in dumped:
                    template = self.service.cached_state(copy.template)
                    if template is None:
                        raise ValueError(f"template {copy.template} not played by this service")
                    dumped[copy.template] = json.dumps(codec.dump(template))
            self._expected = {
                c.game: codec.load(
                    json.loads(dumped[c.template].replace(c.template_players, c.players))
                )
                for c in self.copies
            }
        return self._expected


def _copy_players(game: int) -> str:
    """The leading digits of a copy's players' ids."""
    return _prefix(player_specs(COPY_BASE + game)[0].user_id)


def _prefix(user_id: int | None) -> str:
    digits = str(user_id)
    if user_id is None or len(digits) != _PREFIX + 2:
        raise ValueError(f"player id {user_id}: not {_PREFIX + 2} digits (player_specs)")
    return digits[:_PREFIX]


async def _template_players(conn: AsyncConnection, templates: set[int]) -> dict[int, str]:
    """Each template's players' leading id digits (one per template: `player_specs`)."""
    rows = await conn.execute(select(Seat.game_id, Seat.user_id).where(Seat.game_id.in_(templates)))
    found: dict[int, set[str]] = {}
    for game_id, user_id in rows:
        found.setdefault(game_id, set()).add(_prefix(user_id))
    if set(found) != templates or any(len(prefixes) != 1 for prefixes in found.values()):
        raise ValueError(f"templates' players not as player_specs makes them: {found}")
    return {game_id: prefixes.pop() for game_id, prefixes in found.items()}


async def _template_channels(
    conn: AsyncConnection, templates: set[int]
) -> dict[int, dict[str, str]]:
    rows = await conn.execute(select(Game.id, Game.channels).where(Game.id.in_(templates)))
    return {game_id: channels for game_id, channels in rows}


def _own_channels(game: int) -> dict[str, str]:
    """A copy's game and vote channels (apart from the templates', `create_game`)."""
    return {"game": str(1_000_000_000 + game), "vote": str(2_000_000_000 + game)}


def _planned(copy: Copy, template_channels: dict[str, str]) -> dict[str, object]:
    shift = (int(copy.players) - int(copy.template_players)) * 100
    return {
        "game": copy.game,
        "template": copy.template,
        "server": copy.server,
        "channels": {**template_channels, **_own_channels(copy.game)},
        "players": copy.players,
        "template_players": copy.template_players,
        "player_shift": shift,
    }


async def _add_servers(conn: AsyncConnection, servers: set[int]) -> None:
    known = set((await conn.execute(select(Server.id))).scalars())
    now = utcnow()
    rows = [
        {"id": server, "settings": {}, "created_at": now, "updated_at": now}
        for server in sorted(servers - known)
    ]
    if rows:
        await conn.execute(insert(Server), rows)


def _copy(
    model: type[Game | GameSecret | Seat | Event | Snapshot],
    replaced: Mapping[str, str],
    *,
    key: str = "game_id",
) -> TextClause:
    """The statement copying a table's rows of each planned copy's template (`r`): its game id
    the copy's, `replaced` columns set from the plan (`p`), the rest as the template's."""
    table = model.__tablename__
    columns = [c.name for c in model.__table__.columns]
    replaced = {"game_id": "p.game", **replaced}
    chosen = ", ".join(replaced.get(name, f"r.{name}") for name in columns)
    return text(
        f"INSERT INTO {table} ({', '.join(columns)}) SELECT {chosen} "
        f"FROM {_plan.name} p JOIN {table} r ON r.{key} = p.template"
    )


def _players_replaced(dialect: str) -> Callable[[str], str]:
    """A JSON column's template value with the template's players' ids made the copy's."""

    def column(name: str) -> str:
        if dialect == "postgresql":  # json → text → json
            return f"CAST(REPLACE(CAST(r.{name} AS TEXT), p.template_players, p.players) AS JSON)"
        return f"REPLACE(r.{name}, p.template_players, p.players)"  # SQLite keeps JSON as text

    return column
