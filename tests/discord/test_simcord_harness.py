"""Proof that simcord can drive the things faguan's bot needs, on a throwaway probe bot.

The probe is a `commands.Bot` subclass defined here: a cog with one slash command group
(`/probe ping|dm|lock|sweep`), a persistent button view, and an `on_message` listener. Each test
drives it the way a player would and asserts what Discord (simcord) then holds. See
docs/dev/simcord.md for the guide.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

import discord
import pytest
from discord import app_commands
from discord.ext import commands
from simcord import BackendError

from bot.runtime.timing import Clock, DeadlineScheduler, window_job_id

if TYPE_CHECKING:
    from conftest import World
    from envclock import EnvClock

pytestmark = pytest.mark.asyncio

SHANGHAI = ZoneInfo("Asia/Shanghai")
ACK_ID = "probe:ack"


@dataclass(frozen=True)
class Seen:
    """One message the probe's on_message listener received."""

    id: int
    author_id: int
    channel_id: int
    created_at: datetime
    content: str


class AckView(discord.ui.View):
    """A persistent view (timeout=None, fixed custom_id), re-registered on every start."""

    def __init__(self) -> None:
        super().__init__(timeout=None)

    @discord.ui.button(label="Got it", custom_id=ACK_ID, style=discord.ButtonStyle.primary)
    async def ack(
        self, interaction: discord.Interaction, button: discord.ui.Button[AckView]
    ) -> None:
        bot = interaction.client
        assert isinstance(bot, ProbeBot)
        bot.acks.append(interaction.user.id)
        await interaction.response.send_message(f"ack from {interaction.user.name}")


class ProbeCog(commands.Cog):
    """The probe's commands and listener."""

    probe = app_commands.Group(name="probe", description="harness probe")

    def __init__(self, bot: ProbeBot) -> None:
        self.bot = bot

    @probe.command(name="ping", description="answer only the invoker")
    async def ping(self, interaction: discord.Interaction, word: str = "pong") -> None:
        await interaction.response.send_message(word, ephemeral=True)

    @probe.command(name="dm", description="DM the invoker a button")
    async def dm(self, interaction: discord.Interaction) -> None:
        try:
            await interaction.user.send("Your role card. Press the button.", view=AckView())
        except discord.Forbidden as exc:
            # What faguan must do (DESIGN.md): record it and answer ephemerally instead.
            self.bot.dm_failures.append((interaction.user.id, exc.code))
            await interaction.response.send_message(f"DM failed ({exc.code})", ephemeral=True)
            return
        await interaction.response.send_message("sent you a DM", ephemeral=True)

    @probe.command(name="lock", description="deny a role send_messages here, then post")
    async def lock(
        self, interaction: discord.Interaction, role: discord.Role, allow_self: bool = True
    ) -> None:
        channel = interaction.channel
        guild = interaction.guild
        assert isinstance(channel, discord.TextChannel) and guild is not None
        await interaction.response.defer(ephemeral=True)
        if allow_self:
            await channel.set_permissions(guild.me, send_messages=True)
        await channel.set_permissions(role, send_messages=False)
        try:
            await channel.send("看表帖: locked")
        except discord.Forbidden as exc:
            self.bot.send_failures.append(exc.code)
            await interaction.followup.send(f"refused ({exc.code})", ephemeral=True)
            return
        await interaction.followup.send("locked", ephemeral=True)

    @probe.command(name="sweep", description="read this channel's history")
    async def sweep(self, interaction: discord.Interaction) -> None:
        channel = interaction.channel
        assert isinstance(channel, discord.TextChannel)
        posts = [m async for m in channel.history(limit=None, oldest_first=True)]
        self.bot.swept = [
            Seen(m.id, m.author.id, m.channel.id, m.created_at, m.content) for m in posts
        ]
        await interaction.response.send_message(f"{len(posts)} posts", ephemeral=True)

    @commands.Cog.listener()
    async def on_message(self, message: discord.Message) -> None:
        if message.author.id == self.bot.user_id:
            return
        self.bot.seen.append(
            Seen(
                message.id,
                message.author.id,
                message.channel.id,
                message.created_at,
                message.content,
            )
        )


#: The probe that is running; deadline jobs are module-level functions and look it up here.
RUNNING: dict[str, ProbeBot] = {}


