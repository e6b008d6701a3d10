"""What `/mod pending` tells a moderator, privately: who has not confirmed their role, not used
a power, not voted or not picked — never what anyone submitted."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from bot.records.render import deadline_text
from engine.model import Seat
from engine.pending import Pending, pending

if TYPE_CHECKING:
    from bot.discord.judge import Judge


async def pending_text(judge: Judge, game_id: int, locale: str) -> str:
    """The pending report for one game, in `locale`."""
    state = await judge.runtime.service.state(game_id)
    ctx = await judge.runtime.contexts.context(game_id, state, locale=locale)
    if state.over:  # nothing is left to do (not even a role to confirm)
        return ctx.t("phase.game_over")
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
    if state.paused_remaining is not None:  # no deadline while paused: the time it keeps
        left = ctx.t("pending.paused_left", minutes=-(-state.paused_remaining // 60_000))
        sep = "" if ctx.locale == "zh-CN" else " "
        lines.append(ctx.t("pending.deadline", deadline=ctx.t("notice.paused") + sep + left))
    elif window is not None:
        lines.append(ctx.t("pending.deadline", deadline=deadline_text(ctx, state.deadline)))

    def seats(items: Iterable[int]) -> str:
        text = ctx.seats(",".join(str(s) for s in items))
        return text or ctx.t("pending.nobody")

    lines.append(ctx.t("pending.unconfirmed", seats=seats(unconfirmed)))
    line = owed(todo)
    if line is not None:
        lines.append(ctx.t(line[0], seats=seats(line[1])))
    return "\n".join(lines)


def owed(todo: Pending) -> tuple[str, tuple[Seat, ...]] | None:
    """The report's line of what the open window waits for (`Pending.waits_for`): its text key
    and the seats owing it; None where nothing is owed."""
    if todo.waits_for is None:
        return None
    seats = {
        "powers": todo.powers,
        "votes": todo.votes,
        "choice": (todo.choice,) if todo.choice is not None else (),
    }[todo.waits_for]
    return f"pending.{todo.waits_for}", seats
