"""Shared scaffolding for end-to-end game tests on simcord: a bot from our factory on a fresh
SQLite file, a guild with a moderator and N players, and helpers to play through Discord only."""

from __future__ import annotations

import contextlib
import datetime as dt
import os
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import discord
from simcord import ChannelHandle, Env, GuildHandle, MemberActor, RoleHandle

from bot.config import load
from bot.discord.client import FaguanBot, create_bot
from bot.discord.required_permissions import REQUIRED_PERMISSIONS
from bot.records.record_html import with_links
from bot.runtime.hosting import vote_posts
from bot.runtime.timing import DeadlineScheduler
from engine.record import holders, record_of
from engine.rulesets import get_ruleset
from engine.setup import card_names
from engine.state import GameState

GUILD_ID = 1_300_000_000_000_000_777


def settings_for(db: Path | str, **game: Any) -> Any:
    """Settings for a test bot: its own SQLite file (or a database URL: PostgreSQL), 1-hour
    windows by default."""
    url = db if isinstance(db, str) else f"sqlite+aiosqlite:///{db}"
    return load(
        {
            "discord": {"token": "test-token", "moderator_role": "主持人"},
            "database": {"url": url},
            "game": {"schedule": {"power": "1h", "vote": "1h"}, "reminder": "off", **game},
        },
        env={},
    )


def make_bot(db: Path | str, clock: Any, seed: str = "e2e-seed", **game: Any) -> FaguanBot:
    """A bot from the production factory, on the simcord clock, with a fixed seed (`game`:
    settings of the config's [game] table, as `settings_for`)."""
    return create_bot(
        settings_for(db, **game),
        clock=clock,
        scheduler=DeadlineScheduler(clock),
        seed_source=lambda: seed,
    )


SETTLE_SECONDS = 30.0
"""How long simcord waits, in wall time, for the bot to settle after each step. With its default
of 5 s, runs of the whole suite on two workers now and then failed a step whose only work left
was the SQLite group commit on its thread (`synchronous=FULL`), never reproduced alone: most
likely a commit's fsync waiting on the other worker's writes. These tests prove what the bot
says, not how fast a shared disk is; a bot that hangs still fails, later."""


class BotEnv(Env):
    """simcord's `Env`, whose bots stop as their processes would. simcord detaches a bot without
    closing it (at `shutdown`, and the old bot at `restart_bot`): each bot's database connections
    (aiosqlite's threads), SQLite commit thread and writer process ran on until the garbage
    collector found the bot, a full collection at the end of the worker's session (too slow:
    execnet interrupted it). Here `shutdown` first closes the bot attached as a clean stop does
    (`FaguanBot.close`, SIGTERM's), and a bot that `restart_bot` replaced without its being closed
    (a crash) has its connections closed as its process's death closes them (`died`)."""

    async def restart_bot(self, bot: discord.Client | None = None) -> None:
        old = self.bot
        await super().restart_bot(bot)
        if old is not self.bot:  # once the new one is attached: its recovery did not wait
            await died(old)

    async def shutdown(self) -> None:
        try:
            if isinstance(self.bot, FaguanBot) and not self.bot.is_closed():
                await self.bot.close()
        finally:
            await super().shutdown()


async def died(bot: discord.Client) -> None:
    """What a bot's process's death stops, for a bot detached without `close` (a crash): its
    timers, and the connections of the database it opened (the pool's, the SQLite writer
    process's stdin, so it ends): nothing written, no done mark flushed. A database the test
    gave the bot is the test's to dispose of."""
    if not isinstance(bot, FaguanBot) or bot.is_closed():
        return
    bot.runtime.close()
    if not bot.runtime.scheduler.manual:
        bot.runtime.scheduler.shutdown()
    if bot._owns_database and bot._database is not None:
        await bot._database.dispose()


