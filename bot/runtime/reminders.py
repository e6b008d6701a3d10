"""Reminders: a private message a while before each deadline to every player who still has
something to do (a power, a vote, a pick), sent once per window even across restarts.

Theory of operation. The lead time is `settings.game.reminder` (None: no reminders). Whenever the
bot schedules a game's deadline it also schedules `fire_reminder` at `deadline - lead` (or now, if
that moment has passed) under the stable job id `game:{id}:remind:{window}`. When it fires, the
window must still be the open one and the clock running. Each seat reminded is marked in the
game's channels JSON under a key of its own (`reminded:{window}:{seat}`: a mark never rewrites
another) right after its message is sent, so a restart reschedules the job but never reminds a
seat twice; the send itself (through the port) first
looks for the same text in the DM (a crash between the send and the mark). Players turn theirs
off with `/remind off` (server settings, `remind_off`: user ids).

5.0 双身份 (several cards a player): a player whose cards owe powers gets one message naming
each card still owing and its powers (「牌位 7号：验人；牌位 8号：医治」), their own cards
only; each of those cards is then marked. A one-card game's reminder names no card.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
from collections import defaultdict
from collections.abc import Mapping
from typing import Any

from bot.records.render import deadline_text
from bot.runtime.contexts import Contexts
from bot.runtime.port import ChatPort
from bot.runtime.schedule import from_ms
from bot.runtime.service import GameService
from bot.runtime.timing import Clock, DeadlineScheduler
from engine.model import Power, Seat
from engine.pending import Pending, pending, powers_owed, window_key
from engine.rulesets import rules_for

log = logging.getLogger(__name__)

REMIND_OFF = "remind_off"
"""Server settings key: user ids who turned their reminders off."""

_REMINDERS: dict[int, Reminders] = {}
"""Running reminders by key, so the module-level job finds its own."""


def reminder_job_id(game_id: int, window: str) -> str:
    """The stable job id of a window's reminder."""
    return f"game:{game_id}:remind:{window}"


async def fire_reminder(reminders_key: int, game_id: int, window: str) -> None:
    """The reminder job (module-level, as APScheduler wants)."""
    reminders = _REMINDERS.get(reminders_key)
    if reminders is not None:
        await reminders.send(game_id, window)


def _what(p: Pending, seat: int) -> str:
    if seat in p.powers:
        return "remind.powers"
    if p.choice == seat:
        return "remind.choice"
    return "remind.vote"


def _by_player(state: Any, seats: tuple[Seat, ...]) -> list[list[Seat]]:
    """The pending seats grouped by the player holding them (one group a seat where a player
    holds one card), in the order of each player's first pending seat."""
    groups: dict[str, list[Seat]] = {}
    for seat in seats:
        groups.setdefault(state.seat(seat).player, []).append(seat)
    return list(groups.values())


def _numbers(seats: list[Seat]) -> str:
    return ",".join(str(int(s)) for s in seats)


def _cards(ctx: Any, cards: Mapping[Seat, tuple[Power, ...]]) -> str:
    """「牌位 7号：验人；牌位 8号：医治」: each of a player's own cards still owing, and what."""
    sep = "；" if ctx.locale == "zh-CN" else "; "
    between = "、" if ctx.locale == "zh-CN" else ", "
    return sep.join(
        ctx.t(
            "remind.card_owes",
            card=int(seat),
            powers=between.join(ctx.t(f"power.{p.value}") for p in powers),
        )
        for seat, powers in cards.items()
    )


