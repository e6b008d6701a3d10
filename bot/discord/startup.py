"""What goes wrong when the bot meets Discord at start, said in one line to the operator.

The Discord-side half of `bot.operator_errors` (which knows nothing of discord.py): a rejected
token, privileged intents left off, Discord out of reach; and the voice warnings discord.py prints
at start for a bot that has no voice.
"""

from __future__ import annotations

import asyncio

import aiohttp
import discord

from bot.config import TOKEN_ENV
from bot.operator_errors import PORTAL, Exit, OperatorError, describe


def discord_error(exc: BaseException) -> OperatorError | None:
    """The operator error `exc` (raised by discord.py while starting) is, if it is one."""
    if isinstance(exc, discord.LoginFailure):
        return OperatorError(
            Exit.TOKEN_REJECTED,
            f"Discord rejected the bot token: get a new one at {PORTAL} -> Reset Token, and set "
            f"it in {TOKEN_ENV} (or discord.token in the config file).",
        )
    if isinstance(exc, discord.PrivilegedIntentsRequired):
        return OperatorError(
            Exit.INTENTS_DISABLED,
            "Discord refused the privileged intents this bot needs: enable Server Members Intent "
            f"and Message Content Intent at {PORTAL} -> Privileged Gateway Intents, save, and "
            "run again.",
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
