"""The tag a forum post of the judge's carries where the forum requires one.

A forum set to "Require people to select tags when posting" refuses a post without a tag from a
bot too (Discord: 40067, "A tag is required to create a forum post in this channel"): the
sign-up's main post, and every day's 投票帖, which would then be retried for good and hold the
game up. So where the forum requires one, each post carries one of its tags: one whose name says
the game (`GAME_WORDS`, as an admin would name a tag for it), else the forum's first. Where the
forum does not require one, none: how a server tags its posts is its own affair.
"""

from __future__ import annotations

import discord

GAME_WORDS = ("杀人", "狼人", "法官", "faguan", "mafia", "werewolf")
"""Words that name the game in a tag (case aside): such a tag is the one a post carries."""


def required_tags(forum: discord.ForumChannel) -> list[discord.ForumTag]:
    """The tags a post in `forum` must carry: none, or one of its own (see above)."""
    tags = list(forum.available_tags)
    if not forum.flags.require_tag or not tags:
        return []
    named = [t for t in tags if any(word in t.name.casefold() for word in GAME_WORDS)]
    return [(named or tags)[0]]
