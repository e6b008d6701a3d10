"""A text longer than one Discord message, as several messages in order, nothing left out.

Discord takes at most 2,000 characters in a message (code points, as `len` counts them). Most
of the judge's posts are far shorter, but a few grow with the game: the 票型 of a day with
hundreds of void posts, the end of a game revealing 32 cards (5.0) under long names, a second
run-off listing 15 candidates and the same 15 barred, `/role` after many nights of checks. Such
a text goes out as several messages, as a forum judge posts a long 票型 in several posts: each
whole where the text allows it — cut at a line break, else after a sentence, else between two
items of a list, before a seat where it can (`5号 阿明`) — and never inside a player's name
(`whole`; where the names are not known, the cut before a seat keeps them whole), a `code
span`, a `<…>` token (a timestamp, a mention) or a Markdown escape. Every message after the
first starts with a continuation mark naming its place (「（续 2/3）」), so no two messages of one
text are alike: a repeated send (`bot.discord.resends`) recognises each by its own text.

Where a text is cut depends only on the text itself: a public post's cuts depend on nothing
hidden, as its words do not.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator

MESSAGE_LIMIT = 2000
"""Discord's longest message, in characters."""

_BREAKS: tuple[tuple[str, ...], ...] = (
    ("\n",),
    ("。", ". "),
    ("；", "; "),
    ("、", "，", ", "),
    (" ",),
)
"""Where a text may be cut, best first: after a line, a sentence, a part of a list, an item of a
list, a word."""

_SEAT = re.compile(r"\s*(?:\d+号|#\d+) ")
"""A seat as the judge names one (`5号 阿明`, `#5 Amin`): a list of players is best cut before
one, where no name is cut even when none is known to the split (a name may hold a separator)."""

_TOKENS = re.compile(r"`[^`\n]*`|<[^<>\s]*>")
"""Spans never cut: a code span (a draw's label, the seed's commitment), a timestamp or a
mention."""


def split_text(
    text: str,
    limit: int = MESSAGE_LIMIT,
    *,
    whole: Iterable[str] = (),
    continued: Callable[[int, int], str] | None = None,
) -> list[str]:
    """`text` as messages of at most `limit` characters, in order, their text together all of
    `text` (but the whitespace at a cut, which Discord would trim). `whole`: spans never cut
    (players' names as the text shows them); `continued(part, parts)`: the mark a message after
    the first starts with (None: none)."""
    if len(text) <= limit:
        return [text]
    blocked = _blocked(text, whole)
    parts = 2
    while True:  # the marks' length depends on the number of messages: until it settles
        mark = len(continued(parts, parts)) if continued is not None else 0
        chunks = _chunks(text, limit, limit - mark, blocked)
        if len(chunks) <= parts or continued is None:
            break
        parts = len(chunks)
    if not chunks:  # nothing but whitespace: one message, as Discord would trim it
        return [text.strip()]
    if continued is None:
        return chunks
    count = len(chunks)
    return [chunks[0]] + [continued(i, count) + c for i, c in enumerate(chunks[1:], start=2)]


def _blocked(text: str, whole: Iterable[str]) -> bytearray:
    """1 at each position a cut may not fall before: inside a span kept whole, or right after a
    Markdown escape's backslash."""
    blocked = bytearray(len(text) + 1)
    spans = [(m.start(), m.end()) for m in _TOKENS.finditer(text)]
    for item in {w for w in whole if len(w) > 1}:
        at = text.find(item)
        while at != -1:
            spans.append((at, at + len(item)))
            at = text.find(item, at + 1)
    for start, end in spans:
        blocked[start + 1 : end] = b"\x01" * (end - start - 1)
    escaped = False
    for i, char in enumerate(text):
        if escaped:
            blocked[i] = 1  # between a backslash and the character it escapes
            escaped = False
        elif char == "\\":
            escaped = True
    return blocked


def _chunks(text: str, first: int, rest: int, blocked: bytearray) -> list[str]:
    chunks: list[str] = []
    start = 0
    while True:
        room = first if not chunks else rest
        if len(text) - start <= room:
            last = text[start:].strip()
            if last:
                chunks.append(last)
            return chunks
        cut = _cut(text, start, start + room, blocked)
        chunk = text[start:cut].strip()
        if chunk:
            chunks.append(chunk)
        start = cut
        while start < len(text) and text[start].isspace():
            start += 1


def _cut(text: str, start: int, end: int, blocked: bytearray) -> int:
    """Where to cut `text[start:]` so that its first message ends by `end`: after the best kind of
    break (`_BREAKS`) that leaves that message at least half full — of those, before a seat
    (`_SEAT`) if one is — else after the last break of any kind, else as late as no span kept
    whole is cut, else at `end`."""
    half = start + (end - start) // 2
    last_any = -1
    for kinds in _BREAKS:
        cuts = sorted(
            {
                at + len(kind)
                for kind in kinds
                for at in _found(text, kind, start, end)
                if not blocked[at + len(kind)]
            },
            reverse=True,
        )
        if not cuts:
            continue
        before_seat = next((cut for cut in cuts if _SEAT.match(text, cut)), -1)
        for cut in (before_seat, cuts[0]):
            if cut >= half:
                return cut
        last_any = max(last_any, cuts[0])
    if last_any > start:
        return last_any
    for cut in range(end, start, -1):
        if not blocked[cut]:
            return cut
    return end


def _found(text: str, kind: str, start: int, end: int) -> Iterator[int]:
    """Where `kind` occurs whole in `text[start:end]`."""
    at = text.find(kind, start, end)
    while at != -1:
        yield at
        at = text.find(kind, at + 1, end)
