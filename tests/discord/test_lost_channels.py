"""A game's own channel deleted by an admin: the game stops, its moderators and players are told
(by DM, the override log too), its timers and the players' role go — whether the bot sees the
deletion, finds it on start, or meets it when Discord refuses an effect. Before, the judge
retried its next post there for good, logged that it had told the moderators in the channel that
was gone, and kept the game's timers running.

Also: a forum game's open 投票帖 deleted is replaced (and one deleted unseen holds nothing up);
a stuck notice the game channel cannot take goes to the moderators by DM; a game whose server the
bot was removed from waits for it, and resumes when it is back."""

from __future__ import annotations

import discord
import pytest
from gamebot import Driver, Table, restarted
from simcord import ChannelHandle

from bot.discord import lost_channels
from bot.discord.client import FaguanBot
from bot.store import GameStatus
from engine.model import PhaseKind

SEED = "lost-seed"
pytestmark = pytest.mark.table(seed=SEED)

STOPPED_ZH = (
    "⚠ 第{game}局已停止：本局的{channel}已被删除，游戏无法继续。本局不计分，身份与种子不公布。"
)


def told(t: Table, member: object, game_id: int) -> list[str]:
    """The DMs `member` got that say game `game_id` stopped."""
    return [m.content for m in t.dms(member) if m.content.startswith(f"⚠ 第{game_id}局已停止")]  # type: ignore[arg-type]


async def assert_stopped(t: Table, game_id: int, channel: str, lost: str = "game") -> None:
    """Stopped with its reason, nothing left to fire or perform, the players' role gone, and
    every moderator and player told once, in the same words."""
    info = await t.bot.runtime.service.info(game_id, refresh=True)
    assert info.status is GameStatus.STOPPED_ERROR
    assert info.status_error == f"channel deleted: {lost}"
    assert not [j.id for j in t.bot.runtime.scheduler.jobs() if j.id.startswith(f"game:{game_id}:")]
    assert not await t.bot.runtime.service.repo.undone_effects(game_id)
    guild = t.bot.get_guild(t.guild.id)
    assert guild is not None
    assert not any(r.name.startswith("法官·") for r in guild.roles)
    text = STOPPED_ZH.format(game=game_id, channel=channel)
    assert told(t, t.moderator, game_id) == [text]
    for player in t.players:
        assert told(t, player, game_id) == [text]
    assert told(t, t.outside, game_id) == []


async def test_a_deleted_game_channel_stops_the_game_and_everyone_in_it_is_told(
    table: Table,
) -> None:
    """Mid-day, an admin deletes the game channel: the game stops at once; a deadline passing
    after it locks nothing and retries nothing; a second deletion tells no one again; the
    override log gets the notice too; a new game can open in another channel."""
    t = table
    log = t.guild.create_text_channel("裁判记录")
    await t.moderator.slash(t.channel, "mod log-channel", channel=log)
    d = Driver(t, "basic")
    await d.start()
    await d.quiet_night()
    t.env.backend.delete_channel(t.channel.id)
    await t.env.settle()
    await assert_stopped(t, d.game_id, "游戏频道")
    assert [m.content for m in log.history()][-1] == STOPPED_ZH.format(
        game=d.game_id, channel="游戏频道"
    )
    await t.env.advance_time(2 * 3600)
    assert await t.bot.runtime.scheduler.run_due() == []
    await t.env.settle()
    state = await t.bot.runtime.service.state(d.game_id)
    assert state.window is not None and state.window.number == 1  # the day was never locked
    await t.bot.on_guild_channel_delete(discord.Object(t.channel.id))  # type: ignore[arg-type]
    await t.env.settle()
    await assert_stopped(t, d.game_id, "游戏频道")  # told once
    again = t.guild.create_text_channel("第二局")
    status = await t.players[0].slash(again, "game status", game_id=d.game_id)
    assert status.response is not None
    assert (
        status.response.content.splitlines()[0]
        == f"Game {d.game_id} · basic · stopped (it cannot go on)"
    )
    record = await t.players[0].slash(again, "game record", game_id=d.game_id)
    assert record.response is not None and record.ephemeral
    assert record.response.content.startswith("This game was stopped")
    assert not record.response.attachments
    r = await t.moderator.slash(again, "game new", ruleset="basic")
    assert r.response is not None and not r.ephemeral


