"""The vote-post parser, beyond tests/engine/test_voteparse.py (which already shows it total on
arbitrary text and maps): it never invents a target, invisible characters change nothing, and
posts as long as Discord allows, built to make a backtracking parser slow, are read at once.

Fuzzed with hypothesis (atheris adds nothing here: the parser is pure Python, and hypothesis'
generators already reach its branches: keywords, numerals, mentions, names, conjunctions)."""

from __future__ import annotations

import re
import time
import unicodedata

from hypothesis import assume, given, settings
from hypothesis import strategies as st
from rbkit import examples

from engine.voteparse import Abstain, NotAVote, UnknownTarget, VoteFor, parse_vote_post

CN = "一二三四五六七八九"
VOTE_ALPHABET = (
    "投票给vVoOtTeEfrFR弃权abstainABSTAIN 　0123456789５⑤号號十一二三六@#<>!&:：，,.和或/😀"
)
names_strategy = st.dictionaries(
    st.text(max_size=6) | st.sampled_from(["5", "投", "弃权", "abstain", "@", "十二", "Jo"]),
    st.integers(1, 16),
    max_size=8,
)
mentions_strategy = st.dictionaries(st.integers(0, 2**64), st.integers(1, 16), max_size=4)
texts = st.text(max_size=60) | st.text(st.sampled_from(VOTE_ALPHABET), max_size=40)


def chinese(n: int) -> str:
    """1..99 as a Chinese numeral (十二, 二十, 九十九)."""
    tens, ones = divmod(n, 10)
    head = "" if tens == 0 else ("十" if tens == 1 else CN[tens - 1] + "十")
    return head + (CN[ones - 1] if ones else "")


def written_numbers(text: str) -> set[int]:
    """Every number the text spells: digits (after NFKC, so ５ and ⑤ too) or a Chinese numeral."""
    flat = unicodedata.normalize("NFKC", text)
    found = {int(d) for d in re.findall(r"[0-9]{1,6}", flat)}
    found |= {n for n in range(1, 100) if chinese(n) in flat}
    return found


@settings(max_examples=examples(300), deadline=None)
@given(text=texts, names=names_strategy, mentions=mentions_strategy)
def test_a_vote_names_a_seat_the_post_wrote(
    text: str, names: dict[str, int], mentions: dict[int, int]
) -> None:
    result = parse_vote_post(text, names=names, mentions=mentions)
    if isinstance(result, VoteFor):
        spelled = written_numbers(text) | set(names.values()) | set(mentions.values())
        assert result.seat in spelled, (text, result)
    if isinstance(result, UnknownTarget):
        assert len(result.token) <= len(text) + 40


INVISIBLE = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff"]


@settings(max_examples=examples(200), deadline=None)
@given(
    text=st.text(st.sampled_from(VOTE_ALPHABET), max_size=30),
    cuts=st.lists(st.tuples(st.integers(0, 30), st.sampled_from(INVISIBLE)), max_size=4),
    names=names_strategy,
)
def test_invisible_characters_change_nothing(
    text: str, cuts: list[tuple[int, str]], names: dict[str, int]
) -> None:
    hidden = text
    for at, ch in sorted(cuts, reverse=True):
        hidden = hidden[:at] + ch + hidden[at:]
    assert parse_vote_post(hidden, names=names) == parse_vote_post(text, names=names)


def _no_markdown_made(text: str) -> bool:
    """Whether NFKC makes no Markdown of what Discord shows as text: no `>`, `~` or a backtick
    from a full-width or compatibility form (「＞」, 「～～」), and no space from one next to a
    quote's `>`. Those read as typed, not as their ASCII forms (docs/rulings.md)."""
    for char in text:
        flat = unicodedata.normalize("NFKC", char)
        if flat != char and (set(flat) & set(">~`") or (flat.isspace() and ">" in text)):
            return False
    return True


@settings(max_examples=examples(150), deadline=None)
@given(text=texts, names=names_strategy)
def test_full_width_and_compatibility_forms_read_the_same(text: str, names: dict[str, int]) -> None:
    assume(_no_markdown_made(text))
    flat = unicodedata.normalize("NFKC", text)
    assert parse_vote_post(text, names=names) == parse_vote_post(flat, names=names)


LONG = 4000
"""Discord's longest message (Nitro); ordinary users get 2000."""


def test_long_hostile_posts_are_read_at_once() -> None:
    names = {f"玩家{i}": i for i in range(1, 17)} | {"a" * 30 + str(i): i for i in range(1, 17)}
    mentions = {i: i % 16 + 1 for i in range(100)}
    posts = {
        "spaces": "投" + " " * LONG,
        "conjunctions": "投 " + "5和" * (LONG // 2),
        "ats": "投" + "@" * LONG,
        "numerals": "投 " + "十" * LONG,
        "for": "vote " + "for " * (LONG // 4),
        "long mention": "投 <@" + "1" * (LONG - 6) + ">",
        "mentions": "投 " + "<@1> " * (LONG // 5),
        "invisible": "投" + "\u200b" * LONG + "5",
        "punctuation": "投 5" + "，" * LONG + "6",
        "name prefixes": "投 " + "a" * LONG,
        "markdown": "*" * LONG + "投 5",
        "quotes": "> " * (LONG // 2),
        "emoji": "投 " + "😀" * (LONG // 2) + " 5",
        "digits": "投 " + "9" * LONG,
    }
    slowest = 0.0
    for label, post in posts.items():
        started = time.perf_counter()
        result = parse_vote_post(post, names=names, mentions=mentions)
        took = time.perf_counter() - started
        slowest = max(slowest, took)
        assert isinstance(result, VoteFor | Abstain | UnknownTarget | NotAVote), label
        assert took < 1.0, (label, took)  # ~5 ms here: a backtracking regex would take minutes
    print(
        f"voteparse: slowest of {len(posts)} hostile {LONG}-character posts {slowest * 1000:.1f} ms"
    )
