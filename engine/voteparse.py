"""Turn the text of a vote-channel post into a voting intent (docs/rules.md §1.1).

Pure and total: no I/O, never raises.  It does not judge validity (does seat 5 exist, is it
alive, is the window open, ...): the engine does.  It only says what the post *means*.

Theory of operation
-------------------
0. Invisible format characters (zero-width space, BOM, ...: category Cf) are dropped first, so
   that one changes nothing, not even Markdown (one inside ``~~``).  Then Discord Markdown that
   makes no words of the poster's own is dropped, from the text as typed, its lines kept: quoted
   lines (``> ...``, and everything after ``>>> ``: a quote is someone's words, or one's own
   earlier ones, never the post's vote), struck-through text (``~~投 3~~``: taken back), and a
   code block's opening fence with its language (the code itself is read: ```` `投 3` ````).
   Only ASCII Markdown, as Discord reads it: a full-width ``＞`` quotes nothing and ``～～``
   strikes nothing (they are text, read as ``>`` / ``~~`` after step 1: ``～～投5号～～`` is a
   vote).  A spoiler (``||投 3||``) is hidden from view, not from the judge: it is read.
1. Normalise: Unicode NFKC (full-width digits, letters, spaces, ``＃``, ``：``, ``，``, ``№``
   become ASCII), collapse runs of whitespace to one space, strip, strip one leading block
   marker (a heading ``# `` .. ``### ``, subtext ``-# ``, a list item ``- ``), and leading
   Markdown emphasis (``**``, ``__``, ``~``, ``||``, a backtick): these are read through, so
   stripped after NFKC, full-width or not.  Names are normalised alike (format characters, then
   NFKC).  Matching is done on a case-folded copy; tokens reported back in ``UnknownTarget``
   come from the normalised (not folded) text.
2. Keyword: the post must START with ``投票给`` | ``投给`` | ``投票`` | ``投`` | ``vote``
   (any case; ``vote`` must not run on into a letter: ``voted`` is not a keyword), optionally
   followed by ``for`` (after ``vote``) and by any punctuation/spaces such as ``:`` / ``：``;
   or with ``改投`` / ``改投给`` / ``改票`` / ``改票给`` / ``改票为`` / ``改票了`` (a changed
   vote, 改票), where ``改票`` may go on with one of the keywords above (``改票：投5号``).
   A change keyword is one only before a target that reads (a seat, a known name or mention, an
   abstention), or ``改票`` (``改票了``) before ``投`` / ``vote``: else the post talks about
   changing votes and is ``NotAVote`` (``改票了``, ``改票的人请说明理由``, ``改投 路人甲``), as
   ``弃票了`` is.  Every keyword that matches is a reading, longest first (``改投给力``:
   ``给力`` if ``力`` is none).
   A post starting with ``弃权`` / ``弃权票`` / ``弃票`` / ``abstain`` is read as if ``投``
   preceded it (``弃票``, "giving up one's vote", is the forum's other word for an abstention,
   and the forum game's 投票帖 asks for it).
   Anything else -> ``NotAVote`` (``我投5号`` included: the keyword must come first).
3. Target, tried in this order at the position after the keyword:
   - a mention ``<@id>`` / ``<@!id>`` -> the seat from ``mentions``; role/channel mentions
     ``<@&id>`` / ``<#id>`` and unmapped ids -> ``UnknownTarget``;
   - ``@name`` (longest name in ``names``), else ``@`` + a seat number;
   - ``弃权票`` | ``弃权`` | ``弃票`` | ``abstain`` -> ``Abstain``;
   - a seat number: optional ``#`` / ``No.`` / ``No``, then ASCII digits (at most 6) or a
     Chinese numeral 一 .. 九十九 (``十六``, ``二十``), then optionally ``号``/``號``.  Without
     ``号`` the number must be followed by a non-alphanumeric character, a conjunction or the
     end (so ``投5楼``, ``投一下``, ``5th`` are not seats);
   - a bare name: the longest name in ``names`` that the text starts with.  CJK names may run
     straight into the comment (``投阿明因为...``); a name ending in a Latin letter/digit must
     not be followed by another one (``Jo`` does not match ``Joey``).
   No target -> ``UnknownTarget`` whose token is the text up to the next space/punctuation
   (``""`` when the keyword stands alone).  A name shared (after folding) by two seats is
   unknown.  A name that begins with a seat number (``5``, ``5号``, ``#5 bob``) is ignored:
   a typed number is always a seat number, never a nickname.
4. Comment: whatever follows the target is ignored, EXCEPT a second target right after it:
   skipping punctuation, spaces, emoji and conjunctions (和 跟 与 及 或 或者 还有 还是 以及
   and or & + /), if a seat number, a mention, a resolvable ``@name`` or an abstention comes
   next -- or a bare name when a conjunction was skipped, or a second vote (a keyword and a
   target that resolves and ends its statement: the post's end, punctuation, a space or line
   break, an emoji, maybe after a final particle 了 吧 啊 呀 啦 哦 嘛, or a further target:
   ``投5号，改投6号``, ``投 3 投 4``, ``投5号，改投6号了``) -- the post is ambiguous ->
   ``UnknownTarget`` carrying the text from the first target to the end of the second.
   So ``投5号，理由：...`` is a vote for 5, ``投5号和6号`` / ``vote 5, 6`` / ``投 5 6`` are not,
   and ``投3号，投4号的人都是杀手`` is a vote for 3 (its reason names a vote: 4号 runs on into
   words).
   The same player named again another way (``投 <@id> 5号``, ``投 阿明（3号）``) or voted for
   again (``投5号，投5号！``) is one vote; a number written twice (``投 5 5``, ``投 5.5``) is
   two numbers.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple, TypeAlias

__all__ = [
    "Abstain",
    "NotAVote",
    "ParsedPost",
    "UnknownTarget",
    "VoteFor",
    "own_words",
    "parse_vote_post",
]


@dataclass(frozen=True, kw_only=True, slots=True)
class VoteFor:
    """A vote for the player in ``seat`` (not checked: the engine decides if it is valid)."""

    seat: int


@dataclass(frozen=True, kw_only=True, slots=True)
class Abstain:
    """An explicit abstention: ``弃权`` / ``弃票`` / ``abstain`` / ``投弃权`` / ``vote abstain``."""


@dataclass(frozen=True, kw_only=True, slots=True)
class UnknownTarget:
    """Looks like a vote, but the target cannot be resolved (unknown, missing or several)."""

    token: str  # the offending text, for the error message ("" when there is no target)


@dataclass(frozen=True, kw_only=True, slots=True)
class NotAVote:
    """Ordinary text: not a vote post."""


ParsedPost: TypeAlias = VoteFor | Abstain | UnknownTarget | NotAVote

# All matching happens on case-folded text, so every literal below is lower case.
_KEYWORDS = ("投票给", "投给", "投票", "投", "vote")
# 改投 / 改票 ("I change my vote to"): a keyword of their own before a target that reads, or when
# 改票 goes on with 投 / vote (改票：投5号); else chat (改票了, 改票的人请说明理由). Each one that
# matches is a reading (改投给力: 改投给 + 力, or 改投 + 给力), longest first.
_CHANGE_KEYWORDS = ("改投给", "改投", "改票给", "改票为", "改票了", "改票")
_CHANGE_THEN_TOU = ("改票了", "改票")
# Sentence-final particles that may close a second vote (投5号，改投6号了); not 吗 / 呢: a question.
_FINAL_PARTICLES = frozenset("了吧啊呀啦哦嘛")
_ABSTAIN_WORDS = ("弃权票", "弃权", "弃票", "abstain")
# Longest first where one is a prefix of another (或者 before 或).
_CONJUNCTIONS: tuple[str, ...] = ("或者", "还有", "还是", "以及", "和", "跟", "与", "及", "或")
_CONJUNCTIONS += ("and", "or", "&", "+", "/")
_TARGET_STARTS = "@#<"  # never skipped as punctuation: they may begin a target
_MARKDOWN = "*_~|`"
_TOKEN_STOPS = frozenset(",.;:!?、。…~()[]{}\"'“”‘’「」『』【】《》|*`")
_TOKEN_MAX = 40
_CN_DIGITS = "一二三四五六七八九"

_MENTION_RE = re.compile(r"<(@[!&]?|#)([0-9]{1,25})>")
_SEAT_RE = re.compile(r"(?:(?:#|no\.?) ?)?([0-9]{1,6}|[一二三四五六七八九十]{1,3})( ?[号號])?")
_SPACES_RE = re.compile(r"\s+")
# Discord Markdown, ASCII only, on the text as typed (`_unmarked`): a quote line ("> ", or ">"
# alone), a quote of the rest of the post (">>> "), struck-through text, a code fence's opening with
# its language. Discord reads no full-width form of them (＞, ～～, ｀｀｀): they are text.
_QUOTE_LINE_RE = re.compile(r" {0,3}>(?: |$)")
_QUOTE_REST_RE = re.compile(r" {0,3}>>>(?:[ \t]|$)")
_STRUCK_RE = re.compile(r"~~(?!~).+?~~", re.DOTALL)
_FENCE_RE = re.compile(r"\s*```[A-Za-z0-9_+#.-]*\n")
# A Markdown block marker that may open a post (its first line): a heading, subtext, a list item.
_BLOCK_RE = re.compile(r"^(?:#{1,3}|-#|[-+*]) ")


def parse_vote_post(
    text: str,
    *,
    names: Mapping[str, int] | None = None,
    mentions: Mapping[int, int] | None = None,
) -> ParsedPost:
    """Parse one post.  ``names``: display name -> seat; ``mentions``: Discord user id -> seat."""
    fast = _fast_path(text, names, mentions)
    if fast is not None:
        return fast
    return _parse_full(text, names=names, mentions=mentions)


def _parse_full(
    text: str,
    *,
    names: Mapping[str, int] | None = None,
    mentions: Mapping[int, int] | None = None,
) -> ParsedPost:
    """`parse_vote_post` by the theory of operation above: any text (the fast paths' reference)."""
    norm = _BLOCK_RE.sub("", _read_text(text), count=1).lstrip(_MARKDOWN).lstrip()
    folded, index = _fold(norm)
    starts = _target_starts(folded)
    if not starts:
        return NotAVote()
    ctx = _Context(
        text=folded,
        norm=norm,
        positions=index,
        names=_prepared_names(tuple((names or {}).items())),
        mentions=mentions or {},
    )
    # Several readings only when a keyword is a prefix of another ("投票给" / "投票" / "投") or
    # "vote for": the first one that resolves wins, else the report of the longest reading.
    # A reading after 改投 / 改票 needs a target that reads (`_target_starts`): else it is none.
    results = [r for pos, needs in starts if (r := _parse_from(ctx, pos, needs)) is not None]
    if not results:
        return NotAVote()  # 改票了, 改票的人请说明理由: talk about changing votes
    return next((r for r in results if isinstance(r, VoteFor | Abstain)), results[0])


def own_words(text: str, limit: int = _TOKEN_MAX) -> str:
    """The post's own words as the parser reads them (no quote, nothing struck through, spaces
    collapsed), at most ``limit`` characters: what to show for a vote post whose keyword stands
    alone (``UnknownTarget(token="")``)."""
    return _read_text(text)[:limit]


# --- fast paths ---------------------------------------------------------------------------
# Most vote posts are one of a few shapes (``投5号``, ``投 5``, ``vote 5``, ``投 <@id>``, ``弃权``,
# ``投 name``, maybe with a comment after a separator). For those the answer is read straight off
# the raw text, the way `_parse_full` would read it: each shape below is written so that
# normalising and folding leave it unchanged, only the keyword ``投``/``vote`` reads it, and nothing
# after it can be a second target. Any other text (or a shape whose answer depends on more) goes
# to `_parse_full`. tests/engine/test_voteparse_fast_paths.py compares the two on generated texts.

_FAST_RE = re.compile(
    r"(?:投 ?|vote ?)(?:([0-9]{1,6}|[一二三四五六七八九十]{1,3})(号)?|<@!?([0-9]{1,25})>)"
    r"|(?:投 ?|vote )?(?:弃权票?|弃票|abstain)"
)
_FAST_SEPARATORS = frozenset(" ,，。:：")
_LOUD = frozenset(_CN_DIGITS + "十号號弃投改" + "".join(w[0] for w in _CONJUNCTIONS))
"""CJK characters that may begin a second target (a numeral, 弃权, a conjunction) or a second
vote (投, 改投), or continue a seat number (号): after one of these a comment is not plain."""


def _fast_path(
    text: str, names: Mapping[str, int] | None, mentions: Mapping[int, int] | None
) -> ParsedPost | None:
    """What `_parse_full` returns for a post of a common shape; None: not one (parse in full)."""
    m = _FAST_RE.match(text)
    if m is None:
        return _fast_name(text, names) if text.startswith("投") else None
    if not _plain_comment(text, m.end()):
        return None
    number, mentioned = m.group(1), m.group(3)
    if number is not None:
        value = int(number) if number.isascii() else _chinese_number(number)
        return None if value is None else _vote_for(value)
    if mentioned is not None:
        seat = (mentions or {}).get(int(mentioned))
        return None if seat is None else _vote_for(seat)
    return _ABSTAIN


@lru_cache(maxsize=256)
def _vote_for(seat: int) -> VoteFor:
    """`VoteFor(seat=seat)`, one value per seat (values are frozen; building one per post was a
    quarter of a fast path's work)."""
    return VoteFor(seat=seat)


_ABSTAIN = Abstain()


def _plain_comment(text: str, end: int) -> bool:
    """Whether what follows a target at ``end`` is nothing, or a separator then a CJK character
    that can begin no second target (so `_parse_full` looks no further)."""
    if end == len(text):
        return True
    if text[end] not in _FAST_SEPARATORS:
        return False
    if end + 1 == len(text):
        return True
    c = text[end + 1]
    return "\u4e00" <= c <= "\u9fff" and c not in _LOUD and c.isalnum()


def _fast_name(text: str, names: Mapping[str, int] | None) -> ParsedPost | None:
    """``投 name`` / ``投name``, the whole post a name read the same raw as normalised and folded
    (`_plain_names`); None otherwise."""
    if not names or len(text) < 2:
        return None
    rest = text[2:] if text[1] == " " else text[1:]
    seat = _plain_names(names).get(rest)
    return None if seat is None else _vote_for(seat)


_PLAIN_NAMES: dict[int, tuple[Mapping[str, int], dict[str, int], dict[str, int]]] = {}
_PLAIN_NAMES_LIMIT = 1024


def _plain_names(names: Mapping[str, int]) -> Mapping[str, int]:
    """The names a post may give raw after ``投`` for `_fast_name`: one seat's (not shared), the
    same once normalised and folded, and starting with a CJK character or a letter that begins no
    keyword, seat number, mention or abstention. Remembered per mapping (compared by identity and
    value, so a changed mapping is read again); bounded like `_prepared_names`."""
    known = _PLAIN_NAMES.get(id(names))
    if known is not None and known[0] is names and known[1] == names:
        return known[2]
    prepared = _prepared_names(tuple(names.items()))
    plain = {
        name: seat
        for name, seat in names.items()
        if name
        and _plain_start(name[0])
        and "~~" not in name  # struck through in a post (`_unmarked`)
        and _fold(_normalise(name))[0] == name
        and prepared.get(name) is not None
    }
    if len(_PLAIN_NAMES) >= _PLAIN_NAMES_LIMIT:
        _PLAIN_NAMES.clear()
    _PLAIN_NAMES[id(names)] = (names, dict(names), plain)
    return plain


def _plain_start(c: str) -> bool:
    """A name's first character that `_parse_full` reads as the start of nothing but a name
    right after ``投`` (nor as the rest of another keyword, 投票/投给)."""
    if c.isascii():
        return c.isalpha() and c not in "an"
    return "\u4e00" <= c <= "\u9fff" and c not in _LOUD and c not in "票给" and c.isalnum()


# --- normalisation ------------------------------------------------------------------------


def _unmarked(text: str) -> str:
    """The post without what Discord's Markdown makes no words of the poster's own: quoted lines
    (``> ...``; ``>>> `` quotes the rest of the post), struck-through text (``~~...~~``: taken
    back) and a code block's opening fence with its language (the code itself is read).  Read on
    the text as typed (before NFKC): Discord's Markdown is ASCII, a full-width ``＞`` or ``～～``
    is text."""
    if not any(c in text for c in "~>`"):
        return text
    fence = _FENCE_RE.match(text)
    if fence is not None:
        text = text[fence.end() :]
    if ">" in text:
        kept: list[str] = []
        for line in text.split("\n"):
            if _QUOTE_REST_RE.match(line):
                break
            if not _QUOTE_LINE_RE.match(line):
                kept.append(line)
        text = "\n".join(kept)
    return _STRUCK_RE.sub(" ", text) if "~~" in text else text


def _normalise(s: str) -> str:
    """Format characters dropped, then NFKC, whitespace collapsed: a name as a post's text is."""
    return _SPACES_RE.sub(" ", unicodedata.normalize("NFKC", _visible(s))).strip()


def _visible(s: str) -> str:
    """``s`` without format characters (Cf), dropped first: then an invisible character changes
    nothing, not even Markdown (one inside ``~~``) or NFKC's composition around it (no NFKC result
    is a format character, nor does NFKC change one)."""
    if s.isascii():  # no ASCII character is a format character (Cf)
        return s
    return s.translate(_FORMAT_CHARS)


def _read_text(text: str) -> str:
    """What the parser reads of a post: without format characters (`_visible`), unmarked as
    typed (`_unmarked`: ASCII Markdown, so a full-width ``＞`` or ``～～`` stays text), then NFKC
    (full-width forms read as ASCII) and spaces collapsed."""
    return _SPACES_RE.sub(" ", unicodedata.normalize("NFKC", _unmarked(_visible(text)))).strip()


class _FormatCharsDropped(dict[int, int | None]):
    """A `str.translate` table that drops format characters (category Cf: zero-width space,
    BOM, ...) and keeps every other: each code point's answer looked up once, then read in C
    (the per-character Python test was a tenth of a vote post's parse). A deterministic memo,
    bounded: beyond `LIMIT` code points it answers without remembering."""

    LIMIT = 65_536

    def __missing__(self, code: int) -> int | None:
        kept = None if unicodedata.category(chr(code)) == "Cf" else code
        if len(self) < self.LIMIT:
            self[code] = kept
        return kept


_FORMAT_CHARS = _FormatCharsDropped()


def _fold(s: str) -> tuple[str, Sequence[int]]:
    """Case-fold ``s`` character by character; ``index[j]`` is the source of folded char ``j``."""
    folded = s.casefold()
    if len(folded) == len(s):
        # Case folding maps each character on its own to one or more: as long as the whole,
        # every character folded to exactly one, so each folded char's source is its position.
        return folded, range(len(s) + 1)
    return _fold_per_char(s)


def _fold_per_char(s: str) -> tuple[str, list[int]]:
    """`_fold` one character at a time, for text where a character folds to several."""
    parts: list[str] = []
    index: list[int] = []
    for k, c in enumerate(s):
        f = c.casefold()
        parts.append(f)
        index.extend([k] * len(f))
    index.append(len(s))
    return "".join(parts), index


@lru_cache(maxsize=1024)
def _prepared_names(names: tuple[tuple[str, int], ...]) -> Mapping[str, int | None]:
    """`_prepare_names`, remembered: a game's names change only with its seats, and folding
    every name again for every post was a third of a vote post's CPU. The mapping is shared
    between calls: read only. A deterministic memo (the same names, the same answer), bounded
    to 1,024 seatings: beyond, it folds again as before."""
    return _prepare_names(dict(names))


def _prepare_names(names: Mapping[str, int]) -> dict[str, int | None]:
    """Folded name -> seat, or None when two seats share the folded name.  A name that begins
    with what reads as a seat number (``5``, ``5号``, ``#5 bob``, ``五号``) is no name at all:
    a typed number is always a seat, so a player nicknamed "5" cannot capture ``投 @5``."""
    out: dict[str, int | None] = {}
    for name, seat in names.items():
        key = _fold(_normalise(name))[0]
        if not key or _seat(key.lstrip("@"), 0) is not None:
            continue
        out[key] = seat if key not in out or out[key] == seat else None
    return out


# --- scanning -----------------------------------------------------------------------------


class _Context(NamedTuple):
    """One post being parsed (a named tuple: made for every post, read only)."""

    text: str  # normalised and folded: what we match against
    norm: str  # normalised, original case: what we report
    positions: Sequence[int]  # folded position -> norm position (len(text) + 1 entries)
    names: Mapping[str, int | None]
    mentions: Mapping[int, int]

    def orig(self, start: int, end: int) -> str:
        return self.norm[self.positions[start] : self.positions[end]]


def _is_cjk(c: str) -> bool:
    o = ord(c)
    return (
        0x2E80 <= o <= 0x9FFF  # radicals, kana, CJK symbols, unified ideographs
        or 0xAC00 <= o <= 0xD7AF  # hangul
        or 0xF900 <= o <= 0xFAFF
        or 0x20000 <= o <= 0x3FFFF
    )


def _is_word(c: str) -> bool:
    return c.isalnum() and not _is_cjk(c)


def _conjunction_len(t: str, k: int) -> int:
    for w in _CONJUNCTIONS:
        if t.startswith(w, k):
            end = k + len(w)
            if w.isascii() and w.isalpha() and end < len(t) and t[end].isalpha():
                continue  # "order" does not start with "or"
            return len(w)
    return 0


def _boundary(t: str, k: int) -> bool:
    """Can a number (or keyword-like word) end just before ``k``?"""
    return k >= len(t) or not t[k].isalnum() or _conjunction_len(t, k) > 0


def _skip(t: str, k: int, *, conjunctions: bool) -> tuple[int, bool]:
    """Skip punctuation, spaces, symbols (and conjunctions); report whether one was skipped."""
    saw = False
    while k < len(t):
        c = t[k]
        if c in _TARGET_STARTS:
            break
        if not c.isalnum():
            k += 1
            continue
        n = _conjunction_len(t, k) if conjunctions else 0
        if n == 0:
            break
        k += n
        saw = True
    return k, saw


def _target_starts(t: str, k: int = 0, *, change: bool = True) -> list[tuple[int, bool]]:
    """Positions where the target may begin after a keyword at ``k``, best reading first, each
    with whether it is a reading only if a target that reads is there (after 改投 / 改票: else
    the post talks about changing votes); [] if no keyword is there (at the post's start: not a
    vote post, unless a bare abstention).  ``change``: 改投 / 改票 are keywords too (not right
    after 改票).  Every keyword that matches is a reading, longest first (改投给力: 给力)."""
    starts: list[tuple[int, bool]] = []
    for kw in _CHANGE_KEYWORDS if change else ():
        if t.startswith(kw, k):
            pos = _skip(t, k + len(kw), conjunctions=False)[0]
            if kw in _CHANGE_THEN_TOU:  # 改票：投5号 (a reading as 投5号 is)
                starts += _target_starts(t, pos, change=False)
            starts.append((pos, True))
    for kw in _KEYWORDS:
        if not t.startswith(kw, k):
            continue
        end = k + len(kw)
        if kw == "vote":
            if end < len(t) and t[end].isascii() and t[end].isalpha():
                continue  # "voted", "voters"
            pos, _ = _skip(t, end, conjunctions=False)
            if t.startswith("for", pos) and _boundary(t, pos + 3):  # "vote for 5"
                starts.append((_skip(t, pos + 3, conjunctions=False)[0], False))
            starts.append((pos, False))
        else:
            starts.append((_skip(t, end, conjunctions=False)[0], False))
    bare = k == 0 and not starts
    if bare and any(t.startswith(w) and _boundary(t, len(w)) for w in _ABSTAIN_WORDS):
        starts.append((0, False))  # a bare abstention
    return starts


def _parse_from(ctx: _Context, pos: int, needs_target: bool = False) -> ParsedPost | None:
    """The reading whose target begins at ``pos``; None when ``needs_target`` and no target
    that reads (a seat, a known name or mention, an abstention) is there."""
    found = _target(ctx, pos, bare_names=True)
    if needs_target and (found is None or not isinstance(found[0], VoteFor | Abstain)):
        return None
    if found is None:
        return UnknownTarget(token=_token(ctx, pos))
    result, end = found
    if isinstance(result, UnknownTarget):
        return result
    written = ctx.text[pos:end]
    while True:  # what follows: another target, or another vote (改投6号)
        k, saw_conjunction = _skip(ctx.text, end, conjunctions=True)
        nxt = _target(ctx, k, bare_names=saw_conjunction)
        # the same player named again another way (<@id> 5号), or voted again, is one vote
        same = nxt is not None and nxt[0] == result and ctx.text[k : nxt[1]] != written
        if nxt is None:
            nxt = _statement(ctx, k)
            same = nxt is not None and nxt[0] == result
        if nxt is None:
            return result
        if not same:
            return UnknownTarget(token=ctx.orig(pos, nxt[1])[:_TOKEN_MAX])
        end = nxt[1]


def _statement(ctx: _Context, k: int) -> tuple[ParsedPost, int] | None:
    """A vote at ``k`` (a keyword, then a target that reads and ends the statement: `_closes`),
    and where its target ends."""
    if k >= len(ctx.text) or not ctx.text[k].isalpha():
        return None
    for start, _ in _target_starts(ctx.text, k):
        found = _target(ctx, start, bare_names=True)
        if found is not None and isinstance(found[0], VoteFor | Abstain) and _closes(ctx, found[1]):
            return found
    return None


def _closes(ctx: _Context, end: int) -> bool:
    """Whether a second vote's target ending at ``end`` ends its statement: the post's end,
    punctuation, a space or line break, an emoji (anything but a letter, digit or CJK word),
    maybe after sentence-final particles (改投6号了); or a further target follows (投4号和5号).
    Not a word (投4号的人都是杀手: the reason names a vote, it is none)."""
    t = ctx.text
    k = end
    while k < len(t) and t[k] in _FINAL_PARTICLES:
        k += 1
    if k >= len(t) or not t[k].isalnum():
        return True
    k, saw_conjunction = _skip(t, end, conjunctions=True)
    return _target(ctx, k, bare_names=saw_conjunction) is not None


def _target(ctx: _Context, i: int, *, bare_names: bool) -> tuple[ParsedPost, int] | None:
    """The target starting exactly at ``i`` and where it ends, or None if there is none."""
    t = ctx.text
    if i >= len(t):
        return None
    m = _MENTION_RE.match(t, i)
    if m is not None:
        if m.group(1) in ("@", "@!"):
            mentioned = ctx.mentions.get(int(m.group(2)))
            if mentioned is not None:
                return VoteFor(seat=mentioned), m.end()
        return UnknownTarget(token=ctx.orig(i, m.end())), m.end()
    if t[i] == "@":
        return _name(ctx, i + 1, start=i) or _seat(t, i + 1)
    for w in _ABSTAIN_WORDS:
        if t.startswith(w, i) and _boundary(t, i + len(w)):
            return Abstain(), i + len(w)
    seat = _seat(t, i)
    if seat is not None:
        return seat
    if bare_names:
        return _name(ctx, i, start=i)
    return None


def _seat(t: str, i: int) -> tuple[ParsedPost, int] | None:
    m = _SEAT_RE.match(t, i)
    if m is None:
        return None
    number = m.group(1)
    value = int(number) if number.isascii() else _chinese_number(number)
    if value is None:
        return None
    if m.group(2) is None and not _boundary(t, m.end()):
        return None
    return VoteFor(seat=value), m.end()


def _chinese_number(s: str) -> int | None:
    """一 .. 九十九 (一, 十, 十六, 二十, 二十一); None for anything else (十十, 一二)."""
    if s == "十":
        return 10
    if len(s) == 1:
        return _CN_DIGITS.index(s) + 1
    tens, sep, ones = s.partition("十")
    if not sep or "十" in ones or len(tens) > 1 or len(ones) > 1:
        return None
    value = 10 * (_CN_DIGITS.index(tens) + 1 if tens else 1)
    return value + (_CN_DIGITS.index(ones) + 1 if ones else 0)


def _name(ctx: _Context, i: int, *, start: int) -> tuple[ParsedPost, int] | None:
    """The longest known name at ``i`` (``start`` includes a leading ``@`` in the token)."""
    t = ctx.text
    best: str | None = None
    for key in ctx.names:
        if best is not None and len(key) <= len(best):
            continue
        end = i + len(key)
        if not t.startswith(key, i):
            continue
        if end < len(t) and _is_word(t[end - 1]) and _is_word(t[end]):
            continue  # "jo" inside "joey"
        best = key
    if best is None:
        return None
    end = i + len(best)
    seat = ctx.names[best]
    if seat is None:
        return UnknownTarget(token=ctx.orig(start, end)), end
    return VoteFor(seat=seat), end


def _token(ctx: _Context, i: int) -> str:
    """The unresolvable text at ``i``: up to the next space or punctuation."""
    t = ctx.text
    if i >= len(t):
        return ""
    j = i + 1 if t[i] in _TARGET_STARTS else i
    while j < len(t) and not t[j].isspace() and t[j] not in _TOKEN_STOPS:
        j += 1
    return ctx.orig(i, j)[:_TOKEN_MAX]
