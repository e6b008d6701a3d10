"""What the bot needs on a server, by discord.py's names and by the names Discord's screens show
(the invite, a role's or a channel's permissions): checked at start for each server, and for the
channels a game will use when a moderator opens its sign-up."""

from __future__ import annotations

from collections.abc import Iterable

import discord

from bot.records.i18n import render

REQUIRED_PERMISSIONS = {
    "manage_roles": "Manage Roles",
    "manage_channels": "Manage Channels",
    "manage_threads": "Manage Threads",
    "manage_messages": "Manage Messages",
    "create_private_threads": "Create Private Threads",
    "view_channel": "View Channels",
    "send_messages": "Send Messages",
    "send_messages_in_threads": "Send Messages in Threads",
    "read_message_history": "Read Message History",
    "add_reactions": "Add Reactions",
}
"""What the bot does on a server: players' roles and channel overwrites (Manage Roles, Manage
Channels), the teams' private threads, the lock posts and results, reading vote posts back, the
✅ on a counted vote; in a forum-hosted game, its posts (Send Messages there) and locking each
day's 投票帖 (Manage Threads); taking down what a player who may not speak (out of the game,
silenced) still posts, edits or reacts where Discord cannot stop them (Manage Messages: a forum's
main post under a silence, an edit of an earlier post, joining an existing reaction). The
README's invite list is checked against this (tests/discord/test_docs.py)."""


def lacking(permissions: discord.Permissions) -> list[str]:
    """The required permissions `permissions` does not grant, by discord.py's names."""
    return [name for name in REQUIRED_PERMISSIONS if not getattr(permissions, name)]


def lacking_in(
    channels: Iterable[discord.abc.GuildChannel | discord.Thread], me: discord.Member
) -> list[str]:
    """The required permissions the bot lacks in any of these channels (their overwrites
    counted), by discord.py's names, each once."""
    missing: dict[str, None] = {}
    for channel in channels:
        for name in lacking(channel.permissions_for(me)):
            missing.setdefault(name)
    return list(missing)


def permission_names(locale: str, names: Iterable[str]) -> str:
    """Permissions (by discord.py's names) as a moderator finds them on Discord's screens in
    `locale` (zh-CN: the Chinese name with the English one, for an admin whose client is in
    English), listed as the language lists things."""
    between = "、" if locale == "zh-CN" else ", "
    return between.join(render(locale, f"permission.{name}") for name in names)
