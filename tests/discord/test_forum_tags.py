"""A forum that requires a tag on every post ("Require people to select tags when posting"):
Discord refuses a bot's post there without one (40067). The sign-up's main post and every day's
投票帖 carry one of the forum's tags — the one that names the game, else its first — and a
forum that requires none gets none. Before, `/game new` there failed ("try again") and, with the
requirement turned on mid-game, the next day's 投票帖 was retried for good, holding the game up.

simcord does not model the requirement: `requiring` adds it as Discord documents it (the forum's
flag in its payloads, a post without a tag refused)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import simcord.backend.serializers as serializers
from gamebot import Driver, Table
from simcord.backend import Backend
from simcord.backend.errors import BackendError

pytestmark = pytest.mark.table(seed="tags-seed", hosting="forum")

REQUIRE_TAG = 1 << 4
"""Discord's channel flag: a post in this forum must carry a tag."""


@pytest.fixture
def requiring(table: Table, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[dict[str, Any]]]:
    """The table's forum has the tags 公告 and 杀人游戏 and requires one on every post."""
    assert table.forum is not None
    forum_id = table.forum.id
    backend = table.env.backend
    tags = [{"id": str(backend.snowflake()), "name": n, "moderated": False, "emoji_id": None,
             "emoji_name": None} for n in ("公告", "杀人游戏")]  # fmt: skip
    backend.edit_channel(forum_id, {"available_tags": tags})
    payload = serializers.channel_payload

    def flagged(backend: Any, channel: Any) -> Any:
        made = payload(backend, channel)
        return {**made, "flags": REQUIRE_TAG} if channel.id == forum_id else made

    monkeypatch.setattr(serializers, "channel_payload", flagged)
    create = Backend.create_forum_post

    def refusing(self: Backend, forum: int, *args: Any, **kwargs: Any) -> Any:
        if forum == forum_id and not list(kwargs.get("applied_tags") or ()):
            raise BackendError(
                400, 40067, "A tag is required to create a forum post in this channel"
            )
        return create(self, forum, *args, **kwargs)

    monkeypatch.setattr(Backend, "create_forum_post", refusing)
    backend.edit_channel(forum_id, {"topic": "杀人游戏"})  # the flag reaches the bot's cache
    yield tags


def posts(t: Table) -> list[Any]:
    assert t.forum is not None
    return list(t.forum.threads)


async def test_every_post_in_a_forum_that_requires_a_tag_carries_the_games_tag(
    table: Table, requiring: list[dict[str, Any]]
) -> None:
    t = table
    await t.env.settle()
    d = Driver(t, "basic")
    await d.start()
    await d.quiet_night()
    game_tag = int(requiring[1]["id"])
    made = posts(t)
    assert len(made) == 2  # the main post and day 1's 投票帖
    assert all(t.env.backend.channels[p.id].applied_tags == [game_tag] for p in made)
    assert not await t.bot.runtime.service.repo.undone_effects(d.game_id)


async def test_a_forum_that_requires_no_tag_gets_posts_without_one(table: Table) -> None:
    t = table
    d = Driver(t, "basic")
    await d.start()
    await d.quiet_night()
    assert all(t.env.backend.channels[p.id].applied_tags == [] for p in posts(t))
