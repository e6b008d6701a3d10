"""What goes wrong when the bot meets Discord at start, said in one line to the operator.

The Discord-side half of `bot.operator_errors` (which knows nothing of discord.py): a rejected
token, privileged intents left off, Discord out of reach, and the gateway's other close codes
discord.py does not reconnect after (sharding required, a shard refused, a version or intents
this faguan's discord.py sends that Discord no longer takes); and the voice warnings discord.py
prints at start for a bot that has no voice.
"""

from __future__ import annotations

import asyncio

import aiohttp
import discord

from bot.config import NO_FILE, TOKEN_ENV, setting_in
from bot.operator_errors import PORTAL, Exit, OperatorError, describe

# Gateway close codes discord.py does not reconnect after (`DiscordWebSocket._can_handle_close`):
# it closes the client and raises `ConnectionClosed` (4014: `PrivilegedIntentsRequired`).
AUTHENTICATION_FAILED = 4004
INVALID_SHARD = 4010
SHARDING_REQUIRED = 4011
INVALID_API_VERSION = 4012
INVALID_INTENTS = 4013
DISALLOWED_INTENTS = 4014


def discord_error(exc: BaseException, source: str = NO_FILE) -> OperatorError | None:
    """The operator error `exc` (raised by discord.py while starting) is, if it is one;
    `source`: where the settings were read (`Settings.source`), where a setting is to be put."""
    code = exc.code if isinstance(exc, discord.ConnectionClosed) else None
    if isinstance(exc, discord.LoginFailure) or code == AUTHENTICATION_FAILED:
        return OperatorError(
            Exit.TOKEN_REJECTED,
            f"Discord rejected the bot token: get a new one at {PORTAL} -> Reset Token, and set "
            f"it in {TOKEN_ENV} (or discord.token in the config file).",
        )
    if isinstance(exc, discord.PrivilegedIntentsRequired) or code == DISALLOWED_INTENTS:
        return OperatorError(
            Exit.INTENTS_DISABLED,
            "Discord refused the privileged intents this bot needs: enable Server Members Intent "
            f"and Message Content Intent at {PORTAL} -> Privileged Gateway Intents, save, and "
            "run again.",
        )
    if code == SHARDING_REQUIRED:
        return OperatorError(
            Exit.SHARDS_REFUSED,
            "Discord requires more shards: a shard may hold at most 2,500 servers, and this "
            f"bot's shards hold more (close code 4011). Set shard_count under [discord] in "
            f"{setting_in(source)} to about its number of servers divided by 1,000, rounded "
            "up, so each shard has room to grow (one process runs them all; several processes "
            "need PostgreSQL: docs/deploy.md), and run again.",
        )
    if code == INVALID_SHARD:
        shard = getattr(exc, "shard_id", None)
        which = f"shard {shard}" if shard is not None else "a shard of this process"
        return OperatorError(
            Exit.SHARDS_REFUSED,
            f"Discord refused {which} as invalid (close code 4010): check shard_count and "
            f"shard_ids under [discord] in {setting_in(source)} — the same shard_count in "
            "every process, each id from 0 to shard_count - 1 (docs/deploy.md) — and run "
            "again.",
        )
    if code in (INVALID_API_VERSION, INVALID_INTENTS):
        what = "gateway API version" if code == INVALID_API_VERSION else "intents value"
        return OperatorError(
            Exit.OUTDATED,
            f"Discord refused the {what} this faguan sends (close code {code}): its discord.py "
            "speaks a gateway Discord no longer takes, and no setting changes that. Upgrade "
            "faguan (a newer version, installed with its constraints.txt, which pins discord.py) "
            "and run again.",
        )
    if isinstance(
        exc,
        (
            aiohttp.ClientConnectionError,
            asyncio.TimeoutError,
            discord.GatewayNotFound,
            discord.DiscordServerError,
        ),
    ):
        return OperatorError(
            Exit.DISCORD_UNREACHABLE,
            f"cannot reach Discord ({describe(exc)}): check this machine's network, DNS and "
            "proxy, then run again (once connected, faguan reconnects by itself).",
        )
    return None


def silence_voice_warnings() -> None:
    """discord.py warns at start that voice needs PyNaCl and davey; the bot has no voice."""
    discord.VoiceClient.warn_nacl = False
    discord.VoiceClient.warn_dave = False
