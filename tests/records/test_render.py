"""Every effect a game can produce renders in zh-CN and en with no missing text or parameter."""

from __future__ import annotations

import re
from zoneinfo import ZoneInfo

import pytest

from bot.records.i18n import LOCALES, catalog, render
from bot.records.render import (
    Context,
    duration_text,
    error_text,
    render_private,
    render_public,
    render_reply,
    role_powers_line,
)
from engine.commands import (
    EndGame,
    ExtendDeadline,
    GiveLastWords,
    Lock,
    ModKill,
    Pause,
    PostVote,
    ReplacePlayer,
    Resume,
    SetDeadline,
    SubmitPower,
    VoidPost,
)
from engine.effects import Announce, ClockPost, Effect, ReplyToPost, TeamNotice, Whisper
from engine.game import apply, new_game, replay_events, start_events
from engine.model import Camp, Instant, Power, Seat
from engine.publish import effects_for

ROLES = ["killer", "killer", "secret_killer", "police", "police", "secret_police", "doctor"] + [
    "civilian"
] * 5


def _all_effects() -> list[Effect]:
    players = [f"p{i}" for i in range(1, 13)]
    created = new_game(
        ruleset="v3mt",
        players=players,
        seed="r",
        roles=dict(zip(players, ROLES, strict=True)),
        options={"tie": "revote"},
    )
    events = start_events(created, Instant(1_000_000))
    state = replay_events(events)
    effects = effects_for(None, events)
    script = [
        SubmitPower(player="p1", power=Power.KILL, target=Seat(8)),
        SubmitPower(player="p2", power=Power.KILL, target=Seat(8)),
        SubmitPower(player="p4", power=Power.CHECK, target=Seat(1)),
        SubmitPower(player="p6", power=Power.EXECUTE, target=Seat(9)),
        Lock(at=Instant(1_000_000), next_deadline=Instant(2_000_000)),
        GiveLastWords(player="p8", text="我是好人"),
        PostVote(player="p4", post_id="1", target=Seat(1)),
        PostVote(player="p5", post_id="2", target=Seat(2)),
        PostVote(player="p6", post_id="3", abstain=True),
        PostVote(player="p7", post_id="5", target=None, raw="投 阿猫"),
        VoidPost(post_id="2", reason="代投"),
        ExtendDeadline(delta_ms=60_000),
        Pause(at=Instant(1_500_000)),
        Resume(at=Instant(1_600_000)),
        SetDeadline(deadline=Instant(2_000_000)),
        PostVote(player="p5", post_id="6", target=Seat(2)),
        Lock(at=Instant(2_000_000), next_deadline=Instant(3_000_000)),
        ReplacePlayer(seat=Seat(10), new_player="sub"),
        ModKill(seat=Seat(11)),
        EndGame(winner=Camp.DRAW),
    ]
    for command in script:
        new_state, new = apply(state, command)
        effects += effects_for(state, new)
        state = new_state
    return effects


@pytest.mark.parametrize("locale", LOCALES)
def test_every_effect_renders_completely(locale: str) -> None:
    ctx = Context(
        locale=locale, timezone=ZoneInfo("Asia/Shanghai"), names={i: f"P{i}" for i in range(1, 13)}
    )
    seen: set[str] = set()
    for effect in _all_effects():
        if isinstance(effect, Announce | ClockPost):
            text = render_public(ctx, effect)
            seen.add(getattr(effect, "key", "clock"))
        elif isinstance(effect, Whisper | TeamNotice):
            text = render_private(ctx, effect)
            seen.add(effect.key)
        elif isinstance(effect, ReplyToPost):
            text = render_reply(ctx, effect) or ""
        else:
            continue
        assert not re.search(r"\{[a-z_]+\}", text), (effect, text)
        assert not re.fullmatch(r"[a-z_]+\.[a-z_.]+", text), (effect, text)
    assert {
        "game.started",
        "role.dealt",
        "window.night",
        "window.powers",
        "night.result",
        "check.result",
        "day.tally",
        "tie.revote",
        "window.revote",
        "lastwords.text",
        "game.over",
        "mod.replaced",
        "mod.modkill",
        "mod.voided",
        "mod.paused",
    } <= seen


