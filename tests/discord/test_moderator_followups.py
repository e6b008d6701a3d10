"""Follow-ups to the moderator audit, on simcord (each test failed before its fix):

- `/mod new-season` with an earlier season's name reopened that season's table, later games
  counted on from its old points: it is refused, the name given and a free one suggested, and
  the default next name skips the names earlier seasons used.
- A Modkill / Replace / Void form opened before a restart (or kept past its timeout) and sent
  after it got no answer at all ("Something went wrong" on Discord): it is told the form expired,
  nothing done. Last words typed into such a box are submitted all the same (its custom id names
  the game), so they are not lost; the engine refuses them once their window has closed.
- The override log named no phase ("—") for an override given in the warm-up (游戏热身).
- A forum game's 投票帖 kept the deadline it opened with after `/mod extend`, pause, resume or a
  run-off: the notice of the clock is posted there too (once, a retry included), and a run-off
  names its own deadline there.
- `/game new power_deadline:２２：００` (full-width, as a Chinese keyboard types it) was refused.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from faultkit import drain
from gamebot import Driver, Table, by_role
from test_moderator_audit import en, private, speaking

from bot.config import parse_deadline_rule
from bot.discord.client import create_bot
from bot.discord.cogs.game import read_deadline
from bot.discord.cogs.moderator import unused_season_name
from bot.discord.cogs.play import _typed
from bot.discord.vote_threads import deadline_post
from bot.records.i18n import render
from bot.runtime import standings
from bot.runtime.timing import DeadlineScheduler
from engine.effects import Announce, params
from engine.model import Seat

SEED = "followups-seed"
DOCS = Path(__file__).resolve().parents[2] / "docs"


pytestmark = pytest.mark.table(seed=SEED)


async def restart(t: Table) -> None:
    """The bot restarted: a new process, on the same database and clock, holding no form."""
    old = t.bot
    clock = old.runtime.clock
    bot = create_bot(
        old.settings, clock=clock, scheduler=DeadlineScheduler(clock), seed_source=lambda: SEED
    )
    await t.env.restart_bot(bot)
    await t.env.settle()


async def state_of(t: Table, d: Driver) -> Any:
    return await t.bot.runtime.service.state(d.game_id)


async def one_game(t: Table) -> None:
    """A game played to its end (declared) in the current season: every seat scores."""
    d = Driver(t, "v2")
    await d.start()
    r = await t.moderator.slash(t.channel, "mod end", winner="good")
    assert private(r) == en("notice.accepted")
    await t.env.settle()


# -- seasons ----------------------------------------------------------------------------------


async def test_a_new_season_may_not_take_an_earlier_seasons_name(table: Table) -> None:
    t = table
    repo = t.bot.runtime.service.repo
    await one_game(t)  # season 1 has its table
    first = await repo.standings(t.guild.id, "1")
    assert first
    begun = await t.moderator.slash(t.channel, "mod new-season")
    assert not begun.ephemeral
    assert await standings.current_season(repo, t.guild.id) == "2"
    said = t.public()
    refused = await t.moderator.slash(t.channel, "mod new-season", name=" 1 ")
    assert private(refused) == en("standings.season_name_used", season="1", next="3")
    with speaking({t.moderator.id: "zh-CN"}):
        refused = await t.moderator.slash(t.channel, "mod new-season", name="1")
    expected = render("zh-CN", "standings.season_name_used", {"season": "1", "next": "3"})
    assert private(refused) == expected and "第1赛季" in expected
    assert await standings.current_season(repo, t.guild.id) == "2"  # nothing begun
    assert t.public() == said  # nothing announced
    assert await repo.standings(t.guild.id, "1") == first  # season 1's table as it was
    table_now = await t.player(1).slash(t.channel, "standings")
    assert table_now.response is not None
    assert table_now.response.content.startswith(render("zh-CN", "standings.title", {"season": 2}))
    assert render("zh-CN", "standings.empty", {}) in table_now.response.content


async def test_the_default_next_season_skips_a_name_already_used(table: Table) -> None:
    t = table
    repo = t.bot.runtime.service.repo
    await one_game(t)  # season 1 has its table
    await t.moderator.slash(t.channel, "mod new-season", name="0")
    assert await standings.current_season(repo, t.guild.id) == "0"
    begun = await t.moderator.slash(t.channel, "mod new-season")  # "1" is taken: "2"
    assert begun.response is not None and not begun.ephemeral
    assert begun.response.content == render(
        "zh-CN", "standings.new_season", {"old": "0", "new": "2"}
    )
    assert await standings.current_season(repo, t.guild.id) == "2"


def test_the_next_free_season_name_counts_on_past_the_used_ones() -> None:
    assert unused_season_name("1", set()) == "2"
    assert unused_season_name("1", {"2", "3"}) == "4"
    assert unused_season_name("春季", {"春季 2"}) == "春季 3"
    assert unused_season_name("春季 9", {"春季 9 2"}) == "春季 9 3"
    assert unused_season_name("9", {"1", "2"}) == "10"  # names not in the way do not count


# -- forms sent after the bot dropped them ------------------------------------------------------


async def test_a_moderators_form_sent_after_a_restart_is_told_it_expired(table: Table) -> None:
    t = table
    d = Driver(t, "v2")
    roles = await d.start()
    civilian = by_role(roles, "civilian")[0]
    shown = await t.moderator.context_menu(t.channel, "Modkill", t.player(civilian))
    assert shown.modal is not None
    with speaking({t.moderator.id: "zh-CN"}):
        zh_shown = await t.moderator.context_menu(t.channel, "Modkill", t.player(civilian))
    assert zh_shown.modal is not None
    await restart(t)
    said = t.public()
    answer = await t.moderator.submit_modal(shown, {"reason": "长期不发言"})
    assert private(answer) == en("notice.form_expired")
    assert answer.followups == []
    with speaking({t.moderator.id: "zh-CN"}):
        answer = await t.moderator.submit_modal(zh_shown, {"reason": "长期不发言"})
    assert private(answer) == render("zh-CN", "notice.form_expired", {})
    assert (await state_of(t, d)).seat(Seat(civilian)).alive  # nothing done
    assert t.public() == said
    # a form opened after the restart is its live form's, answered once, as always
    again = await t.moderator.context_menu(t.channel, "Modkill", t.player(civilian))
    done = await t.moderator.submit_modal(again, {"reason": "长期不发言"})
    await t.env.settle()
    assert private(done) == en("notice.accepted") and done.followups == []
    assert not (await state_of(t, d)).seat(Seat(civilian)).alive


async def test_a_void_form_sent_after_a_restart_is_told_it_expired(table: Table) -> None:
    t = table
    d = Driver(t, "v2")
    await d.start()
    await d.quiet_night()
    post = await d.post_vote(2, "投 3", 3)
    shown = await t.moderator.context_menu(t.channel, "Void this vote", post)
    assert shown.modal is not None
    await restart(t)
    answer = await t.moderator.submit_modal(shown, {"reason": "代投"})
    assert private(answer) == en("notice.form_expired")
    assert all(not p.void_reason for p in (await state_of(t, d)).posts)


async def day_one_with_last_words(t: Table) -> tuple[Driver, int]:
    """Night 1 kills a civilian, who is invited to give last words by day 1."""
    d = Driver(t, "v2")
    roles = await d.start()
    victim = by_role(roles, "civilian")[0]
    for killer in by_role(roles, "killer"):
        await d.power_by_command(killer, "kill", victim)
    await d.lock()
    assert Seat(victim) in (await state_of(t, d)).last_words_open
    return d, victim


async def test_last_words_typed_into_a_box_the_bot_dropped_are_given(table: Table) -> None:
    t = table
    d, victim = await day_one_with_last_words(t)
    shown = await t.player(victim).slash(t.channel, "lastwords")
    assert shown.modal is not None
    await restart(t)
    words = "我是好人，3号可疑。"
    answer = await t.player(victim).submit_modal(shown, {"words": words})
    await t.env.settle()
    assert private(answer) == en("notice.accepted") and answer.followups == []
    assert any(words in post for post in t.public())
    assert Seat(victim) not in (await state_of(t, d)).last_words_open


async def test_last_words_in_a_dropped_box_after_their_window_closed_are_refused(
    table: Table,
) -> None:
    t = table
    d, victim = await day_one_with_last_words(t)
    shown = await t.player(victim).slash(t.channel, "lastwords")
    assert shown.modal is not None
    await restart(t)
    await d.lock()  # day 1 locks: the victim's last words window closes
    words = "我是好人，3号可疑。"
    answer = await t.player(victim).submit_modal(shown, {"words": words})
    await t.env.settle()
    assert private(answer) == en("lastwords.not_entitled")  # the engine's refusal, said
    assert not any(words in post for post in t.public())


def test_the_words_are_read_from_the_box_as_discord_sends_it_back() -> None:
    row = [{"type": 1, "components": [{"type": 4, "custom_id": "words", "value": "遗言"}]}]
    label = [{"type": 18, "id": 1, "component": {"type": 4, "custom_id": "words", "value": "x"}}]
    assert _typed(row, "words") == "遗言"
    assert _typed(label, "words") == "x"
    assert _typed(row, "reason") is None
    assert _typed([], "words") is None


# -- the warm-up in the override log ----------------------------------------------------------


@pytest.mark.parametrize("language", ["zh-CN", "en"])
async def test_an_override_in_the_warm_up_names_it_in_the_log(table: Table, language: str) -> None:
    t = table
    log = t.guild.create_text_channel("modlog")
    await t.env.settle()
    await t.moderator.slash(t.channel, "mod log-channel", channel=log)
    d = Driver(t, "v2", language=language, options="warmup=30")
    await d.start()
    assert (await state_of(t, d)).window.kind.value == "warmup"
    assert private(await t.moderator.slash(t.channel, "mod extend", minutes=10)) == en(
        "notice.accepted"
    )
    (line,) = [m.content for m in log.history()]
    assert f" · {render(language, 'record.warmup', {})} · " in line, line
    assert " · — · " not in line
    await t.moderator.slash(t.channel, "mod end", winner="draw")
    record = await record_json(t)
    assert {o["command"]: o["phase"] for o in record["overrides"]}["extend"] == "warmup 0"
    assert '`"warmup 0"`' in (DOCS / "replay.md").read_text("utf-8")  # the value documented


async def record_json(t: Table) -> dict[str, Any]:
    r = await t.moderator.slash(t.channel, "game record")
    for message in [r.response, *r.followups]:
        for attachment in message.attachments if message else []:
            if attachment.filename.endswith(".json"):
                data: dict[str, Any] = json.loads(await attachment.read())
                return data
    raise AssertionError("no record attached")


# -- a forum day's 投票帖 is told the deadline in force -----------------------------------------


def in_post(post: Any) -> list[Any]:
    """The 投票帖's messages, oldest first (its opening first)."""
    return sorted((m for m in post.history()), key=lambda m: m.id)


