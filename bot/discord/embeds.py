"""Rich private messages: the role message as an embed (seat, role, powers now and later,
teammates)."""

from __future__ import annotations

import discord

from bot.records.render import Context, cards_text, known_seats, later_powers, role_text
from engine.effects import Whisper

CAMP_COLOURS = {"killer": 0xB33333, "secret_killer": 0xB33333}
DEFAULT_COLOUR = 0x335588


def role_content(ctx: Context, game_id: int, seat: int) -> str:
    """The text above the embed (unique per game and seat, so a resend can be recognised)."""
    return ctx.t("role_embed.content", game=game_id, seat=ctx.seat(seat))


def role_embed(ctx: Context, game_id: int, effect: Whisper) -> discord.Embed:
    """The role message (`role.dealt`) as an embed; the confirm button goes with it."""
    p = dict(effect.params)
    role = str(p["role"])
    powers = [ctx.t(f"power.{x}") for x in str(p.get("powers") or "").split(",") if x]
    later = later_powers(ctx, p.get("later"))  # later, or on leaving the game
    mates = known_seats(ctx, p.get("teammates"), p.get("known"), p.get("out"))
    embed = discord.Embed(
        title=ctx.t("role_embed.title", game=game_id),
        description=ctx.t("role_embed.description"),
        colour=CAMP_COLOURS.get(role, DEFAULT_COLOUR),
    )
    embed.add_field(name=ctx.t("role_embed.seat"), value=ctx.seat(int(str(p["seat"]))))
    embed.add_field(name=ctx.t("role_embed.role"), value=f"**{role_text(ctx, p)}**")
    none = "role_msg.no_powers_yet" if later else "role_msg.no_powers"
    sep = "、" if ctx.locale == "zh-CN" else ", "
    embed.add_field(
        name=ctx.t("role_embed.powers"),
        value=sep.join(powers) if powers else ctx.t(none).strip(),
        inline=False,
    )
    if later:
        embed.add_field(name=ctx.t("role_embed.later"), value="\n".join(later), inline=False)
    embed.add_field(
        name=ctx.t("role_embed.teammates"),
        value=mates or ctx.t("role_embed.no_teammates"),
        inline=False,
    )
    if p.get("cards"):  # 5.0 双身份: the player's two cards, each its own seat
        embed.add_field(
            name=ctx.t("role_embed.cards"), value=cards_text(ctx, p["cards"]), inline=False
        )
    return embed