def test_both_catalogs_have_the_same_keys() -> None:
    assert set(catalog("en")) == set(catalog("zh-CN"))


def test_english_keeps_the_game_terms_in_chinese() -> None:
    en = catalog("en")
    for key, term in [
        ("clock.post", "看表"),
        ("lastwords_msg.prompt", "遗言"),
        ("tie.lots", "抽签"),
        ("actor.out_of_game", "出局"),
        ("mod.deadline_passed", "看表"),
    ]:
        assert term in en[key]


def test_clock_post_gives_the_exact_time_in_beijing_time() -> None:
    ctx = Context(locale="zh-CN", timezone=ZoneInfo("Asia/Shanghai"), names={})
    text = render_public(ctx, ClockPost(phase="night 2", deadline=Instant(1_764_648_000_000)))
    assert text.startswith("【看表】第2夜截止：2025-12-02 12:00:00（北京时间）")


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        ("~~", r"\~\~"),  # struck through every name after it
        ("[第1天 投票帖](https://evil.example)", r"\[第1天 投票帖\]\(https\://evil.example\)"),
        ("||剧透||", r"\|\|剧透\|\|"),
        ("<@&123>", r"\<@&123\>"),
        ("玩家_1*", r"玩家\_1\*"),
        ("阿明", "阿明"),
    ],
)
def test_a_name_in_the_judges_posts_is_text_never_markdown(name: str, shown: str) -> None:
    """Display names are the players' own: in the judge's posts they read as written, and no
    name formats the post (strikes the names after it out, makes a link, hides a spoiler)."""
    ctx = Context(locale="zh-CN", timezone=ZoneInfo("Asia/Shanghai"), names={2: name, 3: "小红"})
    assert ctx.seats("2,3") == f"2号 {shown}、3号 小红"


def test_moderator_notices_name_the_window_the_voter_and_the_vote() -> None:
    zh = Context(locale="zh-CN", timezone=ZoneInfo("Asia/Shanghai"), names={2: "阿明", 5: "小红"})
    en = Context(locale="en", timezone=ZoneInfo("Asia/Shanghai"), names={2: "阿明", 5: "小红"})
    pk = Announce(key="mod.advanced", params=(("phase", "day 2"), ("revote", 1)))
    assert render_public(zh, pk) == "【管理】管理员提前截止第2天第1次 PK。"
    night = Announce(key="mod.advanced", params=(("phase", "night 1"), ("revote", 0)))
    assert render_public(en, night) == "[Moderator] A moderator closed Night 1 early."
    assert render_public(zh, Announce(key="mod.advanced")) == "【管理】管理员提前截止本阶段。"
    voided = Announce(
        key="mod.voided",
        params=(
            ("post", "1456"),
            ("reason", "代投"),
            ("voter", 2),
            ("target", 5),
            ("abstain", False),
        ),
    )
    assert render_public(zh, voided) == "【管理】2号 阿明 的投票帖（投 5号 小红）判为无效：代投"
    abstained = Announce(
        key="mod.voided", params=(("post", "1"), ("reason", "x"), ("voter", 2), ("abstain", True))
    )
    assert render_public(en, abstained).startswith("[Moderator] The vote post of #2 阿明 (弃权")
    kill = Announce(key="mod.modkill", params=(("seat", 5), ("reason", "挂机")))
    assert render_public(zh, kill) == "【管理】5号 小红 因不活跃被移出游戏。理由：挂机"
    assert render_public(zh, Announce(key="mod.modkill", params=(("seat", 5),))).endswith("游戏。")


