"""Moderators and the long game on simcord: every override (announced in the game channel and in
the override log, never with hidden information), a substitute mid-night, a pause across a
deadline, penalties, /mod pending, reminders across a restart, standings over three games, and
the record page (JSON with message links, HTML rendered in headless Chromium)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import discord
import pytest
from chromium import ink, screenshot
from envclock import EnvClock
from gamebot import GUILD_ID, Driver, Table, make_bot, running_table, settings_for

from bot.discord.client import FaguanBot, create_bot
from bot.records.i18n import render
from bot.records.render import MESSAGE_LIMIT
from bot.runtime.timing import DeadlineScheduler
from engine.model import Camp
from engine.rulesets import rules_for

SEED = "long-seed"
ROLE_WORDS = ("杀手", "警察", "平民", "killer", "police", "civilian")
pytestmark = pytest.mark.table(seed=SEED)


def reminder_bot(db: Path, clock: EnvClock) -> FaguanBot:
    """A bot that reminds players 30 minutes before each (1-hour) deadline."""
    return create_bot(
        settings_for(db, reminder="30m"),
        clock=clock,
        scheduler=DeadlineScheduler(clock),
        seed_source=lambda: SEED,
    )


def seats(roles: dict[int, str], role: str) -> list[int]:
    return [s for s, r in sorted(roles.items()) if r == role]


def overrides(t: Table) -> list[str]:
    return [p for p in t.public() if p.startswith("【管理】")]


async def restart(t: Table, bot: FaguanBot) -> FaguanBot:
    await t.env.restart_bot(bot)
    await t.env.settle()
    return bot


def bot_member(t: Table, user_id: int) -> Any:
    guild = t.bot.get_guild(GUILD_ID)
    assert guild is not None
    return guild.get_member(user_id)


async def test_every_override_is_announced_and_logged_without_hidden_information(
    table: Table,
) -> None:
    t = table
    log = t.guild.create_text_channel("mod-log")
    refused = await t.player(1).slash(t.channel, "mod log-channel", channel=log)
    assert refused.ephemeral and "Only moderators" in refused.response.content
    for command, options in [("mod pending", {}), ("mod penalty", {"reason": "x", "seat": 1})]:
        refused = await t.player(1).slash(t.channel, command, **options)
        assert refused.ephemeral and "Only moderators" in refused.response.content
    r = await t.moderator.slash(t.channel, "mod log-channel", channel=log)
    assert r.ephemeral and str(log.id) in r.response.content

    d = Driver(t, "v2")
    roles = await d.start()
    police = seats(roles, "police")
    civ = seats(roles, "civilian")
    mod = t.moderator
    await mod.slash(t.channel, "mod extend", minutes=30)
    await mod.slash(t.channel, "mod shorten", minutes=10)
    await mod.slash(t.channel, "mod set-deadline", time="2026-01-01 10:00")
    await mod.slash(t.channel, "mod pause")
    await mod.slash(t.channel, "mod resume")
    await mod.slash(t.channel, "mod penalty", team="killers", reason="诈尸")
    await mod.slash(t.channel, "mod replace", seat=police[0], member=t.outside)
    await mod.slash(t.channel, "mod advance")
    post = await d.post_vote(civ[1], f"投 {civ[2]}号", civ[2])
    await mod.slash(t.channel, "mod void", message_id=str(post.id), reason="代投")
    await mod.slash(t.channel, "mod modkill", seat=civ[3])
    await mod.slash(t.channel, "mod end", winner="draw")

    state = await t.bot.runtime.service.state(d.game_id)
    assert state.over and state.result is not None and state.result.winner is Camp.DRAW
    public = overrides(t)
    assert len(public) == 10  # and the end is announced as the game over (【终局】)
    assert any("终局" in p and "由管理员宣布" in p for p in t.public())
    logged = [m.content for m in log.history()]
    assert len(logged) == 11
    for line in logged:
        assert f"<@{mod.user.id}>" in line and re.search(r"<t:\d+:F>", line), line
    commands = [
        "延长",
        "缩短",
        "截止时间设为",
        "暂停",
        "恢复",
        "处罚",
        "替补",
        "提前截止",
        "无效",
        "移出",
        "结束游戏",
    ]
    for word, line in zip(commands, logged[:11], strict=True):
        assert word in line, (word, line)
    # who took a seat, who was removed, which post was void: never what role they had
    for line in [*public, *logged]:
        if "处罚" in line:
            continue  # the penalty names the team it punishes, by rule
        assert not any(word in line for word in ROLE_WORDS), line
    reply = [m for m in t.channel.history() if m.reference and m.reference.message_id == post.id]
    assert any("代投" in m.content for m in reply)


async def test_a_substitute_mid_night_takes_the_seat(table: Table) -> None:
    t = table
    d = Driver(t, "v2")
    roles = await d.start()
    k1, k2 = seats(roles, "killer")
    victim = seats(roles, "civilian")[0]
    await d.power_by_menu(k2, "kill", victim)  # the team's submission stays with the seat
    old = t.player(k1)
    await t.moderator.slash(t.channel, "mod replace", seat=k1, member=t.outside)
    await t.env.settle()

    dms = list(t.outside.user.dm_channel.history())
    role_dm = next(m for m in dms if m.embeds)
    embed = role_dm.embeds[0]
    assert "杀手" in str(embed.to_dict()) and str(k2) in str(embed.to_dict())  # role, teammate
    custom_ids = [c.custom_id for row in role_dm.components for c in row.children]
    assert f"faguan:confirm:{d.game_id}:{k1}" in custom_ids
    menu = next(m for m in dms if "行使" in m.content)  # tonight's power menu
    assert menu.components

    info = await t.bot.runtime.service.info(d.game_id)
    thread = t.env.backend.get_channel(int(info.channels["thread_killers"]))
    assert t.outside.user.id in thread.thread_members
    assert old.user.id not in thread.thread_members
    role_id = int(info.channels["players_role"])
    assert role_id in [r.id for r in bot_member(t, t.outside.user.id).roles]
    assert role_id not in [r.id for r in bot_member(t, old.user.id).roles]
    refused = await old.slash(t.channel, "act", power="kill", target=victim)
    assert refused.ephemeral and "not a player" in refused.response.content
    late_click = await old.user.click(
        next(m for m in t.dms(old) if m.embeds), custom_id=f"faguan:confirm:{d.game_id}:{k1}"
    )
    assert "not a player" in late_click.response.content

    # the substitute acts for the seat with the menu the judge sent them
    t.players[k1 - 1] = t.outside
    await d.power_by_menu(k1, "kill", victim)
    r = await t.outside.user.click(role_dm, custom_id=f"faguan:confirm:{d.game_id}:{k1}")
    assert r.response is not None
    await d.lock()
    state = await t.bot.runtime.service.state(d.game_id)
    assert not state.seat(victim).alive
    assert state.seat(k1).player == str(t.outside.user.id)
    assert state.seat(k1).former_players == (str(old.user.id),)


async def test_a_pause_across_a_deadline_freezes_the_remaining_time(table: Table) -> None:
    t = table
    d = Driver(t, "v2")
    await d.start()
    state = await t.bot.runtime.service.state(d.game_id)
    deadline = state.deadline
    assert deadline is not None
    await t.advance(40 * 60)  # 20 minutes left
    await t.moderator.slash(t.channel, "mod pause")
    await t.advance(3 * 3600)  # far past the old deadline
    assert await t.bot.runtime.scheduler.run_due() == []
    status = await t.player(2).slash(t.channel, "game status")
    assert "Night 1 · paused; 20 min left once the clock resumes" in status.response.content
    new = await restart(t, make_bot(t.db, t.clock, seed=SEED))  # type: ignore[attr-defined]
    state = await new.runtime.service.state(d.game_id)
    assert state.paused and state.phase is not None and state.phase.label() == "night 1"
    await t.moderator.slash(t.channel, "mod resume")
    state = await new.runtime.service.state(d.game_id)
    now = int(t.env.now().timestamp() * 1000)
    assert state.deadline == now + 20 * 60_000
    await d.lock()
    state = await new.runtime.service.state(d.game_id)
    assert state.phase is not None and state.phase.label() == "day 1"
    assert any("游戏暂停" in p for p in overrides(t)) and any("游戏继续" in p for p in overrides(t))


async def test_penalty_pending_modkill_and_void(table: Table) -> None:
    t = table
    d = Driver(t, "v2")
    roles = await d.start()
    k1, k2 = seats(roles, "killer")
    p1, p2 = seats(roles, "police")
    civ = seats(roles, "civilian")
    r = await t.moderator.slash(t.channel, "mod pending")
    assert r.ephemeral
    text = r.response.content
    assert "Role (身份) not confirmed" in text and "Power not used yet" in text
    line = next(x for x in text.splitlines() if x.startswith("Power not used"))
    assert all(f"#{s} " in line for s in (k1, k2, p1, p2))
    assert not any(f"#{s} " in line for s in civ)
    await t.player(k1).user.click(
        next(m for m in t.dms(t.player(k1)) if m.embeds),
        custom_id=f"faguan:confirm:{d.game_id}:{k1}",
    )
    await d.power_by_menu(k1, "kill", civ[0])
    text = (await t.moderator.slash(t.channel, "mod pending")).response.content
    line = next(x for x in text.splitlines() if x.startswith("Power not used"))
    assert f"#{k1} " not in line and f"#{k2} " not in line and f"#{p1} " in line
    unconfirmed = next(x for x in text.splitlines() if x.startswith("Role"))
    assert f"#{k1} " not in unconfirmed and f"#{k2} " in unconfirmed
    assert "kill" not in text and f"#{civ[0]} " in unconfirmed  # never what was submitted

    # a team penalty on a power the team does not have (the rules are public) would stop
    # nothing: refused, to the moderator alone, naming the team's powers; nothing announced
    refused = await t.moderator.slash(
        t.channel, "mod penalty", team="police", power="kill", reason="诈尸"
    )
    assert refused.ephemeral
    assert refused.response.content == (
        "In this game's rules the police (警察) have no kill (杀人) power, so this penalty would "
        "stop nothing; their night powers: check (验人). Nothing changed."
    )
    assert overrides(t) == []
    # 诈尸: the killers lose their kill for night 2
    await t.moderator.slash(t.channel, "mod penalty", team="killers", reason="诈尸")
    await d.lock()
    assert any("处罚（诈尸）：杀手第2夜不能行使" in p for p in overrides(t))
    # void a vote post with a reason; modkill with last words (v2: the first N leavers)
    post = await d.post_vote(civ[1], f"投 {k1}号", k1)
    await d.post_vote(civ[2], f"投 {k2}号", k2)
    await t.moderator.slash(t.channel, "mod void", message_id=str(post.id), reason="代投")
    await t.moderator.slash(t.channel, "mod modkill", seat=civ[3])
    assert any("遗言" in p and f"{civ[3]}号" in p for p in t.public())
    text = (await t.moderator.slash(t.channel, "mod pending")).response.content
    votes = next(x for x in text.splitlines() if x.startswith("Not voted"))
    assert f"#{civ[1]} " in votes and f"#{civ[2]} " not in votes and f"#{civ[3]} " not in votes
    await d.lock()
    state = await t.bot.runtime.service.state(d.game_id)
    day = [r for r in state.history if type(r).__name__ == "DayRecord"][-1]
    assert dict(day.tally) == {k2: 1}
    refused = await t.player(k1).slash(t.channel, "act", power="kill", target=civ[1])
    assert "penalty" in refused.response.content and "night 2" in refused.response.content
    r = await t.player(p1).slash(t.channel, "act", power="check", target=k1)
    assert r.response.content.startswith(f"Received: check (验人) → #{k1} ")


@pytest.mark.table(reminder="30m")
async def test_reminders_are_sent_once_even_across_a_restart(table: Table) -> None:
    t = table
    d = Driver(t, "v2")
    roles = await d.start()
    k1, _k2 = seats(roles, "killer")
    p1, p2 = seats(roles, "police")
    civ = seats(roles, "civilian")
    jobs = {j.id for j in t.bot.runtime.scheduler.jobs()}
    assert f"game:{d.game_id}:remind:night-1" in jobs
    await d.power_by_menu(k1, "kill", civ[0])  # the killers' team is done
    await t.advance(30 * 60)
    fired = await t.bot.runtime.scheduler.run_due()
    await t.env.settle()
    assert fired == [f"game:{d.game_id}:remind:night-1"]

    def reminded(seat: int) -> int:
        return len([m for m in t.dms(t.player(seat)) if m.content.startswith("【提醒】")])

    assert [reminded(s) for s in range(1, 9)] == [1 if s in (p1, p2) else 0 for s in range(1, 9)]
    new = await restart(t, reminder_bot(t.db, t.clock))  # type: ignore[attr-defined]
    assert f"game:{d.game_id}:remind:night-1" in {j.id for j in new.runtime.scheduler.jobs()}
    await new.runtime.scheduler.run_due()
    await t.env.settle()
    assert [reminded(s) for s in range(1, 9)] == [1 if s in (p1, p2) else 0 for s in range(1, 9)]

    # day 1: a player who turned reminders off, and one who already voted, get none
    off = await t.player(p2).slash(t.channel, "remind", state="off")
    assert off.ephemeral and "off" in off.response.content
    await d.lock()
    await d.post_vote(civ[1], f"投 {k1}号", k1)
    await t.advance(30 * 60)
    assert await new.runtime.scheduler.run_due() == [f"game:{d.game_id}:remind:day-1"]
    await t.env.settle()
    expected = {s: 1 for s in range(1, 9)}
    expected.update({p1: 2, p2: 1, civ[0]: 0, civ[1]: 0})
    assert {s: reminded(s) for s in range(1, 9)} == expected
    day_note = [m.content for m in t.dms(t.player(p1)) if m.content.startswith("【提醒】")][-1]
    assert "投票" in day_note and "<t:" in day_note


async def _natural_good_win(t: Table, d: Driver, roles: dict[int, str]) -> None:
    """Two quiet nights; each day the players vote a killer out: the good side wins."""
    killers = seats(roles, "killer")
    for killer in killers:
        await d.lock()  # the night: nobody acts
        state = await t.bot.runtime.service.state(d.game_id)
        for seat in state.alive():
            if seat != killer:
                await d.post_vote(seat, f"投 {killer}号", killer)
        await d.lock()


async def test_standings_over_three_games(table: Table) -> None:
    t = table
    expected: dict[int, list[int]] = {}  # user id → [games, wins, points]
    results = []
    for number, end in enumerate([None, "killers", "draw"]):
        if number:
            t.channel = t.guild.create_text_channel(f"game-{number + 1}")
        d = Driver(t, "v2")
        roles = await d.start()
        if end is None:
            await _natural_good_win(t, d, roles)
        else:
            await t.moderator.slash(t.channel, "mod end", winner=end)
        state = await t.bot.runtime.service.state(d.game_id)
        assert state.result is not None
        results.append(state.result.winner.value)
        rules = rules_for(state)
        for seat in state.seats:
            row = expected.setdefault(int(seat.player), [0, 0, 0])
            row[0] += 1
            row[1] += rules.camp_of(seat) == state.result.winner
            row[2] += dict(state.result.scores)[seat.seat]
    assert results == ["good", "killers", "draw"]

    new = await restart(t, make_bot(t.db, t.clock, seed=SEED))  # type: ignore[attr-defined]
    r = await t.player(1).slash(t.channel, "standings")
    assert not r.ephemeral
    lines = r.response.content.splitlines()
    assert lines[0] == "【积分榜】第1赛季"  # public: the server's language, not the asker's (en)
    rows = []
    for line in lines[2:]:
        m = re.fullmatch(r"(\d+)\. (\S+) — (\d+)局 · (\d+)胜 · (-?\d+)分", line)
        assert m, line
        rows.append((int(m[1]), m[2], int(m[3]), int(m[4]), int(m[5])))
    by_name = {name: (games, wins, points) for _, name, games, wins, points in rows}
    for i, member in enumerate(t.players):
        assert by_name[t.names[i]] == tuple(expected[member.user.id]), t.names[i]
    points = [p for *_, p in rows]
    assert points == sorted(points, reverse=True) and [r[0] for r in rows] == list(range(1, 9))
    stored = await new.runtime.service.repo.standings(GUILD_ID, "1")
    assert sum(row.games for row in stored) == 24  # recovery never counts a game twice

    refused = await t.player(1).slash(t.channel, "mod new-season")
    assert "Only moderators" in refused.response.content
    await t.moderator.slash(t.channel, "mod new-season")
    r = await t.player(1).slash(t.channel, "standings")
    assert r.response.content.splitlines()[:2] == [
        "【积分榜】第2赛季",
        "本赛季还没有结束的对局。",
    ]
    old = await t.player(1).slash(t.channel, "standings", season="1")
    assert len(old.response.content.splitlines()) == 10


async def test_standings_with_long_names_fit_in_one_message(tmp_path: Path) -> None:
    """32 players of two 16-player games, each with a display name of Discord's longest (32
    characters), and an English server: 30 rows would pass Discord's 2,000 characters. The
    table is one message within the limit: the top rows in rank order, whole, then a line
    saying how many players are not listed."""
    async with running_table(tmp_path / "g.db", 0, EnvClock(), SEED, language="en") as t:
        members = [
            t.guild.add_member(
                t.env.create_user(f"long{i}"),
                nick=(f"P{i:02d} " + "Very Long Display Name" * 2)[:32],
            )
            for i in range(1, 33)
        ]
        for i in range(2):
            t.players = members[16 * i : 16 * (i + 1)]
            if i:
                t.channel = t.guild.create_text_channel("game-2")
            await Driver(t, "v2").start()
            await t.moderator.slash(t.channel, "mod end", winner="killers" if i else "good")
        names = {m.id: m.member.display_name for m in members}
        assert {len(name) for name in names.values()} == {32}
        r = await t.players[0].slash(t.channel, "standings")
        assert not r.ephemeral and r.followups == []
        text = r.response.content
        assert len(text) <= MESSAGE_LIMIT
        title, header, *rows, more = text.splitlines()
        assert title == "[Standings] Season 1" and header.startswith("Rank. Player")
        stored = await t.bot.runtime.service.repo.standings(GUILD_ID, "1")
        assert len(stored) == 32 and 20 < len(rows) < 30  # cut before SHOWN (30) by length
        assert (
            rows
            == [  # "1 game · 0 wins · -10 points": each count with its noun
                f"{rank}. {names[row.user_id]} — {row.games} game{'s' * (row.games != 1)} · "
                f"{row.wins} win{'s' * (row.wins != 1)} · {row.points} point{'s' * (abs(row.points) != 1)}"
                for rank, row in enumerate(stored[: len(rows)], 1)
            ]
        )
        assert more == render("en", "standings.more", {"count": 32 - len(rows)})


async def test_game_record_json_links_and_html_page_render_in_chromium(
    table: Table, tmp_path: Path
) -> None:
    t = table
    d = Driver(t, "v2")
    roles = await d.start()
    await t.moderator.slash(t.channel, "mod extend", minutes=5)
    await _natural_good_win(t, d, roles)
    r = await t.player(3).slash(t.channel, "game record")
    files = {a.filename: a for a in r.response.attachments}
    assert set(files) == {f"faguan-game-{d.game_id}.json", f"faguan-game-{d.game_id}.html"}

    async def read(name: str) -> bytes:
        attachment = files[name]
        try:
            return await attachment.read()
        except Exception:
            data = t.env.backend.cdn.get(attachment.url)
            assert data is not None
            return data

    record = json.loads(await read(f"faguan-game-{d.game_id}.json"))
    days = [p for p in record["phases"] if p["phase"] == "day"]
    assert days and all(p["posts"] for p in days)
    for day in days:
        for post in day["posts"]:
            assert post["link"] == (
                f"https://discord.com/channels/{GUILD_ID}/{t.channel.id}/{post['post_id']}"
            )
        assert {p["by"] for p in day["posts"]} == set(day["votes"])
    assert record["result"]["winner"] == "good" and record["seed"] == SEED
    assert record["overrides"][0]["command"] == "extend" and "at" in record["overrides"][0]

    page = (await read(f"faguan-game-{d.game_id}.html")).decode()
    assert "<script" not in page and "http://" not in page.replace('xmlns="http://', "")
    assert re.search(r"""(src|href)=["']https?://(?!discord\.com/channels/)""", page) is None
    assert "<svg" in page and record["commitment"] in page and "faguan verify" in page
    path = tmp_path / "record.html"
    path.write_text(page, "utf-8")
    shot = screenshot(path)
    (tmp_path / "record.png").write_bytes(shot.png)
    assert shot.console == []
    covered, colours = ink(shot.png)
    assert covered > 0.05 and colours > 50, (covered, colours)


