"""Refusals of the sign-up, the moderators' context menus, /standings and /remind, as people
meet them: an unknown ruleset, a player count or a language the game cannot take, a second
join, a leave without a join, a full sign-up, a start with no sign-up or overtaken by a leave;
a context menu on a member from a channel with no game; the standings naming a player who left;
/remind from a DM. Each is answered to the asker alone, in their language, and changes nothing;
no one learns from a refusal whether someone plays."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
from typing import Any

import pytest
from gamebot import Driver, Table
from simcord import MemberActor, OptionError

from bot.records.i18n import render
from bot.runtime import standings
from bot.runtime.reminders import REMIND_OFF
from engine.rulesets import get_ruleset

SEED = "signup-seed"
pytestmark = pytest.mark.table(seed=SEED)


def private(result: Any) -> str:
    assert result.response is not None and result.ephemeral, result
    return str(result.response.content)


def en(key: str, **params: object) -> str:
    return render("en", key, params)


async def no_lobby(t: Table) -> bool:
    return await t.bot.runtime.service.repo.lobbies.newest(t.channel.id) is None


async def test_game_new_refuses_what_it_cannot_take_and_opens_nothing(table: Table) -> None:
    t = table
    unknown = await t.moderator.slash(t.channel, "game new", ruleset="v9")
    assert private(unknown).startswith("Unknown ruleset “v9”.")
    rules = get_ruleset("basic")
    count = await t.moderator.slash(t.channel, "game new", ruleset="basic", min_players=3)
    assert private(count) == en(
        "setup.player_count",
        ruleset="basic",
        min=rules.min_players,
        max=rules.max_players,
        players=f"3–{rules.max_players}",
    )
    with pytest.raises(OptionError):  # Discord offers the two languages only (choices)
        await t.moderator.slash(t.channel, "game new", ruleset="basic", language="fr")
    assert await no_lobby(t)
    assert t.public() == []  # none of it said in the channel


async def test_a_join_to_a_game_of_several_cards_a_player_names_no_card_number(
    table: Table,
) -> None:
    """5.0 deals two cards a player, numbered at the start (player k holds cards 2k-1 and 2k):
    the join notice says the join order, never "N号", which would name another player's card."""
    t = table
    await t.moderator.slash(t.channel, "game new", ruleset="v5", language="zh-CN")
    first, second = t.players[:2]
    await first.slash(t.channel, "game join")
    joined = await second.slash(t.channel, "game join")
    text = str(joined.response.content)
    assert not joined.ephemeral
    assert text.startswith(f"{t.names[1]} 报名成功（第2位报名，2/"), text
    assert "号" not in text.split("牌位号")[0], text
    # a game of one card a player: the join order is the seat, "N号" as before
    other = t.guild.create_text_channel("game-2")
    await t.moderator.slash(other, "game new", ruleset="v2", language="zh-CN")
    plain = await first.slash(other, "game join")
    assert str(plain.response.content).startswith("1号 "), plain.response.content


async def test_sign_up_refusals_are_private_and_change_nothing(table: Table) -> None:
    t = table
    none = await t.moderator.slash(t.channel, "game start")
    assert private(none) == en("notice.no_lobby")
    opened = await t.moderator.slash(
        t.channel, "game new", ruleset="basic", min_players=6, max_players=6
    )
    assert not opened.ephemeral
    first, *others = t.players
    left = await first.slash(t.channel, "game leave")
    assert private(left) == en("notice.not_joined")
    for member in t.players[:6]:
        await member.slash(t.channel, "game join")
    again = await first.slash(t.channel, "game join")
    assert private(again) == en("notice.already_joined")
    full = await t.player(7).slash(t.channel, "game join")
    assert private(full) == en("notice.lobby_full", max=6)
    lobby = await t.bot.runtime.service.repo.lobbies.newest(t.channel.id)
    assert lobby is not None
    assert [p.user_id for p in lobby.players] == [m.id for m in t.players[:6]]
    public = t.public()
    assert len(public) == 1 + 6  # the opening and six joins; no refusal among them
    del others


