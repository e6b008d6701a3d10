"""Vote posts as players write them on Discord (docs/rules.md §1.1, docs/rulings.md "Votes"):
Markdown a Discord client adds or a player types (quotes, code, headings, strike-through,
spoilers), 改投 / 改票 for a changed vote, a post that votes twice, nicknames with digits."""

from __future__ import annotations

import time
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine import voteparse
from engine.voteparse import (
    Abstain,
    NotAVote,
    ParsedPost,
    UnknownTarget,
    VoteFor,
    own_words,
    parse_vote_post,
)

NAMES = {"玩家1": 1, "玩家10": 10, "阿明": 3, "3": 5, "007": 6, "Joe2": 7, "a~~b~~": 8}
NAMES |= {"给力": 11, "为民": 12, "了然": 13}  # names that begin as 改投给 / 改票为 / 改票了 end
MENTIONS = {111: 1, 222: 2}


def parse(text: str) -> ParsedPost:
    return parse_vote_post(text, names=NAMES, mentions=MENTIONS)


QUOTES = [
    # a quote is someone's words (or one's own earlier ones), never the post's vote
    pytest.param("> 投 3\n投 5", VoteFor(seat=5), id="quote-then-vote"),
    pytest.param("> 3号说投5\n> 同意吗\n投 6号", VoteFor(seat=6), id="two-quote-lines-then-vote"),
    pytest.param(">\n> 投 3\n投 5", VoteFor(seat=5), id="empty-quote-line"),
    pytest.param("  > 投 3\n投 5", VoteFor(seat=5), id="indented-quote"),
    pytest.param("> 投 3", NotAVote(), id="quote-only"),
    pytest.param("> 投 3\n同意", NotAVote(), id="quote-then-agree"),
    pytest.param(">>> 投 3\n投 5", NotAVote(), id="quote-rest-of-post"),
    pytest.param("投 5号\n> 6号昨天说投7号", VoteFor(seat=5), id="vote-then-quote-naming-seats"),
    pytest.param("投 5号\n>>> 6号\n7号", VoteFor(seat=5), id="vote-then-quote-rest"),
    pytest.param(">投 3", NotAVote(), id="no-space-is-no-quote-and-no-keyword-first"),
]

CODE_AND_BLOCKS = [
    pytest.param("`投 3`", VoteFor(seat=3), id="inline-code"),
    pytest.param("```\n投 3\n```", VoteFor(seat=3), id="code-block"),
    pytest.param("```text\n投 3号\n```", VoteFor(seat=3), id="code-block-with-language"),
    pytest.param("```投 3```", VoteFor(seat=3), id="code-block-one-line"),
    pytest.param("# 投 3", VoteFor(seat=3), id="heading"),
    pytest.param("## 投3号 理由见楼上", VoteFor(seat=3), id="heading-2"),
    pytest.param("-# 投 3", VoteFor(seat=3), id="subtext"),
    pytest.param("- 投 3", VoteFor(seat=3), id="list-item"),
    pytest.param("#3", NotAVote(), id="hash-seat-is-no-heading"),
    pytest.param("# 3号是匪", NotAVote(), id="heading-of-chat"),
]

STRIKE_AND_SPOILER = [
    # struck-through text is taken back; a spoiler is hidden from view, not from the judge
    pytest.param("~~投 3~~ 投 4", VoteFor(seat=4), id="struck-vote-then-vote"),
    pytest.param("~~投 3~~", NotAVote(), id="struck-vote-only"),
    pytest.param("投 ~~3~~ 4", VoteFor(seat=4), id="struck-target"),
    pytest.param("投 3 ~~4~~", VoteFor(seat=3), id="struck-second-target"),
    pytest.param("~~投 3~~\n改投 4号", VoteFor(seat=4), id="struck-then-gaitou"),
    pytest.param("||投 3||", VoteFor(seat=3), id="spoiler-vote"),
    pytest.param("投 ||3||", VoteFor(seat=3), id="spoiler-target"),
    pytest.param("**~~投 3~~ 投 5**", VoteFor(seat=5), id="bold-and-struck"),
]

