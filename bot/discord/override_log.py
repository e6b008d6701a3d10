"""The override log: a server's channel where every moderator override is written down — who,
what, when — with the same public facts the game channel gets (never hidden information).

The channel is per server (`/mod log-channel`), kept in the server settings under `override_log`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import discord

from bot.records.render import Context, deadline_text
from engine.effects import OverrideLogged

if TYPE_CHECKING:
    from bot.discord.judge import Judge

LOG_CHANNEL = "override_log"
"""Server settings key: the override log channel's id."""


async def log_channel(judge: Judge, server_id: int) -> discord.abc.Messageable | None:
    """The server's override log channel, if one is set and still there."""
    settings = await judge.runtime.service.repo.get_settings(server_id)
    channel_id = settings.get(LOG_CHANNEL)
    if not channel_id:
        return None
    channel = judge.client.get_channel(int(channel_id))
    return channel if isinstance(channel, discord.abc.Messageable) else None


def _phase(ctx: Context, label: str | None) -> str:
    """The phase an override was given in, as the record names it ("warmup 0": the warm-up,
    游戏热身, before night 1); "—" for none (before the game's first window)."""
    kind, _, number = (label or "").partition(" ")
    if kind in ("night", "day") and number:
        return ctx.t(f"record.{kind}", number=number)
    if kind == "warmup":
        return ctx.t("record.warmup")
    return "—"


REASONED = frozenset({"replace", "modkill"})
"""Overrides whose optional reason is added to their line, as their announcement adds it (a
void's and a penalty's reason is in their own text)."""


def describe(ctx: Context, command: str, details: dict[str, str | int | bool | None]) -> str:
    """What the override did, in words."""
    seat = details.get("seat")
    team = details.get("team")
    power = details.get("power")
    deadline = details.get("deadline")
    reason = details.get("reason")
    left = str(details.get("left") or "")
    what = ctx.t(
        f"log.{command}",
        # a removal of a player holding several cards (5.0) names every card leaving
        seat=ctx.seats(left)
        if command == "modkill" and "," in left
        else (ctx.seat(str(seat)) if seat else ""),
        minutes=details.get("minutes", ""),
        deadline=deadline_text(ctx, int(str(deadline))) if deadline else "",
        reason=reason or "",
        post=details.get("post", ""),
        winner=ctx.t(f"camp.{details['winner']}") if details.get("winner") else "",
        team=ctx.t(f"team_name.{team}") if team else "",
        power=ctx.t(f"power.{power}") if power else ctx.t("log.any_power"),
        night=details.get("night", ""),
        left=ctx.seats(details.get("left")),
    )
    if reason and command in REASONED:
        what += ctx.t("log.reason", reason=reason)
    return what


def log_line(ctx: Context, game_id: int, effect: OverrideLogged) -> str:
    """One line of the log: game, phase, when, who, what."""
    details = dict(effect.params)
    by = str(details.get("by") or "")
    who = f"<@{by}>" if by.isdigit() else (by or "—")
    when = f"<t:{int(effect.at) // 1000}:F>" if effect.at is not None else "—"
    return ctx.t(
        "log.line",
        game=game_id,
        phase=_phase(ctx, effect.phase),
        when=when,
        who=who,
        what=describe(ctx, effect.command, details),
    )
