"""Tests for engine.voteparse: vote-post text -> intent (docs/rules.md §1.1)."""

from __future__ import annotations

import dataclasses
import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.voteparse import (
    Abstain,
    NotAVote,
    ParsedPost,
    UnknownTarget,
    VoteFor,
    parse_vote_post,
)

NAMES = {
    "阿明": 3,
    "小红": 4,
    "小红帽": 5,
    "Big Joe": 6,
    "Jo": 7,
    "2B": 8,
    "十三妹": 13,
}
MENTIONS = {123456: 9, 987654321098765432: 10}


def parse(text: str) -> ParsedPost:
    return parse_vote_post(text, names=NAMES, mentions=MENTIONS)


CASES = [
    # --- seat numbers, every spelling of docs/rules.md §1.1
    pytest.param("投 5", VoteFor(seat=5), id="tou-space-digit"),
    pytest.param("投5", VoteFor(seat=5), id="tou-digit"),
    pytest.param("投5号", VoteFor(seat=5), id="tou-digit-hao"),
    pytest.param("投 12号", VoteFor(seat=12), id="two-digits-hao"),
    pytest.param("投 5 号", VoteFor(seat=5), id="space-before-hao"),
    pytest.param("投5號", VoteFor(seat=5), id="traditional-hao"),
    pytest.param("投05号", VoteFor(seat=5), id="leading-zero"),
    pytest.param("投 #5", VoteFor(seat=5), id="hash"),
    pytest.param("vote No.5", VoteFor(seat=5), id="No-dot"),
    pytest.param("vote no 7", VoteFor(seat=7), id="no-space"),
    pytest.param("投 №3", VoteFor(seat=3), id="numero-sign"),
    pytest.param("投５号", VoteFor(seat=5), id="fullwidth-digit"),
    pytest.param("投　１６", VoteFor(seat=16), id="fullwidth-space-and-digits"),
    pytest.param("投 ⑤", VoteFor(seat=5), id="circled-digit"),
    pytest.param("投五号", VoteFor(seat=5), id="chinese-numeral-hao"),
    pytest.param("投十二号", VoteFor(seat=12), id="chinese-twelve"),
    pytest.param("投 十六", VoteFor(seat=16), id="chinese-sixteen-no-hao"),
    pytest.param("投十号", VoteFor(seat=10), id="chinese-ten"),
    pytest.param("投0号", VoteFor(seat=0), id="seat-zero-not-judged"),
    pytest.param("投 99号", VoteFor(seat=99), id="nonexistent-seat-not-judged"),
    # --- keywords
    pytest.param("投票 5", VoteFor(seat=5), id="toupiao"),
    pytest.param("投给5号", VoteFor(seat=5), id="tougei"),
    pytest.param("投票给 5号", VoteFor(seat=5), id="toupiaogei"),
    pytest.param("投：5号", VoteFor(seat=5), id="fullwidth-colon"),
    pytest.param("投票给: 5", VoteFor(seat=5), id="ascii-colon"),
    pytest.param("vote 5", VoteFor(seat=5), id="vote"),
    pytest.param("VOTE: 5", VoteFor(seat=5), id="VOTE-colon"),
    pytest.param("Vote 5", VoteFor(seat=5), id="Vote"),
    pytest.param("ｖｏｔｅ　５", VoteFor(seat=5), id="fullwidth-vote"),
    pytest.param("vote for 5", VoteFor(seat=5), id="vote-for"),
    pytest.param("**投5号**", VoteFor(seat=5), id="markdown-bold"),
    pytest.param("  投5号  ", VoteFor(seat=5), id="surrounding-space"),
    # --- names and mentions
    pytest.param("投 @阿明", VoteFor(seat=3), id="at-name"),
    pytest.param("投@阿明", VoteFor(seat=3), id="at-name-no-space"),
    pytest.param("投 阿明", VoteFor(seat=3), id="bare-name"),
    pytest.param("投阿明因为他昨天没发言", VoteFor(seat=3), id="cjk-name-runs-into-comment"),
    pytest.param("投 小红帽", VoteFor(seat=5), id="longest-name"),
    pytest.param("投 @小红帽，理由", VoteFor(seat=5), id="longest-at-name"),
    pytest.param("投 小红", VoteFor(seat=4), id="shorter-name"),
    pytest.param("vote @Big Joe", VoteFor(seat=6), id="name-with-space"),
    pytest.param("vote big  joe, he lied", VoteFor(seat=6), id="name-folded-and-spaces"),
    pytest.param("vote Jo", VoteFor(seat=7), id="short-latin-name"),
    pytest.param("vote Joey", UnknownTarget(token="Joey"), id="latin-name-needs-boundary"),
    pytest.param("投 2B", VoteFor(seat=8), id="name-starting-with-digit"),
    pytest.param("投十三妹", VoteFor(seat=13), id="name-starting-with-numeral"),
    pytest.param("投 <@123456>", VoteFor(seat=9), id="mention"),
    pytest.param("投 <@!123456>", VoteFor(seat=9), id="mention-with-bang"),
    pytest.param("vote <@987654321098765432>", VoteFor(seat=10), id="mention-snowflake"),
    pytest.param("投 <@111>", UnknownTarget(token="<@111>"), id="unknown-mention"),
    pytest.param("投 <@&123456>", UnknownTarget(token="<@&123456>"), id="role-mention"),
    pytest.param("投 <#123456>", UnknownTarget(token="<#123456>"), id="channel-mention"),
    pytest.param("投 @路人", UnknownTarget(token="@路人"), id="unknown-at-name"),
    pytest.param("投 路人甲 理由是", UnknownTarget(token="路人甲"), id="unknown-bare-name"),
    pytest.param("投 @5号", VoteFor(seat=5), id="at-seat"),
    # --- abstention
    pytest.param("弃权", Abstain(), id="qiquan"),
    pytest.param("弃权，没想好", Abstain(), id="qiquan-comment"),
    pytest.param("弃权票", Abstain(), id="qiquanpiao"),
    pytest.param("abstain", Abstain(), id="abstain"),
    pytest.param("ABSTAIN!", Abstain(), id="ABSTAIN-punct"),
    pytest.param("Abstain for now", Abstain(), id="Abstain-comment"),
    pytest.param("投弃权", Abstain(), id="tou-qiquan"),
    pytest.param("投弃权票", Abstain(), id="tou-qiquanpiao"),
    pytest.param("vote abstain", Abstain(), id="vote-abstain"),
    pytest.param("Vote: Abstain", Abstain(), id="vote-colon-abstain"),
    pytest.param("弃权了", NotAVote(), id="qiquan-no-separator"),
    pytest.param("abstaining", NotAVote(), id="abstaining"),
    pytest.param("投弃权 5号", UnknownTarget(token="弃权 5号"), id="abstain-then-seat"),
    # 弃票, the forum's other word for it (the forum game's 投票帖 asks for it)
    pytest.param("弃票", Abstain(), id="qipiao"),
    pytest.param("弃票，没想好", Abstain(), id="qipiao-comment"),
    pytest.param("投弃票", Abstain(), id="tou-qipiao"),
    pytest.param("投 弃票", Abstain(), id="tou-space-qipiao"),
    pytest.param("弃票了", NotAVote(), id="qipiao-no-separator"),
    pytest.param("投弃票 5号", UnknownTarget(token="弃票 5号"), id="qipiao-then-seat"),
    pytest.param("投5号，弃票", UnknownTarget(token="5号,弃票"), id="seat-then-qipiao"),
    # --- comments after the target
    pytest.param("投5号，理由：昨天发言矛盾", VoteFor(seat=5), id="comment-after-comma"),
    pytest.param("投5号 他昨天跳了预言家", VoteFor(seat=5), id="comment-after-space"),
    pytest.param("vote 5. he is scum", VoteFor(seat=5), id="comment-after-period"),
    pytest.param("投5号！！", VoteFor(seat=5), id="exclamations"),
    pytest.param("投5号……", VoteFor(seat=5), id="ellipsis"),
    pytest.param("投5号。1楼说得对", VoteFor(seat=5), id="comment-starting-with-floor"),
    pytest.param("投阿明，小红说得对", VoteFor(seat=3), id="comment-mentions-bare-name"),
    pytest.param("投5号吧", VoteFor(seat=5), id="hao-ends-number"),
    pytest.param("vote 5 for sure", VoteFor(seat=5), id="english-comment"),
    # --- several targets: ambiguous
    pytest.param("投 5 6", UnknownTarget(token="5 6"), id="two-seats-space"),
    pytest.param("投5号和6号", UnknownTarget(token="5号和6号"), id="two-seats-he"),
    pytest.param("vote 5, 6", UnknownTarget(token="5, 6"), id="two-seats-comma"),
    pytest.param("vote 5 or 6", UnknownTarget(token="5 or 6"), id="two-seats-or"),
    pytest.param("投5号6号", UnknownTarget(token="5号6号"), id="two-seats-adjacent"),
    pytest.param("投5/6", UnknownTarget(token="5/6"), id="two-seats-slash"),
    pytest.param("投 5.5", UnknownTarget(token="5.5"), id="decimal"),
    pytest.param("投阿明和小红", UnknownTarget(token="阿明和小红"), id="two-names-he"),
    pytest.param("投 @阿明 @小红", UnknownTarget(token="@阿明 @小红"), id="two-at-names"),
    pytest.param("投 <@123456> <@111>", UnknownTarget(token="<@123456> <@111>"), id="mentions"),
    pytest.param("投5号，6号也可疑", UnknownTarget(token="5号,6号"), id="seat-in-comment"),
    # --- keyword without a usable target
    pytest.param("投", UnknownTarget(token=""), id="tou-alone"),
    pytest.param("投票", UnknownTarget(token=""), id="toupiao-alone"),
    pytest.param("VOTE:", UnknownTarget(token=""), id="vote-colon-alone"),
    pytest.param("vote for", UnknownTarget(token=""), id="vote-for-alone"),
    pytest.param("投，还没想好", UnknownTarget(token="还没想好"), id="tou-then-comment"),
    pytest.param("投一下", UnknownTarget(token="一下"), id="numeral-needs-boundary"),
    pytest.param("投5楼", UnknownTarget(token="5楼"), id="floor-is-not-seat"),
    pytest.param("投 1234567", UnknownTarget(token="1234567"), id="too-many-digits"),
    pytest.param("投 十十", UnknownTarget(token="十十"), id="bad-chinese-numeral"),
    # --- not a vote
    pytest.param("", NotAVote(), id="empty"),
    pytest.param("   　 ", NotAVote(), id="blank"),
    pytest.param("我觉得5号是匪", NotAVote(), id="chat"),
    pytest.param("我投5号", NotAVote(), id="keyword-not-first"),
    pytest.param("5号", NotAVote(), id="bare-seat"),
    pytest.param("#5", NotAVote(), id="bare-hash-seat"),
    pytest.param("<@123456>", NotAVote(), id="bare-mention"),
    pytest.param("voted 5 yesterday", NotAVote(), id="voted"),
    pytest.param("> 投5号\n同意", NotAVote(), id="quote"),
]


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_parse(text: str, expected: ParsedPost) -> None:
    assert parse(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("投 5", VoteFor(seat=5), id="seat"),
        pytest.param("投 @阿明", UnknownTarget(token="@阿明"), id="at-name"),
        pytest.param("投阿明", UnknownTarget(token="阿明"), id="bare-name"),
        pytest.param("投 <@123456>", UnknownTarget(token="<@123456>"), id="mention"),
        pytest.param("弃权", Abstain(), id="abstain"),
    ],
)
def test_without_names_or_mentions(text: str, expected: ParsedPost) -> None:
    assert parse_vote_post(text) == expected