CHANGED_VOTE = [
    # 改投 / 改票: how a player says they change their vote (改票 is the glossary's word)
    pytest.param("改投 3", VoteFor(seat=3), id="gaitou"),
    pytest.param("改投3号", VoteFor(seat=3), id="gaitou-hao"),
    pytest.param("改投给3号", VoteFor(seat=3), id="gaitou-gei"),
    pytest.param("改投阿明", VoteFor(seat=3), id="gaitou-name"),
    pytest.param("改投 <@222>", VoteFor(seat=2), id="gaitou-mention"),
    pytest.param("改票 3号", VoteFor(seat=3), id="gaipiao"),
    pytest.param("改票：投3号", VoteFor(seat=3), id="gaipiao-tou"),
    pytest.param("改票了，投 3", VoteFor(seat=3), id="gaipiao-le-tou"),
    pytest.param("改票给三号", VoteFor(seat=3), id="gaipiao-gei"),
    pytest.param("改票，弃权", Abstain(), id="gaipiao-abstain"),
    pytest.param("改投弃权", Abstain(), id="gaitou-abstain"),
    pytest.param("改票了 3号", VoteFor(seat=3), id="gaipiao-le-target"),
    pytest.param("改票：投 路人甲", UnknownTarget(token="路人甲"), id="gaipiao-tou-unknown"),
    pytest.param("改票：投", UnknownTarget(token=""), id="gaipiao-tou-alone"),
    pytest.param("改投5号和6号", UnknownTarget(token="5号和6号"), id="gaitou-two-targets"),
    pytest.param("我改投3号", NotAVote(), id="keyword-not-first"),
    pytest.param("改天再投", NotAVote(), id="gai-is-no-keyword"),
]

CHANGE_TALK = [
    # 改投 / 改票 are a vote's keyword only before a target that reads, or before 投 / vote: talk
    # about changing votes is chat, as 弃票了 is (docs/rulings.md)
    pytest.param("改票", NotAVote(), id="gaipiao-alone"),
    pytest.param("改票了", NotAVote(), id="gaipiao-le-alone"),
    pytest.param("改票的人请说明理由", NotAVote(), id="gaipiao-de-ren"),
    pytest.param("改票是允许的吗", NotAVote(), id="gaipiao-shi"),
    pytest.param("改投的理由是什么", NotAVote(), id="gaitou-de-liyou"),
    pytest.param("改票吗", NotAVote(), id="gaipiao-ma"),
    pytest.param("改投 路人甲", NotAVote(), id="gaitou-unknown-name"),
    pytest.param("改投 <@999>", NotAVote(), id="gaitou-unknown-mention"),
]

CHANGE_THEN_NAME = [
    # a name that begins as a longer change keyword ends (给力 after 改投给): every reading is
    # tried, longest first, as 投给力 is read
    pytest.param("投给力", VoteFor(seat=11), id="tougei-li"),
    pytest.param("改投给力", VoteFor(seat=11), id="gaitou-geili"),
    pytest.param("改投给给力", VoteFor(seat=11), id="gaitougei-geili"),
    pytest.param("改票给力", VoteFor(seat=11), id="gaipiao-geili"),
    pytest.param("改票为民", VoteFor(seat=12), id="gaipiao-weimin"),
    pytest.param("改票了然", VoteFor(seat=13), id="gaipiao-leran"),
    pytest.param("改票了，了然", VoteFor(seat=13), id="gaipiao-le-leran"),
]

TWICE = [
    # a post that votes twice for different players cannot be read; the same one twice can
    pytest.param("投5号，改投6号", UnknownTarget(token="5号,改投6号"), id="vote-then-gaitou"),
    pytest.param("投 3\n投 4", UnknownTarget(token="3 投 4"), id="two-vote-lines"),
    pytest.param("投 3 vote 4", UnknownTarget(token="3 vote 4"), id="tou-then-vote"),
    pytest.param("投5号 或者投6号", UnknownTarget(token="5号 或者投6号"), id="or-tou"),
    pytest.param("弃权，投5号", UnknownTarget(token="弃权,投5号"), id="abstain-then-vote"),
    pytest.param("投5号，投5号！", VoteFor(seat=5), id="same-vote-twice"),
    pytest.param("投 <@111> 1号", VoteFor(seat=1), id="mention-and-its-seat"),
    pytest.param("投 玩家1（1号）", VoteFor(seat=1), id="name-and-its-seat"),
    pytest.param("投 玩家1（2号）", UnknownTarget(token="玩家1(2号"), id="name-and-other-seat"),
    pytest.param("投 5 5", UnknownTarget(token="5 5"), id="a-number-twice-is-two-numbers"),
    pytest.param("投 <@111> 1号 2号", UnknownTarget(token="<@111> 1号 2号"), id="same-then-other"),
    pytest.param("投3号，他昨天说要投4号", VoteFor(seat=3), id="vote-in-the-reason"),
    pytest.param("投5号，投票截止前不改了", VoteFor(seat=5), id="toupiao-chat-after"),
    pytest.param("投5号，投一下试试", VoteFor(seat=5), id="tou-yixia-after"),
    pytest.param("投5号，改投6号！", UnknownTarget(token="5号,改投6号"), id="second-then-mark"),
    pytest.param("投5号，改投6号😀", UnknownTarget(token="5号,改投6号"), id="second-then-emoji"),
    pytest.param("投5号\n改投6号\n理由见上", UnknownTarget(token="5号 改投6号"), id="second-line"),
    pytest.param("投5号，改投6号了", UnknownTarget(token="5号,改投6号"), id="second-then-le"),
    pytest.param("投3号，投4号和5号", UnknownTarget(token="3号,投4号"), id="second-of-two"),
]

