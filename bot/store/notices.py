"""Wake-ups between shard processes on PostgreSQL (LISTEN/NOTIFY on ``faguan_game``).

Discord sends every DM to shard 0, so a process records inputs to games another process owns
(a click in a role DM); only the owner performs a game's effects, and this tells it to. A notice
is a hint, not a record: the effects are in the outbox, so a notice lost (this connection down,
the sender killed between its commit and its notify) only delays them until the owner looks
again (``on_connect`` after every reconnect; the runtime's sweep, ``bot.runtime.wakes``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any

from sqlalchemy import text
from sqlalchemy.engine import URL
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from bot.store.db import create_engine, resolve_url

log = logging.getLogger(__name__)

CHANNEL = "faguan_game"
"""The channel; a notice's payload is the game's id."""

PING_SECONDS = 10.0
"""How long a check of the listening connection waits for its answer."""


class GameNotices:
    """One process's notices: ``notify`` after recording an input to a game it does not own;
    ``on_game(game_id)`` for every notice heard, ``on_connect()`` after each (re)connect (the
    notices sent while it was away are lost: look at the outbox). Nothing here waits in the
    background: the owner calls ``check`` now and then (``bot.runtime.wakes``), which connects,
    or finds the connection dead and connects again (a dead TCP peer says nothing by itself)."""

    def __init__(
        self,
        url: str | URL,
        on_game: Callable[[int], None],
        on_connect: Callable[[], None],
        *,
        ping_seconds: float = PING_SECONDS,
    ) -> None:
        self._engine: AsyncEngine = create_engine(resolve_url(url), pool_size=1, max_overflow=1)
        self._on_game = on_game
        self._on_connect = on_connect
        self._ping_seconds = ping_seconds
        self._conn: AsyncConnection | None = None
        self.listening = asyncio.Event()
        """Set while the listening connection is up (tests wait for it)."""

    async def notify(self, game_id: int) -> None:
        """Tell the game's owner that an input to it was recorded (after the commit)."""
        async with self._engine.connect() as conn:
            await conn.execute(text("SELECT pg_notify(:c, :p)"), {"c": CHANNEL, "p": str(game_id)})
            await conn.commit()

    async def check(self) -> None:
        """Listen: the connection is checked (``SELECT 1``), and opened again if it is not up
        (then ``on_connect``). A failure is logged and left to the next check."""
        try:
            if self._conn is not None:
                raw = await self._raw(self._conn)
                if not raw.is_closed():
                    await asyncio.wait_for(raw.fetchval("SELECT 1"), self._ping_seconds)
                    return
            await self._close()
            await self._listen()
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the database away: notices are lost meanwhile
            log.warning("game notices: not listening (%s); again soon", type(exc).__name__)
            await self._close()

    async def aclose(self) -> None:
        """Stop listening and close the connections."""
        await self._close()
        await self._engine.dispose()

    async def _listen(self) -> None:
        conn = await self._engine.connect()
        try:
            raw = await self._raw(conn)
            await raw.add_listener(CHANNEL, self._heard)
        except BaseException:
            await conn.close()
            raise
        self._conn = conn
        self.listening.set()
        self._on_connect()

    async def _close(self) -> None:
        conn, self._conn = self._conn, None
        self.listening.clear()
        if conn is not None:
            with contextlib.suppress(Exception):
                await conn.invalidate()  # a connection listening goes back to no pool

    @staticmethod
    async def _raw(conn: AsyncConnection) -> Any:
        return (await conn.get_raw_connection()).driver_connection

    def _heard(self, _conn: Any, _pid: int, _channel: str, payload: str) -> None:
        try:
            game_id = int(payload)
        except ValueError:
            return
        self._on_game(game_id)
