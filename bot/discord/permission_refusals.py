"""Discord refused one of a game's permission edits (the bot lacks Manage Roles in its channels,
or a member's top role is above the bot's): the game goes on.

The permissions only mirror the game: who may vote, who is out, who is silenced is the engine's
to say, and it refuses what the rules refuse whatever the channels allow. So a refused edit is
not retried (it would hold every public effect behind it, the day's post and its deadline
included, until someone fixes the server). What the overwrite would have stopped is caught as
it happens instead: a post in the discussion by a player the game keeps from speaking there is
taken down and the author told privately (`bot.discord.cogs.play`; this needs Manage Messages;
in the vote channel, a post Discord would not take down is counted as the rules say).

Moderators are told once per game per process: a warning in the log and, if the server has
one, a line in its override log channel. Neither names a player: whose overwrite it was would
say nothing hidden (deaths and silences are announced), but the line need not.

A players' role an admin deleted mid-game (`tell_role_gone`) is told the same way, and to the
game's moderators by DM as well, once per game (the mark is kept with the game, claimed before
the notice goes out: of two callers at once, one tells).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from bot.runtime.hosting import is_forum

if TYPE_CHECKING:
    from bot.discord.judge import Judge

log = logging.getLogger(__name__)

ROLE_GONE = "players_role_gone"
"""Game-row key: the id of the players' role whose deletion the game's moderators were told of
(the windows after, and a restart's reconcile, tell nothing again)."""


async def tell_refused(judge: Judge, game_id: int) -> None:
    """Say, once per game, that its channels' permissions could not be set."""
    if game_id in judge.refused_permissions:
        return
    judge.refused_permissions.add(game_id)
    log.warning(
        "game %s: Discord refused a permission edit in the game's channels (the bot lacks "
        "Manage Roles there, or a player's top role is above the bot's); the game goes on, and "
        "posts the game does not allow are taken down instead",
        game_id,
    )
    from bot.discord.moderator_notices import to_override_log

    try:
        ctx = await judge.runtime.contexts.context(game_id)
    except Exception as exc:  # the database away: the log line stands
        log.warning("game %s: no override log line (%s)", game_id, type(exc).__name__)
        return
    await to_override_log(judge, game_id, ctx.t("log.permissions_refused", game=game_id))


async def tell_role_gone(judge: Judge, game_id: int) -> None:
    """Say, once per game, that its players' role was deleted while it is in play (an admin
    tidying the server's roles): in a forum game its players can no longer post in its posts (the
    forum denies everyone, the role let them in), and a text game's channels are never shut
    again. A warning in the log, a line in the override log channel if the server has one, and
    a DM to each moderator of the game (never one who plays in it): the log channel is optional,
    and a forum game no one can post in needs someone now. Nothing names a player; when it is
    noticed (a window's opening, a restart) depends on no role.

    The role is not made again: an admin took it away, and the bot does not undo what a server's
    admins do to it (made again, it could be deleted again, and the players' posting would come
    and go with it; made mid-game, it needs every player added again). The moderators choose:
    an admin can let the players post again, or the game can be ended (/mod end); the end opens
    the forum to everyone again all the same (`bot.discord.permissions.release`)."""
    info = await judge.runtime.service.info(game_id)
    role_id = str(info.channels.get("players_role"))
    if info.channels.get(ROLE_GONE) == role_id:  # told: no write
        return
    # claimed before anything is said: two at once (a window's opening beside a restart's
    # reconcile) would both have read no mark above; one claims it, the other says nothing.
    # A notice lost half-way (a crash) is not said again: the game goes on either way.
    if not await judge.runtime.service.claim_channel(game_id, ROLE_GONE, role_id):
        return
    log.warning(
        "game %s: the players' role was deleted from the server while the game is in play; "
        "the game's moderators are told",
        game_id,
    )
    from bot.discord.moderator_notices import tell_moderators

    ctx = await judge.runtime.contexts.context(game_id)
    key = "log.players_role_gone_forum" if is_forum(info.channels) else "log.players_role_gone"
    await tell_moderators(judge, game_id, ctx.t(key, game=game_id))
