"""Sign-ups, role confirmations and channel bindings: row-level statements, never a read-modify-
write of a JSON value, so inputs arriving together are each recorded once.

Theory of operation:
- Every join, leave and start of a sign-up begins with a conditional UPDATE of its ``lobbies`` row
  (``WHERE status = 'open'``). On PostgreSQL that takes the row's lock until the commit, so the
  statements after it (each with a fresh READ COMMITTED snapshot) see every earlier join and
  leave; on SQLite the write transaction holds the database's write lock from BEGIN. So the seat
  and count a join reports are the real ones, the player limit is never exceeded, and exactly one
  start finds the sign-up open: the others are told which game it became.
- The start creates the game (events, outbox, seats) in the transaction that marks the sign-up
  started and moves its channel bindings to the game: a crash leaves either nothing or all of it.
- A channel has at most one holder (``channel_bindings`` primary key): a second sign-up or game
  naming it fails on the insert itself, whatever any pre-check saw. Bindings go when the sign-up
  is cancelled or its game finishes or is stopped (the status change deletes them; a stopped
  game put back in play takes them back, or is refused if another holds one now).
- A confirmation is one row per (game, seat, term), inserted only for the seat's present holder;
  a repeat is a no-op, and a substitute (a new term) has to confirm again.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from contextlib import AbstractAsyncContextManager
from datetime import datetime
from typing import Any, Protocol

from sqlalchemy import bindparam, delete, exists, func, insert, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.store import statements as sql
from bot.store.db import Clock, UTCDateTime
from bot.store.errors import ChannelHeld, LobbyRefused
from bot.store.models import ChannelBinding, Confirmation, Lobby, LobbyPlayer, LobbyStatus, Seat
from bot.store.values import GameDraft, Joined, LobbyEntry, LobbyInfo, RecordResult

Deal = Callable[[LobbyInfo], GameDraft]
"""The sign-up (with its players, in seat order) → the game to create; may raise to refuse."""


class _Writing(Protocol):
    def __call__(self) -> AbstractAsyncContextManager[AsyncSession]: ...


class _InsertGame(Protocol):
    async def __call__(
        self, s: AsyncSession, server_id: int, draft: GameDraft, now: datetime
    ) -> RecordResult: ...


class _EnsureServer(Protocol):
    async def __call__(self, s: AsyncSession, server_id: int, now: datetime) -> None: ...


def _info(row: Lobby, players: tuple[LobbyEntry, ...] = ()) -> LobbyInfo:
    return LobbyInfo(
        id=row.id,
        server_id=row.server_id,
        channel_id=row.channel_id,
        vote_channel_id=row.vote_channel_id,
        min_players=row.min_players,
        max_players=row.max_players,
        settings=dict(row.settings),
        status=LobbyStatus(row.status),
        game_id=row.game_id,
        players=players,
    )


_TAKE = (  # the sign-up's row lock, if it is still open
    update(Lobby)
    .where(Lobby.id == bindparam("lobby"), Lobby.status == LobbyStatus.OPEN.value)
    .values(updated_at=bindparam("at", type_=UTCDateTime()))
    .returning(Lobby.max_players)
)


class Lobbies:
    """The repository's sign-ups, confirmations and channel bindings (``Repository.lobbies``)."""

    def __init__(
        self,
        sessions: async_sessionmaker[AsyncSession],
        writing: _Writing,
        clock: Clock,
        ensure_server: _EnsureServer,
        insert_game: _InsertGame,
    ) -> None:
        self._sessions = sessions
        self._writing = writing
        self._clock = clock
        self._ensure_server = ensure_server
        self._insert_game = insert_game

    # --- sign-ups -----------------------------------------------------------------------------

    async def open(
        self,
        *,
        server_id: int,
        channel_id: int,
        vote_channel_id: int,
        min_players: int,
        max_players: int,
        settings: Mapping[str, Any],
    ) -> LobbyInfo:
        """Open a sign-up in ``channel_id`` (replacing one open there: its players, no longer
        signed up, are the new one's ``replaced``) holding both channels; raises
        ``ChannelHeld`` naming the game or sign-up that holds one of them."""
        try:
            async with self._writing() as s:
                now = self._clock()
                await self._ensure_server(s, server_id, now)
                replaced = await s.scalars(
                    update(Lobby)
                    .where(Lobby.channel_id == channel_id, Lobby.status == LobbyStatus.OPEN.value)
                    .values(status=LobbyStatus.CANCELLED.value, updated_at=now)
                    .returning(Lobby.id)
                )
                gone = list(replaced)
                dropped: tuple[LobbyEntry, ...] = ()
                if gone:
                    await s.execute(delete(ChannelBinding).where(ChannelBinding.lobby_id.in_(gone)))
                    for lobby_id in gone:  # one at most: a channel has one open sign-up
                        dropped += await self._players(s, lobby_id)
                row = Lobby(
                    server_id=server_id,
                    channel_id=channel_id,
                    vote_channel_id=vote_channel_id,
                    min_players=min_players,
                    max_players=max_players,
                    settings=dict(settings),
                    status=LobbyStatus.OPEN.value,
                    created_at=now,
                    updated_at=now,
                )
                s.add(row)
                await s.flush()
                # The refusal comes from the primary key, not from a look beforehand.
                await s.execute(
                    insert(ChannelBinding),
                    [
                        {"channel_id": cid, "server_id": server_id, "lobby_id": row.id,
                         "game_id": None, "created_at": now}
                        for cid in sorted({channel_id, vote_channel_id})
                    ],
                )  # fmt: skip
                return dataclasses.replace(_info(row), replaced=dropped)
        except IntegrityError:
            pass
        raise await self.held(channel_id, vote_channel_id)

    async def held(self, *channel_ids: int) -> ChannelHeld:
        """Who holds the first of these channels that is held (after a refused binding)."""
        async with self._sessions() as s:
            for cid in channel_ids:
                found = (
                    await s.execute(
                        select(ChannelBinding.game_id, Lobby.channel_id)
                        .outerjoin(Lobby, Lobby.id == ChannelBinding.lobby_id)
                        .where(ChannelBinding.channel_id == cid)
                    )
                ).one_or_none()
                if found is not None:
                    return ChannelHeld(cid, found[0], found[1])
        # Released between the refusal and this look: still refused (try again).
        return ChannelHeld(channel_ids[0], None, None)

    async def newest(self, channel_id: int) -> LobbyInfo | None:
        """The newest sign-up opened in this channel (open, started or cancelled), with its
        players in seat order."""
        async with self._sessions() as s:
            row = await s.scalar(
                select(Lobby).where(Lobby.channel_id == channel_id).order_by(Lobby.id.desc())
            )
            if row is None:
                return None
            return _info(row, await self._players(s, row.id))

    async def newest_game(self, channel_id: int) -> int | None:
        """The game of the newest sign-up started in this channel (in play or ended), if any:
        the game a command there is about when no game in play is routed to the channel."""
        async with self._sessions() as s:
            found = await s.scalar(
                select(Lobby.game_id)
                .where(Lobby.channel_id == channel_id, Lobby.game_id.is_not(None))
                .order_by(Lobby.id.desc())
                .limit(1)
            )
            return None if found is None else int(found)

    async def _players(self, s: AsyncSession, lobby_id: int) -> tuple[LobbyEntry, ...]:
        rows = await s.execute(
            select(LobbyPlayer.user_id, LobbyPlayer.name)
            .where(LobbyPlayer.lobby_id == lobby_id)
            .order_by(LobbyPlayer.position)
        )
        return tuple(LobbyEntry(user_id=u, name=n) for u, n in rows)

    async def _take(self, s: AsyncSession, lobby_id: int, now: datetime) -> int:
        """Lock the open sign-up's row; its player limit. Refused if it is not open."""
        limit = (await s.execute(_TAKE, {"lobby": lobby_id, "at": now})).scalar_one_or_none()
        if limit is None:
            row = await s.get(Lobby, lobby_id)
            status = row.status if row is not None else LobbyStatus.CANCELLED.value
            raise LobbyRefused(lobby_id, status, game_id=row.game_id if row else None)
        return int(limit)

    async def _count(self, s: AsyncSession, lobby_id: int) -> tuple[int, int]:
        """How many are signed up, and the last position given."""
        count, top = (
            await s.execute(
                select(func.count(), func.coalesce(func.max(LobbyPlayer.position), 0)).where(
                    LobbyPlayer.lobby_id == lobby_id
                )
            )
        ).one()
        return int(count), int(top)

    async def join(self, lobby_id: int, user_id: int, name: str) -> Joined:
        """Sign a player up; their seat and the count as of this join. Raises ``LobbyRefused``
        (``started``/``cancelled``, ``already_joined``, ``full``)."""
        async with self._writing() as s:
            now = self._clock()
            limit = await self._take(s, lobby_id, now)
            mine = LobbyPlayer.lobby_id == lobby_id, LobbyPlayer.user_id == user_id
            if await s.scalar(select(exists().where(*mine))):
                raise LobbyRefused(lobby_id, "already_joined")
            count, top = await self._count(s, lobby_id)
            if count >= limit:
                raise LobbyRefused(lobby_id, "full", count=count, limit=limit)
            await s.execute(
                insert(LobbyPlayer).values(
                    lobby_id=lobby_id,
                    user_id=user_id,
                    position=top + 1,
                    name=name[:100],
                    joined_at=now,
                )
            )
            return Joined(seat=count + 1, count=count + 1, max_players=limit)

    async def leave(self, lobby_id: int, user_id: int) -> Joined:
        """Take a player off the sign-up; the count left (``seat`` 0). Raises ``LobbyRefused``
        (``started``/``cancelled``, ``not_joined``)."""
        async with self._writing() as s:
            now = self._clock()
            limit = await self._take(s, lobby_id, now)
            gone = await s.execute(
                delete(LobbyPlayer)
                .where(LobbyPlayer.lobby_id == lobby_id, LobbyPlayer.user_id == user_id)
                .returning(LobbyPlayer.user_id)
            )
            if gone.scalar_one_or_none() is None:
                raise LobbyRefused(lobby_id, "not_joined")
            count, _ = await self._count(s, lobby_id)
            return Joined(seat=0, count=count, max_players=limit)

    async def start(self, lobby_id: int, deal: Deal) -> RecordResult:
        """Mark the sign-up started and create its game, in one transaction; the game's first
        outbox rows are returned to perform. Exactly one start of a sign-up succeeds; the others
        raise ``LobbyRefused("started", game_id=…)``; ``too_few`` if players left meanwhile.
        An exception from ``deal`` (the engine refusing the deal) rolls everything back."""
        async with self._writing() as s:
            now = self._clock()
            await self._take(s, lobby_id, now)
            row = await s.get(Lobby, lobby_id, populate_existing=True)
            assert row is not None
            players = await self._players(s, lobby_id)
            if len(players) < row.min_players:
                raise LobbyRefused(lobby_id, "too_few", count=len(players), limit=row.min_players)
            info = _info(row, players)
            draft = deal(info)
            result = await self._insert_game(s, row.server_id, draft, now)
            row.status = LobbyStatus.STARTED.value
            row.game_id = result.game_id
            await s.execute(
                update(ChannelBinding)
                .where(ChannelBinding.lobby_id == lobby_id)
                .values(game_id=result.game_id, lobby_id=None)
            )
            return result

    # --- channels -----------------------------------------------------------------------------

    async def held_channels(self) -> dict[int, int]:
        """Channel id → the game in play holding it (for routing posts and commands)."""
        async with self._sessions() as s:
            rows = await s.execute(
                select(ChannelBinding.channel_id, ChannelBinding.game_id).where(
                    ChannelBinding.game_id.is_not(None)
                )
            )
            return {int(c): int(g) for c, g in rows if g is not None}

    async def holder(self, channel_id: int) -> ChannelHeld | None:
        """Who holds this channel now, if anyone."""
        held = await self.held(channel_id)
        return held if held.game_id is not None or held.lobby_channel_id is not None else None

    # --- role confirmations -------------------------------------------------------------------

    async def confirm(self, game_id: int, seat: int, user_id: int) -> bool:
        """Record that the seat's present holder has seen their role (a repeat is a no-op);
        False, with nothing written, if ``user_id`` does not hold the seat now."""
        latest = (
            select(func.max(Seat.term))
            .where(Seat.game_id == game_id, Seat.seat == seat)
            .scalar_subquery()
        )
        holder = select(
            Seat.game_id,
            Seat.seat,
            Seat.term,
            Seat.user_id,
            bindparam("now", type_=UTCDateTime()),
        ).where(
            Seat.game_id == game_id,
            Seat.seat == seat,
            Seat.user_id == user_id,
            Seat.term == latest,
        )
        async with self._writing() as s:
            columns = ["game_id", "seat", "term", "user_id", "confirmed_at"]
            conn = await s.connection()  # Core: INSERT … SELECT … ON CONFLICT DO NOTHING
            stmt = (
                sql.dialect_insert(conn.dialect.name, Confirmation.__table__)
                .from_select(columns, holder)
                .on_conflict_do_nothing(index_elements=["game_id", "seat", "term"])
            )
            await conn.execute(stmt, {"now": self._clock()})
            return bool(
                await s.scalar(
                    select(
                        exists().where(
                            Confirmation.game_id == game_id,
                            Confirmation.seat == seat,
                            Confirmation.user_id == user_id,
                            Confirmation.term == latest,
                        )
                    )
                )
            )

    async def confirmed_seats(self, game_id: int) -> set[int]:
        """Seats whose present holder has confirmed their role."""
        latest = (
            select(func.max(Seat.term))
            .where(Seat.game_id == Confirmation.game_id, Seat.seat == Confirmation.seat)
            .correlate(Confirmation)
            .scalar_subquery()
        )
        async with self._sessions() as s:
            rows = await s.scalars(
                select(Confirmation.seat).where(
                    Confirmation.game_id == game_id, Confirmation.term == latest
                )
            )
            return {int(seat) for seat in rows}
