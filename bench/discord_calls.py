"""Discord calls per phase change, counted on simcord for a 16-player game.

The real bot (`bot.app.create_bot`, a SQLite file, the deadline scheduler in manual mode on
simcord's clock) plays a v2 game with 16 players through Discord only: `/game new`, `/game join`,
`/game start`, night powers by `/act`, vote posts in the channel. At each deadline the clock is
moved to it and the scheduler fires it; every REST call the bot makes from then until it is idle
(`env.http_requests`) is counted by kind: public posts (messages in the game or vote channel),
DMs (messages to a DM channel, and opening one), team threads, permission edits, reactions, and
anything else. (The helpers are a copy of the few the bot tests use: bench does not import tests.)
"""

from __future__ import annotations

import re
import shutil
import tempfile
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import discord
from simcord import Env

from bench.report import Row
from bot.config import load
from bot.discord.client import FaguanBot, create_bot
from bot.runtime.timing import DeadlineScheduler

GUILD_ID = 1_300_000_000_000_000_777
PLAYERS = 16


class EnvClock:
    """A `bot.timing.Clock` that reads simcord's virtual clock."""

    def __init__(self) -> None:
        self.env: Env | None = None

    def now(self) -> datetime:
        """simcord's current instant."""
        assert self.env is not None
        return self.env.now()


@dataclass
class PhaseCalls:
    """The REST calls of one phase change, by kind."""

    change: str
    kinds: Counter[str] = field(default_factory=Counter)
    other: Counter[str] = field(default_factory=Counter)


_MESSAGES = re.compile(r"^/channels/(\d+)/messages$")
_PERMISSIONS = re.compile(r"^/channels/\d+/permissions/\d+$")
_REACTIONS = re.compile(r"^/channels/\d+/messages/\d+/reactions/")


def classify(bot: FaguanBot, public: set[int], method: str, path: str) -> str:
    """The kind of one REST call."""
    if method == "POST" and (m := _MESSAGES.match(path)):
        channel_id = int(m.group(1))
        if channel_id in public:
            return "public posts"
        channel = bot.get_channel(channel_id)
        if isinstance(channel, discord.Thread):
            return "team thread posts"
        return "DMs"
    if method == "POST" and path == "/users/@me/channels":
        return "DM channels opened"
    if method in ("PUT", "DELETE") and _PERMISSIONS.match(path):
        return "permission edits"
    if _REACTIONS.match(path):
        return "reactions"
    return "other"


def _shape(path: str) -> str:
    return re.sub(r"\d{5,}", "{id}", path)


async def _calls_during(
    env: Env, bot: FaguanBot, public: set[int], change: str, action: Any
) -> PhaseCalls:
    before = len(env.http_requests)
    await action()
    await env.settle()
    calls = PhaseCalls(change=change)
    for entry in env.http_requests[before:]:
        kind = classify(bot, public, entry.method, entry.path)
        calls.kinds[kind] += 1
        if kind == "other":
            calls.other[f"{entry.method} {_shape(entry.path)}"] += 1
    return calls


async def count_calls(*, nights: int = 2) -> tuple[list[PhaseCalls], dict[str, Any]]:
    """Play a 16-player v2 game on simcord and count the calls of each phase change."""
    workdir = Path(tempfile.mkdtemp(prefix="faguan-bench-sim-"))
    clock = EnvClock()
    settings = load(
        {
            "discord": {"token": "bench-token", "moderator_role": "主持人"},
            "database": {"url": f"sqlite+aiosqlite:///{workdir / 'sim.db'}"},
            "game": {"schedule": {"power": "1h", "vote": "1h"}, "reminder": "off"},
        },
        env={},
    )
    bot = create_bot(
        settings, clock=clock, scheduler=DeadlineScheduler(clock), seed_source=lambda: "bench"
    )
    env = Env(bot)
    clock.env = env
    guild = env.create_guild("杀人游戏", id=GUILD_ID)
    mod_role = guild.create_role("主持人")
    channel = guild.create_text_channel("game")
    moderator = guild.add_member(env.create_user("mod"), roles=[mod_role])
    players = [guild.add_member(env.create_user(f"玩家{i}")) for i in range(1, PLAYERS + 1)]
    phases: list[PhaseCalls] = []
    info: dict[str, Any] = {}
    await env.start()
    try:
        await moderator.slash(channel, "game new", ruleset="v2")
        for member in players:
            await member.slash(channel, "game join")
        start_before = len(env.http_requests)
        await moderator.slash(channel, "game start")
        await env.settle()
        info["start_calls"] = len(env.http_requests) - start_before
        game_id = bot.runtime.routes.channel_games[channel.id]
        public = {int(channel.id)}
        game_info = await bot.runtime.service.info(game_id)
        public |= {int(game_info.channels["vote"]), int(game_info.channels["game"])}
        for night in range(1, nights + 1):
            state = await bot.runtime.service.state(game_id)
            if state.over:
                break
            await _night_powers(bot, game_id, players, channel)
            phases.append(await _calls_during(env, bot, public, f"night {night} → day {night}",
                                              lambda: _deadline(env, bot)))  # fmt: skip
            state = await bot.runtime.service.state(game_id)
            if state.over:
                break
            await _votes(bot, game_id, players, channel, env)
            phases.append(await _calls_during(env, bot, public, f"day {night} → night {night + 1}",
                                              lambda: _deadline(env, bot)))  # fmt: skip
        errors = list(env.errors)
        info["bot_errors"] = [type(e).__name__ for e in errors]
    finally:
        await _stopped(bot, env)
        shutil.rmtree(workdir, ignore_errors=True)
    return phases, info