@pytest.mark.parametrize(
    ("names", "text", "expected"),
    [
        pytest.param({"Ｂｉｇ　Ｊｏｅ": 6}, "vote big joe", VoteFor(seat=6), id="name-nfkc"),
        pytest.param({" Bob ": 2}, "vote BOB", VoteFor(seat=2), id="name-stripped"),
        pytest.param({"Bob": 1, "BOB": 2}, "vote bob", UnknownTarget(token="bob"), id="clash"),
        pytest.param({"Bob": 1, "BOB": 1}, "vote bob", VoteFor(seat=1), id="same-seat"),
        pytest.param({"": 1, "  ": 2}, "投 ", UnknownTarget(token=""), id="empty-names"),
        pytest.param({"票王": 4}, "投票王", VoteFor(seat=4), id="name-after-tou-not-toupiao"),
        pytest.param({"ß": 4}, "vote SS", VoteFor(seat=4), id="casefold"),
    ],
)
def test_name_matching(names: dict[str, int], text: str, expected: ParsedPost) -> None:
    assert parse_vote_post(text, names=names) == expected


def test_results_are_frozen_keyword_only_dataclasses() -> None:
    vote = VoteFor(seat=5)
    with pytest.raises(dataclasses.FrozenInstanceError):
        vote.seat = 6  # type: ignore[misc]
    with pytest.raises(TypeError):
        VoteFor(5)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        UnknownTarget("x")  # type: ignore[call-arg]
    assert Abstain() == Abstain()
    assert NotAVote() == NotAVote()


