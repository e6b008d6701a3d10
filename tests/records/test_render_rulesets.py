"""Everything v5, tianxia and wujiandao make the bot say renders in zh-CN and en: every effect of
their recorded games (tests/games/), and the texts they alone need — the weighted 票型 of 5.0,
the per-faction 票型 and public identities of 无间道, a power used on 傻根."""

from __future__ import annotations

import re
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from bot.records.i18n import LOCALES
from bot.records.render import Context, render_private, render_public, render_reply
from bot.records.replay import replay_file
from engine.effects import Announce, ClockPost, ReplyToPost, TeamNotice, Whisper, params
from engine.publish import effects_for

GAMES = Path(__file__).resolve().parents[1] / "games"
FILES = sorted(p for r in ("v5", "tianxia", "wujiandao") for p in (GAMES / r).glob("*.toml"))


def ctx(locale: str) -> Context:
    return Context(
        locale=locale, timezone=ZoneInfo("Asia/Shanghai"), names={i: f"P{i}" for i in range(1, 17)}
    )


@pytest.mark.parametrize("locale", LOCALES)
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_every_effect_of_the_recorded_games_renders(path: Path, locale: str) -> None:
    effects = effects_for(None, replay_file(path).events)
    c = ctx(locale)
    keys = set()
    for effect in effects:
        if isinstance(effect, Announce | ClockPost):
            text = render_public(c, effect)
        elif isinstance(effect, Whisper | TeamNotice):
            text = render_private(c, effect)
        elif isinstance(effect, ReplyToPost):
            text = render_reply(c, effect) or ""
        else:
            continue
        keys.add(getattr(effect, "key", "clock"))
        assert not re.search(r"\{[a-z_]+\}", text), (effect, text)
        assert not re.search(r"\b[a-z_]+\.[a-z_]+\b", text), (effect, text)  # a key left raw
    assert {"game.started", "role.dealt", "window.powers", "day.tally"} <= keys


def test_the_recorded_games_emit_what_these_rulesets_alone_say() -> None:
    keys = {
        getattr(e, "key", None)
        for path in FILES
        for e in effects_for(None, replay_file(path).events)
    }
    assert {
        "game.public_roles", "night.virtual_out", "notice.knife_mark", "day.spared", "tie.lots",
        "check.result", "reveal", "game.over",
    } <= keys  # fmt: skip


def test_weighted_vote_table() -> None:
    tally = Announce(
        key="day.tally",
        params=params(
            number=1, revote=0, votes="2>14;3>9;7>14;11>9;13>abstain", void="",
            counts="9:3;14:3", weights="3:2;7:2;13:2",
        ),
    )  # fmt: skip
    assert render_public(ctx("zh-CN"), tally) == (
        "第1天票型：9号 P9←3×2、11（3票）；14号 P14←2、7×2（3票）\n弃权：13号 P13"
    )
    assert render_public(ctx("en"), tally) == (
        "Day 1 vote table (票型): #9 P9←3×2, 11 (3 votes); #14 P14←2, 7×2 (3 votes)\n"
        "Abstained (弃权): #13 P13"
    )
    heavier = Announce(
        key="day.tally",
        params=params(
            number=2, revote=0, votes="1>5;3>6;4>6", void="", counts="5:2;6:2", weights="1:2"
        ),
    )
    assert render_public(ctx("zh-CN"), heavier).startswith(
        "第2天票型：5号 P5←1×2（2票）；6号 P6←3、4（2票）"
    )


def test_per_faction_vote_tables_and_results_are_labelled() -> None:
    police = Announce(
        key="day.tally",
        params=params(number=1, revote=0, votes="1>3;2>3;3>1", void="", group="police"),
    )
    assert render_public(ctx("zh-CN"), police) == (
        "第1天警方票型：3号 P3←1、2（2票）；1号 P1←3（1票）"
    )
    assert render_public(ctx("en"), police).startswith(
        "Day 1 vote table (票型) of the police faction (警方): #3 P3←1, 2 (2 votes); #1 P1←3 (1 vote)"
    )
    spared = Announce(key="day.spared", params=params(seat=8, group="gang"))
    assert (
        render_public(ctx("zh-CN"), spared)
        == "【匪方】得票最多的 8号 P8 今天不能被投出局：无人出局。"
    )
    left = Announce(key="day.result", params=params(number=1, left="3", group="police"))
    assert (
        render_public(ctx("en"), left)
        == "[the police faction (警方)] Out of the game (出局): #3 P3."
    )


def test_public_identities_and_a_power_on_shagen() -> None:
    roster = Announce(key="game.public_roles", params=params(public="1:police,2:gangster,3:police"))
    assert render_public(ctx("zh-CN"), roster) == (
        "公开身份（所有人可见）：警方：1号 P1、3号 P3；匪方：2号 P2。隐秘身份不公开。"
    )
    used = Whisper(
        seat=1, key="power.accepted", params=params(power="guard", target=None, untargeted=True)
    )
    assert render_private(ctx("zh-CN"), used) == "已收到：保护傻根。截止前可更改，以最后一次为准。"
    passed = Whisper(seat=1, key="power.accepted", params=params(power="guard", target=None))
    assert render_private(ctx("zh-CN"), passed) == "已收到：保护傻根 不行使。"
    team = TeamNotice(
        team="good_thieves",  # type: ignore[arg-type]
        key="team.submission",
        params=params(seat=4, power="rob", target=None, untargeted=True),
    )
    assert render_private(ctx("en"), team) == "#4 P4 chose rob 傻根 (杀傻根)."