class ProbeBot(commands.Bot):
    """A minimal bot wired like faguan's: cog and persistent view in setup_hook."""

    def __init__(self, clock: Clock) -> None:
        intents = discord.Intents.default()
        intents.message_content = True
        intents.members = True
        super().__init__(command_prefix="!", intents=intents)
        self.clock = clock
        self.seen: list[Seen] = []
        self.swept: list[Seen] = []
        self.acks: list[int] = []
        self.dm_failures: list[tuple[int, int]] = []
        self.send_failures: list[int] = []

    @property
    def user_id(self) -> int | None:
        return self.user.id if self.user is not None else None

    async def setup_hook(self) -> None:
        await self.add_cog(ProbeCog(self))
        self.add_view(AckView())
        await self.tree.sync()
        RUNNING["probe"] = self


async def post_deadline(channel_id: int, text: str) -> None:
    """A deadline job: post `text` in the channel (module-level, plain arguments)."""
    channel = RUNNING["probe"].get_channel(channel_id)
    assert isinstance(channel, discord.TextChannel)
    await channel.send(text)


@pytest.fixture
def simcord_bot(sim_clock: EnvClock) -> ProbeBot:
    return ProbeBot(sim_clock)


def probe(world: World) -> ProbeBot:
    bot = world.bot
    assert isinstance(bot, ProbeBot)
    return bot


# --------------------------------------------------------------------------- the tests


async def test_slash_subcommand_answers_ephemerally(world: World) -> None:
    result = await world.alice.slash(world.vote, "probe ping", word="在")

    assert result.acknowledged and result.ephemeral
    assert result.response is not None and result.response.content == "在"
    # Only the invoker sees it: not in the public channel, not for another member.
    visible_to_alice = [m.content for m in world.vote.history(viewer=world.alice)]
    visible_to_bob = [m.content for m in world.vote.history(viewer=world.bob)]
    assert "在" in visible_to_alice
    assert "在" not in visible_to_bob
    assert world.alice.available_commands(world.vote) == (
        "probe ping",
        "probe dm",
        "probe lock",
        "probe sweep",
    )


async def test_dm_with_a_button_clicked_by_the_user(world: World) -> None:
    result = await world.alice.slash(world.lobby, "probe dm")
    assert result.response is not None and result.response.content == "sent you a DM"

    dm = world.alice.user.dm_channel.last_message
    assert dm is not None and dm.content.startswith("Your role card")
    assert world.bot.user is not None and dm.author.id == world.bot.user.id

    clicked = await world.alice.user.click(dm, custom_id=ACK_ID)

    assert probe(world).acks == [world.alice.id]
    assert clicked.response is not None and clicked.response.content == "ack from alice"
    assert clicked.response.channel_id == world.alice.user.dm_channel.id


async def test_lock_refuses_members_but_the_bot_keeps_posting(world: World) -> None:
    await world.alice.send(world.vote, "投 bob")
    result = await world.moderator.slash(world.vote, "probe lock", role=world.player_role)

    assert result.response is not None and result.response.content == "locked"
    last = world.vote.last_message
    assert last is not None and last.content == "看表帖: locked"
    with pytest.raises(BackendError) as refused:
        await world.alice.send(world.vote, "投 carol")
    assert (refused.value.status, refused.value.code) == (403, 50013)
    assert [seen.content for seen in probe(world).seen] == ["投 bob"]
    # The overwrites are real channel state, as the bot's own cache sees them.
    channel = world.bot.get_channel(world.vote.id)
    assert isinstance(channel, discord.TextChannel)
    player_role = channel.guild.get_role(world.player_role.id)
    assert player_role is not None
    assert channel.overwrites_for(player_role).send_messages is False
    assert channel.overwrites_for(channel.guild.me).send_messages is True
    # The moderator has no player role, so the deny does not touch them.
    await world.moderator.send(world.vote, "主持: ok")
    assert probe(world).seen[-1].content == "主持: ok"


@pytest.mark.parametrize(
    ("allow_self", "answer", "bot_post"),
    [(True, "locked", "看表帖: locked"), (False, "refused (50013)", None)],
)
async def test_an_everyone_deny_binds_the_bot_unless_it_allows_itself(
    world: World, allow_self: bool, answer: str, bot_post: str | None
) -> None:
    everyone = world.guild.default_role

    result = await world.moderator.slash(
        world.vote, "probe lock", role=everyone, allow_self=allow_self
    )

    assert result.response is not None and result.response.content == answer
    last = world.vote.last_message
    assert (last.content if last is not None else None) == bot_post
    assert probe(world).send_failures == ([] if allow_self else [50013])
    with pytest.raises(BackendError):
        await world.moderator.send(world.vote, "moderators are members too")


