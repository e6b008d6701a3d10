"""`/role` (`describe_view`): whom the player knows, for the whole game — a known player out of
the game marked so, what they knew under a role that has since turned kept; no teammates line
for one who knows nobody; an explicit pass in the player's language; the card dealt beside the
role now when it has turned. And the check-result message worded for each answer."""

from __future__ import annotations

import random
import sys
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "engine"))
from gamekit import Game

from bot.discord.cogs.play import _powers_text, describe_view
from bot.discord.embeds import role_embed
from bot.records.render import Context, render_private
from engine.effects import Whisper
from engine.game import new_game, replay_events, start_events
from engine.model import Power, Seat
from engine.publish import effects_for
from engine.state import GameState

C, K, P = "civilian", "killer", "police"
LOCALES = ("zh-CN", "en")


def role(state: GameState, seat: int, locale: str = "zh-CN") -> str:
    names = {int(s.seat): s.player for s in state.seats}
    ctx = Context(locale=locale, timezone=ZoneInfo("Asia/Shanghai"), names=names)
    return describe_view(ctx, state, Seat(seat))


WUJIANDAO = [
    "police_leader", "police_confidant", "gang_mole", "police",
    "gang_leader", "gang_confidant", "police_mole", "gangster",
]  # fmt: skip


def test_wujiandao_a_dead_leader_stays_known_marked_out() -> None:
    game = Game("wujiandao", WUJIANDAO)
    assert "你的同伴：1号 p1（警方首领）。" in role(game.state, 2)
    game.night((5, "kill", 1), (1, "kill", 8))
    for seat in (2, 7):
        assert "你的同伴：1号 p1（警方首领，已出局）。" in role(game.state, seat)
        assert "#1 p1: 警方首领 (police leader), out of the game (出局)" in role(
            game.state, seat, "en"
        )
    assert "你的同伴：2号 p2（警方亲信）、7号 p7（警方卧底（公开身份为匪））。" in role(
        game.state, 1
    )
    ordinary = role(game.state, 4)
    assert "同伴" not in ordinary and "首领" not in ordinary and "卧底" not in ordinary


def test_v2da_the_accomplice_still_sees_a_killer_voted_out() -> None:
    game = Game(
        "v2_doctor_accomplice",
        [P, P, K, K, "doctor", "accomplice", C, C],
        options={"accomplice": "knows"},
    )
    game.night((3, "kill", 7))
    game.day({1: 3, 2: 3, 5: 3, 8: 3})
    assert "你的同伴：3号 p3（杀手，已出局）、4号 p4（杀手）。" in role(game.state, 6)


def test_basic_police_turned_civilians_keep_the_police_and_see_their_card() -> None:
    game = Game(
        "basic", [P, "sheriff", P, K, K, K] + [C] * 8, options={"police_special": "sheriff"}
    )
    game.night()
    game.day({s: 2 for s in range(3, 15)})
    text = role(game.state, 1)
    assert "身份：**平民（发牌时为警察）**" in text
    assert "你的同伴：2号 p2（警长，已出局）、3号 p3（警察）。" in text
    en = role(game.state, 1, "en")
    assert "**平民 (civilian), dealt as 警察 (police)**" in en
    assert (
        "Your teammates: #2 p2: 警长 (sheriff), out of the game (出局); #3 p3: 警察 (police)."
    ) in en


def test_mifei_the_fired_secret_killer_sees_his_card_and_only_the_killers_he_met() -> None:
    game = Game("mifei", [P, P, P, K, K, "doctor", "secret_killer"] + [C] * 5)
    game.night((4, "kill", 8))
    game.day({s: 4 for s in (1, 2, 3, 6, 9, 10, 11, 12)})  # killer 4 out before the shot
    game.night((7, "shoot", 9))
    text = role(game.state, 7)
    assert "身份：**杀手（发牌时为秘匪）**" in text
    assert "你的同伴：5号 p5（杀手）。" in text
    dead = role(game.state, 4)  # out before the shot: never met the secret killer
    assert "你的同伴：5号 p5（杀手）。" in dead and "7号" not in dead
    assert "发牌时" not in role(game.state, 5)  # a role that never turned: as before


def test_v4_the_merged_lone_police_sees_the_card_dealt() -> None:
    game = Game("v4_lone", [K] * 3 + ["lone_killer", P, P, "lone_police", "doctor"] + [C] * 8)
    game.night((5, "check", 9))
    game.day({})
    game.night((5, "check", 7), (7, "check", 10))
    assert "身份：**警察（发牌时为独警）**" in role(game.state, 7)
    assert "**警察 (police), dealt as 独警 (lone police)**" in role(game.state, 7, "en")