def test_the_chromium_check_catches_errors_and_blank_pages(tmp_path: Path) -> None:
    bad = tmp_path / "bad.html"
    bad.write_text("<!DOCTYPE html><p>x</p><script>console.error('boom'); nope();</script>")
    assert len(screenshot(bad, width=400, height=300).console) == 2
    blank = tmp_path / "blank.html"
    blank.write_text("<!DOCTYPE html><title>blank</title>")
    shot = screenshot(blank, width=400, height=300)
    assert shot.console == [] and ink(shot.png) == (0.0, 1)


async def test_standings_show_names_as_they_read_and_wait_for_members_who_left(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A display name's Markdown ("~~", "*") is shown as typed, not as formatting of the table;
    a player who has left the server is looked up of Discord after a "thinking…" answer (one
    request per such player: more than a few would pass Discord's 3 s for a first answer), and
    the table comes as its follow-up."""
    async with running_table(tmp_path / "g.db", 8, EnvClock(), SEED) as t:
        marked = t.guild.add_member(t.env.create_user("marked"), nick="~~星~~*号*")
        t.players[0] = marked
        d = Driver(t, "v2")
        await d.start()
        await t.moderator.slash(t.channel, "mod end", winner="good")
        gone = t.players[1]
        t.guild.remove_member(gone)
        await t.env.settle()
        deferred = []
        defer = discord.InteractionResponse.defer

        async def counted(self: Any, **kwargs: Any) -> Any:
            deferred.append(kwargs)
            return await defer(self, **kwargs)

        monkeypatch.setattr(discord.InteractionResponse, "defer", counted)
        r = await t.players[2].slash(t.channel, "standings")
        assert deferred == [{"thinking": True}] and not r.ephemeral
        table = r.response.content
        assert "\\~\\~星\\~\\~\\*号\\*" in table and "~~星~~" not in table.replace("\\~", "")
        assert f"{gone.user.id}" in table or gone.user.name in table