@contextlib.asynccontextmanager
async def running_table(
    db: Path,
    players: int,
    clock: Any,
    seed: str = "e2e-seed",
    hosting: str = "text",
    **game: Any,
) -> AsyncIterator[Table]:
    """A started bot on its own database with a table of `players` (shut down after); `clock`
    is an unbound `EnvClock` (from tests/discord/conftest.py). `hosting` "forum": the game is
    hosted in a forum channel (`Driver.start` opens it there). `game`: as `make_bot`."""
    env = BotEnv(make_bot(db, clock, seed=seed, **game), settle_timeout=SETTLE_SECONDS)
    clock.bind(env)
    table = build_table(env, players)
    table.db, table.clock, table.seed = db, clock, seed
    if hosting == "forum":
        table.forum = table.guild.create_forum_channel("杀人游戏论坛")
    await env.start()
    try:
        yield table
    finally:
        await env.shutdown()


@dataclass
class Table:
    """A guild with a game channel, a moderator and players."""

    env: Env
    guild: GuildHandle
    channel: ChannelHandle
    moderator: MemberActor
    players: list[MemberActor]
    mod_role: RoleHandle
    outside: MemberActor
    names: list[str] = field(default_factory=list)
    forum: ChannelHandle | None = None
    """A forum game's forum: `channel` is then its main post (once the sign-up is open)."""
    db: Path | None = None
    clock: Any = None
    seed: str = ""
    """`running_table`'s database, clock and seed: what a restarted bot runs on (`restarted`)."""

    @property
    def bot(self) -> FaguanBot:
        bot = self.env.bot
        assert isinstance(bot, FaguanBot)
        return bot

    def seat_of(self, member: MemberActor) -> int:
        return self.players.index(member) + 1

    def player(self, seat: int) -> MemberActor:
        return self.players[seat - 1]

    async def advance(self, seconds: float) -> None:
        await self.env.advance_time(seconds)

    async def run_deadline(self) -> list[str]:
        """Move the clock to the game's deadline and fire it through the scheduler."""
        scheduler = self.bot.runtime.scheduler
        jobs = [j for j in scheduler.jobs() if j.id.endswith(":deadline")]  # not reminders
        assert jobs, "no deadline scheduled"
        when = min(j.when for j in jobs)
        now = self.env.now()
        if when > now:
            await self.env.advance_time((when - now).total_seconds())
        fired = await scheduler.run_due()
        await self.env.settle()
        return fired

    def dms(self, member: MemberActor) -> list[discord.Message]:
        channel = member.user.dm_channel
        return list(channel.history()) if channel is not None else []

    def public(self) -> list[str]:
        return [m.content for m in self.channel.history()]

    def transcript(self) -> str:
        """The game as its players read it: the game channel (a forum game's main post), then
        each vote channel or 投票帖, every message with its time and author, oldest first."""
        places = [("game", self.channel)]
        if self.forum is not None:
            posts = sorted((t for t in self.forum.threads if "投票帖" in (t.name or "")),
                           key=lambda t: t.id)  # fmt: skip
            places += [(thread.name or str(thread.id), thread) for thread in posts]
        elif self.vote_channel() is not self.channel:
            places.append(("vote", self.vote_channel()))
        lines: list[str] = []
        for title, place in places:
            lines.append(f"== {title}")
            for message in place.history():
                when = message.created_at.strftime("%m-%d %H:%M:%S")
                lines.append(f"[{when}] {message.author.display_name}: {message.content}")
            lines.append("")
        return "\n".join(lines)

    def vote_channel(self) -> ChannelHandle:
        """Where votes are posted: the game channel, or a forum game's newest 投票帖."""
        if self.forum is None:
            return self.channel
        posts = [t for t in self.forum.threads if "投票帖" in (t.name or "")]
        assert posts, "no vote post is open"
        return max(posts, key=lambda t: t.id)