async def test_blocked_dms_raise_forbidden_50007(world: World) -> None:
    world.block_dms(world.bob)

    result = await world.bob.slash(world.lobby, "probe dm")

    assert result.ephemeral
    assert result.response is not None and result.response.content == "DM failed (50007)"
    assert probe(world).dm_failures == [(world.bob.id, 50007)]
    assert world.bob.user.dm_channel.last_message is None
    # The same failure seen directly, as discord.py raises it.
    user = world.bot.get_user(world.bob.id)
    assert user is not None
    with pytest.raises(discord.Forbidden) as blocked:
        await user.send("hello")
    assert (blocked.value.status, blocked.value.code) == (403, 50007)
    # Alice still gets her DMs.
    await world.alice.slash(world.lobby, "probe dm")
    assert world.alice.user.dm_channel.last_message is not None


async def test_restart_bot_keeps_the_world_and_reattaches_views(
    world: World, sim_clock: EnvClock
) -> None:
    await world.alice.slash(world.lobby, "probe dm")
    dm = world.alice.user.dm_channel.last_message
    assert dm is not None
    old = probe(world)

    fresh = ProbeBot(sim_clock)
    await world.env.restart_bot(fresh)

    assert world.bot is fresh and fresh is not old and fresh.is_ready()
    assert fresh.get_guild(world.guild.id) is not None
    clicked = await world.alice.user.click(dm, custom_id=ACK_ID)  # a view from before the restart
    assert clicked.response is not None and clicked.response.content == "ack from alice"
    assert (fresh.acks, old.acks) == ([world.alice.id], [])
    await world.alice.send(world.vote, "after restart")
    assert [s.content for s in fresh.seen] == ["after restart"]
    assert old.seen == []


async def test_posts_take_their_time_from_the_virtual_clock(world: World) -> None:
    assert world.env.now() == datetime(2026, 1, 1, tzinfo=ZoneInfo("UTC"))
    late = datetime(2026, 1, 1, 21, 59, 59, 900_000, tzinfo=SHANGHAI)

    first = await world.post_at(world.alice, world.vote, "投 bob", late)
    second = await world.bob.send(world.vote, "投 alice")

    seen = probe(world).seen
    assert world.env.now() == late
    assert discord.utils.utcnow() == late  # test code sees the virtual clock too
    assert [s.created_at for s in seen] == [late, late]
    assert first.created_at == discord.utils.snowflake_time(first.id) == late
    assert second.id > first.id  # same millisecond: the snowflake sequence still orders them


async def test_posts_made_while_disconnected_are_only_in_history(
    world: World, sim_clock: EnvClock
) -> None:
    await world.alice.send(world.vote, "before")
    await world.bot.ws.close()  # the gateway drops: simcord delivers no events while closed
    missed = await world.bob.send(world.vote, "while down")
    assert [s.content for s in probe(world).seen] == ["before"]

    await world.env.restart_bot(ProbeBot(sim_clock))  # a fresh session, as after a crash
    await world.moderator.slash(world.vote, "probe sweep")

    swept = probe(world).swept
    assert [s.content for s in swept] == ["before", "while down"]
    assert swept[1].id == missed.id and swept[1].created_at == missed.created_at


async def test_deadline_fires_through_the_scheduler_on_the_virtual_clock(
    world: World, sim_clock: EnvClock
) -> None:
    scheduler = DeadlineScheduler(sim_clock)
    deadline = datetime(2026, 1, 1, 22, 0, tzinfo=SHANGHAI)
    job_id = window_job_id(1, 2)
    scheduler.schedule(job_id, deadline, post_deadline, world.vote.id, "看表帖: day 1 closed")

    await world.advance_to(deadline - timedelta(seconds=1))
    assert await scheduler.run_due() == []
    await world.alice.send(world.vote, "投 carol")

    await world.advance_to(deadline)
    assert await scheduler.run_due() == [job_id]
    await world.env.settle()

    last = world.vote.last_message
    assert last is not None and last.content == "看表帖: day 1 closed"
    assert last.created_at == deadline
    assert [s.content for s in probe(world).seen] == ["投 carol"]
