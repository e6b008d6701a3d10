"""One shard process of `test_rb_shards.py`: a FaguanBot on the shared PostgreSQL, in a simcord
world of its own holding only the servers of its shards, driven by JSON lines on stdin.

Run as `python shardworker.py '<json config>'`; the config names the database URL, the layout
(`shard_count`, `shard_ids`), the servers (`guilds`: index and id, all of the test's; the worker
builds those of its shards), its `lane` (see `Lanes`), the virtual time to start at, and the file
it appends the idempotency key of every effect it performs to (one line each, written before the
reply, so a SIGKILL loses none that was answered).

It claims its shards as `faguan run` does (`claim_patiently` before anything else), says
`{"claimed": true}`, starts the bot (which recovers its games) and says what it recovered; then it
answers one JSON line per command line:

- `{"do": "start", "guild": i}`: the moderator opens a v2 game in server i, 8 players join, start
  → `{"game": id, "roles": {seat: role}}`
- `{"do": "act", "guild": i, "seat": s, "power": p, "target": t}`: `/act` (or `/pass` if t is null)
- `{"do": "vote", "guild": i, "seat": s, "target": t}`: `/vote` (t null: abstain)
- `{"do": "lock"}`: move the clock to the earliest deadline and fire what is due → fired job ids
- `{"do": "state", "games": [id…]}`: those games' status, phase and record, and the clock
- `{"do": "pause", "kind": k, "world": path}`: arm the crash point. The next effect of kind `k`
  (its payload's type, e.g. `Announce`) is performed on the platform and logged to the keys
  file, and then, before the performer returns (so before its done mark), the worker writes the
  bot's posts in its world to `path` (what Discord holds at that instant), says
  `{"paused": key, "game": id, "sent": [text…]}` (what that effect posted) and waits for ever:
  the test SIGKILLs it there
- `{"do": "posts", "guild": i}`: the bot's posts in server i's game channel, oldest first →
  `{"posts": [[text, restored]…]}` (restored: put back from the killed process's world)
- `{"do": "quit"}`: shut down cleanly (`FaguanBot.close`, then the claim is released)

Discord outlives the bot: a config's `world` (a file written at a pause) holds the bot's posts of
the killed process's world, put back into the new world's channels before the bot starts, so the
performer's look for what it already sent sees them.

Why worlds are rebuilt identically: a restarted process (a new world) must find the channels and
members its games were played in. simcord's ids are time-based and deterministic, so each server
is built at the epoch in a lane of its own (its index), the same in every process; everything made
later (messages, the bot's posts) comes from the process's lane, unique per process start, so no
two processes make the same message id (the inputs' idempotency key).
"""

from __future__ import annotations

import asyncio
import faulthandler
import json
import signal
import sys
from pathlib import Path
from typing import Any

faulthandler.register(signal.SIGUSR2)  # the threads' stacks, even if the event loop is stuck
sys.path.insert(0, str(Path(__file__).resolve().parent))  # run as a script: rbkit beside it

from rbkit import EnvClock  # noqa: E402  (first: it puts the project on sys.path)

# isort: split
from gamebot import invite_permissions  # noqa: E402  (tests/discord's, on the path rbkit set)
from simcord import Env, GuildHandle, MemberActor  # noqa: E402

import bot.runtime.service as service_module  # noqa: E402
from bot.config import load  # noqa: E402
from bot.discord.client import FaguanBot, create_bot  # noqa: E402
from bot.runtime.timing import DeadlineScheduler  # noqa: E402
from bot.store import claims  # noqa: E402
from bot.store.migrate import upgrade  # noqa: E402
from engine.record import record_of  # noqa: E402

PLAYERS = 8
SEED = "shards"
RULESET = "v2"


def player_names(index: int) -> list[str]:
    """The players of server `index`, as the game and the replay name them."""
    return [f"服{index}玩家{seat}" for seat in range(1, PLAYERS + 1)]


class Lanes:
    """simcord's snowflake allocation split in lanes: (lane, millisecond) → its own sequence
    range, so worlds of different processes never make the same id, and a server is built with
    the same ids in every world."""

    BITS = 16

    def __init__(self, backend: Any, lane: int) -> None:
        self.backend = backend
        self.lane = lane
        self.sequences: dict[tuple[int, int], int] = {}
        backend._allocate_at = self.allocate

    def allocate(self, milliseconds: int) -> int:
        key = (self.lane, milliseconds)
        sequence = self.sequences.get(key, self.lane << self.BITS)
        while milliseconds << 22 | sequence in self.backend._reserved_ids:
            sequence += 1
        assert sequence < (self.lane + 1) << self.BITS, "lane exhausted"
        self.sequences[key] = sequence + 1
        value = milliseconds << 22 | sequence
        self.backend._reserved_ids.add(value)
        return value