def notices(post: Any) -> list[str]:
    return [m.content for m in in_post(post) if m.content.startswith("【")]


def stamp(ms: int) -> str:
    return f"<t:{ms // 1000}:F>（<t:{ms // 1000}:R>）"


def zh(key: str, **params: object) -> str:
    return render("zh-CN", key, params)


@pytest.mark.table(hosting="forum")
async def test_the_vote_post_is_told_the_deadline_after_extend_pause_and_resume(
    table: Table,
) -> None:
    t = table
    d = Driver(t, "v2")
    await d.start()
    await d.quiet_night()
    post = t.vote_channel()
    opened = (await state_of(t, d)).deadline
    assert stamp(opened) in in_post(post)[0].content and notices(post) == []
    # the first send into the 投票帖 fails: its retry posts it once, the main post's once too
    t.env.inject_error("POST", f"/channels/{post.id}/messages", status=503, times=1)
    r = await t.moderator.slash(post, "mod extend", minutes=60)
    assert private(r) == en("notice.accepted")
    await drain(t)
    assert t.env.backend.faults == []  # the send did fail once
    extended = (await state_of(t, d)).deadline
    assert extended == opened + 3_600_000
    notice = zh("override.deadline", deadline=stamp(extended))
    assert notices(post) == [notice]
    assert [p for p in t.public() if p == notice] == [notice]
    await t.moderator.slash(t.channel, "mod pause")
    await t.advance(600)
    await t.moderator.slash(t.channel, "mod resume")
    resumed = (await state_of(t, d)).deadline
    assert resumed == extended + 600_000
    assert notices(post) == [
        notice,
        zh("override.paused"),
        zh("override.resumed", deadline=stamp(resumed)),
    ]
    assert stamp(resumed) in in_post(post)[-1].content


