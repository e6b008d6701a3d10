"""What `/mod pending` tells a moderator, privately: who has not confirmed their role, not used
a power, not voted or not picked — never what anyone submitted."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from bot.records.render import deadline_text
from engine.pending import pending

if TYPE_CHECKING:
    from bot.discord.judge import Judge


async def pending_text(judge: Judge, game_id: int, locale: str) -> str:
    """The pending report for one game, in `locale`."""
    state = await judge.runtime.service.state(game_id)
    ctx = await judge.runtime.contexts.context(game_id, state, locale=locale)
    confirmed = await judge.runtime.service.repo.lobbies.confirmed_seats(
        game_id
    )  # by seat and term
    unconfirmed = [s for s in state.alive() if int(s) not in confirmed]
    todo = pending(state)
    window = state.window
    phase = (
        ctx.t(f"record.{window.kind.value}", number=window.number)
        if window
        else ctx.t("notice.phase_over")
    )
    lines = [ctx.t("pending.title", game=game_id, phase=phase)]
    if window is not None:
        lines.append(ctx.t("pending.deadline", deadline=deadline_text(ctx, state.deadline)))

    def seats(items: Iterable[int]) -> str:
        text = ctx.seats(",".join(str(s) for s in items))
        return text or ctx.t("pending.nobody")

    lines.append(ctx.t("pending.unconfirmed", seats=seats(unconfirmed)))
    if window is not None and window.kind.value == "night":
        lines.append(ctx.t("pending.powers", seats=seats(todo.powers)))
    elif window is not None and window.chooser is not None:
        lines.append(ctx.t("pending.choice", seats=seats([todo.choice] if todo.choice else [])))
    elif window is not None:
        lines.append(ctx.t("pending.votes", seats=seats(todo.votes)))
    return "\n".join(lines)