async def test_a_channel_deleted_while_the_bot_was_away_stops_the_game_on_start(
    table: Table, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bot does not see the channel go (down, or a gateway gap): the next start finds it,
    before any catch-up or lock, and stops the game the same way."""
    t = table
    d = await deleted_unseen(t, monkeypatch)
    await restarted(t)
    await assert_stopped(t, d.game_id, "游戏频道")


async def deleted_unseen(t: Table, monkeypatch: pytest.MonkeyPatch) -> Driver:
    """A game started, then its channel deleted without the bot hearing of it: it plays on."""
    d = Driver(t, "basic")
    await d.start()
    monkeypatch.setattr(FaguanBot, "on_guild_channel_delete", _missed)
    t.env.backend.delete_channel(t.channel.id)
    await t.env.settle()
    info = await t.bot.runtime.service.info(d.game_id, refresh=True)
    assert info.status is GameStatus.ACTIVE
    return d


async def _missed(self: FaguanBot, channel: object) -> None:
    """A channel's deletion the bot never hears of."""


async def test_an_effect_discord_refuses_for_a_deleted_channel_stops_the_game(
    table: Table, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The deletion event missed (a gateway gap): the night's 看表帖, refused with Unknown
    Channel at the deadline, stops the game instead of being retried for good."""
    t = table
    d = await deleted_unseen(t, monkeypatch)
    await t.run_deadline()  # run here, by the test: simcord's settling does not wait for it
    await lost_channels.stops_under_way()
    await t.env.settle()
    await assert_stopped(t, d.game_id, "游戏频道")


async def test_a_deleted_vote_channel_stops_the_game_and_names_the_vote_channel(
    table: Table,
) -> None:
    t = table
    votes = t.guild.create_text_channel("投票")
    d = Driver(t, "basic", vote_channel=votes)
    await d.start()
    t.env.backend.delete_channel(votes.id)
    await t.env.settle()
    await assert_stopped(t, d.game_id, "投票频道", lost="vote")


async def test_another_channel_deleted_stops_nothing(table: Table) -> None:
    """A channel of no game, and the killers' team thread, deleted: the game goes on."""
    t = table
    d = Driver(t, "basic")
    await d.start()
    other = t.guild.create_text_channel("闲聊")
    t.env.backend.delete_channel(other.id)
    info = await t.bot.runtime.service.info(d.game_id, refresh=True)
    t.env.backend.delete_channel(int(info.channels["thread_killers"]))
    await t.env.settle()
    info = await t.bot.runtime.service.info(d.game_id, refresh=True)
    assert info.status is GameStatus.ACTIVE
    assert told(t, t.moderator, d.game_id) == []
    await d.quiet_night()  # and the night still locks into the day


@pytest.mark.table(hosting="forum")
async def test_a_forum_games_main_post_deleted_stops_it(table: Table) -> None:
    """A forum game: a past day's 投票帖 deleted stops nothing; its main post deleted stops
    it, named as the main post."""
    t = table
    d = Driver(t, "basic")
    await d.start()
    await d.quiet_night()
    info = await t.bot.runtime.service.info(d.game_id, refresh=True)
    assert t.forum is not None
    day_posts = [th for th in t.forum.threads if "投票帖" in (th.name or "")]
    assert day_posts
    await d.lock()  # the day's votes end (no one out); the 投票帖 is a past day's now
    t.env.backend.delete_channel(day_posts[0].id)
    await t.env.settle()
    info = await t.bot.runtime.service.info(d.game_id, refresh=True)
    assert info.status is GameStatus.ACTIVE
    main: ChannelHandle = t.channel
    t.env.backend.delete_channel(main.id)
    await t.env.settle()
    await assert_stopped(t, d.game_id, "主帖")


async def test_a_stuck_notice_the_game_channel_refuses_goes_to_the_moderators_by_dm(
    table: Table, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The judge keeps failing and the game channel will not take its notice either: the
    moderators are told by DM instead of not at all (the log said they were told)."""
    t = table
    d = Driver(t, "basic")
    await d.start()
    port = t.bot.runtime.port

    async def refusing(*args: object, **kwargs: object) -> None:
        raise discord.Forbidden(_Response(403), {"code": 50013, "message": "Missing Permissions"})

    channel = t.bot.get_channel(t.channel.id)
    assert isinstance(channel, discord.TextChannel)
    # on the class's own dict, and taken off it again after (Messageable's stays as it is)
    monkeypatch.setattr(discord.TextChannel, "send", refusing)
    await port.tell_stuck(d.game_id, 5)
    monkeypatch.undo()
    assert "send" not in vars(discord.TextChannel)
    dms = [m.content for m in t.dms(t.moderator)]
    assert dms[-1].startswith(f"⚠ 第{d.game_id}局：法官暂时无法完成操作（已重试 5 次）")


class _Response:
    """What discord.py's HTTPException reads of a response."""

    def __init__(self, status: int) -> None:
        self.status = status
        self.reason = "Forbidden"


@pytest.mark.table(hosting="forum")
async def test_a_forum_deleted_stops_its_game_named_as_the_forum(table: Table) -> None:
    t = table
    d = Driver(t, "basic")
    await d.start()
    assert t.forum is not None
    t.env.backend.delete_channel(t.forum.id)
    await t.env.settle()
    await assert_stopped(t, d.game_id, "论坛频道", lost="vote")


@pytest.mark.table(hosting="forum")
async def test_a_days_open_vote_post_deleted_is_replaced_and_its_votes_still_count(
    table: Table,
) -> None:
    """An admin deletes the 投票帖 of the day being voted: a new one of that day opens at once,
    linked in the main post; the vote posted in the old one still counts, and one posted in the
    new one counts too."""
    t = table
    d = Driver(t, "basic")
    await d.start()
    await d.quiet_night()
    assert t.forum is not None
    (first,) = vote_posts(t)
    await d.post_vote(1, "投2号", 2)
    t.env.backend.delete_channel(first.id)
    await t.env.settle()
    (again,) = vote_posts(t)
    assert again.id != first.id and again.name == first.name
    assert any(f"<#{again.id}>" in m.content for m in t.channel.history())
    posted = await d.post_vote(3, "投2号", 2)
    state = await t.bot.runtime.service.state(d.game_id)
    assert [(p.seat, p.target, p.void_reason) for p in state.posts] == [(1, 2, None), (3, 2, None)]
    assert state.posts[-1].post_id == str(posted.id)
    assert not await t.bot.runtime.service.repo.undone_effects(d.game_id)


def vote_posts(t: Table) -> list[ChannelHandle]:
    """The forum's 投票帖s there now."""
    assert t.forum is not None
    return [th for th in t.forum.threads if "投票帖" in (th.name or "")]


@pytest.mark.table(hosting="forum")
async def test_a_vote_post_deleted_unseen_holds_nothing_up(
    table: Table, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The day's 投票帖 deleted while the bot did not see it (down, or a gateway gap): the day
    still locks at its deadline (there is nothing to lock in the post), and the night and the
    next day, with its own 投票帖, follow. Before, locking the deleted post failed for good and
    held up every effect after it: the night's DMs, the next day."""
    t = table
    d = Driver(t, "basic")
    await d.start()
    await d.quiet_night()
    monkeypatch.setattr(FaguanBot, "on_raw_thread_delete", _missed)
    (day_one,) = vote_posts(t)
    t.env.backend.delete_channel(day_one.id)
    await t.env.settle()
    await d.lock()
    assert not await t.bot.runtime.service.repo.undone_effects(d.game_id)
    await d.quiet_night()
    assert [p.name for p in vote_posts(t)] == [f"第2天 投票帖（第{d.game_id}局）"]
    assert not await t.bot.runtime.service.repo.undone_effects(d.game_id)


@pytest.mark.table(hosting="forum")
async def test_a_run_off_whose_vote_post_was_deleted_unseen_gets_a_new_one(
    table: Table, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Day 1 ties and its 投票帖 is deleted unseen before the lock: the run-off (PK) opens in
    a new 投票帖 of day 1, linked in the main post, where its votes count."""
    t = table
    d = Driver(t, "basic", tie="revote")
    await d.start()
    await d.quiet_night()
    (first,) = vote_posts(t)
    await d.post_vote(1, "投2号", 2)
    await d.post_vote(2, "投1号", 1)
    monkeypatch.setattr(FaguanBot, "on_raw_thread_delete", _missed)
    t.env.backend.delete_channel(first.id)
    await t.env.settle()
    await d.lock()
    (again,) = vote_posts(t)
    assert again.id != first.id and again.name == first.name
    assert any(f"<#{again.id}>" in m.content for m in t.channel.history())
    state = await t.bot.runtime.service.state(d.game_id)
    assert state.window is not None and state.window.revote == 1
    posted = await d.post_vote(3, "投1号", 1)
    last = list((await t.bot.runtime.service.state(d.game_id)).posts)[-1]
    assert (last.post_id, last.target, last.void_reason) == (str(posted.id), 1, None)
    assert not await t.bot.runtime.service.repo.undone_effects(d.game_id)


async def test_a_game_waits_while_the_bot_is_off_its_server(
    table: Table, caplog: pytest.LogCaptureFixture
) -> None:
    """The bot is kicked (or the server deleted): the game is not stopped but waits, as a start
    leaves the games of a server the bot is not on, its timers dropped: its deadline passing
    locks nothing and nothing is retried there for good (each try an error in the log)."""
    t = table
    d = Driver(t, "basic")
    await d.start()
    t.env.backend.remove_guild(t.guild.id)
    await t.env.settle()
    assert not [
        j.id for j in t.bot.runtime.scheduler.jobs() if j.id.startswith(f"game:{d.game_id}:")
    ]
    before = await t.bot.runtime.service.state(d.game_id)
    await t.env.advance_time(3 * 3600)
    assert await t.bot.runtime.scheduler.run_due() == []
    await t.bot.runtime.deadlines.lock_due(d.game_id)  # a job left from before: nothing
    assert await t.bot.runtime.service.state(d.game_id) == before
    info = await t.bot.runtime.service.info(d.game_id, refresh=True)
    assert info.status is GameStatus.ACTIVE
    assert not [r for r in caplog.records if r.levelname == "ERROR"]


async def test_a_waiting_game_resumes_when_the_bot_is_back_on_its_server(table: Table) -> None:
    """Left and invited back while the game's deadline passed (the server itself kept): the
    game resumes at once, its overdue night locked into the day, its deadline scheduled again."""
    t = table
    d = Driver(t, "basic")
    await d.start()
    guild = t.bot.get_guild(t.guild.id)
    assert guild is not None
    await t.bot.on_guild_remove(guild)
    assert not [
        j.id for j in t.bot.runtime.scheduler.jobs() if j.id.startswith(f"game:{d.game_id}:")
    ]
    await t.env.advance_time(2 * 3600)
    await t.bot.on_guild_join(guild)
    await t.bot.runtime.caught_up()
    await t.env.settle()
    state = await t.bot.runtime.service.state(d.game_id)
    assert state.window is not None and state.window.kind is PhaseKind.DAY
    assert [j.id for j in t.bot.runtime.scheduler.jobs() if j.id == f"game:{d.game_id}:deadline"]