# --- property tests -----------------------------------------------------------------------

KEYWORDS = ["投", "投票", "投给", "投票给", "vote", "Vote", "VOTE", "vote:", "投：", "ｖｏｔｅ"]
CHINESE = [*"一二三四五六七八九十", "十一", "十二", "十三", "十四", "十五", "十六"]
FULLWIDTH = str.maketrans("0123456789", "０１２３４５６７８９")


def spellings(seat: int) -> list[str]:
    numbers = [str(seat), str(seat).translate(FULLWIDTH), CHINESE[seat - 1]]
    return [
        f"{keyword}{space}{number}{suffix}{comment}"
        for keyword, space, number, suffix, comment in itertools.product(
            KEYWORDS,
            ["", " ", "　", "  　"],
            numbers,
            ["", "号", "號", " 号"],
            ["", "，理由：昨天发言矛盾", " because", "。", "！"],
        )
    ]


@pytest.mark.parametrize("seat", range(1, 17))
def test_every_spelling_of_every_seat(seat: int) -> None:
    wrong = {text: parse(text) for text in spellings(seat)}
    wrong = {text: got for text, got in wrong.items() if got != VoteFor(seat=seat)}
    assert wrong == {}


@given(
    seat=st.integers(min_value=1, max_value=16),
    data=st.data(),
    comment=st.text(),
)
def test_seat_with_arbitrary_reason(seat: int, data: st.DataObject, comment: str) -> None:
    text = data.draw(st.sampled_from(spellings(seat)))
    assert parse(f"{text}，理由：{comment}") == VoteFor(seat=seat)