def invite_permissions(env: Env, guild: GuildHandle, without: str | None = None) -> None:
    """The bot holds exactly what its invite asks for (`REQUIRED_PERMISSIONS`) on `guild`, not
    simcord's every permission: a test that passes proves the invite is enough. `without`: one
    of them a server's admins took away."""
    wanted = discord.Permissions(**dict.fromkeys(REQUIRED_PERMISSIONS, True))
    if without is not None:
        setattr(wanted, without, False)
    bot_role = guild.roles[env.backend.bot_user.name]
    env.backend.edit_role(guild.id, bot_role.id, {"permissions": wanted.value})


def build_table(env: Env, players: int) -> Table:
    guild = env.create_guild("杀人游戏", id=GUILD_ID)
    invite_permissions(env, guild)
    mod_role = guild.create_role("主持人")
    channel = guild.create_text_channel("game")
    moderator = guild.add_member(env.create_user("mod"), roles=[mod_role])
    names = [f"玩家{i}" for i in range(1, players + 1)]
    members = [guild.add_member(env.create_user(name)) for name in names]
    outside = guild.add_member(env.create_user("路人"))
    return Table(
        env=env,
        guild=guild,
        channel=channel,
        moderator=moderator,
        players=members,
        mod_role=mod_role,
        outside=outside,
        names=names,
    )


async def restarted(t: Table) -> FaguanBot:
    """The bot stopped cleanly (as on SIGTERM) and a new one started on the same database,
    clock and seed (a table from `running_table`)."""
    assert t.db is not None, "a table from running_table"
    await t.bot.close()
    new = make_bot(t.db, t.clock, seed=t.seed)
    await t.env.restart_bot(new)
    await t.env.settle()
    return new


def close_dms(t: Table, channel_id: int) -> None:
    """From now on every message the bot sends to this DM channel fails as Discord does for a
    user whose DMs are closed (403, 50007)."""
    t.env.inject_error(
        "POST",
        f"/channels/{channel_id}/messages",
        status=403,
        code=50007,
        message="Cannot send messages to this user",
        times=None,
    )


def at(hour: int, minute: int = 0, second: int = 0, ms: int = 0) -> dt.datetime:
    return dt.datetime(2026, 1, 1, hour, minute, second, ms * 1000, tzinfo=dt.UTC)


# -- driving a game through Discord only, and the same game through `faguan replay` -----------------


COMPARED = (
    "phase",
    "number",
    "revote",
    "left",
    "checks",
    "tally",
    "votes",
    "abstained",
    "invalid",
    "tie",
    "last_words",
    "confess",
    "group",
    "spared",
    "revealed",
    "virtual_out",
)
"""What a phase of the bot's record must share with `faguan replay`'s."""


def by_role(roles: dict[int, str], role: str) -> list[int]:
    """The seats (cards) dealt `role`, in seat order."""
    return [s for s, r in sorted(roles.items()) if r == role]


def compare_with_replay(record: dict[str, Any], replayed: dict[str, Any]) -> None:
    """The bot's record of a game equals the replay's, phase by phase, and in its result."""
    assert len(record["phases"]) == len(replayed["phases"])
    for mine, theirs in zip(record["phases"], replayed["phases"], strict=True):
        for key in COMPARED:
            assert mine.get(key) == theirs.get(key), (key, mine, theirs)
    assert record["result"]["winner"] == replayed["result"]["winner"]
    assert record["result"]["after"] == replayed["result"]["after"]
    assert record["result"]["scores"] == replayed["result"]["scores"]
    assert record["roles"] == replayed["roles"]
    assert record["lots"] == replayed["lots"]