REASON_NAMES_A_VOTE = [
    # the reason after a vote may name anyone, a vote of others included: a second vote is one
    # whose target ends a statement (the post's end, punctuation, a space or line, an emoji)
    pytest.param("投3号，投4号的人都是杀手", VoteFor(seat=3), id="tou-de-ren"),
    pytest.param("投3号，投4号的是狼", VoteFor(seat=3), id="tou-de-shi"),
    pytest.param("投3号，改投4号的人请解释", VoteFor(seat=3), id="gaitou-de-ren"),
    pytest.param("投 3\n投4号的理由不充分", VoteFor(seat=3), id="tou-hao-de-liyou"),
    pytest.param("投 3\n投4的理由不充分", VoteFor(seat=3), id="tou-de-liyou"),
    pytest.param("投3号，投<@222>的人", VoteFor(seat=3), id="tou-mention-de"),
    pytest.param("投3号，弃权的人是好人", VoteFor(seat=3), id="abstain-de"),
    pytest.param("投5号，改投6号吗？", VoteFor(seat=5), id="a-question"),
]

FULL_WIDTH_IS_TEXT = [
    # Discord's Markdown is ASCII: full-width ～～ strikes nothing and ＞ quotes nothing (they
    # are read after NFKC as the text they show)
    pytest.param("～～投5号～～", VoteFor(seat=5), id="full-width-tildes-around-vote"),
    pytest.param("投～～5号～～", VoteFor(seat=5), id="full-width-tildes-around-target"),
    pytest.param("投 ～～3～～ 4", UnknownTarget(token="3~~ 4"), id="full-width-tildes-two-seats"),
    pytest.param("＞ 投 4\n投 3", NotAVote(), id="full-width-quote-mark-is-text"),
    pytest.param("> 投 4\n投 3", VoteFor(seat=3), id="ascii-quote"),
    pytest.param(">\u3000投 4\n投 3", NotAVote(), id="quote-mark-then-ideographic-space"),
    pytest.param("\u3000> 投 4\n投 3", NotAVote(), id="ideographic-space-then-quote-mark"),
    pytest.param("~~投5号~~", NotAVote(), id="ascii-tildes"),
    pytest.param("~\u200b~投5号~~", NotAVote(), id="invisible-inside-tildes"),
    pytest.param("｀｀｀text\n投 3", NotAVote(), id="full-width-fence-is-text"),
]

AS_BEFORE = [
    # what the parser already read right, kept as a record of the audit
    pytest.param("投 玩家1", VoteFor(seat=1), id="name-with-digit"),
    pytest.param("投 玩家10", VoteFor(seat=10), id="longest-name-with-digits"),
    pytest.param("投玩家1号", VoteFor(seat=1), id="name-then-hao"),
    pytest.param("投 3", VoteFor(seat=3), id="number-nickname-is-a-seat"),
    pytest.param("投 007", VoteFor(seat=7), id="digit-nickname-is-a-seat"),
    pytest.param("投 Joe2", VoteFor(seat=7), id="latin-name-with-digit"),
    pytest.param("<@111>", NotAVote(), id="mention-only"),
    pytest.param("投 <@111>", VoteFor(seat=1), id="tou-mention"),
    pytest.param("<@111> 投 2", NotAVote(), id="addressed-to-someone"),
    pytest.param("投　３", VoteFor(seat=3), id="full-width"),
    pytest.param("投三号", VoteFor(seat=3), id="chinese-numeral"),
    pytest.param("3号", NotAVote(), id="bare-seat"),
    pytest.param("vote 3", VoteFor(seat=3), id="vote"),
    pytest.param("投 3 4", UnknownTarget(token="3 4"), id="two-seats"),
    pytest.param("投3号 理由：他昨天发言很奇怪", VoteFor(seat=3), id="trailing-chat"),
    pytest.param("投 3️⃣", VoteFor(seat=3), id="keycap"),
    pytest.param("投 @everyone", UnknownTarget(token="@everyone"), id="everyone"),
    pytest.param("同意", NotAVote(), id="reply-agreeing"),
    pytest.param("", NotAVote(), id="attachment-only"),
]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        *QUOTES,
        *CODE_AND_BLOCKS,
        *STRIKE_AND_SPOILER,
        *CHANGED_VOTE,
        *CHANGE_TALK,
        *CHANGE_THEN_NAME,
        *TWICE,
        *REASON_NAMES_A_VOTE,
        *FULL_WIDTH_IS_TEXT,
        *AS_BEFORE,
    ],
)
def test_as_written(text: str, expected: ParsedPost) -> None:
    assert parse(text) == expected


