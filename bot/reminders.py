"""Reminders: a private message a while before each deadline to every player who still has
something to do (a power, a vote, a pick), sent once per window even across restarts.

Theory of operation. The lead time is `settings.game.reminder` (None: no reminders). Whenever the
bot schedules a game's deadline it also schedules `fire_reminder` at `deadline - lead` (or now, if
that moment has passed) under the stable job id `game:{id}:remind:{window}`. When it fires, the
window must still be the open one and the clock running. Each seat reminded is written to the
game's channels JSON (`reminded: {window: [seats]}`) right after its message is sent, so a restart
reschedules the job but never reminds a seat twice; the send itself first looks for the same text
in the DM (a crash between the send and the mark). Players turn theirs off with `/remind off`
(server settings, `remind_off`: user ids).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import discord

from bot.render import deadline_text
from bot.schedule import from_ms
from engine.pending import Pending, pending, window_key

if TYPE_CHECKING:
    from bot.app import FaguanBot

log = logging.getLogger(__name__)

REMIND_OFF = "remind_off"
"""Server settings key: user ids who turned their reminders off."""


def reminder_job_id(game_id: int, window: str) -> str:
    """The stable job id of a window's reminder."""
    return f"game:{game_id}:remind:{window}"


async def fire_reminder(bot_key: int, game_id: int, window: str) -> None:
    """The reminder job (module-level, as APScheduler wants)."""
    from bot.app import _APPS

    bot = _APPS.get(bot_key)
    if bot is not None:
        await bot.reminders.send(game_id, window)


def _what(p: Pending, seat: int) -> str:
    if seat in p.powers:
        return "remind.powers"
    if p.choice == seat:
        return "remind.choice"
    return "remind.vote"


class Reminders:
    """Schedules and sends one game's reminders."""

    def __init__(self, bot: FaguanBot) -> None:
        self.bot = bot
        self._jobs: dict[int, str] = {}

    def schedule(self, game_id: int, deadline: int | None) -> None:
        """Wake before `deadline` to remind (None: the clock stopped; no reminder)."""
        old = self._jobs.pop(game_id, None)
        if old is not None:
            self.bot.scheduler.cancel(old)
        lead = self.bot.settings.game.reminder
        state = self.bot.service.cached_state(game_id)
        if lead is None or deadline is None or state is None or state.paused:
            return
        window = window_key(state)
        if window is None:
            return
        when = max(from_ms(deadline) - lead, self.bot.clock.now())
        job = reminder_job_id(game_id, window)
        self.bot.scheduler.schedule(job, when, fire_reminder, id(self.bot), game_id, window)
        self._jobs[game_id] = job

    async def send(self, game_id: int, window: str) -> list[int]:
        """Remind every pending seat of `window` not reminded yet; returns the seats reminded."""
        service = self.bot.service
        if not await service.is_active(game_id):
            return []
        state = await service.state(game_id)
        if window_key(state) != window or state.paused or state.deadline is None:
            return []
        info = await service.info(game_id, refresh=True)
        reminded: dict[str, list[int]] = dict(info.channels.get("reminded", {}))
        done = set(reminded.get(window, []))
        settings = await service.repo.get_settings(info.server_id)
        off = {int(u) for u in settings.get(REMIND_OFF, [])}
        todo = pending(state)
        ctx = await self.bot.context(game_id, state)
        sent: list[int] = []
        for seat in todo.seats():
            player = state.seat(seat).player
            if int(seat) in done or not player.isdigit() or int(player) in off:
                continue
            text = ctx.t(
                _what(todo, seat),
                game=game_id,
                phase=_phase(ctx, state),
                deadline=deadline_text(ctx, state.deadline),
            )
            try:
                user = self.bot.get_user(int(player)) or await self.bot.fetch_user(int(player))
                dm = user.dm_channel or await user.create_dm()
                await self.bot.effects.send_once(dm, text)
            except discord.Forbidden:
                # which seats are reminded depends on their powers: the seat only at DEBUG
                log.debug("game %s: seat %s takes no DMs; no reminder", game_id, seat)
            done.add(int(seat))
            sent.append(int(seat))
            reminded[window] = sorted(done)
            await service.set_channels(game_id, {"reminded": reminded})
        return sent


def _phase(ctx: Any, state: Any) -> str:
    window = state.window
    return ctx.t(f"record.{window.kind.value}", number=window.number) if window else ""
