"""A game record rendered in English (the text record, `forum_text`, and the HTML page,
`record_page`) joins its lists with English punctuation: names with ", ", a day's tally lines
with "; ". The game's own terms stay Chinese (票型, 弃权, 遗言…), but their marks do not: before,
the abstainers, the tied players and the last words were joined with 「、」 and the text
record's tally lines with 「；」 whatever the locale. zh-CN keeps its own marks, as before."""

from __future__ import annotations

import copy
import json
import re
from html import unescape
from pathlib import Path
from typing import Any

import pytest

from bot.records.forum_text import forum_text
from bot.records.record_html import CSS, record_page, with_links
from bot.records.replay import load_file, run

GAMES = Path(__file__).resolve().parents[1] / "games"
VB02 = GAMES / "v4_butterfly" / "vb_02_kill_and_shot_needles_killers_outnumber.toml"
"""Day 1: a tie (A, F), six abstainers, two tally lines; night 3: four players' last words."""
FILES = sorted(GAMES.rglob("*.toml"))

CHINESE_MARKS = re.compile("[、，；：（）。]")


def page_text(record: dict[str, Any], locale: str) -> str:
    """The HTML page as it reads: its style sheet left out, entities unescaped."""
    return unescape(record_page(with_links(record, 1, 2), locale).replace(CSS, ""))


def vb02() -> dict[str, Any]:
    return run(load_file(VB02)).record


def test_english_text_record_joins_lists_with_english_marks() -> None:
    lines = forum_text(vb02(), "en").splitlines()
    for line in (
        "  Votes (票型): A←F, G (2 votes); F←A, B (2 votes)",
        "  Abstained (弃权): C, D, E, H, J, K",
        "  A, F tied: nobody leaves today",
        "  Votes (票型): F←A, B, C (3 votes); K←F, G, H, J (4 votes)",
        "  Abstained (弃权): E, K",
        "  Out of the game (出局): A, C, E, J",
        "  Last words (遗言): A, C, E, J",
    ):
        assert line in lines


def test_english_html_record_joins_lists_with_english_marks() -> None:
    page = page_text(vb02(), "en")
    for paragraph in (
        "<p>Votes received: A 2; F 2</p>",
        "<p>Abstained (弃权): C, D, E, H, J, K</p>",
        "<p>A, F tied: nobody leaves today</p>",
        "<p>Abstained (弃权): E, K</p>",
        "<p>Last words (遗言): A, C, E, J</p>",
    ):
        assert paragraph in page


def test_zh_cn_records_keep_their_chinese_marks() -> None:
    record = vb02()
    lines = forum_text(record, "zh-CN").splitlines()
    for line in (
        "  票型：A←F、G（2票）；F←A、B（2票）",
        "  弃权：C、D、E、H、J、K",
        "  A、F 平票，本轮无人出局",
        "  票型：F←A、B、C（3票）；K←F、G、H、J（4票）",
        "  出局：A、C、E、J",
        "  遗言：A、C、E、J",
    ):
        assert line in lines
    page = page_text(record, "zh-CN")
    for paragraph in (
        "<p>得票: A 2；F 2</p>",
        "<p>弃权：C、D、E、H、J、K</p>",
        "<p>A、F 平票，本轮无人出局</p>",
        "<p>遗言：A、C、E、J</p>",
        "<p>翻牌: K 好人</p>",
    ):
        assert paragraph in page


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_no_chinese_punctuation_in_an_english_record(path: Path) -> None:
    """Every recorded game: the English text and page have no Chinese mark but in a player's
    name, and rendering leaves the JSON record (`faguan replay --json`) as it was."""
    record = run(load_file(path)).record
    before = json.dumps(record, ensure_ascii=False, sort_keys=True)
    shown = forum_text(record, "en") + "\n" + page_text(copy.deepcopy(record), "en")
    assert json.dumps(record, ensure_ascii=False, sort_keys=True) == before
    names = sorted({*record["players"], *record.get("roles", {})}, key=len, reverse=True)
    for name in names:
        shown = shown.replace(name, "")
    assert CHINESE_MARKS.findall(shown) == [], [
        line for line in shown.splitlines() if CHINESE_MARKS.search(line)
    ]


V2DA03 = GAMES / "v2_doctor_accomplice" / "v2da_03_checks_needle_kills_killer.toml"
"""Night 2: a check made alone (not by a team), by F (the accomplice's check of C)."""


@pytest.mark.parametrize(
    ("locale", "line"),
    [("zh-CN", "  【私密】F 验 C：好人"), ("en", "  [private] F checked C: good")],
)
def test_a_check_made_alone_names_its_checker_not_a_list(locale: str, line: str) -> None:
    """The text record named a lone checker as Python writes a list (「【私密】['F'] 验 C」)."""
    record = run(load_file(V2DA03)).record
    assert line in forum_text(record, locale).splitlines()
    assert "(F)" in page_text(record, locale)  # the HTML page: the checker in brackets
    assert "['" not in forum_text(record, locale)


def test_zh_cn_html_joins_names_with_its_own_mark() -> None:
    """The HTML page's other lists of names (out of the game, lots, substitutes) were joined with
    ", " whatever the locale: in zh-CN they read 「A、C、E、J」."""
    page = page_text(vb02(), "zh-CN")
    assert "<span class=out>A、C、E、J</span>" in page
    assert "<span class=out>A, C" not in page
