"""General guards over the two message catalogs, as a reader of each language would check them:
both fill in the same parameters; English keeps Chinese only for the game's own terms, glosses
each where a message first names it, writes no full-width marks and puts a count's noun in the
number's form ("1 vote", "2 votes"); Chinese uses full-width marks and says "nothing changed"
one way."""

from __future__ import annotations

import re
import string

import pytest

from bot.records.i18n import catalog, render
from engine.rulesets import RULESETS

EN, ZH = catalog("en"), catalog("zh-CN")


def fields(text: str) -> set[str]:
    """The parameters a text fills in (`{count:vote|votes}` fills in `count`)."""
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


def test_both_languages_fill_in_the_same_parameters() -> None:
    """A parameter one language names and the other drops is information one reader misses
    (or a raw `{seat}` the other reads)."""
    differing = {
        key: (sorted(fields(EN[key])), sorted(fields(ZH[key])))
        for key in EN
        if fields(EN[key]) != fields(ZH[key])
    }
    assert differing == {}


# fmt: off
GAME_TERMS = frozenset({
    "出局", "遗言", "抽签", "平局", "和局", "身份", "公开身份", "隐秘身份", "牌位", "牌位号", "替补", "看表", "看表帖", "投票帖", "投票轮",
    "权利行使轮", "不行使", "弃权", "弃票", "改票", "票型", "禁言", "翻牌", "认匪", "天黑", "天亮", "游戏热身", "平票选择", "判为无效",
    "阵营讨论串", "主帖", "帖子", "刀痕", "扎针", "首领", "警察不能自验", "法官",
    "平民", "杀手", "杀手方", "好人", "中立", "警察", "医生", "秘匪", "秘警", "特警", "检查官", "地雷", "匪民", "匪雷", "警雷", "工兵", "独杀",
    "独警", "花蝴蝶", "狙击手", "森林老人", "警长", "密警", "卧底", "义贼", "恶贼", "贼", "匪", "警方", "匪方", "警方首领", "警方亲信",
    "警方卧底", "匪方首领", "匪方亲信", "匪方卧底", "不是秘警", "傻根",
    "杀人", "验人", "医治", "开枪", "处决", "否决", "排雷", "抱人", "偷袭", "保护傻根", "杀傻根",
    "投", "号", "第", "天", "局",
})
# fmt: on
"""The Chinese an English text may keep: the game's own terms, the names of roles, sides and
powers, a vote as it is typed (「投 5号」), and the pieces of a forum title (「第2天」)."""

HAN = re.compile(r"[\u4e00-\u9fff]+")
FULL_WIDTH = re.compile(r"[\u3000-\u303f\uff00-\uffef]")
"""Full-width marks (【】，。：；（）「」…): Chinese punctuation, never in an English text."""


def test_english_keeps_chinese_only_for_the_game_terms() -> None:
    stray = {key: HAN.findall(text) for key, text in EN.items()}
    names = {t for rules in RULESETS.values() for t in HAN.findall(rules.name_zh)}  # glossed
    stray = {key: [t for t in found if t not in GAME_TERMS | names] for key, found in stray.items()}
    assert {key: found for key, found in stray.items() if found} == {}
    marks = {key: FULL_WIDTH.findall(text) for key, text in EN.items() if FULL_WIDTH.search(text)}
    assert marks == {}  # 「【抽签】Day 2 vote」 read as a Chinese heading in an English post


TERM = re.compile(
    r"[\u4e00-\u9fff](?:[\u4e00-\u9fff·]|\{\w+\}|[ ]?[A-Z0-9](?![a-z])"
    r"|(?<=[\u4e00-\u9fff]) (?=[\u4e00-\u9fff\dN]))*"
)
"""A Chinese term as an English text writes it, with what belongs to it: 「投 N号」, 「第{day}天
投票帖」, 「法官·第{game}局」."""
NAMES = frozenset({"傻根", "法官·第{game}局"})
"""Names, not terms: 天下无贼's 傻根 (the character), the players' Discord role."""


def glossed(text: str, start: int, end: int) -> bool:
    """A term with its English beside it: in parentheses after English ("out of the game
    (出局)"), followed by English in parentheses ("投 N (vote for seat N)", "[看表 clock post]")."""
    before, after = text[:start], text[end:]
    if before.rfind("(") > before.rfind(")") or before.endswith("["):
        return True
    return re.match(r"[”\"]?\)?\s*\([A-Za-z]", after) is not None


def test_english_glosses_a_game_term_where_a_message_first_names_it() -> None:
    bare = []
    for key, text in sorted(EN.items()):
        seen: set[str] = set()
        for match in TERM.finditer(text):
            term = match.group(0).strip()
            if term not in seen and term not in NAMES and not glossed(text, *match.span()):
                bare.append(f"{key}: {term}")
            seen.add(term)
    assert bare == []  # 「Post “投 N” or “弃权” (abstain)」: what is “投 N”?