@pytest.mark.parametrize(
    "text",
    ["投5号，投6号", "投5号，改投6号", "投 5 投 6", "投 a~~b~~", "投 a~~b~~ 5"],
)
def test_no_fast_path_reads_what_the_full_parser_reads_otherwise(text: str) -> None:
    """A post the full parser reads as voting twice (or whose name holds Markdown) never takes
    a fast path that would read its first vote alone."""
    fast = voteparse._fast_path(text, NAMES, MENTIONS)
    assert fast is None or fast == voteparse._parse_full(text, names=NAMES, mentions=MENTIONS)


def test_long_posts_of_markdown_and_repeated_votes_are_read_at_once() -> None:
    """Posts as long as Discord allows, built of what this reading adds (quote lines, strikes,
    fences, 改票, votes repeated), are read at once and nothing recurses without end."""
    long = 4000
    posts = [
        "改票" * (long // 2),
        "改票投" * (long // 3),
        "投 5 " + "改票 投 5 " * (long // 10),
        "投 <@111> " + "1号 <@111> " * (long // 12),
        "> 投5\n" * (long // 6) + "投 6",
        "~~a" * (long // 3),
        "~~" + "投 5" * (long // 4),
        "~" * long + "投5",
        "```\n" * (long // 4),
    ]
    for post in posts:
        started = time.perf_counter()
        result = parse(post)
        assert isinstance(result, VoteFor | Abstain | UnknownTarget | NotAVote)
        assert time.perf_counter() - started < 1.0, post[:20]


@pytest.mark.parametrize(
    ("text", "words"),
    [("投", "投"), ("> 3号说的对\n改票：投", "改票:投"), ("~~投 3~~ 投票！", "投票!")],
)
def test_own_words_show_a_vote_whose_keyword_stands_alone(text: str, words: str) -> None:
    """What the judge's reply quotes for a post that names no target (its token is empty)."""
    assert parse(text) == UnknownTarget(token="")
    assert own_words(text) == words


def test_own_words_are_clipped() -> None:
    assert own_words("投　" + "啊" * 60) == "投 " + "啊" * 38


@pytest.mark.parametrize(
    ("text", "same_as"),
    [
        ("\u200b> 投 3\n投 5", "> 投 3\n投 5"),
        ("~\u200b~投 3~~ 投 4", "~~投 3~~ 投 4"),
        ("｀投 3｀", "`投 3`"),
    ],
)
def test_markdown_read_after_invisible_characters(text: str, same_as: str) -> None:
    """Invisible characters change nothing (the parser's promise, tests/robustness): they are
    dropped before the Markdown is read."""
    assert parse(text) == parse(same_as) != NotAVote()


@pytest.mark.parametrize(
    ("text", "ascii", "expected"),
    [
        ("＞ 投 3\n投 5", "> 投 3\n投 5", NotAVote()),
        ("～～投 3～～ 投 4", "~~投 3~~ 投 4", UnknownTarget(token="3~~ 投 4")),
    ],
)
def test_full_width_markdown_characters_are_text(
    text: str, ascii: str, expected: ParsedPost
) -> None:
    """Discord reads only ASCII Markdown: a full-width ＞ or ～～ is text as shown (it was read
    as the ASCII quote or strike after NFKC). Written as Discord shows it, 「＞ 投 3」 then
    「投 5」 starts with no keyword; 「～～投 3～～ 投 4」 votes twice."""
    assert parse(text) == expected != parse(ascii)


MARKDOWN_ALPHABET = "投票改弃权5６号 　\n>＞~～`｀#-|*和阿明\u200b"
MARKDOWN_FULL_WIDTH = "＞～｀\u3000"
"""Full-width forms Discord's Markdown does not read: ＞ ～ ｀, and the ideographic space (a
quote's ``>`` goes with an ASCII space)."""


def _flat_but_markdown(text: str) -> str:
    return "".join(
        c if c in MARKDOWN_FULL_WIDTH else unicodedata.normalize("NFKC", c) for c in text
    )


@given(text=st.text(st.sampled_from(MARKDOWN_ALPHABET), max_size=30), cut=st.integers(0, 30))
def test_markdown_reading_keeps_the_parsers_promises(text: str, cut: int) -> None:
    """With quotes, strikes and code in play, an invisible character still changes nothing,
    nor does a full-width form other than Markdown's own (＞ ～ ｀, and the ideographic space
    beside a ``>``)."""
    assert parse(text[:cut] + "\u200b" + text[cut:]) == parse(text)
    assert parse(_flat_but_markdown(text)) == parse(text)
    if ">" not in text:
        assert parse(text.replace("\u3000", " ")) == parse(text)