def test_v4_the_merged_lone_police_lists_the_answers_from_his_first_night_with_them() -> None:
    game = Game("v4_lone", [K] * 3 + ["lone_killer", P, P, "lone_police", "doctor"] + [C] * 8)
    game.night((5, "check", 9))
    game.day({})
    game.night((5, "check", 7), (7, "check", 10))  # he merges: the police checked him
    game.day({})
    game.night((5, "check", 1))
    text = role(game.state, 7)
    assert "第2夜验 10号 p10：平民" in text and "第3夜验 1号 p1：杀手" in text
    assert "第1夜" not in text and "第2夜验 7号" not in text  # the police's, before he joined
    assert "第1夜验 9号 p9：平民" in role(game.state, 6)


@pytest.mark.parametrize("locale", LOCALES)
def test_no_teammates_line_for_one_who_knows_nobody(locale: str) -> None:
    game = Game("v2", [P, P, K, K, C, C, C, C])
    assert "同伴" not in role(game.state, 5, locale)
    assert "teammates" not in role(game.state, 5, locale)
    assert "你的同伴：4号 p4（杀手）。" in role(game.state, 3)


def test_a_civilian_sees_no_role_but_the_public_reveals() -> None:
    game = Game(
        "basic", [P, "sheriff", P, K, K, K] + [C] * 8, options={"police_special": "sheriff"}
    )
    game.night()
    game.day({s: 2 for s in range(3, 15)})
    for locale in LOCALES:
        text = role(game.state, 7, locale)
        assert "teammates" not in text and "同伴" not in text
        for hidden in ("警察", "杀手", "警长"):
            assert hidden not in text


def test_an_explicit_pass_is_in_the_players_language() -> None:
    game = Game("v2", [P, P, K, K, C, C, C, C])
    game.power(3, "kill", None)
    assert "3号 p3：杀人 → 不行使" in role(game.state, 4)
    assert "pass" not in role(game.state, 4)
    assert "#3 p3: kill (杀人) → pass (不行使)" in role(game.state, 4, "en")


def check_message(result: str, locale: str) -> str:
    ctx = Context(locale=locale, timezone=ZoneInfo("Asia/Shanghai"), names={9: "p9"})
    effect = Whisper(seat=Seat(1), key="check.result", params=(("target", 9), ("result", result)))
    return render_private(ctx, effect)


@pytest.mark.parametrize(
    ("result", "zh", "en"),
    [
        ("other", "验人结果：9号 p9 **不是秘警**。", "Check (验人) result: #9 p9 is **not a secret police (不是秘警)**."),
        ("none", "验人结果：查验 9号 p9 **无信息**。", "Check (验人) result on #9 p9: **no information**."),
        ("killer", "验人结果：9号 p9 是 **杀手**。", "Check (验人) result: #9 p9 is **killer**."),
        ("good", "验人结果：9号 p9 是 **好人**。", "Check (验人) result: #9 p9 is **good**."),
        ("secret_police", "验人结果：9号 p9 是 **秘警**。",
         "Check (验人) result: #9 p9 is **secret police (秘警)**."),
    ],
)  # fmt: skip
def test_the_check_result_reads_for_each_answer(result: str, zh: str, en: str) -> None:
    assert (check_message(result, "zh-CN"), check_message(result, "en")) == (zh, en)


# -- what the deal's role message says of the role, /role says too ------------------------------
LONE = [K] * 3 + ["lone_killer", P, P, "lone_police", "doctor"] + [C] * 8


@pytest.mark.parametrize(
    ("side", "zh", "en"),
    [
        ("neutral", "地雷（中立，不帮助任何一方）", "中立 (neutral)"),
        ("good", "地雷（警雷，帮助警察一方）", "警雷 (police's mine)"),
        ("killers", "地雷（匪雷，帮助杀手）", "匪雷 (killers' mine)"),
    ],
)
def test_the_mine_sees_its_side(side: str, zh: str, en: str) -> None:
    game = Game("v2_mine", [P, P, K, K, "mine", C, C, C], options={"mine": side})
    assert f"身份：**{zh}**" in role(game.state, 5)
    assert en in role(game.state, 5, "en")
    assert "中立" not in role(game.state, 1) and "雷" not in role(game.state, 1)


def test_the_lone_police_and_the_lone_killer_see_the_powers_they_hold_later() -> None:
    game = Game("v4_lone", LONE)
    police = role(game.state, 7)
    assert "你现在没有可用的权利。以后可用的权利：验人（从第2夜起）。" in police, police
    assert "check (验人) — from night 2 on" in role(game.state, 7, "en")
    killer = role(game.state, 4)
    assert "以后可用的权利：杀人（有杀手出局后起）。" in killer, killer
    assert "once a killer (杀手) is out of the game" in role(game.state, 4, "en")
    game.night((1, "kill", 2))  # a killer out: the lone killer kills from now on
    killer = role(game.state, 4)
    assert "可用权利：杀人。" in killer and "以后" not in killer, killer