VERBS = frozenset({
    "is", "has", "was", "does", "needs", "stays", "chooses", "holds",
    "closes", "takes", "passes", "picks", "uses", "leaves",
})  # fmt: skip
COUNTED = re.compile(r"\{(\w+)\}\)?\s+(?:more\s+)?([a-z]+s)\b")
"""A bare count before a plural noun: "{count} votes" reads "1 votes"."""


def test_english_writes_a_counts_noun_in_the_numbers_form() -> None:
    bare = [
        f"{key}: {m.group(0)}"
        for key, text in EN.items()
        for m in COUNTED.finditer(text)
        if m.group(2) not in VERBS
    ]
    assert bare == []  # written {count:vote|votes}
    assert render("en", "standings.line", {"rank": 1, "player": "A", "games": 1, "wins": 1,
                                           "points": 1}) == "1. A — 1 game · 1 win · 1 point"  # fmt: skip
    assert render("en", "standings.more", {"count": 1}) == "… and 1 more player not listed here."
    assert render("en", "day.tally_line", {"target": "#3", "voters": "1", "count": 1}) == (
        "#3←1 (1 vote)"
    )


@pytest.mark.parametrize(
    ("count", "shown"),
    [(1, "1 vote"), (2, "2 votes"), (0, "0 votes"), (-1, "-1 vote"), ("3", "3 votes")],
)
def test_a_count_takes_the_form_of_its_number(count: object, shown: str) -> None:
    assert render("en", "record.tally_counts", {"target": "A", "count": count}) == f"A {shown}"


def test_a_count_not_given_stays_visible_as_its_name() -> None:
    """As any parameter not given (`_Keep`); one that is no number is shown as given."""
    assert render("en", "record.tally_counts", {"target": "A"}) == "A {count}"
    assert render("en", "record.tally_counts", {"target": "A", "count": "?"}) == "A ?"


def test_chinese_says_nothing_changed_one_way() -> None:
    """English says "Nothing changed" everywhere; Chinese said it four ways (本指令未生效,
    什么也没有改变, 本次未执行, 未作任何更改)."""
    others = [
        key
        for key, text in EN.items()
        if "nothing changed" in text.lower() and "未作任何更改" not in ZH[key]
    ]
    assert others == []
    assert [k for k, t in ZH.items() if "本指令未生效" in t or "什么也没有改变" in t] == []


FORMULAS = frozenset({"html.verify_deal"})
"""Texts quoting a formula, HMAC-SHA256(种子, “…”), written as code is."""


def test_chinese_punctuation_is_full_width() -> None:
    half = [
        f"{key}: {m.group(0)}"
        for key, text in ZH.items()
        if key not in FORMULAS
        for m in re.finditer(r"[\u4e00-\u9fff][,;:!?()]|[,;:!?(][\u4e00-\u9fff]", text)
    ]
    assert half == []


def test_chinese_spaces_latin_terms_as_elsewhere() -> None:
    """「本轮 PK 中」: a Latin word in Chinese text has a space on each side, as the catalog
    writes PK everywhere (「发于PK开始之前」 was the odd one)."""
    assert [k for k, t in ZH.items() if re.search(r"[\u4e00-\u9fff]PK|PK[\u4e00-\u9fff]", t)] == []


def test_chinese_writes_a_seat_number_as_a_seat_is_shown() -> None:
    """「5号」 everywhere: a seat is rendered 「5号 阿明」, and a refusal said 「5 号已出局」."""
    assert [k for k, t in ZH.items() if re.search(r"\} 号", t)] == []


def test_a_players_cards_are_named_as_card_numbers_not_a_raw_list() -> None:
    """5.0 双身份's refusal named the two cards as the engine keeps them, 「(3,4)」."""
    from zoneinfo import ZoneInfo

    from bot.records.render import Context, error_text

    said = {}
    for locale in ("zh-CN", "en"):
        ctx = Context(locale=locale, timezone=ZoneInfo("Asia/Shanghai"), names={3: "阿明"})
        said[locale] = error_text(ctx, "actor.which_card", {"power": "kill", "seats": "3,4"})
    assert said["zh-CN"].startswith("你有两张牌（3号、4号）都有杀人权利")
    assert said["en"].startswith("Two of your cards (#3, #4) hold kill (杀人)")


def test_every_ruleset_is_named_in_both_languages_glossed_in_english() -> None:
    """A ruleset's name is the forum's own (a game term): zh-CN says it as the forum did, and
    English says it too, with a gloss, as the roles are named."""
    for rules in RULESETS.values():
        assert render("zh-CN", f"ruleset.{rules.id}") == rules.name_zh
        english = render("en", f"ruleset.{rules.id}")
        assert english.startswith(rules.name_zh + " (") and english.endswith(")"), english