class Driver:
    """Plays steps through Discord and records the same steps for the replay.

    Seats are the engine's: where a player holds several cards (5.0 双身份) a seat is a card, the
    member is the card's holder, and the replay names the card `玩家1#2`."""

    def __init__(self, table: Table, ruleset: str, **new_options: Any) -> None:
        self.table = table
        self.ruleset = ruleset
        self.new_options = new_options
        self.steps: list[dict[str, Any]] = []
        self.game_id = 0
        self.cards = get_ruleset(ruleset).cards_per_player

    def member(self, seat: int) -> MemberActor:
        """The member holding a seat (card)."""
        return self.table.players[(seat - 1) // self.cards]

    def record(self, state: GameState) -> dict[str, Any]:
        """The bot's record of the game, named as the replay names the players."""
        names = {holders(s)[0]: self.table.names[(s.seat - 1) // self.cards] for s in state.seats}
        return record_of(state, player_names=names)

    async def start(self) -> dict[int, str]:
        t = self.table
        where = {} if t.forum is None else {"forum": t.forum}
        r = await t.moderator.slash(
            t.channel, "game new", ruleset=self.ruleset, **where, **self.new_options
        )
        assert r.response is not None and not r.ephemeral
        if t.forum is not None:  # the sign-up is the forum's new main post: the game's channel
            (t.channel,) = t.forum.threads
        for p in t.players:
            await p.slash(t.channel, "game join")
        await t.moderator.slash(t.channel, "game start")
        self.game_id = t.bot.runtime.routes.channel_games[t.channel.id]
        state = await t.bot.runtime.service.state(self.game_id)
        return {int(s.seat): s.role.value for s in state.seats}

    def name(self, seat: int) -> str:
        return card_names(self.table.names, self.cards)[seat - 1]

    def _dm_with(self, seat: int, custom_id: str) -> discord.Message:
        for message in reversed(self.table.dms(self.member(seat))):
            for row in message.components:
                for child in getattr(row, "children", []):
                    if str(getattr(child, "custom_id", "")) == custom_id:
                        return message
        raise AssertionError(f"seat {seat} has no DM with {custom_id}")

    async def power_by_menu(self, seat: int, power: str, target: int | None) -> Any:
        """Choose in the DM's select menu (the way most players act)."""
        return await self._menu(seat, power, "pass" if target is None else str(target), target)

    async def use_by_menu(self, seat: int, power: str) -> Any:
        """Use a power that takes no target (天下无贼: guard, rob) in the DM's menu."""
        return await self._menu(seat, power, "use", None, used=True)

    async def _menu(
        self, seat: int, power: str, value: str, target: int | None, used: bool = False
    ) -> Any:
        state = await self.table.bot.runtime.service.state(self.game_id)
        assert state.window is not None
        custom_id = f"faguan:act:{self.game_id}:{state.window.number}:{power}:{seat}"  # its seat
        message = self._dm_with(seat, custom_id)
        result = await self.member(seat).user.select(message, [value], custom_id=custom_id)
        self._power_step(seat, power, target, used=used)
        return result

    async def power_by_command(self, seat: int, power: str, target: int | None) -> Any:
        """/act or /pass in the game channel (answered ephemerally); the card acting is named
        where a player holds several."""
        member = self.member(seat)
        card = {"card": seat} if self.cards > 1 else {}
        if target is None:
            result = await member.slash(self.table.channel, "pass", power=power, **card)
        else:
            result = await member.slash(
                self.table.channel, "act", power=power, target=target, **card
            )
        self._power_step(seat, power, target)
        return result

    async def use_by_command(self, seat: int, power: str) -> Any:
        """/act with a power that takes no target (天下无贼: guard, rob)."""
        result = await self.member(seat).slash(self.table.channel, "act", power=power)
        self._power_step(seat, power, None, used=True)
        return result

    def _power_step(self, seat: int, power: str, target: int | None, used: bool = False) -> None:
        step: dict[str, Any] = {"do": "power", "by": self.name(seat), "power": power}
        if target is not None:
            step["target"] = self.name(target)
        elif not used:
            step["pass"] = True
        self.steps.append(step)

    async def post_vote(self, seat: int, text: str, target: int | None) -> discord.Message:
        """A public vote post in the vote channel; `target` None is an abstention."""
        message = await self.member(seat).send(self.table.vote_channel(), text)
        await self.table.env.settle()
        self.steps.append(
            {
                "do": "vote",
                "by": self.name(seat),
                "target": "abstain" if target is None else self.name(target),
            }
        )
        return message

    async def slash_vote(self, seat: int, target: int | None) -> Any:
        result = await self.member(seat).slash(
            self.table.channel, "vote", target="abstain" if target is None else str(target)
        )
        self.steps.append(
            {
                "do": "vote",
                "by": self.name(seat),
                "target": "abstain" if target is None else self.name(target),
            }
        )
        return result

    async def last_words(self, seat: int, words: str) -> None:
        member = self.member(seat)
        shown = await member.slash(self.table.channel, "lastwords")
        assert shown.modal is not None, shown.response
        await member.submit_modal(shown, {"words": words})
        self.steps.append({"do": "last_words", "by": self.name(seat), "text": words})

    async def lock(self) -> None:
        fired = await self.table.run_deadline()
        assert fired, "the deadline did not fire"
        self.steps.append({"do": "lock"})

    async def quiet_night(self) -> None:
        """Every killer passes: no one leaves the game; the night locks into the next day."""
        state = await self.table.bot.runtime.service.state(self.game_id)
        for seat in state.seats:
            if seat.role.value == "killer":
                await self.power_by_command(int(seat.seat), "kill", None)
        await self.lock()

    async def vote_out(self, seat: int) -> None:
        """Every other living player votes `seat` out, and the day locks."""
        state = await self.table.bot.runtime.service.state(self.game_id)
        for voter in (int(s.seat) for s in state.seats if s.alive and int(s.seat) != seat):
            await self.post_vote(voter, f"投 {seat}", seat)
        await self.lock()

    def replay_input(
        self, roles: dict[int, str], seed: str, options: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        return {
            "ruleset": self.ruleset,
            "seed": seed,
            "players": list(self.table.names),
            "roles": {self.name(s): r for s, r in roles.items()},
            "options": options or {},
            "steps": self.steps,
        }


async def assert_vote_posts(table: Table, game_id: int, days: int) -> None:
    """A forum game kept one 投票帖 per day (a run-off reuses its day's), each locked at its
    看表帖, linked from the main post and from the record, holding that day's vote posts; a
    text game has none of them."""
    info = await table.bot.runtime.service.info(game_id, refresh=True)
    posts = vote_posts(info.channels)
    if table.forum is None:
        assert posts == {}
        return
    assert list(posts) == list(range(1, days + 1))
    threads = {thread.id: thread for thread in table.forum.threads}
    main = "\n".join(table.public())
    state = await table.bot.runtime.service.state(game_id)
    linked = with_links(record_of(state), GUILD_ID, info.channels["vote"], posts)
    days_linked = {p["number"]: p.get("vote_post") for p in linked["phases"] if p["phase"] == "day"}
    for day, thread_id in posts.items():
        thread = threads[thread_id]
        assert thread.name == f"第{day}天 投票帖（第{game_id}局）"
        live = table.bot.get_channel(thread_id)
        assert isinstance(live, discord.Thread) and live.locked
        assert any(not m.author.bot for m in thread.history())  # the day's votes are there
        assert f"第{day}天 投票帖：<#{thread_id}>" in main
        assert days_linked[day] == f"https://discord.com/channels/{GUILD_ID}/{thread_id}"
    assert not any(v.startswith("投 ") for v in table.public())  # no vote in the main post


def dump_transcript(table: Table, name: str) -> None:
    """Write the game's transcript to `$FAGUAN_TRANSCRIPTS/<name>.txt` when that is set (to read
    a whole game as the players would: `FAGUAN_TRANSCRIPTS=/tmp/t pytest tests/discord/test_e2e_games.py`)."""
    folder = os.environ.get("FAGUAN_TRANSCRIPTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        (Path(folder) / f"{name}.txt").write_text(table.transcript(), "utf-8")
