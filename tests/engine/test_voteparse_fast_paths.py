"""The parser's fast paths read text exactly as the plain per-character code does: normalising
(format characters dropped through a memo table, before NFKC) and case folding (positions kept by
a range when no character folds to several); and `_fast_path` answers what `_parse_full` does,
Markdown (ASCII and full-width look-alikes) and 改投 / 改票 included."""

from __future__ import annotations

import itertools
import re
import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from engine import voteparse
from engine.voteparse import _fold, _fold_per_char, _FormatCharsDropped, _normalise

SPECIAL = "ßİıﬁẞΣςσǅ\u0130\u1e9e\u200b\u200d\ufeff\u00ad\u2060\U000e0001 \u3000\t\n投票号５５ＡＢ"
SPECIAL += "e\u0301\u0327~～>＞`｀改"


def _normalise_per_char(s: str) -> str:
    s = "".join(c for c in s if unicodedata.category(c) != "Cf")
    s = unicodedata.normalize("NFKC", s)
    return re.sub(r"\s+", " ", s).strip()


def test_format_characters_are_dropped_before_nfkc() -> None:
    """An invisible character between a letter and its accent changes nothing: dropped before
    NFKC composes them (after, the accent stayed apart and a name with it did not match)."""
    assert _normalise("Jose\u200b\u0301") == _normalise("Jose\u0301") == "José"
    assert voteparse.parse_vote_post("投 Jose\u200b\u0301", names={"José": 4}) == (
        voteparse.VoteFor(seat=4)
    )


texts = st.text(alphabet=st.one_of(st.characters(), st.sampled_from(SPECIAL)))


@given(texts)
def test_normalising_drops_the_same_characters(text: str) -> None:
    assert _normalise(text) == _normalise_per_char(text)


@given(texts)
def test_folding_gives_the_same_text_and_positions(text: str) -> None:
    folded, index = _fold(text)
    expected, positions = _fold_per_char(text)
    assert folded == expected
    assert list(index) == positions


def test_every_character_folds_to_at_least_one() -> None:
    """What the fast path's length test rests on (and that folding is per character)."""
    for code in range(0x110000):
        c = chr(code)
        assert c.casefold(), hex(code)
    sample = "".join(chr(code) for code in range(0, 0x110000, 7) if not 0xD800 <= code < 0xE000)
    assert sample.casefold() == "".join(c.casefold() for c in sample)


def test_the_table_keeps_every_character_but_format_ones() -> None:
    table = _FormatCharsDropped()
    for code in [*range(0x10000), *range(0xE0000, 0xE0080), 0x110BD, 0x1D173]:
        kept = table[code]
        assert (kept is None) == (unicodedata.category(chr(code)) == "Cf"), hex(code)
        assert kept in (None, code)


def test_the_table_stops_remembering_at_its_limit() -> None:
    table = _FormatCharsDropped()
    table.LIMIT = 10
    assert "".join(chr(c) for c in range(0x4E00, 0x4E40)).translate(table) == "".join(
        chr(c) for c in range(0x4E00, 0x4E40)
    )
    assert len(table) == 10
    assert "a\u200bb".translate(table) == "ab"
    assert voteparse._FORMAT_CHARS is not table and len(table) == 10


# --- the fast paths of common shapes (`voteparse._fast_path`) answer what the full parser does --