async def test_a_start_overtaken_by_a_leave_is_refused_privately(
    table: Table, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The moderator's start passes its checks with exactly the minimum signed up; a player's
    leave is recorded before the start is: the start is refused, to the moderator alone, and no
    game begins (no role message to anyone)."""
    t = table
    await t.moderator.slash(t.channel, "game new", ruleset="basic", min_players=6)
    for member in t.players[:6]:
        await member.slash(t.channel, "game join")
    runtime = t.bot.runtime
    start_game = runtime.start_game
    lobby = await runtime.service.repo.lobbies.newest(t.channel.id)
    assert lobby is not None

    async def overtaken(*args: Any, **kwargs: Any) -> Any:
        await runtime.service.repo.lobbies.leave(lobby.id, t.player(6).id)  # came first
        return await start_game(*args, **kwargs)

    monkeypatch.setattr(runtime, "start_game", overtaken)
    result = await t.moderator.slash(t.channel, "game start")
    assert private(result) == en("notice.too_few", count=5, min=6)
    assert t.bot.runtime.routes.channel_games.get(t.channel.id) is None
    assert all(t.dms(m) == [] for m in t.players)


async def test_a_context_menu_from_a_channel_without_a_game(table: Table) -> None:
    """From a channel with no game, a moderator's "Modkill" on a member finds that member's
    only game (the form opens); on someone in no game, the moderator is told there is none.
    Anyone else is told it is for moderators, whether or not the member plays."""
    t = table
    d = Driver(t, "basic")
    await d.start()
    elsewhere = t.guild.create_text_channel("闲聊")
    shown = await t.moderator.context_menu(elsewhere, "Modkill", t.player(3))
    assert shown.modal is not None
    assert shown.modal["custom_id"].startswith(f"faguan:modkill:{d.game_id}:")
    nobody = await t.moderator.context_menu(elsewhere, "Replace", t.outside)
    assert private(nobody) == en("notice.no_game")
    for target in (t.player(3), t.outside):
        refused = await t.player(1).context_menu(elsewhere, "Modkill", target)
        assert private(refused) == en("notice.moderators_only")
    state = await t.bot.runtime.service.state(d.game_id)
    assert all(seat.alive for seat in state.seats)
    assert [m for m in elsewhere.history()] == []


async def test_standings_name_a_player_who_left_by_their_id(table: Table) -> None:
    """The season table after a finished game, one of whose players has left the server: the
    others by name, the one who left by their id (Discord has no member to name)."""
    t = table
    d = Driver(t, "basic")
    await d.start()
    ended = await t.moderator.slash(t.channel, "mod end", winner="good")
    assert ended.ephemeral
    await t.env.settle()
    leaver = t.player(4)
    t.guild.remove_member(leaver)
    await t.env.settle()
    shown = await t.moderator.slash(t.channel, "standings")
    assert not shown.ephemeral
    table_text = shown.response.content
    assert str(leaver.id) in table_text
    assert "玩家1" in table_text and "玩家4" not in table_text


async def test_two_players_remind_off_at_once_are_both_kept(
    table: Table, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two `/remind off` on one server interleaved at every await: a read of the settings by
    one (if the command reads them apart from its write) waits until the other has read too.
    Each player's opt-out is kept: the list is edited as stored, in one transaction."""
    t = table
    first, second = t.player(1), t.player(2)
    repo = t.bot.runtime.service.repo
    read = repo.get_settings
    both_read = asyncio.Barrier(2)

    async def read_then_wait(server_id: int) -> dict[str, Any]:
        settings = await read(server_id)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(both_read.wait(), 1.0)
        return settings

    monkeypatch.setattr(repo, "get_settings", read_then_wait)
    slash = inspect.unwrap(MemberActor.slash)  # both sent before either is answered
    await asyncio.gather(
        slash(first, t.channel, "remind", state="off"),
        slash(second, t.channel, "remind", state="off"),
    )
    await t.env.settle()
    off = {int(u) for u in (await read(t.guild.id)).get(REMIND_OFF, [])}
    assert off == {first.id, second.id}


async def test_two_moderators_new_season_at_once_begin_one_season(
    table: Table, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two `/mod new-season` at once, each having read season 1 before either wrote: one
    begins season 2 and announces it; the other is told privately the season has changed, and
    no second announcement is made."""
    t = table
    second = t.guild.add_member(t.env.create_user("管理乙"))
    t.env.backend.add_member_role(t.guild.id, second.id, t.mod_role.id)
    await t.env.settle()
    read = standings.current_season
    both_read = asyncio.Barrier(2)

    async def read_then_wait(repo: Any, server_id: int) -> str:
        season = await read(repo, server_id)
        await asyncio.wait_for(both_read.wait(), 5.0)
        return season

    monkeypatch.setattr(standings, "current_season", read_then_wait)
    slash = inspect.unwrap(MemberActor.slash)
    answers = await asyncio.gather(
        slash(t.moderator, t.channel, "mod new-season"), slash(second, t.channel, "mod new-season")
    )
    await t.env.settle()
    told = sorted(answers, key=lambda a: bool(a.ephemeral))
    assert not told[0].ephemeral and told[0].response.content == render(
        "zh-CN", "standings.new_season", {"old": "1", "new": "2"}
    )
    assert private(told[1]) == en("standings.season_moved", now="2")
    assert await read(t.bot.runtime.service.repo, t.guild.id) == "2"


async def test_remind_from_a_dm_covers_every_server_of_the_players_games(table: Table) -> None:
    """`/remind off` in a DM turns the reminders off on the server of each game the player is in,
    and says so privately in their language; `on` turns them back on."""
    t = table
    d = Driver(t, "basic")
    await d.start()
    member = t.player(2)
    off = await member.user.slash("remind", state="off")
    assert private(off) == en("remind.off")
    settings = await t.bot.runtime.service.repo.get_settings(t.guild.id)
    assert member.id in [int(u) for u in settings.get(REMIND_OFF, [])]
    on = await member.user.slash("remind", state="on")
    assert private(on) == en("remind.on")
    settings = await t.bot.runtime.service.repo.get_settings(t.guild.id)
    assert member.id not in [int(u) for u in settings.get(REMIND_OFF, [])]
    del d


async def test_new_season_refuses_a_blank_name_or_the_current_one(table: Table) -> None:
    """A name of spaces once began season "" (announced as "第赛季", read back as season 1);
    it, and the current season's own name, are refused privately: nothing stored or said."""
    t = table
    repo = t.bot.runtime.service.repo
    for name in ("   ", "1", " 1 "):
        refused = await t.moderator.slash(t.channel, "mod new-season", name=name)
        assert private(refused) == en("standings.bad_season_name", season="1"), name
    assert standings.SEASON not in await repo.get_settings(t.guild.id)
    begun = await t.moderator.slash(t.channel, "mod new-season", name=" 春季 ")
    assert not begun.ephemeral
    again = await t.moderator.slash(t.channel, "mod new-season", name="春季")
    assert private(again) == en("standings.bad_season_name", season="春季")
    assert await standings.current_season(repo, t.guild.id) == "春季"
    assert t.public() == [render("zh-CN", "standings.new_season", {"old": "1", "new": "春季"})]


def test_the_next_season_counts_on_from_ascii_digits_only() -> None:
    """ "②" and "²" are digits to str.isdigit(), yet int() refuses them."""
    assert standings.next_season_name("9") == "10"
    assert standings.next_season_name("②") == "② 2"
    assert standings.next_season_name("²") == "² 2"
    assert standings.next_season_name("٣") == "٣ 2"  # a decimal to int(), but not what we count


async def test_standings_of_a_season_name_too_long_to_exist(table: Table) -> None:
    t = table
    refused = await t.player(1).slash(t.channel, "standings", season="春" * 3000)
    assert private(refused) == en("standings.season_too_long", max=32)


async def test_game_new_refuses_a_deadline_it_cannot_read_in_the_askers_words(
    table: Table,
) -> None:
    """The config's own message is English, for operators: the asker gets the catalog's, with
    what they typed (a long one cut) and the forms accepted."""
    t = table
    for option, typed, shown in (
        ("power_deadline", "25:99", "25:99"),
        ("vote_deadline", "forever", "forever"),
        ("vote_deadline", "9" * 3000, "9" * 40 + "…"),
    ):
        refused = await t.moderator.slash(t.channel, "game new", ruleset="basic", **{option: typed})
        assert private(refused) == en("notice.bad_deadline", value=shown, days=30), option
    assert await no_lobby(t)
    assert t.public() == []


async def test_remind_from_a_dm_by_someone_in_no_game(table: Table) -> None:
    """In a DM the servers come from the player's games: with none, nothing can be switched,
    and they are told to use /remind in the server (not that reminders are off)."""
    t = table
    answer = await t.outside.user.slash("remind", state="off")
    assert private(answer) == en("remind.no_server")
    assert REMIND_OFF not in await t.bot.runtime.service.repo.get_settings(t.guild.id)


@pytest.mark.parametrize("forum_game", [True, False])
@pytest.mark.parametrize("inside", ["forum post", "text channel's thread"])
async def test_game_new_from_a_thread_is_refused(
    table: Table, inside: str, forum_game: bool
) -> None:
    """The teams' private threads are made in the channel /game new is run from (a forum
    game's too): a thread holds none (a forum post's parent is the forum, which holds none
    either), so the sign-up is refused before anything is made."""
    t = table
    forum = t.guild.create_forum_channel("论坛")
    parent = forum if inside == "forum post" else t.channel
    made = t.env.backend.create_thread(parent.id, "闲聊", t.moderator.id)
    (thread,) = [c for c in parent.threads if c.id == made.id]
    options: dict[str, Any] = {"forum": forum} if forum_game else {}
    refused = await t.moderator.slash(thread, "game new", ruleset="v2", **options)
    assert private(refused) == en("notice.needs_text_channel")
    assert [c.id for c in forum.threads] == ([made.id] if parent is forum else [])
    assert await t.bot.runtime.service.repo.lobbies.newest(thread.id) is None


@pytest.mark.parametrize("forum_game", [True, False])
async def test_game_new_in_an_announcement_channel_is_refused(
    table: Table, forum_game: bool
) -> None:
    """Discord makes no private thread in an announcement channel: the teams' threads could
    not be made there, so the sign-up is refused before anything is made (a forum game's too)."""
    t = table
    news = t.guild.create_news_channel("公告")
    forum = t.guild.create_forum_channel("论坛")
    options: dict[str, Any] = {"forum": forum} if forum_game else {}
    refused = await t.moderator.slash(news, "game new", ruleset="v2", **options)
    assert private(refused) == en("notice.needs_text_channel")
    assert forum.threads == [] and list(news.history()) == []
    assert await t.bot.runtime.service.repo.lobbies.newest(news.id) is None


async def test_a_sign_up_opened_over_one_tells_its_players_they_are_no_longer_in(
    table: Table,
) -> None:
    """`/game new` where a sign-up is open replaces it (how a moderator changes its options):
    the players who had joined are named in the new sign-up's post, told to join again, not
    left believing they are in."""
    t = table
    await t.moderator.slash(t.channel, "game new", ruleset="v2", language="en")
    joined = t.players[:2]
    for member in joined:
        await member.slash(t.channel, "game join")
    again = await t.moderator.slash(t.channel, "game new", ruleset="v2", language="en")
    assert not again.ephemeral
    told = en("notice.lobby_replaced", players=" ".join(f"<@{m.id}>" for m in joined))
    assert str(again.response.content).endswith("\n" + told)
    lobby = await t.bot.runtime.service.repo.lobbies.newest(t.channel.id)
    assert lobby is not None and lobby.players == () and lobby.replaced == ()

    third = await t.moderator.slash(t.channel, "game new", ruleset="v2", language="en")
    before_names = en("notice.lobby_replaced", players="\0").split("\0")[0]
    assert before_names not in str(third.response.content)  # nobody had joined: nothing to tell


async def test_a_sign_up_for_exactly_n_players_says_n_not_a_range(table: Table) -> None:
    t = table
    exact = await t.moderator.slash(
        t.channel, "game new", ruleset="v2", min_players=8, max_players=8, language="en"
    )
    assert "[Sign-up] v2 2.0 标准版 (standard), 8 players;" in str(exact.response.content)
    ranged = await t.moderator.slash(
        t.channel, "game new", ruleset="v2", min_players=8, max_players=9, language="zh-CN"
    )
    assert "8–9 人；" in str(ranged.response.content)