def test_moderator_refusals_name_the_deadline_the_team_and_its_powers() -> None:
    """What a moderator is told privately when the engine refuses: the moment in the game's
    time, a team and its powers by their names (`error_text`)."""
    zh = Context(locale="zh-CN", timezone=ZoneInfo("Asia/Shanghai"), names={})
    en = Context(locale="en", timezone=ZoneInfo("Asia/Shanghai"), names={})
    passed = {"deadline": 1_764_648_000_000}
    assert error_text(zh, "mod.deadline_passed", passed) == (
        "截止时间（2025-12-02 12:00:00，北京时间）已过，正在看表：现在不能再更改截止时间。"
        "未作任何更改。"
    )
    assert error_text(en, "mod.deadline_passed", passed).startswith(
        "The deadline (2025-12-02 12:00:00, Beijing time) has passed"
    )
    lacks = {"team": "police", "power": "kill", "powers": "check,guard"}
    assert error_text(zh, "mod.penalty_team_lacks_power", lacks) == (
        "按本局规则，警察没有杀人权利，这项处罚不会起作用；警察的夜间权利：验人、保护傻根。"
        "未作任何更改。"
    )
    assert error_text(en, "mod.penalty_team_lacks_power", lacks) == (
        "In this game's rules the police (警察) have no kill (杀人) power, so this penalty would "
        "stop nothing; their night powers: check (验人), guard 傻根 (保护傻根). Nothing changed."
    )
    none = error_text(en, "mod.penalty_team_no_powers", {"team": "good_thieves"})
    assert none.startswith("In this game's rules the good thieves (义贼) have no night power")


def test_durations_read_as_people_say_them() -> None:
    zh = Context(locale="zh-CN", timezone=ZoneInfo("Asia/Shanghai"), names={})
    en = Context(locale="en", timezone=ZoneInfo("Asia/Shanghai"), names={})
    assert duration_text(zh, 9 * 3_600_000) == "9小时"
    assert duration_text(en, 65 * 60_000) == "1 h 5 min"
    assert duration_text(en, 30_000) == "under a minute"


def test_lists_in_english_are_joined_as_english_is_written() -> None:
    """The 票型's void posts, a 翻牌 and the powers a role message names are lists joined by
    the game's language: 「；」「：」「、」 in Chinese, "; " ": " ", " in English (the void list and
    the reveal were joined by the full-width marks in English too)."""
    zh = Context(locale="zh-CN", timezone=ZoneInfo("Asia/Shanghai"), names={2: "阿明", 5: "小红"})
    en = Context(locale="en", timezone=ZoneInfo("Asia/Shanghai"), names={2: "阿明", 5: "小红"})
    tally = Announce(
        key="day.tally",
        params=(
            ("number", 1),
            ("revote", 0),
            ("votes", "2>5"),
            ("void", "0:not_player:;5:unknown_target:"),
        ),
    )
    assert render_public(en, tally).splitlines()[-1] == (
        "Void: a non-player — not a player; #5 小红 — unreadable"
    )
    assert (
        render_public(zh, tally).splitlines()[-1]
        == "无效：非玩家（非本局玩家）；5号 小红（无法识别）"
    )
    reveal = Announce(key="reveal", params=(("revealed", "2:killer,5:police"),))
    assert (
        render_public(en, reveal)
        == "Revealed (翻牌): #2 阿明: 杀手 (killer); #5 小红: 警察 (police)"
    )
    assert render_public(zh, reveal).endswith("2号 阿明：杀手；5号 小红：警察")
    powers = Whisper(
        seat=Seat(2),
        key="window.powers",
        params=(("number", 1), ("powers", "kill,check"), ("deadline", None)),
    )
    assert "kill (杀人), check (验人)" in render_private(en, powers)
    assert "杀人、验人" in render_private(zh, powers)
    assert role_powers_line(en, ["a", "b"], []) == render(
        "en", "role_msg.powers_line", {"powers": "a, b"}
    )


def test_a_component_shows_a_name_as_written_a_post_escapes_it() -> None:
    """A menu option or an autocomplete choice shows no Markdown: the name as the player wrote
    it, cut to Discord's 100 characters (`seat_label`); a post escapes it (`seat`)."""
    long = "长" * 120
    ctx = Context(locale="zh-CN", timezone=ZoneInfo("Asia/Shanghai"), names={2: "*星*", 3: long})
    assert ctx.seat_label(2) == "2号 *星*"
    assert ctx.seat(2) == "2号 \\*星\\*"
    assert ctx.seat_label(3) == f"3号 {long}"[:100] and len(ctx.seat_label(3)) == 100
    en = Context(locale="en", timezone=ZoneInfo("Asia/Shanghai"), names={2: "a_b"})
    assert en.seat_label(2) == "#2 a_b" and en.seat(2) == "#2 a\\_b"
