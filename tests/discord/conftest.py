"""Fixtures for bot tests: a simcord world built before the bot starts, and a clock that follows it.

How a test module uses them (see docs/dev/simcord.md):

    @pytest.fixture
    def simcord_bot(sim_clock: EnvClock) -> commands.Bot:   # the bot under test
        return build_bot(clock=sim_clock)                     # our own factory

    @pytest.mark.asyncio
    async def test_something(world: World) -> None:
        result = await world.alice.slash(world.vote, "game new", ruleset="v2")
        ...

`world` arranges the guild, roles, channels and members *before* the bot logs in (so a bot that
syncs its commands to a fixed development guild in `setup_hook` finds it), starts the bot, and at
teardown shuts it down and fails the test on any bot error the test did not inspect through
`env.errors` (the contract of simcord's own `simcord_env` fixture). Per-test `simcord.run()`
options go through the usual marker: `@pytest.mark.simcord(check_errors=False)`.

A game test uses `table` instead: our bot with a moderator and players at a table of
tests/discord/gamebot.py (`running_table`), set up by the `table` marker:

    pytestmark = pytest.mark.table(seed=SEED)

    @pytest.mark.table(players=12, hosting="forum")
    async def test_something(table: Table) -> None:
        ...
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import discord
import pytest
import pytest_asyncio
from envclock import EnvClock
from gamebot import Table, invite_permissions, running_table
from simcord import ChannelHandle, Env, GuildHandle, MemberActor, RoleHandle

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # the project is not installed in the test virtualenv
    sys.path.insert(0, str(ROOT))

#: The guild id the world uses; a bot that syncs commands per guild in development can use it.
WORLD_GUILD_ID = 1_300_000_000_000_000_001

#: discord.py's error code when a user does not accept DMs from the bot.
CANNOT_DM = 50007


@dataclass
class World:
    """A guild ready for a game: a moderator, three players, a lobby and a vote channel."""

    env: Env
    guild: GuildHandle
    moderator_role: RoleHandle
    player_role: RoleHandle
    lobby: ChannelHandle
    vote: ChannelHandle
    moderator: MemberActor
    alice: MemberActor
    bob: MemberActor
    carol: MemberActor

    @property
    def players(self) -> tuple[MemberActor, ...]:
        """The members with the player role, in seat order."""
        return (self.alice, self.bob, self.carol)

    @property
    def bot(self) -> discord.Client:
        """The bot currently attached (a new one after `env.restart_bot(...)`)."""
        return self.env.bot

    def block_dms(self, member: MemberActor) -> None:
        """Make every DM the bot sends to `member` fail as Discord does: 403, code 50007."""
        self.env.inject_error(
            "POST",
            f"/channels/{member.user.dm_channel.id}/messages",
            status=403,
            code=CANNOT_DM,
            message="Cannot send messages to this user",
            times=None,
        )

    async def advance_to(self, when: datetime) -> None:
        """Move simcord's clock forward to `when`, firing the bot's timers on the way."""
        seconds = (when - self.env.now()).total_seconds()
        if seconds < 0:
            raise ValueError(f"simcord's clock cannot go back from {self.env.now()} to {when}")
        await self.env.advance_time(seconds)

    async def post_at(
        self, member: MemberActor, channel: ChannelHandle, content: str, when: datetime
    ) -> discord.Message:
        """Post as `member` with `created_at == when` (to the millisecond, as snowflakes go)."""
        await self.advance_to(when)
        return await member.send(channel, content)


def build_world(env: Env) -> World:
    """Arrange the standard world on an environment (before or after the bot starts)."""
    guild = env.create_guild("杀人游戏", id=WORLD_GUILD_ID)
    invite_permissions(env, guild)
    moderator_role = guild.create_role("主持人")
    player_role = guild.create_role("玩家")
    lobby = guild.create_text_channel("lobby")
    vote = guild.create_text_channel("game-1-vote")
    moderator = guild.add_member(env.create_user("mod"), roles=[moderator_role])
    alice, bob, carol = (
        guild.add_member(env.create_user(name), roles=[player_role])
        for name in ("alice", "bob", "carol")
    )
    return World(
        env=env,
        guild=guild,
        moderator_role=moderator_role,
        player_role=player_role,
        lobby=lobby,
        vote=vote,
        moderator=moderator,
        alice=alice,
        bob=bob,
        carol=carol,
    )


@pytest.fixture
def sim_clock() -> EnvClock:
    """A clock for the bot under test; bound to the environment when it is built."""
    return EnvClock()


@pytest.fixture
def sim_unstarted(
    simcord_bot: discord.Client, sim_clock: EnvClock, request: pytest.FixtureRequest
) -> Env:
    """The environment around `simcord_bot`, not started yet (options from @pytest.mark.simcord)."""
    marker = request.node.get_closest_marker("simcord")
    options: dict[str, Any] = dict(marker.kwargs) if marker else {}
    env = Env(simcord_bot, **options)
    sim_clock.bind(env)
    return env


@pytest.fixture
def sim_layout(sim_unstarted: Env) -> World:
    """The standard world, arranged before the bot logs in."""
    return build_world(sim_unstarted)


@pytest_asyncio.fixture
async def sim_env(sim_unstarted: Env, sim_layout: World) -> AsyncIterator[Env]:
    """The running environment (the bot is logged in and READY, the world exists)."""
    env = sim_unstarted
    await env.start()
    try:
        yield env
    finally:
        await env.shutdown()
        if env.check_errors:
            # What simcord's own `simcord_env` fixture does: errors the bot swallowed fail the
            # test unless the test read them through `env.errors`.
            env._raise_errors_since(env._errors_acknowledged)


@pytest.fixture
def world(sim_env: Env, sim_layout: World) -> World:
    """The standard world with the bot running in it."""
    return sim_layout


@pytest_asyncio.fixture
async def table(tmp_path: Path, request: pytest.FixtureRequest) -> AsyncIterator[Table]:
    """A started bot on its own SQLite file (`tmp_path / "g.db"`) with a moderator and players in
    a guild: gamebot's `running_table`, shut down after the test. Its settings come from the
    `table` marker, on the module (`pytestmark = pytest.mark.table(seed=SEED)`) or on the test
    (`@pytest.mark.table(players=12)`); a test's settings win over its module's, setting by
    setting, and a setting given nowhere is the default:

    - `players`: how many players sit at the table (8);
    - `seed`: the bot's seed, which decides the cards dealt (running_table's, "e2e-seed");
    - `hosting`: "text" (text channels) or "forum" (a forum channel hosts the game);
    - any other: a setting of the config's [game] table, passed on to `make_bot`, such as
      `reminder="30m"` or `timezone="America/New_York"`.

    A module that needs a table adjusted overrides `table` with a fixture that takes `table`
    (this one) and changes it."""
    settings: dict[str, Any] = {}
    for marker in reversed(list(request.node.iter_markers("table"))):  # the module's first
        if marker.args:
            raise TypeError(f"@pytest.mark.table takes settings by name, not {marker.args!r}")
        settings.update(marker.kwargs)
    players = settings.pop("players", 8)
    async with running_table(tmp_path / "g.db", players, EnvClock(), **settings) as t:
        yield t