NAMES = {
    "玩家1": 1, "玩家16": 16, "玩家": 2, "阿明": 3, "小红": 4, "小红帽": 5, "Big Joe": 6, "Jo": 7,
    "2B": 8, "十三妹": 13, "bob": 9, "Bob": 10, "票王": 11, "给力": 12, "弃权王": 14, "和平": 15,
    "号外": 17, "nobody": 18, "abc": 19, "ß": 20, "ﬁsh": 21, "他\u200b": 22, "同名": 23,
    "同 名": 24, "𠀀": 25, "zed": 26, "Zed": 26, "理由": 27, "王": 28, "力": 29, "abstain 王": 31,
}  # fmt: skip
MENTIONS = {123456: 9, 987654321098765432: 10, 1400000000000000005: 5}
HEADS = [
    "投",
    "投 ",
    "投  ",
    "vote",
    "vote ",
    "Vote ",
    "投票",
    "投给",
    "",
    "我投",
    " 投",
    "**投",
    "投\u3000",
]
BODIES = [
    "5", "05", "16", "1234567", "123456", "五", "十六", "十十", "一二三四", "<@123456>", "<@!123456>",
    "<@&123456>", "<#123456>", "<@42>", "<@1400000000000000005>", "弃权", "弃权票", "弃票", "abstain",
    "Abstain", "#5", "no.5", "５", "@玩家1", *NAMES,
]  # fmt: skip
AFTER = ["", "号", "號", " 号", "楼", "th", "5"]
SEPARATORS = [*" ,，。:：", "", "、", "  ", "\u200b", "!"]
# Markdown (ASCII, and the full-width look-alikes Discord does not read) and 改投 / 改票, in every
# part of a post: what the fast paths must leave to the full parser, or read as it does.
MARKED_HEADS = [
    "改投", "改投 ", "改投给", "改票", "改票 ", "改票：投", "改票了，投 ", "改票为", "~~投 3~~ 投",
    "~~投", "～～投", "投～～", "> 投 3\n投", ">>> 投 3\n投", "＞ 投 3\n投", "`投", "｀投",
    "```\n投", "｀｀｀\n投", "\u200b> 投 3\n投 ", "~\u200b~投 3~~ 投",
]  # fmt: skip
MARKED_BODIES = ["~~5~~", "～～5～～", "`5`", "｀5｀", "5~~", "给力", "力", "和平"]
MARKED_AFTER = ["~~", "～～", "`", "｀", "\n> 6号", "\n＞ 6号", "~~ 6号~~"]
MARKED_SEPARATORS = ["~", "～", "~~", "`", "｀", "\n", "\n> ", "\n＞ ", ">", "＞"]
MARKED_COMMENTS = [
    "，改投6号", "，改投6号的人", "，改投6号了", "，改投6号吗", "，改票了", "，改票", " 改投给力",
    "~~6号~~", "～～6号～～", " ~~6号~~", "\n> 6号", "\n＞ 6号", "\n>>> 6号", " `6号`",
    " ｀6号｀", "\n投6号", "\n投6号的人", "，投6号！", "，投 6😀", "\n改票：投6号", "，投6号和7号",
]  # fmt: skip
LEADS = [
    *"和跟与及或还以一二三四五六七八九十号號弃票给他理由昨改",
    "<@123456>",
    "@",
    "#",
    "5",
    "a",
    "and",
    "改投",
    "改票",
    "~~",
    "～～",
    "`",
    "｀",
]
REST = ["", "由", "者", "有", "5号", "6", "玩家1", "，6号", " ", "\u200b", "ß", "6号~~", "~~"]
REST += ["\n> 6号", "\n＞ 6号", "`", "投6号", "6号的人", "6号了"]


def _agree(text: str, names: dict[str, int] = NAMES) -> None:
    fast = voteparse._fast_path(text, names, MENTIONS)
    if fast is not None:
        assert fast == voteparse._parse_full(text, names=names, mentions=MENTIONS), text
    assert voteparse.parse_vote_post(text, names=names, mentions=MENTIONS) == (
        voteparse._parse_full(text, names=names, mentions=MENTIONS)
    ), text


MARKDOWN_ALPHABET = "投票改给为了弃权56６号 　\n>＞~～`｀#-|*,，和阿明给力\u200b"
marked_texts = st.text(st.sampled_from(MARKDOWN_ALPHABET), max_size=20)

comments = st.one_of(
    st.just(""),
    st.sampled_from(MARKED_COMMENTS),
    marked_texts,
    st.builds(
        lambda *parts: "".join(parts),
        st.sampled_from(SEPARATORS + MARKED_SEPARATORS),
        st.one_of(
            st.sampled_from(LEADS), st.characters(min_codepoint=0x4E00, max_codepoint=0x9FFF)
        ),
        st.one_of(st.sampled_from(REST), st.text(max_size=6)),
    ),
    st.text(max_size=6),
)