names_strategy = st.dictionaries(st.text(max_size=8), st.integers(0, 20), max_size=6)
mentions_strategy = st.dictionaries(st.integers(0, 2**64), st.integers(0, 20), max_size=4)


@given(text=st.text(), names=names_strategy, mentions=mentions_strategy)
def test_never_raises(text: str, names: dict[str, int], mentions: dict[int, int]) -> None:
    result = parse_vote_post(text, names=names, mentions=mentions)
    assert isinstance(result, VoteFor | Abstain | UnknownTarget | NotAVote)


@given(
    text=st.text(
        alphabet=st.sampled_from("投票给vVoOtTeE弃权abstainABSTAIN 　5５号十六@#<>!&:：，,.和/"),
        max_size=30,
    )
)
def test_never_raises_on_vote_like_text(text: str) -> None:
    result = parse(text)
    assert isinstance(result, VoteFor | Abstain | UnknownTarget | NotAVote)


@given(text=st.text())
def test_text_not_starting_with_a_keyword_is_not_a_vote(text: str) -> None:
    assert parse("我" + text) == NotAVote()


@given(user_id=st.integers(0, 10**20), seat=st.integers(1, 16), bang=st.booleans())
def test_any_mapped_mention(user_id: int, seat: int, bang: bool) -> None:
    mention = f"<@{'!' if bang else ''}{user_id}>"
    assert parse_vote_post(f"投 {mention}", mentions={user_id: seat}) == VoteFor(seat=seat)
    assert parse_vote_post(f"投 {mention}", mentions={}) == UnknownTarget(token=mention)


@given(data=st.data())
def test_keywords_are_case_insensitive(data: st.DataObject) -> None:
    def any_case(word: str) -> str:
        flips = data.draw(st.lists(st.booleans(), min_size=len(word), max_size=len(word)))
        return "".join(c.upper() if up else c for c, up in zip(word, flips, strict=True))

    assert parse(f"{any_case('vote')} 5") == VoteFor(seat=5)
    assert parse(any_case("abstain")) == Abstain()
    assert parse(f"{any_case('vote')} {any_case('abstain')}") == Abstain()


def test_names_are_read_afresh_when_a_seat_changes_hands() -> None:
    """The parser remembers a seating's prepared names; a replaced player's new name counts at
    once and the old one no longer does (the memo is keyed by the names themselves)."""
    before = {"Alice": 3, "Bob": 4}
    after = {"Carol": 3, "Bob": 4}  # seat 3 replaced
    assert parse_vote_post("投 Alice", names=before) == VoteFor(seat=3)
    assert parse_vote_post("投 Carol", names=after) == VoteFor(seat=3)
    assert not isinstance(parse_vote_post("投 Alice", names=after), VoteFor)
    assert parse_vote_post("投 Alice", names=dict(before)) == VoteFor(seat=3)