class Reminders:
    """Schedules and sends the games' reminders (the private message goes through the port)."""

    def __init__(
        self,
        service: GameService,
        *,
        scheduler: DeadlineScheduler,
        clock: Clock,
        contexts: Contexts,
        port: ChatPort,
        lead: dt.timedelta | None,
    ) -> None:
        self.service = service
        self.scheduler = scheduler
        self.clock = clock
        self.contexts = contexts
        self.port = port
        self.lead = lead
        """How long before a deadline to remind (None: no reminders)."""
        self._jobs: dict[int, str] = {}
        self._sending: defaultdict[int, asyncio.Lock] = defaultdict(asyncio.Lock)
        """Per game: one `send` at a time, so a second reads the first's marks."""
        self.key = id(self)
        _REMINDERS[self.key] = self

    def close(self) -> None:
        """Jobs still scheduled for these reminders find nothing to do."""
        _REMINDERS.pop(self.key, None)

    def schedule(self, game_id: int, deadline: int | None) -> None:
        """Wake before `deadline` to remind (None: the clock stopped; no reminder)."""
        old = self._jobs.pop(game_id, None)
        if old is not None:
            self.scheduler.cancel(old)
        lead = self.lead
        state = self.service.cached_state(game_id)
        if lead is None or deadline is None or state is None or state.paused:
            return
        window = window_key(state)
        if window is None:
            return
        when = max(from_ms(deadline) - lead, self.clock.now())
        job = reminder_job_id(game_id, window)
        self.scheduler.schedule(job, when, fire_reminder, self.key, game_id, window)
        self._jobs[game_id] = job

    async def send(self, game_id: int, window: str) -> list[int]:
        """Remind every pending seat of `window` not reminded yet; returns the seats reminded.
        One send of a game at a time (two jobs at once, a restart's and the old one's, each
        read no marks before the other wrote them, and reminded every seat twice)."""
        async with self._sending[game_id]:
            return await self._send(game_id, window)

    async def _send(self, game_id: int, window: str) -> list[int]:
        service = self.service
        if not await service.is_active(game_id):
            return []
        state = await service.state(game_id)
        if window_key(state) != window or state.paused or state.deadline is None:
            return []
        info = await service.info(game_id, refresh=True)
        done = reminded_seats(info.channels, window)
        settings = await service.repo.get_settings(info.server_id)
        off = {int(u) for u in settings.get(REMIND_OFF, [])}
        todo = pending(state)
        several = rules_for(state).cards_per_player > 1
        owed = powers_owed(state) if several else {}
        ctx = await self.contexts.context(game_id, state)
        sent: list[int] = []
        for seats in _by_player(state, todo.seats()):
            now = service.cached_state(game_id)
            if now is not None and (
                now.deadline != state.deadline or now.paused or window_key(now) != window
            ):
                break  # moved (/mod extend) or closed meanwhile: a new deadline's job reminds
            player = state.seat(seats[0]).player
            seats = [s for s in seats if int(s) not in done]
            if not seats or not player.isdigit() or int(player) in off:
                continue
            params = {
                "game": game_id,
                "phase": _phase(ctx, state),
                "deadline": deadline_text(ctx, state.deadline),
                "vote": ctx.vote_place(),  # a forum game's votes go to the day's 投票帖
            }
            cards = {s: owed[s] for s in seats if s in owed}
            if cards:  # several cards a player: which of theirs owes what
                text = ctx.t("remind.powers_cards", cards=_cards(ctx, cards), **params)
            else:
                text = ctx.t(_what(todo, seats[0]), **params)
            if not await self.port.send_private(int(player), text):
                # which seats are reminded depends on their powers: the seat only at DEBUG
                log.debug("game %s: seat %s takes no DMs; no reminder", game_id, _numbers(seats))
            sent += [int(s) for s in seats]
            await service.set_channels(
                game_id, {f"{REMINDED}{window}:{int(s)}": True for s in seats}
            )
        return sent


REMINDED = "reminded:"
"""Game-row key prefix: `reminded:{window}:{seat}` marks a seat reminded in that window."""


def reminded_seats(channels: Mapping[str, Any], window: str) -> set[int]:
    """The seats already reminded in `window` (and those of the one-value marks older games
    kept under `reminded`)."""
    prefix = f"{REMINDED}{window}:"
    marked = {int(key[len(prefix) :]) for key in channels if key.startswith(prefix)}
    legacy = channels.get("reminded")
    if isinstance(legacy, dict):
        marked |= {int(seat) for seat in legacy.get(window, [])}
    return marked


def _phase(ctx: Any, state: Any) -> str:
    window = state.window
    return ctx.t(f"record.{window.kind.value}", number=window.number) if window else ""