class Server:
    """A server of the world: its game channel, moderator and players."""

    def __init__(self, env: Env, index: int, guild_id: int) -> None:
        self.index = index
        self.guild: GuildHandle = env.create_guild(f"服{index}", id=guild_id)
        invite_permissions(env, self.guild)
        moderators = self.guild.create_role("主持人")
        self.channel = self.guild.create_text_channel("game")
        self.moderator = self.guild.add_member(env.create_user(f"mod{index}"), roles=[moderators])
        self.players: list[MemberActor] = [
            self.guild.add_member(env.create_user(name)) for name in player_names(index)
        ]


class Worker:
    def __init__(self, config: dict[str, Any]) -> None:
        self.config = config
        self.keys = open(config["keys"], "a", encoding="utf-8")  # noqa: SIM115 - for life
        self.recovered: list[int] = []
        self.resumed = asyncio.Event()
        self.servers: dict[int, Server] = {}
        self.env: Env | None = None
        self.pause: dict[str, Any] | None = None
        """The armed crash point (`pause` command), until an effect reaches it."""
        self.restored: set[int] = set()
        """The ids of the posts put back from a killed process's world."""

    def settings(self) -> Any:
        return load(
            {
                "discord": {
                    "token": "t",
                    "moderator_role": "主持人",
                    "shard_count": self.config["shard_count"],
                    "shard_ids": self.config["shard_ids"],
                },
                "database": {"url": self.config["url"]},
                "game": {"schedule": {"power": "1h", "vote": "1h"}, "reminder": "off"},
            },
            env={},
        )

    def watch(self, bot: FaguanBot) -> None:
        """Record the games recovery rebuilt and the key of every effect performed."""
        rebuild = service_module.rebuild_games

        async def rebuild_games(*args: Any, **kwargs: Any) -> Any:
            report = await rebuild(*args, **kwargs)
            self.recovered.extend(report.games)
            return report

        service_module.rebuild_games = rebuild_games  # type: ignore[assignment]
        recover = service_module.GameService.recover

        async def recovered(*args: Any, **kwargs: Any) -> Any:
            stopped = await recover(*args, **kwargs)  # rebuilt, and the outbox performed
            self.resumed.set()
            return stopped

        service_module.GameService.recover = recovered  # type: ignore[method-assign]
        perform = bot.effects

        async def performed(item: Any) -> None:
            pause = (
                self.pause
                if self.pause and item.payload.get("type") == self.pause["kind"]
                else None
            )
            before = self.bot_posts() if pause else []
            await perform(item)
            self.keys.write(f"{item.idempotency_key} {item.game_id}\n")
            self.keys.flush()
            if pause:
                self.pause = None
                after = self.bot_posts()
                posts = [(channel, text) for _, channel, text in after]
                Path(pause["world"]).write_text(json.dumps(posts, ensure_ascii=False))
                sent = [text for _, _, text in after[len(before) :]]
                assert self.env is not None
                now = self.env.now().timestamp()
                say(
                    {"paused": item.idempotency_key, "game": item.game_id, "sent": sent, "now": now}
                )
                await asyncio.Event().wait()  # performed, not marked done: SIGKILLed here

        original = service_module.GameService.set_performer

        def wrapped(service: Any, _perform: Any) -> None:
            original(service, performed)

        service_module.GameService.set_performer = wrapped  # type: ignore[method-assign]

    async def run(self) -> None:
        config = self.config
        asyncio.get_running_loop().add_signal_handler(signal.SIGUSR1, tell_tasks)
        claims.RETRY_SECONDS = 0.2
        held = await claims.claim_patiently(
            config["url"], config["shard_count"], config["shard_ids"]
        )
        say({"claimed": True})
        try:
            await upgrade(config["url"])
            await self.serve()
        finally:
            await held.release()

    async def serve(self) -> None:
        config = self.config
        clock = EnvClock()
        settings = self.settings()
        bot = create_bot(
            settings, clock=clock, scheduler=DeadlineScheduler(clock), seed_source=lambda: SEED
        )
        self.watch(bot)
        env = Env(bot, check_errors=False)
        clock.bind(env)
        lanes = Lanes(env.backend, 0)
        count, mine = config["shard_count"], set(config["shard_ids"])
        for index, guild_id in config["guilds"]:
            if (guild_id >> 22) % count in mine:
                lanes.lane = index + 1
                self.servers[index] = Server(env, index, guild_id)
        lanes.lane = config["lane"]
        env.backend.advance_clock(config["start_at"])
        self.env = env
        if config.get("world"):
            self.restore(env, json.loads(Path(config["world"]).read_text()))
        await env.start()
        try:
            await asyncio.wait_for(self.resumed.wait(), 60)
            await env.settle()
            say({"recovered": sorted(self.recovered), "now": env.now().timestamp()})
            for line in sys.stdin:
                command = json.loads(line)
                if command["do"] == "quit":
                    break
                say(await self.answer(bot, env, command))
        finally:
            # A clean stop, as `faguan run`'s `async with` does it (simcord's shutdown does not
            # close the bot): the deliveries under way end and the last done marks are written
            # before the claim is released (`run`), or the next owner performs them again.
            await bot.close()
            await env.shutdown()
        say({"quit": True})

    async def answer(self, bot: FaguanBot, env: Env, command: dict[str, Any]) -> dict[str, Any]:
        what = command["do"]
        if what == "start":
            server = self.servers[command["guild"]]
            await server.moderator.slash(server.channel, "game new", ruleset=RULESET)
            for player in server.players:
                await player.slash(server.channel, "game join")
            await server.moderator.slash(server.channel, "game start")
            game = bot.runtime.routes.channel_games[server.channel.id]
            state = await bot.runtime.service.state(game)
            return {"game": game, "roles": {int(s.seat): s.role.value for s in state.seats}}
        if what in ("act", "vote"):
            server = self.servers[command["guild"]]
            member = server.players[command["seat"] - 1]
            target = command["target"]
            if what == "vote":
                options = {"target": "abstain" if target is None else str(target)}
                result = await member.slash(server.channel, "vote", **options)
            elif target is None:
                result = await member.slash(server.channel, "pass", power=command["power"])
            else:
                result = await member.slash(
                    server.channel, "act", power=command["power"], target=target
                )
            return {"answer": str(result.response)}
        if what == "lock":
            scheduler = bot.runtime.scheduler
            jobs = [j for j in scheduler.jobs() if j.id.endswith(":deadline")]
            if jobs:
                when = min(j.when for j in jobs)
                if when > env.now():
                    await env.advance_time((when - env.now()).total_seconds())
            fired = await scheduler.run_due()
            await env.settle()
            return {"fired": fired, "now": env.now().timestamp()}
        if what == "state":
            games = {}
            for game in command["games"]:
                state = await bot.runtime.service.state(game)
                info = await bot.runtime.service.info(game)
                index = next(i for i, s in self.servers.items() if s.guild.id == info.server_id)
                names = {s.player: n for s, n in zip(state.seats, player_names(index), strict=True)}
                games[game] = {
                    "status": info.status.value,
                    "phase": state.phase.label() if state.phase is not None else None,
                    "record": record_of(state, player_names=names),
                }
            return {"games": games, "now": env.now().timestamp()}
        if what == "pause":
            self.pause = command
            return {"armed": command["kind"]}
        if what == "posts":
            channel = self.servers[command["guild"]].channel.id
            posts = self.bot_posts()
            return {
                "posts": [
                    [text, i in self.restored] for i, where, text in posts if where == channel
                ]
            }
        raise ValueError(f"unknown command {what}")

    def restore(self, env: Env, posts: list[tuple[int, str]]) -> None:
        """Put the bot's posts of a killed process's world back (in the channels this world has:
        its servers' channels are built with the same ids)."""
        backend = env.backend
        for channel_id, text in posts:
            if channel_id in backend.channels:
                message = backend.create_message(
                    channel_id, backend.bot_user.id, text, broadcast=False
                )
                self.restored.add(message.id)

    def bot_posts(self) -> list[tuple[int, int, str]]:
        """(id, channel id, text) of every post of the bot in this world, oldest first."""
        assert self.env is not None
        backend = self.env.backend
        posts = [
            (message.id, channel_id, message.content)
            for channel_id, messages in backend.messages.items()
            for message in messages.values()
            if message.author_id == backend.bot_user.id
        ]
        return sorted(posts)


def tell_tasks() -> None:
    """SIGUSR1: where every task waits, on stderr (the test asks when a worker stops answering)."""
    for task in asyncio.all_tasks():
        task.print_stack(file=sys.stderr)
    sys.stderr.flush()


def say(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message, ensure_ascii=False, default=str) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    asyncio.run(Worker(json.loads(sys.argv[1])).run())