def _mostly(common: list[str], every: list[str]) -> st.SearchStrategy[str]:
    """One of `every`, the shapes of the fast paths (`common`) half the time."""
    return st.one_of(st.sampled_from(common), st.sampled_from(every))


shapes = st.builds(
    lambda *parts: "".join(parts),
    _mostly(["投", "投 ", "vote "], HEADS + MARKED_HEADS),
    st.one_of(
        _mostly(["5", "十六", "<@123456>", "弃权", "玩家16"], BODIES + MARKED_BODIES),
        st.text(max_size=4),
    ),
    _mostly(["", "号"], AFTER + MARKED_AFTER),
    st.one_of(st.just(""), comments),
)


COMMENTS = ["", " ", "，", "，理由", "，理由：他", ",6号", "，一号", " 和6", "：他", " 号外", "。还有5",
            "，弃权", "，<@123456>", " @阿明", " ß"]  # fmt: skip


def test_every_shape_of_the_parts_is_parsed_as_the_full_parser_does() -> None:
    for head, body, after, comment in itertools.product(HEADS, BODIES, AFTER, COMMENTS):
        _agree(head + body + after + comment)


def test_every_shape_with_markdown_or_a_changed_vote_is_parsed_as_the_full_parser_does() -> None:
    """Quotes, strikes, code (ASCII or full-width) and 改投 / 改票 anywhere in a post: a fast
    path answers what the full parser does (nearly all go to it: read only then, as `_agree`
    would read them twice)."""
    heads = ["投", "投 ", "vote ", "", *MARKED_HEADS]
    bodies = ["5", "十六", "<@123456>", "弃权", "玩家16", "给力", *MARKED_BODIES]
    answered = 0
    for head, body, after, comment in itertools.product(
        heads, bodies, ["", "号", *MARKED_AFTER], ["", "，理由", *COMMENTS[4:8], *MARKED_COMMENTS]
    ):
        text = head + body + after + comment
        fast = voteparse._fast_path(text, NAMES, MENTIONS)
        if fast is not None:
            answered += 1
            assert fast == voteparse._parse_full(text, names=NAMES, mentions=MENTIONS), text
    assert answered > 0


@given(shapes)
def test_the_fast_paths_answer_what_the_full_parser_does(text: str) -> None:
    _agree(text)


@given(texts)
def test_any_text_is_parsed_as_the_full_parser_does(text: str) -> None:
    _agree(text)
    _agree("投" + text)
    _agree("投 5号" + text)


@given(marked_texts)
def test_any_text_of_markdown_and_changed_votes_is_parsed_as_the_full_parser_does(
    text: str,
) -> None:
    _agree(text)
    _agree("投" + text)
    _agree("投 5号" + text)
    _agree("投5号，" + text)
    _agree("改投" + text)


def test_a_plain_comment_is_any_cjk_character_but_those_that_may_start_a_target() -> None:
    for code in range(0x4E00, 0xA000):  # "6号" after it: a second target, were it skipped
        for text in (f"投 16，{chr(code)}6号", f"弃权 {chr(code)}6号", f"投5号:{chr(code)}6号"):
            _agree(text)


def test_a_plain_name_is_any_that_the_full_parser_reads_the_same() -> None:
    for code in [*range(0x20, 0x250), *range(0x3000, 0x3100), *range(0x4E00, 0xA000, 7)]:
        for name in (chr(code), chr(code) + "明", "小" + chr(code)):
            for text in ("投" + name, "投 " + name):
                _agree(text, {**NAMES, name: 30})


def test_the_common_shapes_take_a_fast_path() -> None:
    """The vote posts the bench (and players) write most: none goes to the full parser."""
    for text in ("投5号", "投 5", "vote 5", "投5号，理由：昨天发言前后矛盾", "投 玩家16", "投玩家1",
                 "投 <@1400000000000000005>", "弃权", "投十六号", "abstain"):  # fmt: skip
        assert voteparse._fast_path(text, NAMES, MENTIONS) is not None, text