@pytest.mark.table(hosting="forum")
async def test_a_notice_no_longer_in_force_is_not_posted_in_the_vote_post(table: Table) -> None:
    """Performed late (another deadline set since, or the window closed), a notice of the clock
    goes to the 投票帖 no more: it would name a deadline that does not stand."""
    t = table
    d = Driver(t, "v2")
    await d.start()
    judge = t.bot.judge
    night = await state_of(t, d)
    notice = Announce(key="mod.deadline", params=params(deadline=night.deadline))
    assert await deadline_post(judge, d.game_id, night, notice) is None  # no vote open
    await d.quiet_night()
    day = await state_of(t, d)
    now = Announce(key="mod.deadline", params=params(deadline=day.deadline))
    post = await deadline_post(judge, d.game_id, day, now)
    assert post is not None and post.id == t.vote_channel().id
    earlier = Announce(key="mod.deadline", params=params(deadline=day.deadline - 60_000))
    assert await deadline_post(judge, d.game_id, day, earlier) is None
    assert await deadline_post(judge, d.game_id, day, Announce(key="mod.paused")) is None
    other = Announce(key="mod.modkill", params=params(seat=1))
    assert await deadline_post(judge, d.game_id, day, other) is None


@pytest.mark.table(hosting="forum")
async def test_a_run_off_names_its_deadline_in_the_reopened_vote_post(table: Table) -> None:
    t = table
    d = Driver(t, "v2", tie="revote")
    await d.start()
    await d.quiet_night()
    post = t.vote_channel()
    day = (await state_of(t, d)).deadline
    for seat, target in ((3, 1), (4, 2), (5, 1), (6, 2)):  # a tie: a run-off (PK)
        await d.post_vote(seat, f"投 {target}", target)
    await d.lock()
    state = await state_of(t, d)
    assert state.window is not None and state.window.revote == 1
    assert t.vote_channel().id == post.id and state.deadline != day
    said = zh("forum.vote_post_reopened", day=1, deadline=stamp(state.deadline))
    assert notices(post) == [said]


# -- /game new reads full-width deadlines ---------------------------------------------------------


async def test_game_new_reads_a_full_width_deadline(table: Table) -> None:
    t = table
    r = await t.moderator.slash(
        t.channel, "game new", ruleset="v2", power_deadline="２２：００", vote_deadline="２４ｈ"
    )
    assert r.response is not None and not r.ephemeral, r
    lobby = await t.bot.runtime.service.repo.lobbies.newest(t.channel.id)
    assert lobby is not None
    assert lobby.settings["schedule"]["power"] == "22:00"
    assert lobby.settings["schedule"]["vote"] == "24h"


def test_read_deadline_reads_full_width_forms() -> None:
    default = parse_deadline_rule("24h")
    assert str(read_deadline("２２：００", default)) == "22:00"
    assert str(read_deadline(" １ｈ３０ｍ ", default)) == str(parse_deadline_rule("1h30m"))
    assert read_deadline("２５：９９", default) is None
    assert read_deadline(None, default) is default
