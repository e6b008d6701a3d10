"""A chat port that does nothing: the runtime without a platform (the bench; the load test)."""

from __future__ import annotations

from collections.abc import AsyncIterator

from bot.runtime.port import ChannelPost


class NoopPort:
    """`ChatPort` on every server, with empty channels: what the runtime's own work costs."""

    def serves(self, server_id: int) -> bool:
        return True

    def member_name(self, server_id: int, user_id: int) -> str | None:
        return None

    async def posts_after(self, channel_id: int, after_id: int) -> AsyncIterator[ChannelPost]:
        nothing: tuple[ChannelPost, ...] = ()
        for post in nothing:
            yield post

    async def send_private(self, user_id: int, text: str) -> bool:
        return True

    async def tell_stuck(self, game_id: int, attempts: int, *, privately: bool = False) -> None:
        return None

    async def lost_channel(self, game_id: int) -> str | None:
        return None

    async def tell_stopped(self, game_id: int, lost: str) -> None:
        return None

    async def reconcile_permissions(self, game_id: int) -> None:
        return None

    def recovering(self, on: bool) -> None:
        return None