def test_a_seat_out_of_the_game_is_told_no_power_to_come() -> None:
    game = Game("v4_lone", LONE)
    game.night((1, "kill", 7))
    assert "以后" not in role(game.state, 7) and "从第2夜起" not in role(game.state, 7)


@pytest.mark.parametrize("locale", LOCALES)
def test_role_says_of_the_role_what_the_deals_message_says(locale: str) -> None:
    """At the deal, in every ruleset and option: the role as the role message names it (with a
    mine's side), its powers now and later, and whom it knows are in /role too."""
    from playouts import start

    from bot.records.render import known_seats, later_powers, role_powers_line, role_text
    from engine.effects import Whisper
    from engine.game import replay_events
    from engine.publish import effects_for

    rnd = random.Random(7)
    said: set[str] = set()
    for _ in range(300):
        started = start(rnd)
        if started is None:
            continue
        state, events = started
        state = replay_events(events)
        names = {int(s.seat): s.player for s in state.seats}
        ctx = Context(locale=locale, timezone=ZoneInfo("Asia/Shanghai"), names=names)
        for message in effects_for(None, events):
            if not isinstance(message, Whisper) or message.key != "role.dealt":
                continue
            p = dict(message.params)
            text = describe_view(ctx, state, message.seat)
            powers = [ctx.t(f"power.{x}") for x in str(p["powers"]).split(",") if x]
            later = later_powers(ctx, p.get("later"))
            assert f"**{role_text(ctx, p)}**" in text, (state.ruleset, text)
            if not p.get("cards"):
                assert role_powers_line(ctx, powers, later).strip() in text, (state.ruleset, text)
            for item in later:
                assert item in text, (state.ruleset, text)
            mates = known_seats(ctx, p["teammates"], p.get("known"))
            assert mates in text, (state.ruleset, text)
            said |= {k for k in ("later", "side") if p.get(k)}
    assert said == {"later", "side"}


def test_lists_in_english_are_joined_as_english_is_written() -> None:
    """/role, the role embed and a 5.0 player's cards list in the player's language: 「、」「；」
    in Chinese, ", " "; " in English (the full-width marks were used in English too)."""
    events = start_events(
        new_game(ruleset="tianxia", players=[f"p{i}" for i in range(1, 13)], seed="s")
    )
    state = replay_events(events)
    thief = next(s.seat for s in state.seats if s.role.value == "bad_thief")
    assert "Your powers: kill (杀人), rob 傻根 (杀傻根)." in role(state, thief, "en")
    assert "可用权利：杀人、杀傻根。" in role(state, thief)
    dealt = next(
        e
        for e in effects_for(None, events)
        if isinstance(e, Whisper) and e.key == "role.dealt" and e.seat == thief
    )
    names = {int(s.seat): s.player for s in state.seats}
    en = Context(locale="en", timezone=ZoneInfo("Asia/Shanghai"), names=names)
    powers = [f.value for f in role_embed(en, 1, dealt).fields]
    assert "kill (杀人), rob 傻根 (杀傻根)" in powers
    five = replay_events(start_events(new_game(ruleset="v5", players=list("ABCDEFG"), seed="s")))
    cards = role(five, 1, "en").splitlines()[0]
    assert cards.startswith("Your cards (牌位): #1 A: ") and "; #2 A: " in cards
    assert "；" not in cards
    assert _powers_text(en, [Power.KILL, Power.CHECK]) == "kill (杀人), check (验人)"


@pytest.mark.parametrize(("locale", "label"), [("zh-CN", "确认收到"), ("en", "Confirm receipt")])
def test_the_role_messages_confirm_button_is_in_the_games_language(locale: str, label: str) -> None:
    """The button under the role message reads in the game's language, as the embed above it
    (it was 「确认收到 / Confirm」 in both: the differential game of tests/robustness/
    test_rb_locales.py found it)."""
    from bot.discord.views import ConfirmButton, views_for_whisper

    events = start_events(new_game(ruleset="v2", players=[f"p{i}" for i in range(1, 9)], seed="s"))
    dealt = next(
        e for e in effects_for(None, events) if isinstance(e, Whisper) and e.key == "role.dealt"
    )
    ctx = Context(locale=locale, timezone=ZoneInfo("Asia/Shanghai"), names={})
    view = views_for_whisper(1, replay_events(events), dealt, ctx)
    assert view is not None
    (button,) = view.children
    assert isinstance(button, ConfirmButton) and button.item.label == label
