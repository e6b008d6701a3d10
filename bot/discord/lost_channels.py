"""A game whose own channel is deleted: stopped, its moderators and players told; a forum
game's open 投票帖 deleted: replaced.

Discord cannot bring a deleted channel back, and with it go the game's public record of posts,
its 看表帖s and (in a text game) its team threads: the game cannot go on there. Left alone, the
judge would retry its next post there for good, "tell" the moderators in the channel that is gone,
and keep its timers running. So a game is stopped when Discord says one of its own channels is
gone — the game channel, or the vote channel (a forum game: its main post, or the forum) — found
in one of three ways, whichever comes first: the channel's deletion event, an effect Discord
refuses with Unknown Channel, or the start-up look at every game in play (deleted while the bot
was away). The stop is the runtime's (`Runtime.stop_game`): once, whoever asks. The notice names
no seat and no role: it is the same for every player, so it tells nothing hidden.

A 投票帖 deleted stops nothing: the one of the day being voted is replaced at once
(`vote_threads.replace_deleted`); a past day's is nothing to the game, and locking one that is
gone is skipped (`vote_threads.perform`).
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

import discord

from bot.discord import permissions
from bot.discord.moderator_notices import tell_moderators
from bot.discord.start_effects import seat_holders
from bot.discord.vote_threads import SendOnce, replace_deleted
from bot.records.i18n import render
from bot.runtime.hosting import is_forum
from bot.store import GameStatus

if TYPE_CHECKING:
    from bot.discord.judge import Judge

log = logging.getLogger(__name__)

UNKNOWN_CHANNEL = 10003
"""Discord's error code for a channel (or thread) that does not exist: deleted."""

OWN = ("game", "vote")
"""A game's own channels, by their keys in its row (a forum game's "vote" is its forum)."""

_stopping: set[asyncio.Task[None]] = set()
"""Stops begun from an effect that found its channel gone (kept until they end)."""


def own_channel(channels: dict[str, Any], channel_id: int) -> str | None:
    """Which of the game's own channels this is ("game" first: a text game's game and vote
    channel may be one), or None (a 投票帖, a team thread, another channel)."""
    for key in OWN:
        if key in channels and int(str(channels[key])) == channel_id:
            return key
    return None


def channel_word(channels: dict[str, Any], lost: str) -> str:
    """The catalog key (`lost_channel.…`) of what the notice calls the deleted channel."""
    if is_forum(channels):
        return "main_post" if lost == "game" else "forum"
    return lost


async def channel_deleted(judge: Judge, channel_id: int, send_once: SendOnce) -> None:
    """Discord deleted a channel or thread: if it is a game in play's own channel, the game
    stops; if it is the 投票帖 of a forum game's open vote, a new one takes its place, posted
    with `send_once` (anything else deleted is not this module's)."""
    game_id = judge.runtime.routes.game_of(channel_id)
    if game_id is None:
        return
    info = await judge.runtime.service.info(game_id)
    if info.status is not GameStatus.ACTIVE:
        return
    lost = own_channel(info.channels, channel_id)
    if lost is not None:
        await judge.runtime.stop_game(game_id, lost)
    elif judge.runtime.routes.open_vote_posts.get(game_id) == channel_id:
        await replace_deleted(judge, send_once, game_id, channel_id)


def refused_as_gone(
    judge: Judge, channel_id: int, exc: discord.NotFound, send_once: SendOnce
) -> None:
    """An effect found its game's channel `channel_id` gone (Unknown Channel): the game is
    stopped in the background (the effect holds the game's lock, which the stop waits for);
    the effect still fails, and a stopped game's effects are not retried."""
    if exc.code != UNKNOWN_CHANNEL:
        return
    task = asyncio.get_running_loop().create_task(channel_deleted(judge, channel_id, send_once))
    _stopping.add(task)
    task.add_done_callback(_stopping.discard)


async def stops_under_way() -> None:
    """Until the stops begun by effects (`refused_as_gone`) have ended."""
    while _stopping:
        await asyncio.gather(*_stopping, return_exceptions=True)


async def lost_channel(judge: Judge, game_id: int) -> str | None:
    """Which of the game's own channels Discord says is deleted, if one is: a channel in the
    cache is there; one missing from it (a thread may be: archived) is asked of Discord."""
    channels = (await judge.runtime.service.info(game_id)).channels
    for key in OWN:
        if key not in channels:
            continue
        channel_id = int(str(channels[key]))
        if judge.client.get_channel(channel_id) is not None:
            continue
        try:
            await judge.client.fetch_channel(channel_id)
        except discord.NotFound as exc:
            if exc.code == UNKNOWN_CHANNEL:
                return key
        except discord.Forbidden:  # there, and hidden from the bot: not deleted
            continue
    return None


async def tell_stopped(judge: Judge, game_id: int, lost: str) -> None:
    """The moderators (by DM, and in the override log if the server keeps one) and every
    player who holds a seat (by DM) are told the game stopped and why; the players' role goes
    (and a forum is opened to everyone again), as at a game's end. Each part is tried on its
    own: a closed DM or a lacking permission stops none of the others."""
    service = judge.runtime.service
    info = await service.info(game_id)
    locale = judge.runtime.contexts.locale_of(info)
    channel = render(locale, f"lost_channel.{channel_word(info.channels, lost)}", {})
    text = render(locale, "notice.stopped_channel_deleted", {"game": game_id, "channel": channel})
    await tell_moderators(judge, game_id, text)
    for user_id in sorted(await seat_holders(judge, game_id)):  # a 5.0 player's cards: once
        if not await judge.runtime.port.send_private(user_id, text):
            log.info("game %s: a player was not told it stopped (DM refused)", game_id)
    try:
        await permissions.release(judge, game_id, await service.state(game_id))
    except discord.HTTPException as exc:
        log.warning("game %s: its players' role not removed: %s", game_id, type(exc).__name__)
