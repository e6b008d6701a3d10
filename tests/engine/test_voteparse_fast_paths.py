"""The parser's fast paths read text exactly as the plain per-character code does: normalising
(format characters dropped through a memo table) and case folding (positions kept by a range
when no character folds to several)."""

from __future__ import annotations

import re
import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from engine import voteparse
from engine.voteparse import _fold, _fold_per_char, _FormatCharsDropped, _normalise

SPECIAL = "ßİıﬁẞΣςσǅ\u0130\u1e9e\u200b\u200d\ufeff\u00ad\u2060\U000e0001 \u3000\t\n投票号５５ＡＢ"


def _normalise_per_char(s: str) -> str:
    s = unicodedata.normalize("NFKC", s)
    s = "".join(c for c in s if unicodedata.category(c) != "Cf")
    return re.sub(r"\s+", " ", s).strip()


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