async def _stopped(bot: FaguanBot, env: Env) -> None:
    """The bot closed, then simcord's world shut down. simcord's shutdown detaches the bot
    without closing it: its database connections (aiosqlite's threads), SQLite commit thread and
    writer process ran on past the run, on a database whose folder is then removed."""
    try:
        await bot.close()
    finally:
        await env.shutdown()


async def _deadline(env: Env, bot: FaguanBot) -> None:
    jobs = bot.runtime.scheduler.jobs()
    if not jobs:
        raise RuntimeError("no deadline scheduled")
    when = min(job.when for job in jobs)
    if when > env.now():
        await env.advance_time((when - env.now()).total_seconds())
    await bot.runtime.scheduler.run_due()


async def _night_powers(bot: FaguanBot, game_id: int, players: Sequence[Any], channel: Any) -> None:
    state = await bot.runtime.service.state(game_id)
    alive = [s for s in state.seats if s.alive]
    killers = [s for s in alive if s.role.value == "killer"]
    others = [s for s in alive if s.role.value not in ("killer",)]
    for seat in alive:
        member = players[int(seat.seat) - 1]
        if seat.role.value == "killer" and others:
            await member.slash(channel, "act", power="kill", target=int(others[-1].seat))
        elif seat.role.value == "police" and killers:
            await member.slash(channel, "act", power="check", target=int(killers[0].seat))


async def _votes(
    bot: FaguanBot, game_id: int, players: Sequence[Any], channel: Any, env: Env
) -> None:
    state = await bot.runtime.service.state(game_id)
    alive = [s for s in state.seats if s.alive]
    target = next((s for s in alive if s.role.value == "civilian"), alive[0])
    for seat in alive:
        await players[int(seat.seat) - 1].send(channel, f"投{int(target.seat)}号")
    await env.settle()


KINDS = ("public posts", "DMs", "DM channels opened", "permission edits", "team thread posts",
         "reactions", "other")  # fmt: skip


PUBLIC_POSTS = 3
"""Public posts a phase change may take: the 看表帖 as its own post, the results under the mute,
the next window's opening that reopens discussion (the forum's rhythm, docs/rulings.md; issue
#7's bar of 2 predates the 看表帖 becoming a post of its own in #15)."""


async def measure() -> list[Row]:
    """The Discord-calls rows."""
    phases, info = await count_calls()
    rows = []
    for phase in phases:
        public = phase.kinds["public posts"]
        counts = ", ".join(f"{phase.kinds[k]} {k}" for k in KINDS if phase.kinds[k])
        note = counts
        if phase.other:
            note += "; other: " + ", ".join(f"{n}× {what}" for what, n in phase.other.items())
        rows.append(
            Row(
                section="discord",
                what=f"16 players, {phase.change}",
                figure=f"{public} public posts",
                baseline=f"{phase.kinds['DMs']} DMs, {phase.kinds['permission edits']} "
                f"permission edits, {sum(phase.kinds.values())} calls in all",
                target=f"≤ {PUBLIC_POSTS} public posts",
                met=public <= PUBLIC_POSTS,
                note=note,
                values={"change": phase.change, **dict(phase.kinds), "other": dict(phase.other)},
            )
        )
    if info.get("bot_errors"):
        rows.append(Row(section="discord", what="bot errors", figure=str(len(info["bot_errors"])),
                        note=", ".join(info["bot_errors"])))  # fmt: skip
    return rows
